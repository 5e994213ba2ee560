"""DeepCandidate throughput on real documents, and its share of the time next to encoding."""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import best_of


def run() -> str:
    from textdp.datasets.documents import load_documents
    from textdp.encoders import load_sbert
    from textdp.mechanisms.document import DeepCandidate, Recoder, build_candidates
    from textdp.sentences import split_sentences

    docs = load_documents("nyt")[:120]
    texts = [d.text for d in docs]
    encoder = load_sbert()
    encoder(["warm up the model."])

    t0 = time.perf_counter()
    split = [split_sentences(t) for t in texts]
    t_split = time.perf_counter() - t0
    flat = [s for d in split for s in d]
    t0 = time.perf_counter()
    emb = np.asarray(encoder(flat), dtype=np.float64)
    t_encode = time.perf_counter() - t0
    sents = np.split(emb, np.cumsum([len(d) for d in split])[:-1])
    k = np.array([len(d) for d in split])

    # A recoder of the paper's shape (4 layers, 384 wide; random weights cost the same as trained
    # ones) and m = 2,000 candidates built from random sub-documents of the same texts.
    rng = np.random.default_rng(0)
    d = emb.shape[1]
    h = Recoder([(rng.normal(0, d ** -0.5, (d, d)), np.zeros(d)) for _ in range(4)])
    pool = [s[np.sort(rng.choice(len(s), size=max(1, len(s) // 2), replace=False))]
            for s in (sents[int(rng.integers(len(sents)))] for _ in range(2000))]
    cands = build_candidates(pool, recoder=h)

    rows = []
    for p in (10, 50, 100):
        mech = DeepCandidate(cands, epsilon=10.0, n_projections=p, recoder=h, projection_seed=0)
        t_mech = best_of(lambda mech=mech: mech.release_many(sents, rng), repeat=2)
        total = t_split + t_encode + t_mech
        rows.append((p, len(docs) / t_mech, len(docs) / total, 100 * t_mech / total))

    lines = [
        f"{len(docs)} NYT editorials ({k.sum():,} sentences, {k.mean():.1f} per document, "
        f"max {k.max()}); encoder {getattr(encoder, 'name', 'sbert')} (CPU); "
        f"{len(cands):,} candidates of dimension {d}; recoder 4 × ({d}×{d}); ε = 10.",
        "",
        f"Sentence splitting (pysbd): {len(docs) / t_split:,.0f} documents/s; "
        f"encoding: {len(docs) / t_encode:,.1f} documents/s ({len(flat) / t_encode:,.0f} "
        "sentences/s).",
        "",
        "| projections p | mechanism only (docs/s) | end to end (docs/s) | mechanism share of time |",
        "|---:|---:|---:|---:|",
    ]
    for p, mech_rate, total_rate, share in rows:
        lines.append(f"| {p} | {mech_rate:,.0f} | {total_rate:,.1f} | {share:.1f}% |")
    worst = max(r[3] for r in rows)
    lines += ["", f"Goal: the mechanism (recoder + depth + sampling) ≤ 10% of the time. "
              f"Worst case here: {worst:.1f}% ({'met' if worst <= 10 else 'NOT met'})."]
    return "\n".join(lines)
