"""Ray engine of the command line at cluster scale (issue 25): whole processes, as a user runs them.

``textdp privatize DIR -o OUTDIR --engine ray --workers 2`` (a local Ray runtime of 2 CPUs started
by the command; the workers read and write the files) against the local engine over the same
words in one file (``textdp privatize FILE -o OUT``, one process, numpy's BLAS on every core).
Texts: the VADER sentences repeated to each size, in Parquet files of equal size. Unseeded.
Entity recognition (spaCy's model on candidate windows) is on by default and costs both engines
far more than the mechanism: each case runs with the default and, where named ``…-none``, with
``--entities none``.

Cases (``TEXTDP_BENCH_RAY_CASES``, comma-separated; default all, in this order):

* ``mvc``, ``mvc-none``: MVC (ε = 10) over ``TEXTDP_BENCH_RAY_MVC_WORDS`` words (default
  2,000,000) in 10 files;
* ``diff``, ``diff-none``: 1-Diffractor (ε = 1, geometric) over ``TEXTDP_BENCH_RAY_DIFF_WORDS``
  (default 4,000,000) in 20 files; ``diff-none`` also with ``--ray-address`` of a runtime
  started before the command (what every call on a running cluster pays);
* ``rss``: the driver's peak RSS (``performance.driver_peak_rss_mib`` of the report: the command's
  own process, Ray's processes excluded) for 1-Diffractor with ``--entities none`` over the sizes
  of ``TEXTDP_BENCH_RAY_RSS_WORDS`` (default ``4000000,40000000``), 20 files each;
* ``fixed``: the fixed cost of a call: 2 files of 2 documents, best of 2 (a warm machine: the
  files cached, Ray's processes started before), entities on and off; the local engine on one
  of the files, the Ray engine starting a local runtime, and the Ray engine joining a running
  one with ``--ray-address``.

Wall times are whole processes (interpreter start, Ray start and stop included). The machine's
load average is recorded with each figure: other work on the machine slows both engines, so the
ratios are provisional when it is loaded. Quick run::

    TEXTDP_BENCH_RAY_CASES=diff-none,fixed TEXTDP_BENCH_RAY_DIFF_WORDS=1000000 \\
        python -m benchmarks.run ray
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAIN = "import sys; from textdp.cli import main; sys.exit(main())"
CASES = ("mvc", "mvc-none", "diff", "diff-none", "rss", "fixed")
NONE = ["--entities", "none"]


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def _cases() -> list[str]:
    chosen = [c.strip() for c in os.environ.get("TEXTDP_BENCH_RAY_CASES", ",".join(CASES))
              .split(",") if c.strip()]
    unknown = sorted(set(chosen) - set(CASES))
    if unknown:
        raise ValueError(f"TEXTDP_BENCH_RAY_CASES: unknown {', '.join(unknown)}; have "
                         f"{', '.join(CASES)}")
    return chosen


def _write(texts: list[str], directory: Path, files: int, single: bool = True) -> Path:
    """The texts in ``files`` Parquet files of ``directory`` (name order = text order), and
    (``single``) the same texts in one file beside it (the local engine's input)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir()
    step = -(-len(texts) // files)
    for k in range(files):
        pq.write_table(pa.table({"text": pa.array(texts[k * step:(k + 1) * step], pa.string())}),
                       directory / f"part-{k:03d}.parquet")
    path = directory.with_suffix(".parquet")
    if single:
        pq.write_table(pa.table({"text": texts}), path)
    return path


def _cli(args: list[str], report: Path) -> tuple[float, dict, float]:
    """(wall seconds, report, load average at the start) of one whole command."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", MAIN, "privatize", *args, "--report",
                           str(report)], capture_output=True, text=True, timeout=3000)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr[-2000:]}")
    return wall, json.loads(report.read_text()), load


def _words(report: dict) -> int:
    return report["tokens"]["by_class"]["word"]


def _ratios(root: Path, chosen: list[str]) -> list[str]:
    from benchmarks.common import vader_texts

    lines = ["Whole processes; unseeded; VADER sentences repeated, Parquet. Ray: "
             "`textdp privatize DIR -o OUTDIR --engine ray --workers 2` (a local runtime of 2 "
             "CPUs started by the command). Local: `textdp privatize FILE -o OUT`, the same words "
             "in one file. Entities: on (the default) or `--entities none`. Load: the 1-minute "
             "load average when the command started.", "",
             "| mechanism | entities | words | files | engine | wall s | words/s | ÷ local | "
             "driver peak RSS MiB | load |", "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    mvc = ("MVC ε=10", ["-m", "mvc", "--epsilon", "10"],
           _env_int("TEXTDP_BENCH_RAY_MVC_WORDS", 2_000_000), 10)
    diff = ("1-Diffractor ε=1", ["-m", "diffractor", "--epsilon", "1"],
            _env_int("TEXTDP_BENCH_RAY_DIFF_WORDS", 4_000_000), 20)
    inputs: dict[tuple[int, int], Path] = {}  # (words, files) → the single file
    for name, (label, mech, words, files) in [("mvc", mvc), ("mvc-none", mvc), ("diff", diff),
                                              ("diff-none", diff)]:
        if name not in chosen:
            continue
        n = len(lines)
        d = root / f"in-{words}-{files}"
        if (words, files) not in inputs:  # ≥ words: the reports count them
            inputs[words, files] = _write(vader_texts(int(words * 1.05)), d, files)
        single = inputs[words, files]
        extra = NONE if name.endswith("-none") else []
        lw, lrep, lload = _cli([str(single), "-o", str(root / f"local{n}.parquet"), *mech,
                                *extra], root / f"local{n}.json")
        rw, rrep, rload = _cli([str(d), "-o", str(root / f"ray{n}"), *mech, *extra,
                                "--engine", "ray", "--workers", "2"], root / f"ray{n}.json")
        entities = "none" if extra else "on"
        nw = _words(lrep)
        lines.append(f"| {label} | {entities} | {nw:,} | 1 | local | {lw:.1f} | {nw / lw:,.0f} "
                     f"| | | {lload:.1f} |")
        lines.append(f"| {label} | {entities} | {_words(rrep):,} | {files} | Ray, 2 workers | "
                     f"{rw:.1f} | {_words(rrep) / rw:,.0f} | **{lw / rw:.2f}** | "
                     f"{rrep['performance']['driver_peak_rss_mib']:.0f} | {rload:.1f} |")
        shutil.rmtree(root / f"ray{n}", ignore_errors=True)
        if name == "diff-none":  # the same job on a runtime already running (a cluster's case)
            aw, arep, aload = _joined(root, [str(d), "-o", str(root / f"ray{n}a"), *mech, *extra,
                                             "--engine", "ray", "--workers", "2"],
                                      root / f"ray{n}a.json")
            lines.append(f"| {label} | {entities} | {_words(arep):,} | {files} | Ray, 2 workers, "
                         f"`--ray-address` of a running runtime | {aw:.1f} | "
                         f"{_words(arep) / aw:,.0f} | **{lw / aw:.2f}** | "
                         f"{arep['performance']['driver_peak_rss_mib']:.0f} | {aload:.1f} |")
            shutil.rmtree(root / f"ray{n}a", ignore_errors=True)
    return lines if len(lines) > 4 else []


def _joined(root: Path, args: list[str], report: Path) -> tuple[float, dict, float]:
    """:func:`_cli` with ``--ray-address`` of a local runtime started here first (2 CPUs, as
    ``ray start --head --num-cpus 2`` would be): the command pays no runtime start or stop."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        return _cli([*args, "--ray-address", ray.get_runtime_context().gcs_address], report)
    finally:
        ray.shutdown()


def _rss(root: Path) -> list[str]:
    from benchmarks.common import vader_texts

    lines = ["", "Driver peak RSS (1-Diffractor ε=1, `--entities none`, Ray, 2 workers, "
                 "20 files):", "",
             "| words | wall s | driver peak RSS MiB | worker peak RSS MiB | load |",
             "|---:|---:|---:|---:|---:|"]
    for size in [int(s) for s in os.environ.get("TEXTDP_BENCH_RAY_RSS_WORDS",
                                                "4000000,40000000").split(",") if s.strip()]:
        d = root / f"rss{size}"
        _write(vader_texts(int(size * 1.05)), d, 20, single=False)
        rw, rrep, rload = _cli([str(d), "-o", str(root / f"rss-out{size}"), "-m", "diffractor",
                                "--epsilon", "1", *NONE, "--engine", "ray", "--workers", "2"],
                               root / f"rss{size}.json")
        perf = rrep["performance"]
        lines.append(f"| {_words(rrep):,} | {rw:.1f} | **{perf['driver_peak_rss_mib']:.0f}** | "
                     f"{perf.get('worker_peak_rss_mib', 0):.0f} | {rload:.1f} |")
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(root / f"rss-out{size}", ignore_errors=True)
    return lines


def _fixed(root: Path) -> list[str]:
    from benchmarks.common import vader_texts

    tiny = root / "tiny"
    tiny.mkdir()
    for k in range(2):
        (tiny / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                                 for t in vader_texts(40)[:4]))
    runs = iter(range(10**6))

    def best(src: Path, extra: list[str]) -> tuple[float, float]:
        """(seconds, load) of the faster of two calls."""
        walls = []
        for _ in range(2):
            i = next(runs)
            dst = root / (f"t{i}.jsonl" if src.is_file() else f"t{i}")
            walls.append(_cli([str(src), "-o", str(dst), "--epsilon", "10", *extra],
                              root / f"t{i}.json")[::2])
        return min(walls)

    import ray

    lines = ["", "Fixed cost of a call (MVC ε=10, 2 files of 2 documents; best of 2, whole "
                 "process; s, with the load average):", "",
             "| entities | local engine (1 file) | Ray, local runtime started by the command | "
             "Ray, `--ray-address` of a running runtime |", "|---|---:|---:|---:|"]
    ray_args = ["--engine", "ray", "--workers", "2"]
    cells: dict[str, list[tuple[float, float]]] = {}
    for entities, extra in (("on", []), ("none", NONE)):
        cells[entities] = [best(tiny / "0.jsonl", extra), best(tiny, [*extra, *ray_args])]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:  # a warm machine: a Ray runtime already running, joined with --ray-address
        address = ray.get_runtime_context().gcs_address
        for entities, extra in (("on", []), ("none", NONE)):
            cells[entities].append(best(tiny, [*extra, *ray_args, "--ray-address", address]))
    finally:
        ray.shutdown()
    for entities, row in cells.items():
        lines.append(f"| {entities} | " + " | ".join(f"{w:.2f} (load {load:.1f})"
                                                     for w, load in row) + " |")
    return lines


def run() -> str:
    chosen = _cases()
    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        lines = _ratios(root, chosen)
        if "rss" in chosen:
            lines += _rss(root)
        if "fixed" in chosen:
            lines += _fixed(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return "\n".join(lines)
