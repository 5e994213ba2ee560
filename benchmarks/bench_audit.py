"""textdp.audit on MVC over the default vocabulary: draws/s, and the time for 10^6 draws per word.

The audit draws through the mechanism's public path in chunks of 65,536 ids and counts with one
``np.bincount`` per chunk, so its rate should be the mechanism's own ids → ids rate (the nearest-
neighbour search dominates). ``TEXTDP_BENCH_AUDIT_DRAWS`` sets the draws per word (default
10^6, the issue's target); a smaller value gives the rate, and the time for 10^6 is extrapolated.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks.common import best_of, gemm_rate
from textdp import _random
from textdp.audit import audit
from textdp.mechanisms import create
from textdp.vocab import load_default

DRAWS = int(os.environ.get("TEXTDP_BENCH_AUDIT_DRAWS", "1000000"))
PAIRS = 10
EPSILON = 10.0


def run() -> str:
    load = os.getloadavg()[0]
    vocab = load_default()
    mech = create("mvc", vocab, epsilon=EPSILON)
    t0 = time.perf_counter()
    result = audit(mech, "closest", draws=DRAWS, n_pairs=PAIRS, seed=0)
    wall = time.perf_counter() - t0
    words = len({p.a for p in result.pairs} | {p.b for p in result.pairs})
    total = words * DRAWS
    draw_s = total / result.draws_per_second
    ids = np.repeat(np.array(sorted({p.a for p in result.pairs}), dtype=np.int64), 6554)
    rng = _random.public_generator(1)
    mech_rate = ids.size / best_of(lambda: mech.privatize_ids(ids, rng), repeat=2)
    gemm, _ = gemm_rate(ids.size // 4, vocab.dim, len(vocab))
    full = words * 1_000_000 / result.draws_per_second
    rows = [
        ("raw numpy float32 GEMM, one search per draw (reference)", f"{gemm:,.0f}", ""),
        ("MVC ids → ids on one 65,536-id batch", f"{mech_rate:,.0f}", ""),
        (f"audit: {DRAWS:,} draws per word, {words} words ({total:,} draws)",
         f"{result.draws_per_second:,.0f}", f"{wall:,.1f} s in all ({draw_s:,.1f} s drawing, "
         f"{wall - draw_s:,.1f} s choosing pairs, events and bounds)"),
        (f"audit: 10^6 draws per word, {words} words (from the rate above)", "",
         f"≈ {full / 60:,.1f} min"),
    ]
    lines = [
        f"MVC, ε = {EPSILON:g}, on {vocab.name} ({len(vocab):,} × {vocab.dim}); the {PAIRS} "
        f"closest pairs ({words} distinct words); α = 0.05; seed 0. Draws per word in this run: "
        f"{DRAWS:,} (`TEXTDP_BENCH_AUDIT_DRAWS={DRAWS}`; the default is 10^6). Load average at "
        f"the start: {load:.1f} on {os.cpu_count()} cores.",
        "",
        "| what | draws/s | time |",
        "|---|---:|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in rows],
        "",
        f"Audit rate / mechanism rate: {100 * result.draws_per_second / mech_rate:.0f}% (the "
        "audit adds only the bincount per chunk). Goal: 10^6 draws per word on 10 pairs in "
        f"minutes: ≈ {full / 60:,.0f} min at this machine's rate (the time scales with cores, "
        "like the GEMM).",
    ]
    return "\n".join(lines)
