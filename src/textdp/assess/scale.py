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


def _persons(units: Sequence[Any], sizes: np.ndarray, one: Any, round_up_sum: Any
             ) -> dict[str, Any]:
    """Per person the sum of their documents' (ε, δ) (group privacy, rounded up), and the person
    at the median and the 90th percentile of that sum."""
    if len(units) != len(sizes):
        raise ValueError(f"{len(units)} persons for {len(sizes)} documents")
    by_person: dict[Any, list[int]] = {}
    for u, s in zip(units, sizes.tolist(), strict=True):
        by_person.setdefault(u, []).append(s)
    people = []
    for docs in by_person.values():
        pairs = [one(s) for s in docs]
        eps = (math.inf if any(math.isinf(e) for e, _ in pairs)
               else round_up_sum([e for e, _ in pairs]))
        delta = min(1.0, round_up_sum([d for _, d in pairs]))
        people.append((len(docs), sum(docs), eps, delta))
    # Rank by exposure: ε, then the number of units and of documents (ε is ∞ for all when the
    # unit is unbounded; the person with more words is still the more exposed one).
    people.sort(key=lambda p: (p[2], p[1], p[0]))
    out: dict[str, Any] = {"count": len(people)}
    for name, q in PERCENTILES:
        k = min(len(people) - 1, int(math.ceil(q / 100 * len(people))) - 1) if people else 0
        docs, n_units, eps, delta = people[max(k, 0)]
        out[name] = {"documents": docs, "units": n_units, "epsilon": _number(eps),
                     "delta": delta}
    return out
