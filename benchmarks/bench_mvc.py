"""MVC throughput on the default vocabulary and real text, next to the raw GEMM rate."""

from __future__ import annotations

import numpy as np

import textdp
from benchmarks.common import best_of, gemm_rate, vader_texts
from textdp.mechanisms import create
from textdp.text import split_batch
from textdp.vocab import load_default


def run() -> str:
    vocab = load_default()
    texts = vader_texts(120_000)
    words = split_batch(texts).words
    ids = np.fromiter((vocab.lookup.get(w.lower(), -1) for w in words), dtype=np.int64)
    ids = ids[ids >= 0]
    mech = create("mvc", vocab, epsilon=10)
    rng = np.random.default_rng(0)

    t_exact = best_of(lambda: mech.privatize_ids(ids, rng), repeat=2)
    noise = mech.draw(ids, rng)
    t_noise = best_of(lambda: mech.draw(ids, rng), repeat=2)
    noisy = vocab.vectors[ids] + noise
    t_nn = best_of(lambda: mech._nn.query(noisy), repeat=2)
    t_fast = best_of(lambda: mech._nn.query(noisy, exact=False), repeat=2)
    result = {}
    t_api = best_of(lambda: result.setdefault("r", textdp.privatize(texts, mechanism=mech)), repeat=2)
    rep = textdp.privatize(texts, mechanism=mech).report
    t_seeded = best_of(lambda: textdp.privatize(texts, mechanism=mech, seed=1), repeat=1)
    gemm, gemm_block = gemm_rate(len(ids) // 4, vocab.dim, len(vocab))

    n = ids.size
    rows = [
        ("raw numpy float32 GEMM, same arithmetic (reference)", gemm, f"best block {gemm_block}"),
        ("exact NN search only (certified float32 GEMM + argmin)", n / t_nn, ""),
        ("NN search without the float64 certificate", n / t_fast, "not used: block-dependent"),
        ("noise draw only (metric Laplace, float32)", n / t_noise, ""),
        ("MVC mechanism, ids → ids (noise + exact NN)", n / t_exact, ""),
        ("textdp.privatize end to end (unseeded)", n / t_api,
         f"{rep['tokens']['total'] / t_api:,.0f} tokens/s of all classes"),
        ("textdp.privatize end to end (seed=1)", n / t_seeded, "per-document generators"),
    ]
    lines = [
        f"Real text: {len(texts):,} VADER sentences, {len(words):,} word/number tokens, "
        f"{n:,} in the vocabulary (privatised). Vocabulary {vocab.name}: "
        f"{len(vocab):,} × {vocab.dim}. ε = 10. Best of 2 runs.",
        "",
        "| what | privatised words/s | % of GEMM | note |",
        "|---|---:|---:|---|",
    ]
    for name, rate, note in rows:
        lines.append(f"| {name} | {rate:,.0f} | {100 * rate / gemm:.0f}% | {note} |")
    lines += ["", f"Goal: MVC ≥ 70% of the GEMM rate. Mechanism: {100 * n / t_exact / gemm:.0f}%; "
              f"end to end: {100 * n / t_api / gemm:.0f}%."]
    return "\n".join(lines)
