"""DP-Prompt throughput: generated tokens/s at batch 1 and batch 16, documents/s on VADER sentences.

The default model (SmolLM2-135M-Instruct, GGUF dequantised to float32 by transformers) on the CPU,
temperature 0.5 with the default clip [10, 30] (ε_token = 80), max_new_tokens 32. Generation runs
to EOS or the cap, so tokens/s counts the tokens actually sampled. ``TEXTDP_BENCH_DP_PROMPT_DOCS``
sets the number of VADER sentences (default 64; batch 1 uses a quarter of them).
"""

from __future__ import annotations

import os
import time

MAX_NEW_TOKENS = 32
TEMPERATURE = 0.5


def _measure(lm, texts: list[str], batch: int) -> tuple[float, int]:
    from textdp.lm import Paraphraser

    runner = Paraphraser(model=lm, seed=0, batch_size=batch, temperature=TEMPERATURE,
                         max_new_tokens=MAX_NEW_TOKENS)
    t0 = time.perf_counter()
    runner.run(texts)
    seconds = time.perf_counter() - t0
    return seconds, runner.report()["counts"]["generated_tokens"]


def run() -> str:
    import torch

    from benchmarks.common import vader_texts
    from textdp.lm import load_model

    n = int(os.environ.get("TEXTDP_BENCH_DP_PROMPT_DOCS", "64"))
    texts = vader_texts(min_words=30 * n)[:n]
    t0 = time.perf_counter()
    lm = load_model()
    load = time.perf_counter() - t0
    _measure(lm, texts[:2], 2)  # warm-up
    rows = []
    for batch, docs in ((1, texts[:max(1, n // 4)]), (16, texts)):
        seconds, tokens = _measure(lm, docs, batch)
        rows.append(f"| {batch} | {len(docs)} | {tokens:,} | {seconds:.1f} | "
                    f"{tokens / seconds:.1f} | {len(docs) / seconds:.2f} |")
    return "\n".join([
        f"Model: {lm.name} (sha256 {lm.sha256[:12]}…), loaded in {load:.1f} s; torch "
        f"{torch.__version__}, {torch.get_num_threads()} threads; T = {TEMPERATURE}, clip [10, 30], "
        f"max_new_tokens {MAX_NEW_TOKENS}, VADER sentences (movie reviews first).",
        "",
        "| batch | documents | generated tokens | seconds | tokens/s | documents/s |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
