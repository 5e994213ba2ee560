"""Leakage counted by recognisers the release did not use.

The release masks what textdp's own recognisers find (:mod:`textdp.text.entities`,
:mod:`textdp.text.identifiers`), so counting survivors with the same recognisers on the
originals measures only the mechanism's treatment of what was already masked by construction:
a name the model missed is neither counted nor masked. This module counts with a second family,
read on the folded text (:mod:`textdp.text.fold`: look-alike letters, marks and invisible
characters do not hide a word from it):

* **patterns over the originals**: proper-noun-like words (a capital letter, not at the start
  of a sentence, not among English function words or the vocabulary's most frequent words) and
  digit runs of four or more (order numbers, postcodes, parts of phone numbers), whatever the
  recognisers said; one survives when its key form appears as a whole word in the key form of
  the private text;
* **the entity model on the private text**: the people, places and organisations the model
  reads in the *private* document that also appear, as whole words, in its original (a name
  the mechanism returned unchanged, in a context where the model now sees it).

The release's placeholders are removed from the private text first, so ``[PERSON]`` never
counts. What the count cannot see: a name written in lower case or at the start of a sentence
and missed by the model in both texts, a name split or altered by the mechanism (one letter
changed), identifiers of fewer than four digits, and any quasi-identifier that is not a name or
a number (a rare job title, a described event). A surviving proper-noun-like word may also be a
product or a month, not a person: the count is an upper bound for names and a lower bound for
what links a document to a person.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["independent_mentions", "independent_survival", "CANNOT_SEE"]

#: What the independent count cannot see, in the report's words.
CANNOT_SEE = ("names written in lower case or at a sentence start that the entity model misses "
              "in both texts, names the mechanism altered rather than kept (a letter changed), "
              "numbers of fewer than four digits, and quasi-identifiers that are neither a name "
              "nor a number (a rare job title, a described event)")

_PROPER = re.compile(r"(?<![.!?:\n]\s)(?<![.!?:\n])(?<=\s)([A-Z][a-zA-Z'-]+)")
_DIGITS = re.compile(r"(?<!\d)\d{4,}(?!\d)")
#: Words this frequent in the default vocabulary are not counted as names (``Please``, ``Team``).
COMMON_WORDS = 5000


@lru_cache(maxsize=1)
def _common() -> frozenset[str]:
    from textdp.text.stopwords import ENGLISH_STOPWORDS
    from textdp.vocab import load_default

    return frozenset(load_default().words[:COMMON_WORDS]) | ENGLISH_STOPWORDS


def independent_mentions(originals: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Per original document, its distinct ``(kind, key)`` pairs: ``proper`` words and
    ``number`` runs of the folded text (the key form: case-folded, look-alikes read plainly)."""
    from textdp.text.fold import fold_string, key_string

    common = _common()
    out = []
    for text in originals:
        cased = fold_string(text)
        found: dict[str, str] = {}
        for m in _PROPER.finditer(cased):
            key = key_string(m.group(1))
            if key not in common and len(key) > 1:
                found.setdefault(key, "proper")
        for m in _DIGITS.finditer(cased):
            found.setdefault(m.group(0), "number")
        out.append([(kind, key) for key, kind in found.items()])
    return out


def _whole(key: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(key)}(?!\w)", text) is not None


def _model_hits(text: str, spans: Sequence[tuple[int, int, str]], original_key: str
                ) -> set[str]:
    """The keys of the entities read in ``text`` that occur in the original: a name counts once
    (the model also gives its parts: "Obama" inside "Barack Obama" is not a second survivor),
    and a part counts only where its whole did not survive."""
    from textdp.text.fold import key_string

    hits: set[str] = set()
    covered: list[tuple[int, int]] = []
    for a, b, kind in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):  # longest first
        if kind == "allowed" or any(x <= a and b <= y for x, y in covered):
            continue
        key = key_string(text[a:b])
        if key and _whole(key, original_key):
            hits.add(key)
            covered.append((a, b))
    return hits


def independent_survival(originals: Sequence[str], private: Sequence[str],
                         mentions: Sequence[Sequence[tuple[str, str]]],
                         placeholders: Sequence[str] = (), entities: Any = None
                         ) -> dict[str, Any]:
    """Survivors of both families: ``{"found", "survived", "by_kind", "model_survivors",
    "documents_leaking", "documents"}``; ``model_survivors`` counts the private text's entities
    (``entities``: a :class:`textdp.text.entities.Entities`, None to skip) found in the
    original; a document leaks when either family finds a survivor in it."""
    from textdp.assess.leakage import _without
    from textdp.text.fold import key_string

    strip = _without(placeholders)
    cleaned = [strip(t).replace("\0", " ") for t in private]
    keys = [key_string(t) for t in cleaned]
    by_kind: dict[str, dict[str, int]] = {}
    leaking = [set() for _ in originals]
    for d, doc in enumerate(mentions):
        for kind, key in doc:
            row = by_kind.setdefault(kind, {"found": 0, "survived": 0})
            row["found"] += 1
            if _whole(key, keys[d]):
                row["survived"] += 1
                leaking[d].add(key)
    model = 0
    if entities is not None:
        original_keys = [key_string(t) for t in originals]
        for d, spans in enumerate(entities.find(cleaned)):
            hits = _model_hits(cleaned[d], spans, original_keys[d])
            model += len(hits)
            leaking[d] |= hits
    return {"found": sum(r["found"] for r in by_kind.values()),
            "survived": sum(r["survived"] for r in by_kind.values()), "by_kind": by_kind,
            "model_survivors": model, "documents_leaking": sum(1 for s in leaking if s),
            "documents": len(originals)}
