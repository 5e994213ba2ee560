"""Efficiency of word mechanisms: tokens per second (and per day) and peak memory per 1,000 words.

The 1-Diffractor paper (Meisenbacher et al., IWSPA 2024, §6, Fig. 6 and Table 5) times 1,000 random
vocabulary words and a whole data set, extrapolates to tokens per day, and profiles the memory
needed to perturb 1,000 words, leaving out one-time setup (its word lists). We measure the same
things, each mechanism in a **fresh Python process** so that caches, BLAS threads and the
allocator's high-water mark of one mechanism never leak into another's numbers:

* ``setup_seconds`` / ``setup_peak_mib``: building the mechanism (lists, indices, tables), with
  the vocabulary already loaded;
* ``peak_mib_per_1000_words``: the peak of traced allocations (``tracemalloc``, which sees
  numpy's buffers) above what was live before, while privatising 1,000 random vocabulary words
  in one call;
* ``words_per_second``: ids → ids (``privatize_ids``) on ``n_tokens`` random vocabulary words,
  best of ``repeats``; ``words_per_day`` = × 86,400;
* ``text_tokens_per_second``: the whole pipeline (tokenise, privatise, restore case) on real VADER
  sentences, counting every token (words, numbers, punctuation, whitespace), like the paper's
  data-set measurement;
* ``max_rss_mib``: the process's peak resident set (includes Python, numpy and the vocabulary;
  VmHWM, which starts afresh at exec, unlike getrusage's ru_maxrss).

Timing runs with tracing off. Run ``python -m textdp.evaluation.efficiency '{"mechanism": "mvc",
"epsilon": 10}'`` to measure one mechanism by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["measure_efficiency", "efficiency_table"]

MIB = 1024 * 1024


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else the machine type (for benchmark and page
    footers)."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs inside the child process."""
    import resource
    import tracemalloc

    from textdp import _random
    from textdp.mechanisms import create
    from textdp.vocab import DEFAULT, load

    rng = _random.public_generator(spec.get("seed", 0))
    vocab = load(spec.get("vocabulary") or DEFAULT, size=spec.get("vocabulary_size") or None)
    params = dict(spec.get("params") or {})

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    mech = create(spec["mechanism"], vocab, epsilon=float(spec["epsilon"]), **params)
    setup_seconds = time.perf_counter() - t0
    setup_peak = tracemalloc.get_traced_memory()[1] - base

    n_words = int(spec.get("n_words", 1000))
    ids = rng.integers(len(vocab), size=n_words)
    mech.privatize_ids(ids[:8], rng)  # first-call costs (lazy tables) are setup, not per word
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    mech.privatize_ids(ids, rng)
    per_1000 = (tracemalloc.get_traced_memory()[1] - before) * 1000.0 / n_words
    tracemalloc.stop()

    n_tokens = int(spec.get("n_tokens", 20_000))
    repeats = int(spec.get("repeats", 3))
    big = rng.integers(len(vocab), size=n_tokens)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        mech.privatize_ids(big, rng)
        best = min(best, time.perf_counter() - t0)
    out: dict[str, Any] = {
        "mechanism": spec["mechanism"], "epsilon": float(spec["epsilon"]), "params": params,
        "vocabulary": vocab.describe(),
        "setup_seconds": setup_seconds, "setup_peak_mib": setup_peak / MIB,
        "peak_mib_per_1000_words": per_1000 / MIB,
        "words_per_second": n_tokens / best, "words_per_day": n_tokens / best * 86_400,
        "n_tokens": n_tokens, "repeats": repeats,
    }
    if spec.get("text", True):
        from textdp.datasets import load_vader
        from textdp.pipeline import Privatizer

        texts = [s.text for s in load_vader("movie_reviews")][: int(spec.get("n_texts", 1000))]
        # the mechanism's own speed (the entity stage's is in benchmarks.run entities)
        runner = Privatizer(mech, seed=int(rng.integers(2**62)), entities="none")
        t0 = time.perf_counter()
        runner.run(texts)
        seconds = time.perf_counter() - t0
        report = runner.report()
        out["text_documents"] = len(texts)
        out["text_tokens"] = report["tokens"]["total"]
        out["text_tokens_per_second"] = report["tokens"]["total"] / seconds
        out["text_words_per_second"] = report["tokens"]["by_policy"]["privatized"] / seconds
    out["max_rss_mib"] = _peak_rss_mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
    return out


def _peak_rss_mib(fallback: float) -> float:
    """This process's peak resident set: VmHWM where /proc has it.

    Not getrusage's ru_maxrss alone: Linux keeps that across exec, so a child started from a large
    parent reports the parent's peak.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return fallback


def measure_efficiency(mechanism: str, epsilon: float, params: dict[str, Any] | None = None, *,
                       n_words: int = 1000, n_tokens: int = 20_000, repeats: int = 3,
                       text: bool = True, n_texts: int = 1000, vocabulary_size: int | None = None,
                       vocabulary: str | None = None, seed: int = 0,
                       timeout: float = 600.0) -> dict[str, Any]:
    """Measure one mechanism in a fresh Python process (see the module docstring for the fields).

    Raises:
        RuntimeError: the child failed (its last error line is in the message).
    """
    spec = {"mechanism": mechanism, "epsilon": float(epsilon), "params": params or {},
            "n_words": n_words, "n_tokens": n_tokens, "repeats": repeats, "text": text,
            "n_texts": n_texts, "vocabulary_size": vocabulary_size, "seed": seed,
            "vocabulary": vocabulary}
    proc = subprocess.run([sys.executable, "-m", "textdp.evaluation.efficiency", json.dumps(spec)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"efficiency measurement of {mechanism!r} failed: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def efficiency_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of :func:`measure_efficiency` results."""
    lines = ["| mechanism | ε | setup s | setup MiB | MiB / 1,000 words | words/s | words/day | "
             "text tokens/s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        text = f"{r['text_tokens_per_second']:,.0f}" if "text_tokens_per_second" in r else "–"
        lines.append(f"| {r['mechanism']} | {r['epsilon']:g} | {r['setup_seconds']:.2f} | "
                     f"{r['setup_peak_mib']:.1f} | {r['peak_mib_per_1000_words']:.3f} | "
                     f"{r['words_per_second']:,.0f} | {r['words_per_day']:.3g} | {text} |")
    return "\n".join(lines)


if __name__ == "__main__":  # the child process
    print(json.dumps(_measure(json.loads(sys.argv[1]))))
