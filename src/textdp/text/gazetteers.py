"""The gazetteer recognisers as one hook for :class:`textdp.text.entities.Entities`.

People (:mod:`textdp.text.names`), places (:mod:`textdp.text.places`) and companies
(:mod:`textdp.text.orgs`) found from maintained resources shipped in pinned packages, on the
folded, cased form of one document; their spans join the NER model's, and
:class:`textdp.text.entities.Recognisers` resolves overlaps as for any entity.
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["gazetteer_spans", "describe"]


def gazetteer_spans(text: str, kinds: Collection[str]) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, kind)`` of ``text`` for the entity ``kinds`` asked for."""
    from textdp.text._lexicon import words_view

    out: list[tuple[int, int, str]] = []
    try:
        if "person" in kinds:
            from textdp.text.names import find_names

            out += find_names(text)
        if "location" in kinds:
            from textdp.text.places import find_places

            out += find_places(text)
        if "org" in kinds:
            from textdp.text.orgs import find_orgs

            out += find_orgs(text)
    finally:
        words_view.cache_clear()  # the document's words view, which all three read: not kept
    return out


def describe() -> dict[str, str]:
    """The resources, for the privacy report."""
    from textdp.text._lexicon import NAMES_MAX_RANK, NAMES_PACKAGE, NAMES_VERSION
    from textdp.text.orgs import SUFFIX_PACKAGE, SUFFIX_VERSION
    from textdp.text.places import GAZETTEER_PACKAGE, GAZETTEER_VERSION

    return {"person": f"{NAMES_PACKAGE}=={NAMES_VERSION} (names ranked ≤ {NAMES_MAX_RANK} "
                      "in a country) + context rules",
            "location": f"{GAZETTEER_PACKAGE}=={GAZETTEER_VERSION} (cities ≥ 15,000, countries, "
                        "US states) + place cues",
            "org": f"{SUFFIX_PACKAGE}=={SUFFIX_VERSION} legal-form suffixes"}
