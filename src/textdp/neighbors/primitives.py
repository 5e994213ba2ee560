"""What every exact search is defined by and returns: the float64 squared distance, the check of
a batch of queries, and the result types of the radius search and the k-NN graph.

:func:`squared_distances64` is the float64 brute force every result of
:class:`textdp.neighbors.NearestNeighbors` equals (ties → lowest index); the approximate backends
(:mod:`textdp.neighbors.approximate`) re-score their candidates with it too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NeighborGraph", "RadiusNeighbors", "check_queries", "squared_distances64"]


def squared_distances64(vectors64: np.ndarray, rows: np.ndarray | None,
                        points: np.ndarray) -> np.ndarray:
    """The float64 squared distances every result is defined by: Σ_i (v_i − p_i)² per row.

    ``rows`` selects rows of ``vectors64`` (None: all of them); ``points`` is one point (d,) or
    one per row, (len(rows), d). The sum is numpy's row sum, the same as a brute force
    ``((v − q)**2).sum(axis=-1)`` over the same float64 values.
    """
    diff = (vectors64 if rows is None else vectors64[rows]) - points
    diff *= diff
    return diff.sum(axis=1)


def check_queries(queries: np.ndarray, dim: int) -> np.ndarray:
    """``queries`` as an array of shape (N, ``dim``) of finite values, else ValueError."""
    q = np.asarray(queries)
    if q.ndim != 2 or q.shape[1] != dim:
        raise ValueError(f"queries must have shape (N, {dim}), got {q.shape}")
    if not np.isfinite(q).all():
        raise ValueError("queries contain NaN or infinity")
    return q


@dataclass(frozen=True, slots=True)
class RadiusNeighbors:
    """Rows within a radius, in CSR layout: query r's rows are ``indices[indptr[r]:indptr[r+1]]``
    (ascending index), at the float64 ``distances`` in the same positions."""

    indptr: np.ndarray
    indices: np.ndarray
    distances: np.ndarray

    def counts(self) -> np.ndarray:
        return np.diff(self.indptr)


@dataclass(frozen=True, slots=True)
class NeighborGraph:
    """Every row's k nearest *other* rows, plus the exact closest and farthest pairs.

    Attributes:
        indices: (|V|, k) int64, row i's k nearest rows j ≠ i by (float64 distance, index).
        distances: (|V|, k) float64 distances to them.
        min_distance, min_pair: the smallest distance between two different rows and a pair
            attaining it.
        max_distance, max_pair: the largest distance between two rows and a pair attaining it.
    """

    indices: np.ndarray
    distances: np.ndarray
    min_distance: float
    min_pair: tuple[int, int]
    max_distance: float
    max_pair: tuple[int, int]
