"""Entities and identifiers: masked in the private documents before anything sees them, and
found (counted; masked by default) in the synthetic ones.

The recognisers are those of ``textdp privatize`` (:class:`textdp.text.entities.Recognisers`:
identifiers, then people, locations, organisations and street addresses; an allow-list kept),
with the same labels (``[PERSON]``, ``[EMAIL]``, …). Masking a document is a function of that
document alone, so neighbouring datasets stay neighbouring: the guarantee is unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textdp.text.entities import ALLOWED

__all__ = ["SCREEN_ACTIONS", "Masker", "build_masker"]

#: What happens to an entity or identifier found in a synthetic document.
SCREEN_ACTIONS = ("mask", "keep")


@dataclass(frozen=True)
class Masker:
    """The recognisers of a release (None: recognition off) and how they are described."""

    recognisers: Any
    description: dict[str, Any]

    def find(self, texts: Sequence[str]) -> list[list[tuple[int, int, str]]]:
        """Per document, its spans (start, end, kind), allow-listed terms left out."""
        if self.recognisers is None:
            return [[] for _ in texts]
        out = []
        for text in texts:
            starts, ends, kinds = self.recognisers.spans(text)
            out.append([(a, b, self.recognisers.kinds[k]) for a, b, k in
                        zip(starts.tolist(), ends.tolist(), kinds.tolist(), strict=True)
                        if self.recognisers.kinds[k] != ALLOWED])
        return out

    def mask(self, texts: Sequence[str]) -> tuple[list[str], Counter]:
        """``texts`` with every span replaced by its kind's label, and the counts by kind."""
        counts: Counter = Counter()
        out = []
        for text, spans in zip(texts, self.find(texts), strict=True):
            pieces, last = [], 0
            for a, b, kind in spans:
                pieces += [text[last:a], self.recognisers.label(kind)]
                counts[kind] += 1
                last = b
            out.append("".join(pieces) + text[last:])
        return out, counts


def build_masker(*, identifiers: Any = True, entities: Any = "default",
                 allow_list: Sequence[str] | None = None) -> Masker:
    """The masker the options describe (those of ``textdp.privatize``)."""
    from textdp.text.entities import Recognisers
    from textdp.token_policy import make_entities, make_identifiers

    ids = make_identifiers(identifiers, None, None, None)
    ents = make_entities(entities, allow_list)
    description = {"identifiers": ids.describe() if ids is not None else None,
                   "entities": ents.describe()}
    if ids is None and not ents.active:
        return Masker(None, description)
    return Masker(Recognisers(ids, ents), description)
