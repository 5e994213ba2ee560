"""1-Diffractor word lists: the exact greedy nearest-neighbour chain through an embedding space.

Meisenbacher, Chevli, Matthes (IWSPA 2024), §3 and Algorithm 1: start at a seed word and keep
appending the nearest (Euclidean) word not yet in the list until every word is used. The result is
a permutation of the vocabulary, and a word's position in it is its 1-D embedding Φ(w) (Eq. (2)).

What "exact" means here: every step appends argmin over unused v of the float64 squared distance
``squared_distances64`` (Σ_i (v_i − c_i)² over the float64 copies of the float32 vectors), ties
broken by the lowest vocabulary row. The reference code is approximate (SPEC §2.7: an IVF index;
PyPI dp-diffractor 0.2.1: a top-50 search with an arbitrary fallback, which on the default
vocabulary takes a word other than the nearest unused one in about 8% of the steps, see
BENCHMARKS.md); we never do.

How it is fast (well under the paper's ~20 s per list on a 48k vocabulary):

1. **Candidate graph.** Blocked float32 GEMMs give every squared distance D_ij (the matrix is
   symmetric, so only blocks I ≤ J are computed). Per row a threshold t_i (an order statistic of
   the distances to a fixed sample of 2,048 words, ≈ the 64th neighbour) keeps the candidates
   D32 ≤ t_i, sorted by D32. With a rigorous bound e_i on the float32 rounding error, *every*
   word whose true distance is ≤ t_i − e_i is a candidate: the graph certifies a radius, not
   just a count.
2. **Walk.** At the current word c the first unused candidate (lowest D32) is the answer when
   it lies inside the certified radius and no other unused candidate lies within 2·e_c of it;
   otherwise the few ambiguous candidates are re-scored in float64 (``squared_distances64``).
3. **Fallback.** When no candidate of c is left (a few percent of the steps, mostly near the
   end), an exact search over the remaining unused words, with the same certificate.

The graph depends only on the vectors, so several seeds of one model share it. Lists are cached
under ``cache_dir()/diffractor`` keyed by the vocabulary fingerprint, the seed and
:data:`ALGORITHM_VERSION`; a cache file that fails any check is rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import logging
import numbers
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from textdp import _random
from textdp.io.atomic import atomic_save_npz
from textdp.neighbors import NearestNeighbors, squared_distances64
from textdp.vocab import Vocabulary, cache_dir

__all__ = [
    "ALGORITHM_VERSION",
    "build_list",
    "build_lists",
    "greedy_chain",
    "squared_distances64",
    "start_word",
    "list_cache_path",
]

ALGORITHM_VERSION = 1

_TARGET_CANDIDATES = 64  # ≈ candidates kept per word in the graph
_SAMPLE_STEP = 16  # column sample for the per-row threshold: every 16th word

#: Building a list is slow the first time (~25 s for 50,000 words) and silent otherwise: it says
#: so on this logger (INFO), with progress; the command line prints it on stderr.
log = logging.getLogger("textdp.diffractor")


def start_word(n_words: int, seed: int) -> int:
    """The first word of the list with ``seed``: ``default_rng(seed).integers(n_words)``."""
    return int(_random.public_generator(seed).integers(n_words))


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(f"list seeds must be non-negative integers, got {seed!r}")
    return int(seed)


class _CandidateGraph:
    """Certified candidate lists for every word (see the module docstring, step 1).

    Squared distances D_ij and their error bound e_i come from the neighbour engine
    (:meth:`textdp.neighbors.NearestNeighbors.pairs_within`: one float32 GEMM of
    :meth:`~textdp.neighbors.NearestNeighbors.augmented_queries` with
    :meth:`~textdp.neighbors.NearestNeighbors.augmented_rows`, symmetric blocks computed once).
    """

    def __init__(self, vectors: np.ndarray, *, block: int = 1024) -> None:
        nn = NearestNeighbors(vectors)
        self.n = nn.n_vectors
        self.v64 = nn.vectors64
        self.left, norms = nn.augmented_queries(vectors)
        self.right = nn.augmented_rows(np.float32)
        # Every D32_ij is within err_i of the exact D_ij (the engine's bound, rows of word i).
        self.err = nn.error_bound(norms, full=True) + 1e-30
        # Slack for "float64 argmin" vs "real argmin" (relative error of a 50-term float64 sum ≪ 1e-12).
        self.slack = 1e-12 * (norms + nn.max_norm) ** 2 + 1e-300
        threshold = self._thresholds(block).astype(np.float32)
        self._index(*nn.pairs_within(threshold, block))
        # Every word j with true D_ij ≤ t_i − err_i is a candidate of i (its D32 ≤ t_i). The
        # nearest unused word w* has D(w*) ≤ best + err (+ slack), so the first free candidate is
        # trusted when best + slack ≤ t_i − 2·err_i. (t_i is rounded to float32 here as in the mask.)
        self.limit = threshold.astype(np.float64) - 2.0 * self.err

    def _index(self, rows: np.ndarray, cands: np.ndarray, dists: np.ndarray) -> None:
        """Candidate lists in CSR layout, each sorted by D32."""
        # Sort by (row, D32) with one int64 key: float32 bits made order-preserving as uint32.
        bits = dists.view(np.uint32).astype(np.int64)
        bits = np.where(bits >= 2**31, (2**32 - 1) - bits, bits + 2**31)
        order = np.argsort((rows << 32) | bits)
        self.idx = cands[order].astype(np.int32)
        self.dist = dists[order]
        self.indptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=self.n), out=self.indptr[1:])

    def _thresholds(self, block: int) -> np.ndarray:
        """Per-row t_i ≈ the squared distance of the ~64th neighbour, from a fixed column sample."""
        n = self.n
        size = min(n, 2048)
        k = int(round(_TARGET_CANDIDATES * size / n))
        out = np.full(n, np.inf)
        if k + 1 >= size:  # small vocabulary: every word is a candidate of every word
            return out
        # Evenly spaced columns: thresholds only steer speed (every step is certified), so the
        # sample needs no randomness.
        sample = np.linspace(0, n - 1, size).astype(np.int64)
        rs = np.ascontiguousarray(self.right[sample])
        for i0 in range(0, n, block):
            dd = self.left[i0:i0 + block] @ rs.T
            out[i0:i0 + dd.shape[0]] = np.partition(dd, k, axis=1)[:, k]
        return out

    def resolve64(self, rows: np.ndarray, c: int) -> int:
        """The float64-nearest of ``rows`` to word c; ties → lowest row."""
        dist = squared_distances64(self.v64, rows, self.v64[c])
        return int(rows[dist == dist.min()].min())


def greedy_chain(vectors: np.ndarray, start: int, *, graph: _CandidateGraph | None = None,
                 progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The exact greedy chain from ``start`` through the rows of ``vectors`` (int32 permutation).

    Diffractor 2024, Algorithm 1 with an exact nearest-unused step (module docstring).
    ``progress(done, total)`` is called every tenth of the words.
    """
    g = graph if graph is not None else _CandidateGraph(vectors)
    n = g.n
    if not 0 <= start < n:
        raise ValueError(f"start must lie in [0, {n}), got {start}")
    out = np.empty(n, dtype=np.int32)
    used = np.zeros(n, dtype=bool)
    indptr, idx, scores, limit = g.indptr, g.idx, g.dist, g.limit
    err2 = 2.0 * g.err + g.slack
    # Remaining words for the fallback search, compacted when half of them are used.
    rem = np.arange(n, dtype=np.int64)
    rem_right = g.right.copy()
    rem_used = 0
    c = start
    out[0] = c
    used[c] = True
    every = max(n // 10, 1) if progress is not None else n + 1
    for step in range(1, n):
        if step % every == 0:
            progress(step, n)
        nxt = -1
        lo, hi = indptr[c], indptr[c + 1]
        if hi > lo:
            cand = idx[lo:hi]
            free = ~used[cand]
            j = int(free.argmax())
            if free[j]:
                best = float(scores[lo + j])
                if best + g.slack[c] <= limit[c]:
                    bound = best + err2[c]
                    if j + 1 == hi - lo or scores[lo + j + 1] > bound:
                        nxt = int(cand[j])
                    else:
                        near = np.flatnonzero(free[j:] & (scores[lo + j:hi] <= bound)) + j
                        nxt = int(cand[near[0]]) if near.size == 1 else g.resolve64(cand[near], c)
        if nxt < 0:
            # Exact search over every unused word.
            if rem_used * 2 > rem.size:
                keep = ~used[rem]
                rem = rem[keep]
                rem_right = rem_right[keep]
                rem_used = 0
            sc = rem_right @ g.left[c]
            sc[used[rem]] = np.inf
            j = int(sc.argmin())
            near = np.flatnonzero(sc <= float(sc[j]) + err2[c])
            nxt = int(rem[j]) if near.size == 1 else g.resolve64(rem[near], c)
        out[step] = nxt
        used[nxt] = True
        rem_used += 1
        c = nxt
    return out


# ---------------------------------------------------------------------------------------------
# Cache

def list_cache_path(vocabulary: Vocabulary, seed: int) -> Path:
    return (cache_dir() / "diffractor"
            / f"list-v{ALGORITHM_VERSION}-{vocabulary.fingerprint[:40]}-seed{seed}.npz")


def _checksum(perm: np.ndarray) -> str:
    return hashlib.sha256(perm.astype("<i4", copy=False).tobytes()).hexdigest()


def _is_permutation(perm: np.ndarray, n: int) -> bool:
    if perm.shape != (n,) or not np.issubdtype(perm.dtype, np.integer):
        return False
    if perm.size and (perm.min() < 0 or perm.max() >= n):
        return False
    return bool((np.bincount(perm, minlength=n) == 1).all())


def _load_cached(path: Path, vocabulary: Vocabulary, seed: int) -> np.ndarray | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            perm = data["perm"]
            ok = (str(data["fingerprint"]) == vocabulary.fingerprint
                  and int(data["seed"]) == seed
                  and int(data["version"]) == ALGORITHM_VERSION
                  and str(data["checksum"]) == _checksum(perm)
                  and _is_permutation(perm, len(vocabulary))
                  and int(perm[0]) == start_word(len(vocabulary), seed))
    except Exception:  # missing, truncated, foreign or corrupt: rebuild
        return None
    return perm.astype(np.int32) if ok else None


def _save(path: Path, vocabulary: Vocabulary, seed: int, perm: np.ndarray) -> None:
    try:
        atomic_save_npz(path, perm=perm.astype("<i4"), fingerprint=np.str_(vocabulary.fingerprint),
                        seed=np.int64(seed), version=np.int64(ALGORITHM_VERSION),
                        checksum=np.str_(_checksum(perm)))
    except OSError:
        pass  # a read-only cache only costs time


def build_lists(vocabulary: Vocabulary, seeds: Sequence[int], *, cache: bool = True) -> np.ndarray:
    """One exact greedy list per seed over ``vocabulary`` (shape (len(seeds), |V|), int32 rows).

    Lists already in the cache are loaded (and verified); the candidate graph is built once for
    all missing ones. Every returned list is checked to be a permutation of the vocabulary.
    """
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError("vocabulary must be a textdp.vocab.Vocabulary")
    seeds = [_check_seed(s) for s in seeds]
    if not seeds:
        raise ValueError("at least one seed is required")
    n = len(vocabulary)
    out = np.empty((len(seeds), n), dtype=np.int32)
    graph = None
    for i, seed in enumerate(seeds):
        perm = _load_cached(list_cache_path(vocabulary, seed), vocabulary, seed) if cache else None
        if perm is None:
            t0 = time.perf_counter()
            log.info("building 1-Diffractor word list %d of %d for %s (%s words, seed %d): "
                     "done once per vocabulary, about 25 s per 50,000 words; then cached%s",
                     i + 1, len(seeds), vocabulary.name, f"{n:,}", seed,
                     f" in {list_cache_path(vocabulary, seed).parent}" if cache else " (off)")
            if graph is None:
                graph = _CandidateGraph(vocabulary.vectors)
            perm = greedy_chain(vocabulary.vectors, start_word(n, seed), graph=graph,
                                progress=_log_progress if log.isEnabledFor(logging.INFO) else None)
            log.info("word list %d of %d built in %.1f s", i + 1, len(seeds),
                     time.perf_counter() - t0)
            if not _is_permutation(perm, n):  # pragma: no cover - would be a bug in the walk
                raise RuntimeError("internal error: the word list is not a permutation")
            if cache:
                _save(list_cache_path(vocabulary, seed), vocabulary, seed, perm)
        out[i] = perm
    return out


def _log_progress(done: int, total: int) -> None:
    log.info("word list: %d%% (%s of %s words)", 100 * done // total, f"{done:,}",
             f"{total:,}")


def build_list(vocabulary: Vocabulary, seed: int = 0, *, cache: bool = True) -> np.ndarray:
    """The exact greedy list of ``vocabulary`` started at ``start_word(|V|, seed)`` (int32 rows)."""
    return build_lists(vocabulary, [seed], cache=cache)[0]
