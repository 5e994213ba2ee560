"""Ray Data engine (issue 13, item 6): scaling of the actor pool, against the local process.

MVC (ε = 10, default vocabulary) over real text (the VADER sentences, repeated to
``TEXTDP_BENCH_RAY_WORDS`` words, default 400,000), unseeded:

* Ray with 1 and 2 workers, each actor one CPU and one BLAS/OpenMP thread (``threads=1``: the
  variables set in the actors' runtime_env) — scaling = rate(2) / rate(1), goal ≥ 1.8×;
* the local process on the same texts, numpy's BLAS using every core (``textdp.privatize``) —
  Ray with 2 workers as a fraction of it, goal ≥ 85%;
* peak RSS of a worker process (``performance.worker_peak_rss_mib`` of the report);
* start-up: ``ray.init`` of a local runtime, and a whole ``privatize`` call on 8 documents
  (materialise + row index + starting the actors, which build the mechanism).

Rates are words (alphanumeric tokens) per wall-clock second of the whole call, row indexing and
actor start included; the time inside the actors (``worker_seconds``) is shown beside them.
"""

from __future__ import annotations

import os
import time


def _words(report: dict) -> int:
    return report["tokens"]["by_class"]["word"]


def run() -> str:
    import ray

    import textdp
    from benchmarks.common import vader_texts
    from textdp.integrations import ray as tray

    target = int(os.environ.get("TEXTDP_BENCH_RAY_WORDS", "400000"))
    texts = vader_texts(int(target * 1.05))  # whitespace words ≥ alphanumeric words
    cores = os.cpu_count() or 1
    t0 = time.perf_counter()
    ray.init(num_cpus=2, object_store_memory=512 * 2**20, include_dashboard=False,
             log_to_driver=False, logging_level="ERROR")
    init_s = time.perf_counter() - t0
    try:
        from ray.data import DataContext

        DataContext.get_current().enable_progress_bars = False
        DataContext.get_current().print_on_execution_start = False

        def dataset(rows):
            return ray.data.from_items([{"text": t} for t in rows], override_num_blocks=16)

        t0 = time.perf_counter()
        tray.privatize(dataset(texts[:8]), epsilon=10, workers=1)
        small_s = time.perf_counter() - t0
        rows = []
        for workers in (1, 2):
            t0 = time.perf_counter()
            _, report = tray.privatize(dataset(texts), epsilon=10, workers=workers, threads=1,
                                       batch_size=1024)
            wall = time.perf_counter() - t0
            rows.append((workers, _words(report), wall, report["performance"]))
    finally:
        ray.shutdown()
    t0 = time.perf_counter()
    local = textdp.privatize(texts, epsilon=10)
    local_wall = time.perf_counter() - t0
    local_rate = _words(local.report) / local_wall
    rate = {w: n / wall for w, n, wall, _ in rows}
    lines = [
        f"MVC, ε = 10, unseeded, vocabulary glove-6b-50d/wordfreq-top50000-alpha; {len(texts):,} "
        f"VADER sentences, {rows[0][1]:,} words (alphanumeric tokens). Ray {ray.__version__}, a "
        f"local runtime of 2 CPUs on this {cores}-core machine.",
        "",
        "| engine | workers × threads | wall s | words/s (wall) | worker s (sum) | "
        "words/s per worker inside the actors | peak RSS per worker, MiB |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for workers, words, wall, perf in rows:
        inside = words / perf["worker_seconds"] if perf["worker_seconds"] else 0
        lines.append(f"| Ray Data actor pool | {workers} × 1 | {wall:.2f} | {words / wall:,.0f} | "
                     f"{perf['worker_seconds']:.2f} | {inside:,.0f} | "
                     f"{perf.get('worker_peak_rss_mib', 0):,.0f} |")
    lines += [
        f"| local process (`textdp.privatize`), BLAS on all cores | 1 × {cores} | "
        f"{local_wall:.2f} | {local_rate:,.0f} | | | |",
        "",
        f"- scaling 1 → 2 workers: **{rate[2] / rate[1]:.2f}×** (goal ≥ 1.8×)",
        f"- Ray with 2 workers ÷ the local process on both cores: **{rate[2] / local_rate:.0%}** "
        "(goal ≥ 85%)",
        f"- start-up: `ray.init` of a local runtime {init_s:.2f} s; a whole `privatize` call on 8 "
        f"documents with 1 worker (materialise, row index, actor start, mechanism build) "
        f"{small_s:.2f} s",
    ]
    return "\n".join(lines)
