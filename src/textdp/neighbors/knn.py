"""Exact k-nearest, k-nearest-excluding-a-row and radius search by certified blocked GEMM.

The same idea as :class:`textdp.neighbors.NearestNeighbors`: one float32 GEMM of
[v, ‖v‖²]·[−2q, 1]ᵀ scores a block of queries against every row, and float32 rounding moves a score
by at most e(q) = γ_{d+1}(max‖v‖² + 2 max‖v‖ ‖q‖) (Higham, *Accuracy and Stability of Numerical
Algorithms*, §3.1). If t is the k-th smallest float32 score of a query, the exact k-th smallest
score is at most t + e, so every row of the exact top k has a float32 score ≤ t + 2e. Those
candidates (almost always exactly k of them) are re-scored in float64 and ordered by (float64
distance, index). The result equals a float64 brute force — independent of the block size and of
how a batch is split — with ties broken by the lowest index, like
:func:`textdp.neighbors.brute_force_nearest`.

Speed: the scores of a block are viewed as tiles of ``tile`` columns. One SIMD min-pass gives every
tile's minimum; the k smallest scores lie in the k tiles with the smallest minima, so only those
tiles are partitioned, and the (k+1)-th smallest score — the certificate's runner-up — is the
smaller of the (k+1)-th score inside them and the smallest minimum of the other tiles.

Queries are rounded to float32 first (the GEMM's input); "exact" is with respect to that query.
Distances are float64 sqrt(Σ(v − q)²) of the float32 values.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

__all__ = ["ExactNeighbors", "NeighborGraph", "RadiusNeighbors", "brute_force_kneighbors"]

_U32 = 2.0**-24  # unit roundoff of float32
_TILE = 512
_PAD = float(np.finfo(np.float32).max)  # score of padding columns: never a candidate
_CAP = float(np.finfo(np.float32).max) / 2  # thresholds stay below the padding score


def brute_force_kneighbors(vectors: np.ndarray, queries: np.ndarray, k: int,
                           exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reference: float64 sort by (distance, index) of all rows; O(N·|V|·d) memory."""
    v = np.asarray(vectors, dtype=np.float32).astype(np.float64)
    q = np.asarray(queries, dtype=np.float32).astype(np.float64)
    d = np.sqrt(((v[None, :, :] - q[:, None, :]) ** 2).sum(axis=-1))
    if exclude is not None:
        ex = np.asarray(exclude)
        rows = np.flatnonzero(ex >= 0)
        d[rows, ex[rows]] = np.inf
    idx = np.empty((q.shape[0], k), dtype=np.int64)
    for r in range(q.shape[0]):
        idx[r] = np.lexsort((np.arange(v.shape[0]), d[r]))[:k]
    return idx, np.take_along_axis(d, idx, axis=1)


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


class ExactNeighbors:
    """Exact k-NN, k-NN excluding one row per query (e.g. the input word), radius search, and
    the k-NN graph of the rows themselves with their closest and farthest pairs.

    Args:
        vectors: (|V|, d) array; stored as float32.
        block_size: queries per GEMM block (default: a block's scores take about 12 MiB).
        n_jobs: threads, each running whole blocks with a single-threaded BLAS (default: the CPUs
            this process may use, at most 8). Results do not depend on it.
    """

    def __init__(self, vectors: np.ndarray, *, block_size: int | None = None,
                 n_jobs: int | None = None) -> None:
        v = np.ascontiguousarray(vectors, dtype=np.float32)
        if v.ndim != 2 or v.shape[0] == 0:
            raise ValueError(f"vectors must be a non-empty 2-D array, got shape {v.shape}")
        n, d = v.shape
        sq = np.einsum("ij,ij->i", v, v, dtype=np.float64)
        self._tile = _TILE if n >= 4 * _TILE else n
        n_pad = -(-n // self._tile) * self._tile
        self._aug = np.zeros((n_pad, d + 1), dtype=np.float32)
        self._aug[:n, :d] = v
        self._aug[:n, d] = sq
        self._aug[n:, d] = _PAD
        self._n = n
        self._v32 = v
        self._v64 = v.astype(np.float64)
        self._aug_ones: dict[str, np.ndarray] = {}
        self._max_sq = float(sq.max())
        self._max_norm = float(np.sqrt(self._max_sq))
        k = d + 1
        # γ_{d+1} for the dot product, plus one unit roundoff for storing ‖v‖² in float32.
        self._gamma = (k * _U32) / (1 - k * _U32) + _U32
        # About 12 MiB of scores per block (cache-resident for the passes that follow); small
        # vocabularies get large blocks so that Python overhead per block stays negligible.
        self.block_size = int(block_size or np.clip((12 << 20) // (4 * n_pad), 8, 8192))
        if n_jobs is None:
            cpus = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1))
            n_jobs = min(8, cpus)
        self.n_jobs = max(1, int(n_jobs))

    @property
    def n_vectors(self) -> int:
        return self._n

    @property
    def dim(self) -> int:
        return int(self._v32.shape[1])

    @property
    def max_norm(self) -> float:
        """The largest Euclidean norm of a row."""
        return self._max_norm

    @property
    def vectors64(self) -> np.ndarray:
        """The rows as float64 (the float32 values, widened; read it, do not modify it)."""
        return self._v64

    # -- shared pieces ---------------------------------------------------------------------------
    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        q = np.asarray(queries)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must have shape (N, {self.dim}), got {q.shape}")
        if not np.isfinite(q).all():
            raise ValueError("queries contain NaN or infinity")
        return np.ascontiguousarray(q, dtype=np.float32)

    def _error(self, q32: np.ndarray) -> np.ndarray:
        """Rigorous bound (×1.01) on the float32 rounding error of every score of each query."""
        q64 = q32.astype(np.float64)
        qnorm = np.sqrt(np.einsum("ij,ij->i", q64, q64))
        return self._gamma * (self._max_sq + 2.0 * self._max_norm * qnorm) * 1.01

    def _scores(self, q32: np.ndarray, out: np.ndarray) -> np.ndarray:
        """float32 ‖v‖² − 2⟨v, q⟩ of a block of queries against every (padded) row: one GEMM."""
        d = self.dim
        qa = np.empty((q32.shape[0], d + 1), dtype=np.float32)
        np.multiply(q32, -2.0, out=qa[:, :d])
        qa[:, d] = 1.0
        return np.matmul(qa, self._aug.T, out=out)

    def _exact_sq(self, q32: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """float64 Σ(v − q)² for (query row, vocabulary row) pairs."""
        diff = self._v64[cols] - q32[rows].astype(np.float64)
        return np.einsum("ij,ij->i", diff, diff)

    @staticmethod
    def _buffer(pool: dict, rows: int, cols: int, dtype) -> np.ndarray:
        """A (rows, cols) scratch array reused by the calling thread (fresh pages cost faults)."""
        key = threading.get_ident()
        buf = pool.get(key)
        if buf is None or buf.shape[0] < rows:
            buf = pool[key] = np.empty((rows, cols), dtype=dtype)
        return buf[:rows]

    def _blocks(self, n: int, fn, block_size: int | None = None) -> None:
        """Run ``fn(start, stop)`` over query blocks, one thread per core (single-threaded BLAS)."""
        b = block_size or self.block_size
        starts = list(range(0, n, b))
        jobs = min(self.n_jobs, len(starts))
        if jobs <= 1:
            for s in starts:
                fn(s, min(s + b, n))
            return
        chunks = np.array_split(np.arange(len(starts)), jobs)

        def work(chunk):
            for i in chunk.tolist():
                fn(starts[i], min(starts[i] + b, n))

        with _blas_single_thread(), ThreadPoolExecutor(jobs) as pool:
            list(pool.map(work, chunks))

    # -- k nearest -------------------------------------------------------------------------------
    def kneighbors(self, queries: np.ndarray, k: int, *,
                   exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest rows of every query, nearest first.

        Args:
            queries: (N, d) array.
            k: number of neighbours, 1 ≤ k ≤ |V| (|V| − 1 when a row is excluded).
            exclude: optional (N,) int array: a row each query must not return (−1: none), e.g.
                the input word itself.

        Returns:
            ``(indices, distances)``: (N, k) int64 and (N, k) float64, by (distance, index).
        """
        q32 = self._check_queries(queries)
        n = q32.shape[0]
        k = int(k)
        if exclude is not None:
            exclude = np.asarray(exclude, dtype=np.int64)
            if exclude.shape != (n,):
                raise ValueError(f"exclude must have shape ({n},), got {exclude.shape}")
            if exclude.size and (exclude.max() >= self._n or exclude.min() < -1):
                raise ValueError("exclude holds an index out of range")
        limit = self._n - (1 if exclude is not None and (exclude >= 0).any() else 0)
        if not 1 <= k <= limit:
            raise ValueError(f"k must lie in [1, {limit}], got {k}")
        idx = np.empty((n, k), dtype=np.int64)
        dist = np.empty((n, k), dtype=np.float64)
        pool: dict = {}

        def block(start: int, stop: int) -> None:
            sc = self._scores(q32[start:stop], self._buffer(pool, stop - start,
                                                           self._aug.shape[0], np.float32))
            ex = None if exclude is None else exclude[start:stop]
            idx[start:stop], dist[start:stop] = self._topk(q32[start:stop], sc, k, ex)

        self._blocks(n, block)
        return idx, dist

    def _topk(self, q32: np.ndarray, sc: np.ndarray, k: int,
              exclude: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Exact top k of a block of scores (``sc`` is scratch: excluded entries become +inf)."""
        m, n_pad = sc.shape
        rows = np.arange(m)
        if exclude is not None:
            has = exclude >= 0
            sc[rows[has], exclude[has]] = np.inf
        err2 = 2.0 * self._error(q32)
        tile = self._tile
        n_tiles = n_pad // tile
        if k >= n_tiles or k >= tile:
            # Few tiles (small vocabularies): partition whole rows.
            kth = np.partition(sc, k - 1, axis=1)[:, k - 1].astype(np.float64)
            return self._resolve(q32, sc, np.arange(m), kth + err2, k)
        tiled = sc.reshape(m, n_tiles, tile)
        tile_min = tiled.min(axis=2)
        best_tiles = np.argpartition(tile_min, k - 1, axis=1)[:, :k]
        gathered = tiled[rows[:, None], best_tiles].reshape(m, k * tile)
        # One kth (several are several times slower in numpy): the first k are the k smallest.
        part = np.partition(gathered, k, axis=1)
        kth = part[:, :k].max(axis=1).astype(np.float64)
        tile_min[rows[:, None], best_tiles] = np.inf
        runner_up = np.minimum(part[:, k], tile_min.min(axis=1)).astype(np.float64)
        threshold = np.minimum(kth + err2, _CAP)
        sure = runner_up > threshold
        out_i = np.empty((m, k), dtype=np.int64)
        out_d = np.empty((m, k), dtype=np.float64)
        s = np.flatnonzero(sure)
        if s.size:
            # No score outside the gathered tiles is within the bound: candidates are there.
            rr, jj = np.nonzero(gathered[s] <= threshold[s, None])
            cc = best_tiles[s[rr], jj // tile] * tile + jj % tile
            out_i[s], out_d[s] = self._finish(q32[s], rr, cc, k)
        a = np.flatnonzero(~sure)
        if a.size:
            out_i[a], out_d[a] = self._resolve(q32, sc, a, threshold[a], k)
        return out_i, out_d

    def _resolve(self, q32: np.ndarray, sc: np.ndarray, rows: np.ndarray, threshold: np.ndarray,
                 k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top k among the whole-row candidates with a float32 score ≤ ``threshold``."""
        threshold = np.minimum(threshold, _CAP)
        rr, cc = np.nonzero(sc[rows] <= threshold[:, None])
        return self._finish(q32[rows], rr, cc, k)

    def _finish(self, q32: np.ndarray, rr: np.ndarray, cc: np.ndarray,
                k: int) -> tuple[np.ndarray, np.ndarray]:
        """Order candidates (query rr, row cc) by (float64 distance, index); first k per query."""
        d2 = self._exact_sq(q32, rr, cc)
        order = np.lexsort((cc, d2, rr))
        rr, cc, d2 = rr[order], cc[order], d2[order]
        starts = np.searchsorted(rr, np.arange(q32.shape[0]))
        take = starts[:, None] + np.arange(k)
        return cc[take], np.sqrt(d2[take])

    # -- radius ----------------------------------------------------------------------------------
    def radius_neighbors(self, queries: np.ndarray, radius: float) -> RadiusNeighbors:
        """All rows at float64 distance ≤ ``radius`` of each query, in ascending index."""
        q32 = self._check_queries(queries)
        radius = float(radius)
        if not np.isfinite(radius) or radius < 0:
            raise ValueError(f"radius must be a finite number ≥ 0, got {radius!r}")
        n = q32.shape[0]
        q64 = q32.astype(np.float64)
        qsq = np.einsum("ij,ij->i", q64, q64)
        parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

        def block(start: int, stop: int) -> None:
            sc = self._scores(q32[start:stop],
                              np.empty((stop - start, self._aug.shape[0]), np.float32))
            # score + ‖q‖² is the squared distance up to the error bound: keep a superset.
            limit = np.minimum(radius * radius - qsq[start:stop] + self._error(q32[start:stop]),
                               _CAP)
            rr, cc = np.nonzero(sc <= limit[:, None])
            d = np.sqrt(self._exact_sq(q32[start:stop], rr, cc))
            keep = d <= radius
            parts[start] = (rr[keep] + start, cc[keep], d[keep])

        self._blocks(n, block)
        keys = sorted(parts)
        rr = np.concatenate([parts[s][0] for s in keys]) if keys else np.empty(0, np.int64)
        cc = np.concatenate([parts[s][1] for s in keys]) if keys else np.empty(0, np.int64)
        dd = np.concatenate([parts[s][2] for s in keys]) if keys else np.empty(0)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rr, minlength=n), out=indptr[1:])
        return RadiusNeighbors(indptr, cc.astype(np.int64, copy=False), dd)

    # -- dense distance rows, block by block -----------------------------------------------------
    def map_squared_distances(self, queries: np.ndarray, fn, *, scale: float = 1.0,
                              dtype=np.float64, block_size: int | None = None) -> None:
        """Call ``fn(start, stop, block, error)`` for consecutive blocks of queries.

        ``block`` is the (stop − start, |V|) array of c²·‖v − q‖² (c = ``scale``) from one GEMM
        of [−2c²q, c², c²‖q‖²]·[v, ‖v‖², 1]ᵀ in ``dtype`` (float32 or float64) — no extra pass —
        and ``error`` a rigorous per-query bound on |block − exact| (Higham §3.1 for a dot product
        of d + 2 terms, plus the rounding of the inputs, with room to spare). Values can be
        slightly negative. Blocks run on up to ``n_jobs`` threads; ``fn`` may overwrite ``block``
        and must only write to disjoint outputs. At most one block per thread is in memory
        (about 12 MiB).
        """
        q32 = self._check_queries(queries)
        c2 = float(scale) ** 2
        if not np.isfinite(c2) or c2 <= 0:
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype}")
        d = self.dim
        aug = self._aug_ones.get(dtype.char)
        if aug is None:
            aug = np.ones((self._n, d + 2), dtype=np.float64)
            aug[:, :d] = self._v64
            aug[:, d] = np.einsum("ij,ij->i", self._v64, self._v64)
            aug = self._aug_ones[dtype.char] = aug.astype(dtype)
        q64 = q32.astype(np.float64)
        qsq = np.einsum("ij,ij->i", q64, q64)
        qa = np.empty((q32.shape[0], d + 2), dtype=np.float64)
        np.multiply(q64, -2.0 * c2, out=qa[:, :d])
        qa[:, d] = c2
        qa[:, d + 1] = c2 * qsq
        qa = qa.astype(dtype)
        # Every product term carries at most 2u of input rounding (−2c²q, c², c²‖q‖² and ‖v‖²
        # are rounded once to dtype; v is exact), and summing d + 2 terms in any order adds
        # γ_{d+2} = (d+2)u/(1 − (d+2)u) of Σ|terms| ≤ c²(‖v‖ + ‖q‖)² (Higham, Lemma 3.1 and
        # §3.1; FMA only helps). (d + 5)·u·1.01 bounds both with room to spare.
        u = float(np.finfo(dtype).eps) / 2
        error = 1.01 * (d + 5) * u * c2 * (self._max_norm + np.sqrt(qsq)) ** 2
        rows = int(block_size or np.clip((12 << 20) // (dtype.itemsize * self._n), 8, 8192))

        pool: dict = {}

        def block(start: int, stop: int) -> None:
            out = self._buffer(pool, stop - start, self._n, dtype)
            np.matmul(qa[start:stop], aug.T, out=out)
            fn(start, stop, out, error[start:stop])

        self._blocks(q32.shape[0], block, rows)

    # -- the rows against themselves -------------------------------------------------------------
    def neighbor_graph(self, k: int) -> NeighborGraph:
        """Every row's ``k`` nearest other rows and the exact closest and farthest pairs.

        One blocked pass over all |V|² pairs (the cost of |V| queries); memory stays at one
        block of scores per thread.
        """
        nv = self._n
        if nv < 2:
            raise ValueError("need at least two vectors")
        k = int(k)
        if not 1 <= k <= nv - 1:
            raise ValueError(f"k must lie in [1, {nv - 1}], got {k}")
        q32 = self._v32
        idx = np.empty((nv, k), dtype=np.int64)
        dist = np.empty((nv, k), dtype=np.float64)
        row_max = np.empty(nv, dtype=np.float64)
        sq = np.einsum("ij,ij->i", self._v64, self._v64)

        pool: dict = {}

        def block(start: int, stop: int) -> None:
            sc = self._scores(q32[start:stop], self._buffer(pool, stop - start,
                                                           self._aug.shape[0], np.float32))
            row_max[start:stop] = sc[:, :nv].max(axis=1) + sq[start:stop]
            idx[start:stop], dist[start:stop] = self._topk(q32[start:stop], sc, k,
                                                           np.arange(start, stop))

        self._blocks(nv, block)
        first = dist[:, 0]
        i_min = int(np.argmin(first))
        min_pair = (min(i_min, int(idx[i_min, 0])), max(i_min, int(idx[i_min, 0])))
        # Farthest pair: only rows whose float32 maximum could reach the best lower bound are
        # recomputed in float64 against every row (one more unit roundoff covers adding ‖q‖²).
        err = self._error(q32) + _U32 * self._max_sq
        lower = float((row_max - err).max())
        best, max_pair = -1.0, (0, 0)
        for i in np.flatnonzero(row_max + err >= lower).tolist():
            diff = self._v64 - self._v64[i]
            d2 = np.einsum("ij,ij->i", diff, diff)
            j = int(np.argmax(d2))
            if d2[j] > best:
                best, max_pair = float(d2[j]), (min(i, j), max(i, j))
        return NeighborGraph(idx, dist, float(first[i_min]), min_pair, float(np.sqrt(best)),
                             max_pair)


_CONTROLLER = None


def _blas_single_thread():
    """Limit BLAS to one thread while our own threads each run whole blocks."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
