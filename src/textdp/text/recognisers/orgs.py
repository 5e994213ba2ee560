"""The orgs family: companies by their legal form.

:mod:`textdp.text.orgs` (cleanco's suffixes, Aho–Corasick), through the gazetteer hook
(:func:`textdp.text.gazetteers.gazetteer_spans`), on the folded, cased form of each document.
"""

from __future__ import annotations

from textdp.text.recognisers import Recogniser, Span, _register_builtin

__all__ = ["Orgs"]


class Orgs(Recogniser):
    """Companies (kind ``org``) named with their legal form (Ltd, GmbH, S.A., …)."""

    name = "orgs"
    kinds = ("org",)
    labels = {"org": "[ORG]"}

    def find_one(self, text: str) -> list[Span]:
        from textdp.text.gazetteers import gazetteer_spans

        return gazetteer_spans(text, self.kinds)

    def __reduce__(self) -> tuple[object, ...]:
        return (_builtin, ())


def _builtin() -> Orgs:
    return _ORGS


_ORGS = Orgs()
_register_builtin(_ORGS)
