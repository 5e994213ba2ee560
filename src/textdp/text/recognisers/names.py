"""The names family: people's names from a maintained name list, decided by context.

:mod:`textdp.text.names` (names-dataset, Aho–Corasick, cues), through the gazetteer hook
(:func:`textdp.text.gazetteers.gazetteer_spans`), on the folded, cased form of each document.
"""

from __future__ import annotations

from textdp.text.recognisers import Recogniser, Span, _register_builtin

__all__ = ["Names"]


class Names(Recogniser):
    """People's names (kind ``person``) from the name list and the words around them."""

    name = "names"
    kinds = ("person",)
    labels = {"person": "[PERSON]"}

    def find_one(self, text: str) -> list[Span]:
        from textdp.text.gazetteers import gazetteer_spans

        return gazetteer_spans(text, self.kinds)

    def __reduce__(self) -> tuple[object, ...]:
        return (_builtin, ())


def _builtin() -> Names:
    return _NAMES


_NAMES = Names()
_register_builtin(_NAMES)
