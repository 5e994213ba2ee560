"""Exact nearest-neighbour search over word vectors: one certified engine (:mod:`.engine`).

:class:`NearestNeighbors` answers every search textdp makes — the nearest row (MVC, Mahalanobis),
the two nearest with the input excluded (Vickrey), k nearest and the k-NN graph (truncated Gumbel),
radius search, dense squared-distance rows (TEM, SanText) and the certified candidate pairs of the
1-Diffractor list build — from one blocked float32 GEMM with one rigorous error bound and one
float64 re-scoring, so that every result equals a float64 brute force (ties → lowest index).
The brute-force functions here are the references the tests hold it to.
"""

from __future__ import annotations

import numpy as np

from textdp.neighbors.engine import (
    NearestNeighbors,
    NeighborGraph,
    RadiusNeighbors,
    squared_distances64,
)

__all__ = ["NearestNeighbors", "NeighborGraph", "RadiusNeighbors", "brute_force_kneighbors",
           "brute_force_nearest", "squared_distances64"]


def _brute_squared(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32).astype(np.float64)
    q = np.asarray(queries, dtype=np.float32).astype(np.float64)
    return ((v[None, :, :] - q[:, None, :]) ** 2).sum(axis=-1)


def brute_force_nearest(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Reference: argmin of float64 ‖v − q‖² over all rows (first index on ties). O(N·|V|·d) memory."""
    return np.argmin(_brute_squared(vectors, queries), axis=1)


def brute_force_kneighbors(vectors: np.ndarray, queries: np.ndarray, k: int,
                           exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reference: float64 sort by (squared distance, index) of all rows; O(N·|V|·d) memory."""
    d2 = _brute_squared(vectors, queries)
    if exclude is not None:
        ex = np.asarray(exclude)
        rows = np.flatnonzero(ex >= 0)
        d2[rows, ex[rows]] = np.inf
    idx = np.empty((d2.shape[0], k), dtype=np.int64)
    for r in range(d2.shape[0]):
        idx[r] = np.lexsort((np.arange(d2.shape[1]), d2[r]))[:k]
    return idx, np.sqrt(np.take_along_axis(d2, idx, axis=1))
