"""What every setting of an assessment shares, computed once on the originals.

Measuring a setting privatises the sample and attacks the result; most of that work depends on
the originals alone and is the same for every setting (issue 37, deliverable 4):

* the recognisers' spans of each original (identifiers and the entity model, the slowest part
  of a word release after the encoder): found by the first setting, then reused by every other
  one through :class:`SpanCache` — they are a function of the document alone, whatever the
  mechanism;
* the attacker's TF-IDF fits of the originals and their vectors
  (:class:`textdp.assess.linkage.OriginalIndex`) and the originals' sentence embeddings;
* the classifiers trained on the originals (task accuracy's clean-train protocol, the attribute
  attacker trained on originals: :class:`textdp.assess.utility.Trained`);
* the persons of the data and of the sample, their documents' sizes, the attribute split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Shared", "SpanCache"]


@dataclass
class Shared:
    """What every setting's measurement shares, computed once: the data's document sizes (as
    the ledger counts them), the persons of all documents and of the sample, the attribute
    split, the attacker's index of the originals, the classifiers trained on them, the span
    cache and the documents whose private texts are encoded (None: all of them)."""

    sizes: np.ndarray
    units: list[str] | None = None
    authors: list[str] | None = None
    attribute_split: Any = None
    independent: list[Any] = field(default_factory=list)
    entities: Any = None
    index: Any = None
    clean: Any = None
    attribute_attacker: Any = None
    spans: SpanCache | None = None
    encoded: np.ndarray | None = None


class SpanCache:
    """Per document text, the spans the release's recognisers find in it, shared by every
    setting whose recognisers are the same (the same kinds: the release options of an
    assessment are the same for every word setting; only the mechanism, its ε, the stop-word
    policy and the allocation differ, and none of them changes what is recognised)."""

    def __init__(self) -> None:
        self._by_text: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._kinds: tuple[str, ...] | None = None

    def attach(self, runner: Any) -> None:
        """Make ``runner`` (a :class:`textdp.pipeline.Privatizer`) find its spans through the
        cache (no change when it recognises nothing or other kinds than the first runner)."""
        inner = runner.rules.spans
        if inner is None:
            return
        kinds = tuple(inner.kinds)
        if self._kinds is None:
            self._kinds = kinds
        if kinds == self._kinds:
            runner.rules.spans = _Cached(inner, self._by_text)


class _Cached:
    """A recogniser of spans (:class:`textdp.text.stage.Recognisers` or
    :class:`textdp.text.identifiers.Identifiers`) whose per-document results are memoised."""

    def __init__(self, inner: Any, memo: dict[str, Any]) -> None:
        self.inner = inner
        self.memo = memo
        self.kinds = inner.kinds

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def spans(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if text not in self.memo:
            self.memo[text] = self.inner.spans(text)
        return self.memo[text]

    def find(self, texts: Sequence[str], text: str, codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The batch's spans (offsets into the joined batch), from the memo when every
        document of the batch is in it."""
        memo = self.memo
        base = np.asarray(doc_bounds[:-1], dtype=np.int64)
        if all(t in memo for t in texts):
            parts = [memo[t] for t in texts]
            if not parts:
                empty = np.empty(0, dtype=np.int64)
                return empty, empty, empty
            return tuple(np.concatenate([np.asarray(p[c], dtype=np.int64) + (base[j] if c < 2 else 0)
                                         for j, p in enumerate(parts)]) for c in range(3))
        starts, ends, kinds = self.inner.find(texts, text, codes, cls, doc_bounds)
        # The document of each span: the last one starting at or before it (an empty document
        # shares its start with the next one and holds no span).
        owner = np.searchsorted(doc_bounds, starts, side="right") - 1
        for j, t in enumerate(texts):
            mine = owner == j
            memo[t] = (np.asarray(starts[mine] - base[j], dtype=np.int64),
                       np.asarray(ends[mine] - base[j], dtype=np.int64),
                       np.asarray(kinds[mine], dtype=np.int64))
        return starts, ends, kinds
