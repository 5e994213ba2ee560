"""Many draws from a few input words through a mechanism's public path, counted per output.

The words are drawn together: a chunk is the word ids repeated r times, passed once through
``mechanism.privatize_ids`` (one noise matrix, one blocked search), and counted with one
``np.bincount`` over (word slot × |V| + output id). Memory is bounded by the chunk and by the
count table of one group of words, whatever the number of draws.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from textdp.mechanisms.base import WordMechanism

__all__ = ["Counts", "count_outputs"]

#: Per word: (output ids seen, their counts) in the first half, then in the second half.
Counts = dict[int, tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]]

DEFAULT_CHUNK = 1 << 16
_TABLE_BYTES = 1 << 28  # the dense count table of one group of words (two halves): ≤ 256 MiB


def _check_outputs(y: np.ndarray, size: int, n_words: int) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (size,) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"the mechanism returned {y.dtype} of shape {y.shape} for {size} ids; "
                         "expected a 1-D integer array of the same length")
    if size and (y.min() < 0 or y.max() >= n_words):
        raise ValueError("the mechanism returned ids outside the vocabulary")
    return y.astype(np.int64, copy=False)


def _half(mechanism: WordMechanism, ids: np.ndarray, n: int, rng: np.random.Generator,
          chunk: int, tick: Callable[[int], None]) -> np.ndarray:
    """(len(ids), |V|) counts of n draws from each of ``ids``."""
    v, g = len(mechanism.vocabulary), ids.size
    reps = max(1, chunk // g)
    batch = np.tile(ids, reps)
    slots = np.tile(np.arange(g, dtype=np.int64) * v, reps)
    counts = np.zeros(g * v, dtype=np.int64)
    left = n
    while left > 0:
        r = min(reps, left)
        size = r * g
        y = _check_outputs(mechanism.privatize_ids(batch[:size], rng), size, v)
        counts += np.bincount(slots[:size] + y, minlength=g * v)
        left -= r
        tick(size)
    return counts.reshape(g, v)


def count_outputs(mechanism: WordMechanism, ids: np.ndarray, draws: int,
                  rng: np.random.Generator, *, chunk: int = DEFAULT_CHUNK,
                  progress: Callable[[int, int], None] | None = None) -> Counts:
    """Output counts of ``draws`` draws from each word of ``ids``, split into two halves
    (⌊draws/2⌋ and the rest), stored sparsely. ``progress(done, total)`` after every chunk."""
    ids = np.unique(np.asarray(ids, dtype=np.int64))
    v = len(mechanism.vocabulary)
    group = int(max(1, min(ids.size, _TABLE_BYTES // (16 * v))))
    halves = (draws // 2, draws - draws // 2)
    total, done = ids.size * draws, 0

    def tick(size: int) -> None:
        nonlocal done
        done += size
        if progress is not None:
            progress(done, total)

    out: Counts = {}
    for g0 in range(0, ids.size, group):
        gids = ids[g0:g0 + group]
        parts = [_half(mechanism, gids, n, rng, chunk, tick) for n in halves]
        for i, w in enumerate(gids.tolist()):
            sparse = []
            for c in parts:
                nz = np.flatnonzero(c[i])
                sparse.append((nz, c[i, nz]))
            out[w] = (sparse[0], sparse[1])
    return out


def dense(sparse: tuple[np.ndarray, np.ndarray], n_words: int) -> np.ndarray:
    c = np.zeros(n_words, dtype=np.int64)
    c[sparse[0]] = sparse[1]
    return c
