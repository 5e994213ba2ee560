"""One privacy scale for every setting: what a whole document (and, with a person field, a whole
person) gets, computed by the ledger's own code.

The per-word ε of MVC, 1-Diffractor, CusText and TEM are stated in different metrics and cannot
be compared with each other or with a document-level (ε, δ). The ledger states what one *unit*
of a document gets when it is replaced by any other (:func:`textdp.privacy.documents.
unit_guarantee`: for a word mechanism, ε × the metric's diameter on the vocabulary, bounded above)
and composes it over the document's units (:func:`textdp.privacy.documents.whole_document`:
basic composition, rounded up). This module applies the same two functions to the documents of
the user's data: a document of the data's median length and one of its 90th-percentile length
(lengths as the ledger counts them: alphanumeric runs, :func:`textdp.privacy.documents.
normal_forms`), and, with a person field, a person of median and 90th-percentile total exposure
together with their number of documents (group privacy over a person's documents: the sum of
their documents' ε, and of their δ).

Two documents of n words that differ in every word are the pair this bounds; it is the
guarantee the ledger reports, not the typical loss between near words
(:func:`textdp.assess.recommend.typical_losses`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["document_sizes", "document_scale", "PERCENTILES"]

#: The documents (and persons) the scale states: the median and the 90th percentile.
PERCENTILES = (("median", 50), ("p90", 90))


def document_sizes(texts: Sequence[str]) -> np.ndarray:
    """Per text, its size as the ledger records it (alphanumeric runs; 0 for none)."""
    from textdp.privacy.documents import normal_forms

    return np.asarray([0 if f is None else f[1] for f in normal_forms(list(texts))],
                      dtype=np.int64)


def _at(values: np.ndarray, q: int) -> int:
    # "higher": an actual value of the data, on the side of the longer document (the safe side).
    return int(np.percentile(values, q, method="higher")) if values.size else 0


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def document_scale(mechanism: Any, sizes: np.ndarray, units: Sequence[Any] | None = None,
                   input_kind: str = "texts") -> dict[str, Any]:
    """The document-level (and person-level) guarantee of ``mechanism`` on data whose documents
    have ``sizes`` (:func:`document_sizes`); ``units`` names each document's person.

    Returns ``{"unit", "epsilon_per_unit", "delta_per_unit", "scale", "why", "median": {"units",
    "epsilon", "delta"}, "p90": {...}, "persons": None | {"median": {"documents", "units",
    "epsilon", "delta"}, "p90": {...}, "count"}}``; an unbounded ε is None with ``why``.
    ``input_kind``: what the ledger would record (``texts``; ``documents`` for sentence
    embeddings, whose ``sizes`` are then sentence counts).
    """
    from textdp.privacy import round_up_sum
    from textdp.privacy.documents import unit_guarantee, whole_document

    unit = unit_guarantee(mechanism, input_kind)
    sizes = np.asarray(sizes, dtype=np.int64)
    cache: dict[int, tuple[float, float]] = {}

    def one(size: int) -> tuple[float, float]:
        if size not in cache:
            eps, delta, _ = whole_document(unit, size)
            cache[size] = (eps, delta)
        return cache[size]

    _, _, why = whole_document(unit, 1)
    out: dict[str, Any] = {"unit": unit.unit, "epsilon_per_unit": _number(unit.epsilon),
                           "delta_per_unit": unit.delta, "scale": unit.scale, "why": why}
    for name, q in PERCENTILES:
        n = _at(sizes, q)
        eps, delta = one(n)
        out[name] = {"units": n, "epsilon": _number(eps), "delta": delta}
    out["persons"] = None if units is None else _persons(units, sizes, one, round_up_sum)
    return out


#: Every finite float is an integer multiple of 2⁻¹⁰⁷⁴: sums of such integers are exact.
_SCALE = 2 ** 1074


def _scaled(x: float) -> int | None:
    """``x`` as an exact integer multiple of 2⁻¹⁰⁷⁴ (None for ∞)."""
    from fractions import Fraction

    return None if math.isinf(x) else int(Fraction(x) * _SCALE)


def _persons(units: Sequence[Any], sizes: np.ndarray, one: Any, round_up_sum: Any
             ) -> dict[str, Any]:
    """Per person the sum of their documents' (ε, δ) (group privacy, rounded up), and the person
    at the median and the 90th percentile of that sum.

    The sums are exact (integers in units of 2⁻¹⁰⁷⁴, ranked as they are) and only the chosen
    persons' are rounded up: the same figures as rounding up every person's sum and ranking
    those (:func:`textdp.privacy.round_up_sum`), in a fraction of the time on many persons."""
    from fractions import Fraction

    from textdp.privacy import round_up

    if len(units) != len(sizes):
        raise ValueError(f"{len(units)} persons for {len(sizes)} documents")
    by_person: dict[Any, list[int]] = {}
    for u, s in zip(units, sizes.tolist(), strict=True):
        by_person.setdefault(u, []).append(s)
    exact = {s: tuple(_scaled(v) for v in one(s)) for s in set(sizes.tolist())}
    people = []
    for position, docs in enumerate(by_person.values()):
        eps = [exact[s][0] for s in docs]
        key = (1, 0) if any(e is None for e in eps) else (0, sum(eps))
        people.append((key, sum(docs), len(docs), position, sum(exact[s][1] for s in docs)))
    people.sort()

    def rounded(p: tuple) -> float:
        return math.inf if p[0][0] else round_up(Fraction(p[0][1], _SCALE))

    out: dict[str, Any] = {"count": len(people)}
    for name, q in PERCENTILES:
        k = max(min(len(people) - 1, int(math.ceil(q / 100 * len(people))) - 1), 0)
        # Persons whose rounded ε ties with the k-th one's rank by the number of units, then of
        # documents (the order of ranking the rounded sums): ties are contiguous here.
        value = rounded(people[k])
        lo, hi = k, k + 1
        while lo > 0 and rounded(people[lo - 1]) == value:
            lo -= 1
        while hi < len(people) and rounded(people[hi]) == value:
            hi += 1
        chosen = sorted(people[lo:hi], key=lambda p: (p[1], p[2], p[3]))[k - lo]
        out[name] = {"documents": chosen[2], "units": chosen[1], "epsilon": _number(value),
                     "delta": min(1.0, round_up(Fraction(chosen[4], _SCALE)))}
    return out
