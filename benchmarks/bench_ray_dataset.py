"""Ray Data engine of the Python API (issue 13, item 6): actor-pool scaling against one process.

MVC (ε = 10, default vocabulary) over real text (the VADER sentences, repeated to each size in
``TEXTDP_BENCH_RAY_WORDS``, a comma-separated list, default ``400000,2000000`` words), unseeded:

* Ray with 1 and 2 workers, each actor one CPU and one BLAS/OpenMP thread (``threads=1``) —
  scaling = rate(2) / rate(1), goal ≥ 1.8×;
* the local process on the same texts, numpy's BLAS using every core (``textdp.privatize``) —
  Ray with 2 workers as a fraction of it, goal ≥ 85%;
* peak RSS of a worker process (``performance.worker_peak_rss_mib`` of the report);
* start-up: ``ray.init`` of a local runtime, and a whole ``privatize`` call on 8 documents.

Rates are words (alphanumeric tokens) per wall-clock second of the whole call, actor start
included; the time inside the actors (``worker_seconds``) is shown beside them. With two sizes,
each engine's wall time is split as ``wall = fixed + words / marginal rate`` (a line through
the two points): the fixed cost of a call (mostly Ray creating the actors) and the rate at
which the pool works once it runs.
"""

from __future__ import annotations

import os
import time


def _words(report: dict) -> int:
    return report["tokens"]["by_class"]["word"]


def _sizes() -> list[int]:
    raw = os.environ.get("TEXTDP_BENCH_RAY_WORDS", "400000,2000000")
    return [int(s) for s in raw.split(",") if s.strip()]


def _ray_runs(texts_by_size: dict[int, list[str]]) -> tuple[dict, float, float]:
    """{(size, workers): (words, wall, performance)}, ray.init seconds, 8-document call s."""
    import ray

    from textdp.integrations import ray as tray

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

        first = next(iter(texts_by_size.values()))
        t0 = time.perf_counter()
        tray.privatize(dataset(first[:8]), epsilon=10, workers=1)
        small_s = time.perf_counter() - t0
        runs = {}
        for size, texts in texts_by_size.items():
            for workers in (1, 2):
                ds = dataset(texts)
                t0 = time.perf_counter()
                _, report = tray.privatize(ds, epsilon=10, workers=workers, threads=1,
                                           batch_size=1024)
                runs[size, workers] = (_words(report), time.perf_counter() - t0,
                                       report["performance"])
    finally:
        ray.shutdown()
    return runs, init_s, small_s


def _fit(points: list[tuple[int, float]]) -> tuple[float, float] | None:
    """(fixed seconds, marginal words/s) of the line through the smallest and largest size."""
    if len(points) < 2:
        return None
    (n1, w1), (n2, w2) = min(points), max(points)
    slope = (w2 - w1) / (n2 - n1)
    return w1 - slope * n1, 1 / slope


def run() -> str:
    import ray

    import textdp
    from benchmarks.common import vader_texts

    sizes = _sizes()
    texts_by_size = {size: vader_texts(int(size * 1.05)) for size in sizes}  # ≥ size words
    runs, init_s, small_s = _ray_runs(texts_by_size)
    local = {}
    for size, texts in texts_by_size.items():
        t0 = time.perf_counter()
        result = textdp.privatize(texts, epsilon=10)
        local[size] = (_words(result.report), time.perf_counter() - t0)
    cores = os.cpu_count() or 1
    lines = [
        f"MVC, ε = 10, unseeded, vocabulary glove-6b-50d/wordfreq-top50000-alpha; VADER "
        f"sentences repeated to {', '.join(f'{local[s][0]:,}' for s in sizes)} words "
        f"(alphanumeric tokens). Ray {ray.__version__}, a local runtime of 2 CPUs on this "
        f"{cores}-core machine; 16 input blocks, batches of 1,024 rows.",
        "",
        "| words | engine | workers × threads | wall s | words/s (wall) | worker s (sum) | "
        "words/s per worker inside the actors | peak RSS per worker, MiB |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        for workers in (1, 2):
            words, wall, perf = runs[size, workers]
            inside = words / perf["worker_seconds"] if perf["worker_seconds"] else 0
            lines.append(f"| {words:,} | Ray Data actor pool | {workers} × 1 | {wall:.2f} | "
                         f"{words / wall:,.0f} | {perf['worker_seconds']:.2f} | {inside:,.0f} | "
                         f"{perf.get('worker_peak_rss_mib', 0):,.0f} |")
        words, wall = local[size]
        lines.append(f"| {words:,} | local process (`textdp.privatize`), BLAS on all cores | "
                     f"1 × {cores} | {wall:.2f} | {words / wall:,.0f} | | | |")
    lines += ["", "| words | scaling 1 → 2 workers (goal ≥ 1.8×) | Ray with 2 workers ÷ local "
                  "process (goal ≥ 85%) |", "|---:|---:|---:|"]
    for size in sizes:
        rate = {w: runs[size, w][0] / runs[size, w][1] for w in (1, 2)}
        lines.append(f"| {local[size][0]:,} | **{rate[2] / rate[1]:.2f}×** | "
                     f"**{rate[2] / (local[size][0] / local[size][1]):.0%}** |")
    fits = {w: _fit([(runs[s, w][0], runs[s, w][1]) for s in sizes]) for w in (1, 2)}
    fits["local"] = _fit(list(local.values()))
    if all(fits.values()):
        lines += ["", "Wall time = fixed + words / marginal rate, through the two sizes:", ""]
        for key, label in ((1, "Ray, 1 worker"), (2, "Ray, 2 workers"), ("local", "local")):
            fixed, marginal = fits[key]
            lines.append(f"- {label}: fixed {fixed:.2f} s per call, marginal "
                         f"{marginal:,.0f} words/s")
        lines.append(f"- marginal scaling 1 → 2 workers: **{fits[2][1] / fits[1][1]:.2f}×**; "
                     f"marginal Ray with 2 workers ÷ local: **{fits[2][1] / fits['local'][1]:.0%}**")
    lines.append(f"- start-up: `ray.init` of a local runtime {init_s:.2f} s; a whole `privatize` "
                 f"call on 8 documents with 1 worker (materialise, actor start, mechanism build) "
                 f"{small_s:.2f} s")
    return "\n".join(lines)
