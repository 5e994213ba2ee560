"""Shared pieces of the benchmarks: real text and the machine's GEMM reference rate."""

from __future__ import annotations

import time

import numpy as np


def vader_texts(min_words: int = 100_000) -> list[str]:
    """Real sentences from the VADER sets (movie reviews, then Amazon, tweets, NYT) until
    at least ``min_words`` alphanumeric tokens; cycles through the sets again if needed."""
    from textdp.datasets import load_vader
    from textdp.text import split_batch

    pool = [s.text for name in ("movie_reviews", "amazon", "tweets", "nyt") for s in load_vader(name)]
    texts, words = [], 0
    while words < min_words:
        for t in pool:
            texts.append(t)
            words += len(split_batch([t]).words)
            if words >= min_words:
                break
    return texts


def gemm_rate(n_queries: int, dim: int, n_vectors: int, *, blocks=(64, 128, 256, 512, 1024),
              repeat: int = 3) -> tuple[float, int]:
    """Best queries/s of numpy float32 (B × dim) @ (dim × n_vectors) over block sizes B,
    i.e. the raw arithmetic of scoring every query against every vector, nothing else."""
    rng = np.random.default_rng(0)
    v = rng.standard_normal((n_vectors, dim), dtype=np.float32)
    best, best_b = 0.0, 0
    for b in blocks:
        q = rng.standard_normal((b, dim), dtype=np.float32)
        out = np.empty((b, n_vectors), dtype=np.float32)
        np.matmul(q, v.T, out=out)
        reps = max(1, n_queries // b)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(reps):
                np.matmul(q, v.T, out=out)
            times.append(time.perf_counter() - t0)
        rate = reps * b / min(times)
        if rate > best:
            best, best_b = rate, b
    return best, best_b


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
