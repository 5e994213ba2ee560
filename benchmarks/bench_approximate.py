"""Approximate nearest-neighbour search (faiss HNSW) against the exact engine on the 400,000-word
GloVe 6B 50d vocabulary: MVC queries, speed-up and recall@1, index build time."""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

from benchmarks.common import best_of, vader_texts
from textdp.mechanisms import create
from textdp.neighbors.approximate import ApproximateNeighbors
from textdp.text import split_batch
from textdp.vocab import Vocabulary, load

EPSILONS = (5.0, 10.0, 20.0)
EF_SEARCH = (16, 32, 64, 128, 256)


def _build(vocab: Vocabulary) -> tuple[ApproximateNeighbors, float, float]:
    """The index built cold (in an empty cache) and loaded from that cache: (index, s, s)."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ApproximateNeighbors(vocab.vectors, fingerprint=vocab.fingerprint, cache=tmp)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = ApproximateNeighbors(vocab.vectors, fingerprint=vocab.fingerprint, cache=tmp)
        warm = time.perf_counter() - t0
        assert index.loaded_from_cache
    return index, cold, warm


def run(n_queries: int = 20_000, n_vectors: int | None = None, repeat: int = 2) -> str:
    """``n_queries`` words of VADER text; ``n_vectors``: the first rows only (quick runs)."""
    vocab = load("glove-6b-50d-400k")
    if n_vectors is not None:
        vocab = Vocabulary(vocab.words[:n_vectors], vocab.vectors[:n_vectors], name=vocab.name)
    words = split_batch(vader_texts(int(n_queries * 1.3))).words
    ids = np.fromiter((vocab.lookup.get(w.lower(), -1) for w in words), dtype=np.int64)
    ids = ids[ids >= 0][:n_queries]
    n = ids.size
    approx, cold, warm = _build(vocab)
    exact = create("mvc", vocab, epsilon=10)._nn
    default_ef = approx.ef_search
    rng = np.random.default_rng(0)
    lines = [
        f"Vocabulary {vocab.name}: {len(vocab):,} × {vocab.dim}; {n:,} words of VADER text; MVC's "
        f"noisy vectors φ(w) + z. {approx.description} (textdp's default); threads: faiss "
        f"{os.environ.get('OMP_NUM_THREADS', 'default')}, exact engine {exact.n_jobs}. Index "
        f"build {cold:.1f} s (cold), {warm:.2f} s from the on-disk cache. recall@1 = fraction of "
        f"outputs equal to the exact (certified) nearest word, i.e. 1 − the fraction the "
        f"privacy report states. Best of {repeat}.",
        "",
        "| ε | efSearch | exact queries/s | approximate queries/s | speed-up | recall@1 |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for eps in EPSILONS:
        mech = create("mvc", vocab, epsilon=eps)
        noisy = vocab.vectors[ids] + mech.draw(ids, rng)
        t_exact = best_of(lambda q=noisy: exact.query(q), repeat=repeat)
        want = exact.query(noisy)
        for ef in EF_SEARCH if eps == 10.0 else (default_ef,):
            approx.ef_search = ef
            t_approx = best_of(lambda q=noisy: approx.query(q), repeat=repeat)
            recall = float(np.mean(approx.query(noisy) == want))
            lines.append(f"| {eps:g} | {ef}{' (default)' if ef == default_ef else ''} | "
                         f"{n / t_exact:,.0f} | {n / t_approx:,.0f} | {t_exact / t_approx:.1f}× | "
                         f"{recall:.4f} |")
        approx.ef_search = default_ef
    return "\n".join(lines)
