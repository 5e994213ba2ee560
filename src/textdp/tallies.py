"""What a privatisation counted: one immutable, mergeable value.

A :class:`Tallies` holds everything a word report states about the data (tokens per class and
per policy, identifiers and entities per kind, documents, per-vocabulary-row counts for the
deniability estimate, time, and what a budget allocation saw). A run split over processes (Ray,
``datasets`` with ``num_proc``) sums its parts with ``+``; a front that sends one batch's tallies
home takes the difference of two snapshots with ``-``. JSON-ready (:meth:`Tallies.to_json`), so
a tally can travel in a table column.

:class:`TallyCounter` is the mutable accumulator a :class:`textdp.pipeline.Privatizer` counts
into (vectorised: one update per batch, never per token); :meth:`TallyCounter.snapshot` freezes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["POLICY_COUNTS", "CLASS_COUNTS", "Tallies", "TallyCounter"]

#: What happened to words and numbers (the report's ``tokens.by_policy``), in report order.
POLICY_COUNTS = (
    "privatized", "privatized_unchanged", "stopwords_kept", "clitics_kept",
    "oov_words_masked", "oov_words_kept", "oov_words_dropped", "oov_words_randomized",
    "numbers_masked", "numbers_kept", "numbers_dropped", "numbers_randomized",
    "identifiers_masked", "identifiers_kept", "identifiers_dropped",
    "entities_masked", "entities_dropped", "allowed_kept",
)
#: Token classes (:class:`textdp.text.TokenClass` values), in report order.
CLASS_COUNTS = ("word", "number", "whitespace", "punctuation", "other", "identifier")

_EMPTY_IDS = np.zeros(0, dtype=np.int64)


def _frozen(counts: Mapping[str, int] | None, keys: Iterable[str] = ()) -> Mapping[str, int]:
    out = dict.fromkeys(keys, 0)
    for k, v in (counts or {}).items():
        out[str(k)] = int(v)
    return MappingProxyType(out)


def _readonly(a: Any) -> np.ndarray:
    a = np.array(a, dtype=np.int64)  # a copy: the caller's array stays theirs
    a.flags.writeable = False
    return a


def _nonzero(data: dict[str, Any]) -> dict[str, Any]:
    for key in ("by_policy", "by_class", "by_kind"):
        data[key] = {k: v for k, v in data[key].items() if v}
    return data


def _merge(a: Mapping[str, int], b: Mapping[str, int], sign: int) -> Mapping[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + sign * v
    return MappingProxyType(out)


@dataclass(frozen=True, slots=True, eq=False)
class Tallies:
    """Everything a word release counted; immutable, summed with ``+``.

    Attributes:
        by_policy: :data:`POLICY_COUNTS` → count.
        by_class: :data:`CLASS_COUNTS` → count.
        by_kind: identifier and entity kind (``email``, ``person``, ``allowed``, …) → count.
        documents, empty_documents: documents run, and how many were empty.
        max_privatized: the most words privatised in one document (a maximum of maxima:
            ``+`` takes the larger, ``-`` keeps the left operand's, since the maximum of what
            was added in between is not known).
        nanoseconds: time spent privatising (integer, so sums and differences are exact).
        word_ids, word_counts: how many times each vocabulary row was privatised (sparse:
            sorted rows with a nonzero count).
        below_floor: documents too long for an allocation's per-word floor.
        lengths, levels_used: the privatised-word counts of documents and the ε levels an
            allocation used (sets: ``+`` and ``-`` both keep the union).
    """

    by_policy: Mapping[str, int] = field(default_factory=lambda: _frozen(None, POLICY_COUNTS))
    by_class: Mapping[str, int] = field(default_factory=lambda: _frozen(None, CLASS_COUNTS))
    by_kind: Mapping[str, int] = field(default_factory=lambda: _frozen(None))
    documents: int = 0
    empty_documents: int = 0
    max_privatized: int = 0
    nanoseconds: int = 0
    word_ids: np.ndarray = field(default_factory=lambda: _EMPTY_IDS)
    word_counts: np.ndarray = field(default_factory=lambda: _EMPTY_IDS)
    below_floor: int = 0
    lengths: frozenset[int] = frozenset()
    levels_used: frozenset[float] = frozenset()

    @classmethod
    def zero(cls, kinds: Iterable[str] = ()) -> Tallies:
        """Nothing counted yet (``kinds``: the identifier and entity kinds, counted 0)."""
        return cls(by_kind=_frozen(None, kinds))

    @property
    def seconds(self) -> float:
        return self.nanoseconds / 1e9

    @property
    def tokens(self) -> int:
        return sum(self.by_class.values())

    def dense_word_counts(self, size: int) -> np.ndarray:
        """The per-row counts as a dense array of ``size`` rows (the vocabulary's size)."""
        out = np.zeros(size, dtype=np.int64)
        out[self.word_ids] = self.word_counts
        return out

    def _words(self, other: Tallies, sign: int) -> tuple[np.ndarray, np.ndarray]:
        ids = np.concatenate([self.word_ids, other.word_ids])
        counts = np.concatenate([self.word_counts, sign * other.word_counts])
        rows, inverse = np.unique(ids, return_inverse=True)
        summed = np.zeros(rows.size, dtype=np.int64)
        np.add.at(summed, inverse, counts)
        keep = summed != 0
        return rows[keep], summed[keep]

    def __add__(self, other: Tallies) -> Tallies:
        if not isinstance(other, Tallies):
            return NotImplemented
        ids, counts = self._words(other, 1)
        return Tallies(
            by_policy=_merge(self.by_policy, other.by_policy, 1),
            by_class=_merge(self.by_class, other.by_class, 1),
            by_kind=_merge(self.by_kind, other.by_kind, 1),
            documents=self.documents + other.documents,
            empty_documents=self.empty_documents + other.empty_documents,
            max_privatized=max(self.max_privatized, other.max_privatized),
            nanoseconds=self.nanoseconds + other.nanoseconds,
            word_ids=_readonly(ids), word_counts=_readonly(counts),
            below_floor=self.below_floor + other.below_floor,
            lengths=self.lengths | other.lengths, levels_used=self.levels_used | other.levels_used)

    def __radd__(self, other: Any) -> Tallies:
        if other == 0:  # sum(tallies) starts from 0
            return self
        return NotImplemented

    def __sub__(self, other: Tallies) -> Tallies:
        """What was counted between snapshot ``other`` and this one (see ``max_privatized``,
        ``lengths`` and ``levels_used`` for the fields that are not differences)."""
        if not isinstance(other, Tallies):
            return NotImplemented
        ids, counts = self._words(other, -1)
        return Tallies(
            by_policy=_merge(self.by_policy, other.by_policy, -1),
            by_class=_merge(self.by_class, other.by_class, -1),
            by_kind=_merge(self.by_kind, other.by_kind, -1),
            documents=self.documents - other.documents,
            empty_documents=self.empty_documents - other.empty_documents,
            max_privatized=self.max_privatized,
            nanoseconds=self.nanoseconds - other.nanoseconds,
            word_ids=_readonly(ids), word_counts=_readonly(counts),
            below_floor=self.below_floor - other.below_floor,
            lengths=self.lengths, levels_used=self.levels_used)

    def __eq__(self, other: object) -> bool:
        """Equal counts (a kind counted 0 equals a kind not counted)."""
        if not isinstance(other, Tallies):
            return NotImplemented
        return _nonzero(self.to_json()) == _nonzero(other.to_json())

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (ints, strings, lists): what a worker sends home."""
        return {"by_policy": dict(self.by_policy), "by_class": dict(self.by_class),
                "by_kind": dict(self.by_kind), "documents": self.documents,
                "empty_documents": self.empty_documents, "max_privatized": self.max_privatized,
                "nanoseconds": self.nanoseconds, "word_ids": self.word_ids.tolist(),
                "word_counts": self.word_counts.tolist(), "below_floor": self.below_floor,
                "lengths": sorted(self.lengths), "levels_used": sorted(self.levels_used)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tallies:
        """The inverse of :meth:`to_json`."""
        return cls(by_policy=_frozen(data["by_policy"]), by_class=_frozen(data["by_class"]),
                   by_kind=_frozen(data["by_kind"]), documents=int(data["documents"]),
                   empty_documents=int(data["empty_documents"]),
                   max_privatized=int(data["max_privatized"]),
                   nanoseconds=int(data["nanoseconds"]),
                   word_ids=_readonly(data["word_ids"]), word_counts=_readonly(data["word_counts"]),
                   below_floor=int(data["below_floor"]),
                   lengths=frozenset(int(n) for n in data["lengths"]),
                   levels_used=frozenset(float(v) for v in data["levels_used"]))

    def __reduce__(self) -> tuple[Any, ...]:  # mapping proxies do not pickle; JSON does
        return (Tallies.from_json, (self.to_json(),))


class TallyCounter:
    """The mutable accumulator of one Privatizer: dense per-row counts, plain dicts; one
    vectorised update per batch. :meth:`snapshot` gives the immutable :class:`Tallies`."""

    def __init__(self, vocabulary_size: int, kinds: Iterable[str]) -> None:
        self.by_policy = dict.fromkeys(POLICY_COUNTS, 0)
        self.by_class = dict.fromkeys(CLASS_COUNTS, 0)
        self.by_kind = dict.fromkeys(kinds, 0)
        self.word_counts = np.zeros(vocabulary_size, dtype=np.int64)
        self.documents = 0
        self.empty_documents = 0
        self.max_privatized = 0
        self.nanoseconds = 0

    def count_batch(self, ids: np.ndarray, privatized: np.ndarray, new_ids: np.ndarray,
                    n_oov: int, n_numbers: int, verb: str, n_spans: int,
                    structure: Mapping[str, int]) -> None:
        """Count one vectorised step: ``ids`` every word-like token's row (−1 outside the
        vocabulary), ``privatized`` the rows sent to the mechanism and ``new_ids`` what came
        back; ``n_oov`` tokens outside the vocabulary of which ``n_numbers`` numbers, handled by
        the OOV policy's ``verb``; ``n_spans`` identifier and entity tokens; ``structure`` the
        whitespace, punctuation and other tokens."""
        counts, classes = self.by_policy, self.by_class
        counts["privatized"] += int(privatized.size)
        self.word_counts += np.bincount(privatized, minlength=self.word_counts.size)
        counts["privatized_unchanged"] += int((new_ids == privatized).sum())
        counts[f"oov_words_{verb}"] += n_oov - n_numbers
        counts[f"numbers_{verb}"] += n_numbers
        classes["word"] += ids.size - n_numbers - n_spans
        classes["number"] += n_numbers
        classes["identifier"] += n_spans
        for k, v in structure.items():
            classes[k] += v

    def add_kinds(self, per_kind: np.ndarray) -> None:
        """Add one batch's counts per kind (in the order of the kinds given at construction)."""
        for name, n in zip(self.by_kind, per_kind.tolist(), strict=True):
            self.by_kind[name] += n

    def snapshot(self, allocator: Any = None) -> Tallies:
        """Everything counted so far (with what ``allocator`` saw, when the run allocates)."""
        ids = np.flatnonzero(self.word_counts)
        extra = {}
        if allocator is not None:
            extra = {"below_floor": allocator.below_floor,
                     "lengths": frozenset(allocator.lengths),
                     "levels_used": frozenset(allocator.levels_used)}
        return Tallies(by_policy=_frozen(self.by_policy), by_class=_frozen(self.by_class),
                       by_kind=_frozen(self.by_kind), documents=self.documents,
                       empty_documents=self.empty_documents, max_privatized=self.max_privatized,
                       nanoseconds=self.nanoseconds, word_ids=_readonly(ids),
                       word_counts=_readonly(self.word_counts[ids]), **extra)
