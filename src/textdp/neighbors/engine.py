"""The certified exact nearest-neighbour engine: one blocked float32 GEMM, one error bound, one
float64 re-scoring, one thread split — for every search textdp does over word vectors.

Scores. ‖v − q‖² = ‖v‖² − 2⟨v, q⟩ + ‖q‖²; the last term does not change an order over v, so one
float32 GEMM of the augmented matrices [−2q, 1]·[v, ‖v‖²]ᵀ scores a block of queries against every
row. The GEMM goes chunk by chunk of the vocabulary (:data:`CHUNK` words), and each chunk is
reduced to its tile minima (:data:`TILE` words a tile) while it is still in cache; the searches
then read the minima, not the scores.

Error bound (:meth:`NearestNeighbors.error_bound`, Higham, *Accuracy and Stability of Numerical
Algorithms*, §3.1 and Lemma 3.1). A dot product of n terms computed in any order, FMA or not, is
within γ_n·Σ|terms| of the exact one (γ_n = nu/(1 − nu), u the unit roundoff); each product term
carries at most 2u of input rounding (‖v‖², −2c²q, c², c²‖q‖² are rounded once). With M the largest
row norm, Σ|terms| ≤ c²(M² + 2M‖q‖) for a score and c²(M + ‖q‖)² for a full squared distance, so

    |computed − exact| ≤ e(q) = 1.01 · c² · (γ_n + 2u) · Σ-bound.

Certificate. If t is the k-th smallest float32 score of a query, the exact k-th is at most t + e,
so every row of the exact top k has a float32 score ≤ t + 2e. Where the (k+1)-th float32 score
lies beyond that, the candidates are known without further work; otherwise every row of the query
at or below t + 2e is a candidate. Candidates are re-scored in float64 (:func:`squared_distances64`)
and ordered by (float64 squared distance, index) — so the result equals a float64 brute force, with
ties to the lowest index, whatever the block size, the thread count or the batch.

Queries are rounded to float32 first (the GEMM's input): "exact" is with respect to that query.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from textdp.neighbors import self_join
from textdp.neighbors.primitives import (
    NeighborGraph,
    RadiusNeighbors,
    check_queries,
    squared_distances64,
)

__all__ = ["NearestNeighbors", "NeighborGraph", "RadiusNeighbors", "squared_distances64",
           "TILE", "CHUNK"]

TILE = 1024  # words per tile of the tile minima (k ≤ 2); k-NN uses half tiles
CHUNK = 4096  # words per GEMM chunk, reduced while in L2 cache
_FMAX = float(np.finfo(np.float32).max)  # score of padding rows: never a candidate
_CAP = _FMAX / 2  # thresholds stay below the padding score


def _cpus() -> int:
    """The CPUs this process may use, capped by ``OMP_NUM_THREADS`` when it is set: a process
    told to use one thread (a Ray actor of one CPU, a job under a scheduler) must not start one
    search thread per core of the machine."""
    if hasattr(os, "sched_getaffinity"):
        n = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - platforms without sched_getaffinity
        n = os.cpu_count() or 1
    try:
        cap = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return n
    return max(1, min(n, cap))


class NearestNeighbors:
    """Exact Euclidean nearest neighbours among the rows of ``vectors`` (module docstring).

    Args:
        vectors: (|V|, d) array; stored as float32.
        block_size: queries per GEMM block; the default keeps a block's scores near 40 MiB
            (about 220 queries on a 48k vocabulary), d/150 times that above d = 150, at most
            512: large blocks make the GEMM efficient, while each chunk of a block is reduced
            right after it is computed, from cache.
        n_jobs: threads, each running whole blocks with a single-threaded BLAS (default: the CPUs
            this process may use, at most 8). The reductions and certificate passes are
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
        self._n = n
        self._v32 = v
        self._v64: np.ndarray | None = None
        self._sq = sq
        self._max_norm = float(np.sqrt(sq.max()))
        # Wider vectors: the GEMM does d/50 times more work per score while the reductions do
        # not, so larger blocks pay (d = 300 measured: 512 queries ≈ 5 points of the GEMM rate
        # above 309); d ≤ 150 keeps the 40 MiB blocks tuned at d = 50.
        self.block_size = int(block_size or np.clip((40 << 20) // (4 * n) * max(1.0, d / 150),
                                                    8, 512))
        # Tiles of the minima pass; GEMM chunks of a few tiles, reduced while in L2 cache.
        self._tile = TILE if n >= 4 * TILE else n
        self._chunk = self._tile * max(1, min(CHUNK // self._tile, -(-n // self._tile)))
        n_pad = -(-n // self._chunk) * self._chunk
        self._aug = np.zeros((n_pad, d + 1), dtype=np.float32)
        self._aug[:n, :d] = v
        self._aug[:n, d] = sq
        self._aug[n:, d] = _FMAX  # padding rows never win
        self._full: dict[str, np.ndarray] = {}
        self.n_jobs = max(1, int(n_jobs or min(8, _cpus())))

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
        if self._v64 is None:
            self._v64 = self._v32.astype(np.float64)
        return self._v64

    # -- the error bound and the augmented matrices ------------------------------------------------
    def error_bound(self, query_norms: np.ndarray, *, dtype=np.float32, full: bool = False,
                    scale: float = 1.0) -> np.ndarray:
        """Rigorous bound on the rounding error of every GEMM value of each query (module doc).

        ``full=False``: the score ‖v‖² − 2⟨v, q⟩ (d + 1 terms); ``full=True``: the squared distance
        c²‖v − q‖² of :meth:`augmented_queries` · :meth:`augmented_rows`ᵀ (d + 2 terms).
        """
        u = float(np.finfo(dtype).eps) / 2
        terms = self.dim + (2 if full else 1)
        gamma = terms * u / (1 - terms * u) + 2 * u
        m, qn = self._max_norm, np.asarray(query_norms, dtype=np.float64)
        spread = (m + qn) ** 2 if full else m * m + 2.0 * m * qn
        return 1.01 * float(scale) ** 2 * gamma * spread

    def augmented_rows(self, dtype=np.float32) -> np.ndarray:
        """(|V|, d + 2) [v, ‖v‖², 1] in ``dtype`` (cached; read only)."""
        dtype = np.dtype(dtype)
        aug = self._full.get(dtype.char)
        if aug is None:
            aug = np.ones((self._n, self.dim + 2), dtype=np.float64)
            aug[:, :-2] = self.vectors64
            aug[:, -2] = np.einsum("ij,ij->i", self.vectors64, self.vectors64)
            aug = self._full[dtype.char] = aug.astype(dtype)
        return aug

    def augmented_queries(self, queries: np.ndarray, *, scale: float = 1.0,
                          dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
        """[−2c²q, c², c²‖q‖²] in ``dtype`` and the float64 norms ‖q‖ (q rounded to float32).

        One GEMM with :meth:`augmented_rows` gives c²‖v − q‖², within :meth:`error_bound`
        (``full=True``) of the exact value.
        """
        q64 = np.asarray(queries, dtype=np.float32).astype(np.float64)
        c2 = float(scale) ** 2
        qsq = np.einsum("ij,ij->i", q64, q64)
        qa = np.empty((q64.shape[0], self.dim + 2), dtype=np.float64)
        np.multiply(q64, -2.0 * c2, out=qa[:, :-2])
        qa[:, -2] = c2
        qa[:, -1] = c2 * qsq
        return qa.astype(dtype), np.sqrt(qsq)

    # -- shared pieces ------------------------------------------------------------------------------
    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        return check_queries(queries, self.dim)

    def _check_exclude(self, exclude: np.ndarray | None, n: int) -> np.ndarray | None:
        if exclude is None:
            return None
        ex = np.asarray(exclude, dtype=np.int64)
        if ex.shape != (n,):
            raise ValueError(f"exclude must have shape ({n},), got {ex.shape}")
        if ex.size and (ex.max() >= self._n or ex.min() < -1):
            raise ValueError("exclude holds an index out of range")
        return ex

    def _error(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Float64 queries (as rounded to float32) and the error bound of their scores."""
        qf = np.asarray(q, dtype=np.float32).astype(np.float64)
        return qf, self.error_bound(np.sqrt(np.einsum("ij,ij->i", qf, qf)))

    def _parallel(self, n: int, serial: Callable[[int, int], None], block: int | None = None,
                  ) -> None:
        """Run ``serial(a, b)`` over [0, n), split across threads with single-threaded BLAS."""
        jobs = min(self.n_jobs, -(-n // (block or self.block_size)))
        if jobs <= 1:
            serial(0, n)
            return
        bounds = np.linspace(0, n, jobs + 1).astype(int)
        with _blas_single_thread(), ThreadPoolExecutor(jobs) as pool:
            list(pool.map(serial, bounds[:-1], bounds[1:]))

    def _blocks(self, q: np.ndarray, exclude: np.ndarray | None = None, tile: int | None = None,
                ) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
        """Per block of queries: (start, stop, scores (chunks, m, chunk), tile minima (m, tiles)).

        Scores are ‖v‖² − 2⟨v, q⟩ in float32; each vocabulary chunk is reduced to its minima over
        tiles of ``tile`` words right after its GEMM, while it is in cache. ``exclude`` rows score
        +inf. The buffers are reused: a block is valid until the next one is requested.
        """
        n = q.shape[0]
        b, d, chunk = self.block_size, self.dim, self._chunk
        tile = tile or self._tile
        n_chunks = self._aug.shape[0] // chunk
        per_chunk = chunk // tile
        b0 = min(b, n)
        qaug = np.empty((b0, d + 1), dtype=np.float32)
        scores = np.empty((n_chunks, b0, chunk), dtype=np.float32)
        tile_min = np.empty((b0, n_chunks * per_chunk), dtype=np.float32)
        parts = [self._aug[k * chunk:(k + 1) * chunk].T for k in range(n_chunks)]
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

    def _gather_tiles(self, scores: np.ndarray, tiles: np.ndarray, tile: int | None = None,
                      ) -> np.ndarray:
        """Copy of tile ``tiles[i, j]`` of row i: shape (m, tile) for (m,) tiles, else (m, j, tile)."""
        tile = tile or self._tile
        n_chunks, m, chunk = scores.shape
        per_chunk = chunk // tile
        view = scores.reshape(n_chunks, m, per_chunk, tile)
        rows = np.arange(m) if tiles.ndim == 1 else np.arange(m)[:, None]
        return view[tiles // per_chunk, rows, tiles % per_chunk]

    def _candidates(self, scores: np.ndarray, rows: np.ndarray, threshold: np.ndarray,
                    ) -> tuple[np.ndarray, np.ndarray]:
        """(position in ``rows``, vocabulary row) of every score ≤ ``threshold`` in whole rows."""
        chunk = self._chunk
        rr, cc = [], []
        limit = np.minimum(np.asarray(threshold, np.float64), _CAP)[:, None]
        for k in range(scores.shape[0]):
            r, c = np.nonzero(scores[k, rows] <= limit)
            rr.append(r)
            cc.append(c + k * chunk)
        return np.concatenate(rr), np.concatenate(cc)

    def _rescore(self, qf: np.ndarray, rr: np.ndarray, cc: np.ndarray, k: int,
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The float64 re-scoring: candidates (query rr, row cc) ordered by (float64 squared
        distance, index); the first ``k`` rows and squared distances of each query 0 … len(qf)−1
        (every query must have at least k candidates)."""
        # Candidates in slices of about 8 MiB of float64 differences: a block of queries with a
        # large k (or many near-ties) has block × k candidates, each a d-vector of differences.
        d2 = np.empty(cc.size, dtype=np.float64)
        step = max(1024, (8 << 20) // (8 * self.dim))
        for a in range(0, cc.size, step):
            d2[a:a + step] = squared_distances64(self.vectors64, cc[a:a + step], qf[rr[a:a + step]])
        order = np.lexsort((cc, d2, rr))
        rr, cc, d2 = rr[order], cc[order], d2[order]
        take = np.searchsorted(rr, np.arange(qf.shape[0]))[:, None] + np.arange(k)
        return cc[take], d2[take]

    def _rescore_rows(self, qf: np.ndarray, scores: np.ndarray, rows: np.ndarray,
                      threshold: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_rescore` of every whole-row candidate ≤ ``threshold`` of block rows ``rows``."""
        rr, cc = self._candidates(scores, rows, threshold)
        return self._rescore(qf[rows], rr, cc, k)

    # -- nearest, two nearest --------------------------------------------------------------------
    def query(self, queries: np.ndarray, *, exact: bool = True) -> np.ndarray:
        """Index of the nearest row for every query row; shape (N,), dtype int64."""
        q = self._check_queries(queries)
        out = np.empty(q.shape[0], dtype=np.int64)
        self._parallel(q.shape[0], lambda a, b: self._query_serial(q[a:b], out[a:b], exact))
        return out

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
                threshold = best + 2.0 * err
                unsure = np.flatnonzero(second.astype(np.float64) <= threshold)
                if unsure.size:
                    idx[unsure] = self._rescore_rows(qf, scores, unsure, threshold[unsure], 1)[0][:, 0]
            out[start:stop] = idx

    def two_nearest(self, queries: np.ndarray, *,
                    exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The two nearest rows of every query (nearest first), optionally excluding one row each.

        A row is certified when its third-best float32 score lies beyond the error bound of its
        second and the first two are apart by more than it, otherwise it is re-scored in float64
        (ties → lowest index). Equals a float64 brute force. Returns ``(indices, distances)``:
        (N, 2) int64 and (N, 2) float64 Euclidean distances.
        """
        q = self._check_queries(queries)
        n = q.shape[0]
        if self._n < (3 if exclude is not None else 2):
            raise ValueError("two_nearest needs at least two candidate rows")
        ex = np.full(n, -1, dtype=np.int64) if exclude is None else self._check_exclude(exclude, n)
        idx = np.empty((n, 2), dtype=np.int64)
        dist = np.empty((n, 2), dtype=np.float64)
        self._parallel(n, lambda a, b: self._two_serial(q[a:b], ex[a:b], idx[a:b], dist[a:b]))
        return idx, dist

    def _two_serial(self, q: np.ndarray, ex: np.ndarray, out: np.ndarray,
                    out_dist: np.ndarray) -> None:
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
            if unsure.size:
                res[unsure] = self._rescore_rows(qf, scores, unsure, threshold[unsure], 2)[0]
            out[start:stop] = res
            # In the worker, per block: the float64 distances the choice is made from.
            for c in range(2):
                out_dist[start:stop, c] = np.sqrt(squared_distances64(self.vectors64, res[:, c], qf))

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
        q = self._check_queries(queries)
        n = q.shape[0]
        k = int(k)
        ex = self._check_exclude(exclude, n)
        limit = self._n - (1 if ex is not None and (ex >= 0).any() else 0)
        if not 1 <= k <= limit:
            raise ValueError(f"k must lie in [1, {limit}], got {k}")
        idx = np.empty((n, k), dtype=np.int64)
        d2 = np.empty((n, k), dtype=np.float64)
        self._parallel(n, lambda a, b: self._topk_serial(
            q[a:b], None if ex is None else ex[a:b], k, idx[a:b], d2[a:b]))
        return idx, np.sqrt(d2)

    def _topk_serial(self, q: np.ndarray, ex: np.ndarray | None, k: int, idx: np.ndarray,
                     d2: np.ndarray, row_max: np.ndarray | None = None) -> None:
        # Half tiles: k tiles are gathered and partitioned per query.
        tile = self._tile // 2 if self._tile == TILE else self._tile
        for start, stop, scores, tm in self._blocks(q, ex, tile):
            m = stop - start
            rows = np.arange(m)
            if row_max is not None:  # farthest row (padding and excluded rows left out)
                row_max[start:stop] = scores.max(axis=(0, 2), where=scores < _CAP,
                                                 initial=-np.inf)
            qf, err = self._error(q[start:stop])
            if k >= tm.shape[1]:  # few tiles (small vocabularies): whole rows
                flat = scores.transpose(1, 0, 2).reshape(m, -1)
                kth = np.partition(flat, k - 1, axis=1)[:, k - 1].astype(np.float64)
                idx[start:stop], d2[start:stop] = self._rescore_rows(qf, scores, rows,
                                                                     kth + 2.0 * err, k)
                continue
            # The k smallest scores lie in the k tiles of smallest minima; the runner-up is the
            # smaller of the (k+1)-th inside them and the smallest minimum of the others.
            best = np.argpartition(tm, k - 1, axis=1)[:, :k]
            gathered = self._gather_tiles(scores, best, tile).reshape(m, k * tile)
            part = np.partition(gathered, k, axis=1)
            threshold = np.minimum(part[:, :k].max(axis=1).astype(np.float64) + 2.0 * err, _CAP)
            tm[rows[:, None], best] = np.inf
            runner_up = np.minimum(part[:, k], tm.min(axis=1)).astype(np.float64)
            sure = np.flatnonzero(runner_up > threshold)
            if sure.size:  # every candidate is inside the gathered tiles
                rr, jj = np.nonzero(gathered[sure] <= threshold[sure, None])
                cc = best[sure[rr], jj // tile] * tile + jj % tile
                idx[start + sure], d2[start + sure] = self._rescore(qf[sure], rr, cc, k)
            other = np.flatnonzero(runner_up <= threshold)
            if other.size:
                idx[start + other], d2[start + other] = self._rescore_rows(
                    qf, scores, other, threshold[other], k)

    # -- radius ----------------------------------------------------------------------------------
    def radius_neighbors(self, queries: np.ndarray, radius: float) -> RadiusNeighbors:
        """All rows at float64 distance ≤ ``radius`` of each query, in ascending index."""
        q = self._check_queries(queries)
        radius = float(radius)
        if not np.isfinite(radius) or radius < 0:
            raise ValueError(f"radius must be a finite number ≥ 0, got {radius!r}")
        n = q.shape[0]
        parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

        def serial(a: int, b: int) -> None:
            for start, stop, scores, _ in self._blocks(q[a:b]):
                qf, err = self._error(q[a + start:a + stop])
                # score + ‖q‖² is the squared distance up to the error bound: keep a superset.
                limit = radius * radius - np.einsum("ij,ij->i", qf, qf) + err
                rr, cc = self._candidates(scores, np.arange(stop - start), limit)
                dist = np.sqrt(squared_distances64(self.vectors64, cc, qf[rr]))
                keep = dist <= radius
                parts[a + start] = (rr[keep] + a + start, cc[keep], dist[keep])

        self._parallel(n, serial)
        keys = sorted(parts)
        rr = np.concatenate([parts[s][0] for s in keys] + [np.empty(0, np.int64)])
        cc = np.concatenate([parts[s][1] for s in keys] + [np.empty(0, np.int64)])
        dd = np.concatenate([parts[s][2] for s in keys] + [np.empty(0)])
        order = np.lexsort((cc, rr))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rr, minlength=n), out=indptr[1:])
        return RadiusNeighbors(indptr, cc[order].astype(np.int64, copy=False), dd[order])

    # -- dense distance rows, block by block -----------------------------------------------------
    def map_squared_distances(self, queries: np.ndarray, fn, *, scale: float = 1.0,
                              dtype=np.float64, block_size: int | None = None) -> None:
        """Call ``fn(start, stop, block, error)`` for consecutive blocks of queries.

        ``block`` is the (stop − start, |V|) array of c²·‖v − q‖² (c = ``scale``) from one GEMM
        of :meth:`augmented_queries` · :meth:`augmented_rows`ᵀ in ``dtype`` (float32 or float64)
        — no extra pass — and ``error`` the per-query :meth:`error_bound` (``full=True``).
        Values can be slightly negative. Blocks run on up to ``n_jobs`` threads; ``fn`` may
        overwrite ``block`` and must only write to disjoint outputs. At most one block per
        thread is in memory (about 12 MiB).
        """
        q = self._check_queries(queries)
        if not np.isfinite(float(scale) ** 2) or float(scale) ** 2 <= 0:
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype}")
        aug = self.augmented_rows(dtype)
        qa, qnorm = self.augmented_queries(q, scale=scale, dtype=dtype)
        error = self.error_bound(qnorm, dtype=dtype, full=True, scale=scale)
        rows = int(block_size or np.clip((12 << 20) // (dtype.itemsize * self._n), 8, 8192))

        def serial(a: int, b: int) -> None:
            out = np.empty((min(rows, b - a), self._n), dtype=dtype)
            for start in range(a, b, rows):
                stop = min(start + rows, b)
                block = out[:stop - start]
                np.matmul(qa[start:stop], aug.T, out=block)
                fn(start, stop, block, error[start:stop])

        self._parallel(q.shape[0], serial, rows)

    # -- the rows against themselves (bodies in :mod:`textdp.neighbors.self_join`) --------------
    def neighbor_graph(self, k: int) -> NeighborGraph:
        """Every row's ``k`` nearest other rows and the exact closest and farthest pairs.

        One blocked pass over all |V|² pairs (the cost of |V| queries).
        """
        return self_join.neighbor_graph(self, k)

    def pairs_within(self, thresholds: np.ndarray, block: int = 1024,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every pair i ≠ j of rows with float32 squared distance D32_ij ≤ ``thresholds[i]``.

        Every j with exact D_ij ≤ t_i − e_i (e = :meth:`error_bound` with ``full=True``) is
        returned. Returns (i, j, D32_ij), unordered (:func:`textdp.neighbors.self_join.pairs_within`).
        """
        return self_join.pairs_within(self, thresholds, block)


_CONTROLLER = None


def _blas_single_thread():
    """Limit BLAS to one thread while our own threads each run whole blocks."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
