"""The rows of a :class:`~textdp.neighbors.engine.NearestNeighbors` against themselves: every row's
k nearest other rows with the exact closest and farthest pairs (the truncated Gumbel's k-NN
graph), and every pair within a per-row threshold (the 1-Diffractor list build's certified
candidate pairs).

Both use the engine's blocked float32 GEMM and error bound (module docstring of
:mod:`textdp.neighbors.engine`, Higham §3.1 and Lemma 3.1) and re-score in float64, so that the
results equal a float64 brute force. They are methods of the engine
(:meth:`~textdp.neighbors.engine.NearestNeighbors.neighbor_graph`,
:meth:`~textdp.neighbors.engine.NearestNeighbors.pairs_within`); this module holds their bodies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from textdp.neighbors.primitives import NeighborGraph, squared_distances64

if TYPE_CHECKING:
    from textdp.neighbors.engine import NearestNeighbors

__all__ = ["neighbor_graph", "pairs_within"]


def neighbor_graph(nn: NearestNeighbors, k: int) -> NeighborGraph:
    """Every row's ``k`` nearest other rows and the exact closest and farthest pairs.

    One blocked pass over all |V|² pairs (the cost of |V| queries).
    """
    nv = nn._n
    if nv < 2:
        raise ValueError("need at least two vectors")
    k = int(k)
    if not 1 <= k <= nv - 1:
        raise ValueError(f"k must lie in [1, {nv - 1}], got {k}")
    q, ex = nn._v32, np.arange(nv)
    idx = np.empty((nv, k), dtype=np.int64)
    d2 = np.empty((nv, k), dtype=np.float64)
    row_max = np.empty(nv, dtype=np.float64)
    nn._parallel(nv, lambda a, b: nn._topk_serial(q[a:b], ex[a:b], k, idx[a:b], d2[a:b],
                                                      row_max[a:b]))
    dist = np.sqrt(d2)
    i_min = int(np.argmin(dist[:, 0]))
    min_pair = (min(i_min, int(idx[i_min, 0])), max(i_min, int(idx[i_min, 0])))
    # Farthest pair: only rows whose float32 maximum could reach the best lower bound are
    # recomputed in float64 against every row (one more unit roundoff covers adding ‖q‖²).
    row_max += nn._sq
    err = nn._error(q)[1] + 2.0**-24 * nn._max_norm ** 2
    lower = float((row_max - err).max())
    best, max_pair = -1.0, (0, 0)
    for i in np.flatnonzero(row_max + err >= lower).tolist():
        far = squared_distances64(nn.vectors64, None, nn.vectors64[i])
        j = int(np.argmax(far))
        if far[j] > best:
            best, max_pair = float(far[j]), (min(i, j), max(i, j))
    return NeighborGraph(idx, dist, float(dist[i_min, 0]), min_pair, float(np.sqrt(best)),
                         max_pair)

def pairs_within(nn: NearestNeighbors, thresholds: np.ndarray, block: int = 1024,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair i ≠ j of rows with float32 squared distance D32_ij ≤ ``thresholds[i]``.

    D is symmetric, so only blocks I ≤ J of one GEMM
    :meth:`NearestNeighbors.augmented_queries` · :meth:`NearestNeighbors.augmented_rows`ᵀ are
    computed and each serves the rows of I and (transposed) those of J. Every j with exact
    D_ij ≤ t_i − e_i (e = :meth:`NearestNeighbors.error_bound` with ``full=True``) is returned.
    Returns (i, j, D32_ij), unordered.
    """
    n = nn._n
    block = min(block, -(-n // 8) * 8)  # a multiple of 8: mask rows are whole uint64 words
    n_pad = -(-n // block) * block
    left = np.zeros((n_pad, nn.dim + 2), dtype=np.float32)
    right = np.zeros((n_pad, nn.dim + 2), dtype=np.float32)
    left[:n] = nn.augmented_queries(nn._v32)[0]
    right[:n] = nn.augmented_rows(np.float32)
    left[n:, -1] = right[n:, -2] = 1e30  # padding: far from everything, filtered below
    thr = np.full(n_pad, -np.inf, dtype=np.float32)
    thr[:n] = thresholds
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    dist = np.empty((block, block), dtype=np.float32)
    mask = np.empty((block, block), dtype=bool)
    for i0 in range(0, n_pad, block):
        for j0 in range(i0, n_pad, block):
            np.matmul(left[i0:i0 + block], right[j0:j0 + block].T, out=dist)
            np.less_equal(dist, thr[i0:i0 + block, None], out=mask)
            found.append(_collect(mask, dist, i0, j0))
            if j0 > i0:
                np.less_equal(dist, thr[None, j0:j0 + block], out=mask)
                c, r, d = _collect(mask, dist, i0, j0)
                found.append((r, c, d))
    rows, cols, d32 = (np.concatenate(x) for x in zip(*found, strict=True))
    keep = (rows < n) & (cols < n) & (rows != cols)
    return rows[keep], cols[keep], d32[keep]


def _collect(mask: np.ndarray, dist: np.ndarray, row0: int, col0: int,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, value) of the True entries of a sparse (block, block) mask."""
    block = mask.shape[1]
    words = np.flatnonzero(mask.view(np.uint64).ravel() != 0)  # skip 8 False at a time
    sub_w, sub_b = np.nonzero(mask.reshape(-1, 8)[words])
    flat = words[sub_w] * 8 + sub_b
    r, c = np.divmod(flat, block)
    return r + row0, c + col0, dist.ravel()[flat]
