"""``textdp privatize --engine ray``: the same command, the privatisation on a Ray actor pool.

The driver reads and writes the files with the same readers and writers as the local engine
(every format; JSONL byte for byte; atomic output, one-line errors), a window of records at a
time; each window is privatised by :func:`textdp.integrations.ray.run_text` — Ray Data
``map_batches`` over a pool of ``--workers`` actors that build the mechanism once. The rows carry
their position in the whole input (files of a directory in name order), so a seeded run writes
exactly what the local engine writes. Without ``--ray-address`` a local Ray runtime is started
(``--workers`` CPUs, a small object store, no dashboard) and shut down at the end; with one, the
job runs on that cluster (``ray start --head`` on its head node).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, progress_bar
from textdp.io import FORMATS, AtomicFiles, FileError, check_input, map_text_file
from textdp.io.streams import is_stdio, strip_compression

EngineOption = Annotated[str, typer.Option(
    "--engine", metavar="local|ray",
    help="local: this process; ray: a Ray Data actor pool (pip install 'textdp[ray]'), the "
         "same output for a seed. INPUT may then be a directory of files (OUTPUT: a directory).")]
WorkersOption = Annotated[int | None, typer.Option(
    "--workers", min=1, show_default=False,
    help="--engine ray: actors in the pool, one CPU each (default: the CPUs of this machine, "
         "or of the cluster with --ray-address).")]
AddressOption = Annotated[str | None, typer.Option(
    "--ray-address", metavar="ADDR", show_default=False,
    help="--engine ray: run on this Ray cluster (e.g. 10.0.0.1:6379 or auto) instead of a "
         "local Ray runtime started for the run.")]

#: Records privatised per Ray job: a window of --batch-size × workers × this many.
WINDOW_BATCHES = 64
#: The object store of a local runtime (spills to disk beyond it).
OBJECT_STORE_BYTES = 256 * 2**20


def check_engine(engine: str, workers: int | None, address: str | None, input: Path,
                 output: Path, report: Path | None, format: str | None
                 ) -> list[tuple[Path, Path]] | None:
    """The paths, checked without reading or writing anything: None for the local engine; for
    Ray, the (input, output) file pairs (a directory gives one pair per file)."""
    from textdp.cli.privatize import check_paths, check_report_path

    if engine == "local":
        if workers is not None or address is not None:
            raise CLIError("--workers and --ray-address need --engine ray")
        check_paths(input, output, report, format)
        return None
    if engine != "ray":
        raise CLIError(f"--engine must be local or ray, got {engine!r}")
    if report is not None:
        check_report_path(report, input, output)
    if is_stdio(input) or not input.is_dir():
        check_paths(input, output, report, format)
        return [(input, output)]
    files = sorted(p for p in input.iterdir() if p.is_file() and not p.name.startswith(".")
                   and Path(strip_compression(p)).suffix.lstrip(".") in FORMATS)
    if not files:
        raise FileError(input, None, "has no file with a supported extension "
                                     f"({', '.join(FORMATS)})")
    for f in files:
        check_input(f, format)
    if output.exists() and not output.is_dir():
        raise FileError(output, None, "is a file; the output of a directory is a directory")
    if output.absolute() == input.absolute():
        raise FileError(output, None, "the output would overwrite the input")
    if not output.parent.is_dir():
        raise FileError(output, None, f"directory {str(output.parent)!r} does not exist")
    taken = [f.name for f in files if (output / f.name).exists()]
    if taken:
        raise FileError(output / taken[0], None, "exists; give a new or empty output directory")
    return [(f, output / f.name) for f in files]


def start(workers: int | None, address: str | None) -> tuple[Any, bool]:
    """The ``ray`` module, connected; and whether this run started (and must stop) it."""
    from textdp.integrations.ray import require_ray

    try:
        ray = require_ray()
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    _quiet()
    if ray.is_initialized():  # a caller's runtime (Python, tests): used as it is
        return ray, False
    try:
        if address is not None:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        else:
            ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                     object_store_memory=OBJECT_STORE_BYTES, log_to_driver=False,
                     logging_level="ERROR")
    except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; all are one line here
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        raise CLIError(f"cannot start {where}: {one_line(exc)}") from None
    return ray, True


def _quiet() -> None:
    """No progress bars or execution logs from Ray Data: the command prints its own lines."""
    import logging

    from ray.data import DataContext

    context = DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


class _Windows:
    """``transform(texts, start)`` for :func:`map_text_file`: one Ray job per window."""

    def __init__(self, runner: Any, spec: dict[str, Any], workers: int, batch_size: int) -> None:
        self.runner, self.spec, self.workers, self.batch_size = runner, spec, workers, batch_size
        self.offset = 0  # documents in the files before this one
        self.documents = 0
        self.peak: dict[str, int] = {}  # the largest RSS of a worker process
        identifiers = runner.identifiers if runner.identifiers is not None else False
        self.options = {"oov": runner.oov.value, "mask_token": runner.mask_token,
                        "keep_stopwords": runner.keep_stopwords,
                        "unchanged_warning": runner.unchanged_warning,
                        "batch_chars": runner.batch_chars, "identifiers": identifiers,
                        "allocation": runner.allocation, "entities": runner.entities}

    def __call__(self, texts: list[str], start: int) -> list[str]:
        import numpy as np
        import pyarrow as pa
        import ray.data

        from textdp.integrations.ray import ROW, preserve_order, run_text, texts_of

        first = self.offset + start
        self.documents = max(self.documents, start + len(texts))
        step = self.batch_size
        tables = [pa.table({"text": pa.array(texts[a:a + step], pa.large_string()),
                            ROW: np.arange(first + a, first + min(len(texts), a + step))})
                  for a in range(0, len(texts), step)]
        if not tables:
            return []
        with preserve_order():
            out = run_text(ray.data.from_arrow(tables), self.runner, self.spec, self.options,
                           column="text", workers=self.workers, batch_size=step,
                           peak=self.peak)
            return list(texts_of(out))


def run(pairs: list[tuple[Path, Path]], runner: Any, args: dict[str, Any]) -> None:
    """Privatise every pair on Ray; the outputs and the report appear together, or nothing.

    ``args``: the command's arguments (``mechanism``, ``epsilon``, ``params``, ``vocabulary``,
    ``options``, ``format``, ``report``, ``output``, ``batch_size``, ``workers``,
    ``ray_address``) and the driver's mechanism ``mech``.
    """
    from textdp.cli.privatize import say_outcome
    from textdp.integrations.ray import engine_report

    t0 = time.perf_counter()
    workers, batch_size, report = args["workers"], args["batch_size"], args["report"]
    spec = {"mechanism": args["mechanism"], "epsilon": args["epsilon"], "params": args["params"],
            "vocabulary": None if args["vocabulary"] is None else args["mech"].vocabulary}
    ray, own = start(workers, args["ray_address"])
    created = _make_parent(pairs[-1][1])  # the output directory of a directory
    try:
        workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        windows = _Windows(runner, spec, workers, batch_size)
        summaries = []
        with AtomicFiles() as files:
            for src, dst in pairs:
                windows.documents = 0
                summaries.append(map_text_file(
                    src, dst, windows, options=args["options"], format=args["format"], files=files,
                    batch_size=batch_size * workers * WINDOW_BATCHES,
                    progress=progress_bar("privatize")))
                windows.offset += windows.documents
            result = runner.report()
            result = engine_report(result, workers, time.perf_counter() - t0,
                                   result["tokens"]["total"], "tokens",
                                   windows.peak.get("rss", 0))
            result = args["book"].attach(result)
            result["io"] = _io(summaries)
            if report is not None:
                files.write_json(report, result)
    except BaseException as exc:
        if created:
            _remove_empty(pairs[-1][1].parent)
        if isinstance(exc, Exception) and type(exc).__module__.startswith("ray"):
            raise CLIError(f"Ray: {one_line(exc)}") from None
        raise
    finally:
        if own:
            ray.shutdown()
    say_outcome(result["io"], args["output"], report, result)


def _make_parent(path: Path) -> bool:
    if path.parent.is_dir():
        return False
    path.parent.mkdir()
    return True


def _remove_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        pass


def _io(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """One file's io summary as it is; a directory's summed, with each file's."""
    if len(summaries) == 1:
        return summaries[0]
    skipped = [s for f in summaries for s in f.get("skipped", [])]
    return {"files": summaries, "records_in": sum(s["records_in"] for s in summaries),
            "records_out": sum(s["records_out"] for s in summaries),
            "records_skipped": sum(s.get("records_skipped", 0) for s in summaries),
            "skipped": skipped}
