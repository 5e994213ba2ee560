"""Exact nearest-neighbour search by blocked GEMM.

The squared distance ‖v − q‖² = ‖v‖² − 2⟨v, q⟩ + ‖q‖²; the last term does not change the argmin,
so one float32 GEMM of the augmented matrices [v, ‖v‖²] · [−2q, 1]ᵀ scores a block of queries
against the whole vocabulary, and an argmin over contiguous rows finishes the search. Queries are
processed in blocks so memory stays bounded (block × |V| floats) whatever the batch size.

Exactness: float32 rounding could in principle swap two words whose distances differ by less
than the rounding error. With ``exact=True`` (the default) every word whose float32 score lies
within a rigorous error bound of the best one is re-scored in float64, so the result equals a
float64 brute-force argmin (ties broken by the lowest index) — and does not depend on the block
size or on how a batch is split. Near-ties are rare, and the certificate costs a few small reductions
per block.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["NearestNeighbors", "brute_force_nearest"]

_U32 = 2.0**-24  # unit roundoff of float32
_TILE = 1024
_CHUNK = 4096


def brute_force_nearest(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Reference: argmin of float64 ‖v − q‖² over all rows (first index on ties). O(N·|V|·d) memory."""
    v = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(queries, dtype=np.float64)
    return np.argmin(((v[None, :, :] - q[:, None, :]) ** 2).sum(axis=-1), axis=1)


class NearestNeighbors:
    """Exact Euclidean nearest neighbours among the rows of ``vectors``.

    Args:
        vectors: (|V|, d) array; stored as float32.
        block_size: queries per GEMM block; the default keeps a block's scores near 40 MiB
            (about 220 queries on a 48k vocabulary): large blocks make the GEMM efficient, while
            each 4,096-word chunk of a block is reduced right after it is computed, from cache.
        n_jobs: threads, each running whole blocks with a single-threaded BLAS (default: the CPUs
            this process may use, at most 8). The argmin and certificate passes are
            single-threaded numpy, so one block per core keeps every core busy; with ``n_jobs=1``
            the BLAS threading is left alone. Results do not depend on ``n_jobs``.
    """

    def __init__(self, vectors: np.ndarray, *, block_size: int | None = None,
                 n_jobs: int | None = None) -> None:
        v = np.ascontiguousarray(vectors, dtype=np.float32)
        if v.ndim != 2 or v.shape[0] == 0:
            raise ValueError(f"vectors must be a non-empty 2-D array, got shape {v.shape}")
        n, d = v.shape
        sq = np.einsum("ij,ij->i", v, v, dtype=np.float64)
        self._aug = np.empty((n, d + 1), dtype=np.float32)
        self._aug[:, :d] = v
        self._aug[:, d] = sq
        self._v32 = v
        self._v64: np.ndarray | None = None
        self._max_sq = float(sq.max())
        self._max_norm = float(np.sqrt(self._max_sq))
        k = d + 1
        self._gamma = (k * _U32) / (1 - k * _U32) + _U32
        self.block_size = block_size or int(np.clip((40 << 20) // (4 * n), 8, 512))
        # Scores are reduced tile by tile: one SIMD min-pass over (block, tiles, tile) finds the
        # best tile and the runner-up tile at once, instead of separate argmin and min passes.
        self._tile = _TILE if n >= 4 * _TILE else n
        # GEMM goes chunk by chunk of the vocabulary (a few tiles) so that each chunk's scores
        # are reduced while they are still in L2 cache.
        self._chunk = self._tile * max(1, min(_CHUNK // self._tile, -(-n // self._tile)))
        n_pad = -(-n // self._chunk) * self._chunk
        self._aug_tiled = np.zeros((n_pad, d + 1), dtype=np.float32)
        self._aug_tiled[:n] = self._aug
        self._aug_tiled[n:, d] = np.finfo(np.float32).max  # padding rows never win
        self.n_jobs = n_jobs or min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                    else (os.cpu_count() or 1))

    @property
    def n_vectors(self) -> int:
        return int(self._aug.shape[0])

    @property
    def dim(self) -> int:
        return int(self._aug.shape[1] - 1)

    def _vectors64(self) -> np.ndarray:
        if self._v64 is None:
            self._v64 = self._v32.astype(np.float64)
        return self._v64

    def query(self, queries: np.ndarray, *, exact: bool = True) -> np.ndarray:
        """Index of the nearest row for every query row; shape (N,), dtype int64."""
        q = self._check_queries(queries)
        out = np.empty(q.shape[0], dtype=np.int64)
        self._parallel(q.shape[0], lambda a, b: self._query_serial(q[a:b], out[a:b], exact))
        return out

    def two_nearest(self, queries: np.ndarray, *,
                    exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The two nearest rows of every query (nearest first), optionally excluding one row each.

        Same chunked, tile-reduced GEMM as :meth:`query`; a row is certified when its third-best
        float32 score lies beyond the error bound of its second and the first two are apart by
        more than it, otherwise it is re-scored in float64 (ties → lowest index). Equals a float64
        brute force. Returns ``(indices, distances)``: (N, 2) int64 and (N, 2) float64 Euclidean
        distances.
        """
        q = self._check_queries(queries)
        n = q.shape[0]
        if self.n_vectors < (3 if exclude is not None else 2):
            raise ValueError("two_nearest needs at least two candidate rows")
        ex = np.full(n, -1, dtype=np.int64) if exclude is None else np.asarray(exclude, np.int64)
        if ex.shape != (n,):
            raise ValueError(f"exclude must have shape ({n},), got {ex.shape}")
        idx = np.empty((n, 2), dtype=np.int64)
        self._parallel(n, lambda a, b: self._two_serial(q[a:b], ex[a:b], idx[a:b]))
        qf = np.asarray(q, dtype=np.float32).astype(np.float64)
        dist = np.sqrt(((self._vectors64()[idx] - qf[:, None, :]) ** 2).sum(axis=2))
        return idx, dist

    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        q = np.asarray(queries)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must have shape (N, {self.dim}), got {q.shape}")
        if not np.isfinite(q).all():
            raise ValueError("queries contain NaN or infinity")
        return q

    def _parallel(self, n: int, serial) -> None:
        """Run ``serial(a, b)`` over [0, n), split across threads with single-threaded BLAS."""
        jobs = min(self.n_jobs, -(-n // self.block_size))
        if jobs <= 1:
            serial(0, n)
            return
        bounds = np.linspace(0, n, jobs + 1).astype(int)
        with _blas_single_thread(), ThreadPoolExecutor(jobs) as pool:
            list(pool.map(serial, bounds[:-1], bounds[1:]))

    def _blocks(self, q: np.ndarray, exclude: np.ndarray | None = None):
        """Per block of queries: (start, stop, scores (chunks, m, chunk), tile minima (m, tiles)).

        Scores are ‖v‖² − 2⟨v, q⟩ in float32; each vocabulary chunk is reduced to its tile minima
        right after its GEMM, while it is in cache. ``exclude`` rows score +inf. The buffers are
        reused: a block is valid until the next one is requested.
        """
        n = q.shape[0]
        b, d, tile, chunk = self.block_size, self.dim, self._tile, self._chunk
        n_chunks = self._aug_tiled.shape[0] // chunk
        per_chunk = chunk // tile
        b0 = min(b, n)
        qaug = np.empty((b0, d + 1), dtype=np.float32)
        scores = np.empty((n_chunks, b0, chunk), dtype=np.float32)
        tile_min = np.empty((b0, n_chunks * per_chunk), dtype=np.float32)
        parts = [self._aug_tiled[k * chunk:(k + 1) * chunk].T for k in range(n_chunks)]
        for start in range(0, n, b):
            stop = min(start + b, n)
            m = stop - start
            qa, tm = qaug[:m], tile_min[:m]
            np.multiply(q[start:stop], -2.0, out=qa[:, :d], casting="unsafe")
            qa[:, d] = 1.0
            if exclude is not None:
                e = exclude[start:stop]
                has = np.flatnonzero(e >= 0)
            for k, part in enumerate(parts):
                sc = scores[k, :m]
                np.matmul(qa, part, out=sc)
                if exclude is not None:
                    here = has[e[has] // chunk == k]
                    sc[here, e[here] - k * chunk] = np.inf  # never chosen
                np.min(sc.reshape(m, per_chunk, tile), axis=2,
                       out=tm[:, k * per_chunk:(k + 1) * per_chunk])
            yield start, stop, scores[:, :m], tm

    def _gather_tiles(self, scores: np.ndarray, tiles: np.ndarray) -> np.ndarray:
        """Copy of tile ``tiles[i]`` of row i: shape (m, tile)."""
        n_chunks, m, chunk = scores.shape
        per_chunk = chunk // self._tile
        view = scores.reshape(n_chunks, m, per_chunk, self._tile)
        return view[tiles // per_chunk, np.arange(m), tiles % per_chunk]

    def _query_serial(self, q: np.ndarray, out: np.ndarray, exact: bool) -> None:
        if q.shape[0] == 0:
            return
        for start, stop, scores, tm in self._blocks(q):
            rows = np.arange(stop - start)
            best_tile = tm.argmin(axis=1)
            within = self._gather_tiles(scores, best_tile)
            j = within.argmin(axis=1)
            idx = best_tile * self._tile + j
            if exact:
                best = within[rows, j]
                within[rows, j] = np.inf
                tm[rows, best_tile] = np.inf
                second = np.minimum(within.min(axis=1), tm.min(axis=1))
                # The runner-up decides: beyond the error bound of the best, the argmin is certain.
                qf, err = self._error(q[start:stop])
                unsure = np.flatnonzero(second.astype(np.float64) <= best + 2.0 * err)
                self._rescore(qf, scores, unsure, best[unsure] + 2.0 * err[unsure],
                              idx.reshape(-1, 1))
            out[start:stop] = idx

    def _two_serial(self, q: np.ndarray, ex: np.ndarray, out: np.ndarray) -> None:
        if q.shape[0] == 0:
            return
        tile = self._tile
        for start, stop, scores, tm in self._blocks(q, ex):
            rows = np.arange(stop - start)
            t1 = tm.argmin(axis=1)
            w1 = self._gather_tiles(scores, t1)
            j1 = w1.argmin(axis=1)
            s1 = w1[rows, j1].copy()
            w1[rows, j1] = np.inf
            tm[rows, t1] = np.inf
            in1 = w1.min(axis=1)
            t2 = tm.argmin(axis=1)
            other = tm[rows, t2]
            from_other = other < in1
            w2 = self._gather_tiles(scores, t2)
            j2o = w2.argmin(axis=1)
            j2i = w1.argmin(axis=1)
            res = np.stack([t1 * tile + j1,
                            np.where(from_other, t2 * tile + j2o, t1 * tile + j2i)], axis=1)
            s2 = np.where(from_other, other, in1)
            # Third best: everything but the two chosen.
            w1[rows[~from_other], j2i[~from_other]] = np.inf
            w2[rows, j2o] = np.inf
            tm[rows[from_other], t2[from_other]] = np.inf
            third = np.minimum(w1.min(axis=1), tm.min(axis=1))
            third = np.where(from_other, np.minimum(third, w2.min(axis=1)), third)
            qf, err = self._error(q[start:stop])
            threshold = s2 + 2.0 * err
            unsure = np.flatnonzero((third.astype(np.float64) <= threshold)
                                    | (s2.astype(np.float64) <= s1 + 2.0 * err))
            self._rescore(qf, scores, unsure, threshold[unsure], res)
            out[start:stop] = res

    def _error(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Float64 queries (as rounded to float32) and the bound on each float32 score's error."""
        qf = np.asarray(q, dtype=np.float32).astype(np.float64)
        qnorm = np.sqrt(np.einsum("ij,ij->i", qf, qf))
        # |fl(s) − s| ≤ γ_{d+1} Σ|x_i y_i| ≤ γ (‖v‖² + 2‖v‖‖q‖) for every word.
        return qf, self._gamma * (self._max_sq + 2.0 * self._max_norm * qnorm) * 1.01

    def _rescore(self, qf: np.ndarray, scores: np.ndarray, unsure: np.ndarray,
                 threshold: np.ndarray, out: np.ndarray) -> None:
        """For rows ``unsure``, the ``out.shape[1]`` float64-nearest among the words whose
        float32 score is ≤ ``threshold`` (ties → lowest index), written into ``out``."""
        if unsure.size == 0:
            return
        flat = scores[:, unsure].transpose(1, 0, 2).reshape(unsure.size, -1)[:, : self.n_vectors]
        rr, cc = np.nonzero(flat <= np.asarray(threshold, np.float64)[:, None])
        dist = ((self._vectors64()[cc] - qf[unsure[rr]]) ** 2).sum(axis=1)
        order = np.lexsort((cc, dist, rr))
        rr, cc = rr[order], cc[order]
        rank = np.arange(rr.size) - np.searchsorted(rr, rr)
        keep = rank < out.shape[1]
        out[unsure[rr[keep]], rank[keep]] = cc[keep]

_CONTROLLER = None


def _blas_single_thread():
    """Limit BLAS to one thread while our own threads each run whole blocks."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
