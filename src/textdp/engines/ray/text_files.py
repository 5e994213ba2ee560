"""``textdp privatize --engine ray``: the same command, the privatisation on a Ray actor pool.

Files in, files out, on the workers (issue 25): one pool of ``--workers`` :class:`FileWorker`
actors per job, each building the mechanism once, reads, privatises and writes whole files with
textdp's own readers and writers (every format; JSONL byte for byte; the same one-line errors)
into a hidden staging directory beside the output; the driver holds counts only. A seeded run
first counts each file's documents on the pool, so every document keeps its position in the whole
input (files of a directory or a glob pattern in name order, several INPUT files in the order
given) and the output is exactly the local engine's. INPUT and OUTPUT may be URIs of pyarrow
filesystems (``s3://``, ``gs://``; :mod:`textdp.io.uri`): the workers open them through the
filesystem, and outputs on an object store are staged under a hidden prefix beside OUTPUT. The
staged files are moved into the command's atomic group (with ``--ledger``, checked at commit
against the fingerprint taken before the release) when every file succeeded; a failure or an
interrupt kills the actors and removes the staging directory. Start-up is overlapped: the
actors are created as soon as Ray is up, and ``--ledger``'s fingerprint pass runs while Ray
starts; the driver loads neither Ray Data nor the entity model. Standard input/output, which a
worker cannot open, keep the driver reading and writing: windows of records privatised by
:func:`textdp.engines.ray.data.run_text`. Without ``--ray-address`` a local Ray runtime is started
(``--workers`` CPUs, a small object store, no dashboard) and shut down at the end; with one, the
job runs on that cluster (``ray start --head`` on its head node; token authentication named in
one line when it refuses this process).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from textdp.cli._arguments import PrivatizeArguments, say_outcome
from textdp.cli._common import CLIError, one_line, progress_bar
from textdp.cli._ledger import CommandLedger
from textdp.engines.ray.cluster import start, stop
from textdp.engines.ray.logs import RayLogs, see_logs
from textdp.engines.ray.pool import (
    ACTOR_RETRIES,
    Staging,
    file_size,
    for_worker,
    kill_actor,
    make_parent,
    pool_map,
    remove_empty,
)
from textdp.engines.worker import ProcessRelease
from textdp.io import FileError, map_text_file
from textdp.io.streams import is_stdio
from textdp.spec import ReleaseSpec
from textdp.tallies import Tallies

__all__ = ["FileWorker", "Fingerprint", "count_documents", "run"]

#: Records privatised per Ray job: a window of --batch-size × workers × this many.
WINDOW_BATCHES = 64


class FileWorker:
    """An actor of the job's one pool: receives the release spec and builds the mechanism and
    its Privatizer from it once (in its own process: an unseeded Privatizer keys its secure
    generator from this process's ``os.urandom``), then rewrites whole files with textdp's own
    readers and writers — every format, JSONL byte for byte, exactly as the local engine — into
    the staging paths the driver names. Only counts travel back: the records never reach the
    driver."""

    def __init__(self, spec: ReleaseSpec, read_options: Any, format: str | None,
                 batch_size: int, threads: int = 1) -> None:
        from textdp.engines.ray.runtime import limit_threads

        limit_threads(threads)
        self.release = ProcessRelease(spec)
        self.privatizer = self.release.build()
        self.read_options, self.format, self.batch_size = read_options, format, batch_size

    def count(self, src: str) -> int | str:
        """The documents of ``src`` (:func:`count_documents`)."""
        return count_documents(src, self.read_options, self.format)

    def rewrite(self, index: int, src: str, dst: str, staged: str, first: int,
                fingerprint: bool = False) -> dict[str, Any]:
        """Privatise file ``src`` (its first document is document ``first`` of the whole input)
        into ``staged`` (a name in the staging directory ending as ``dst`` does); returns its
        io summary and the Privatizer's tallies for it, or the
        one-line problem with the file (``error``)."""
        from textdp.privacy.fingerprint import InputHash

        self.release.reset()
        run = self.privatizer.run
        digest = InputHash("texts", documents=False) if fingerprint else None

        def transform(texts: list[str], start: int) -> list[str]:
            if digest is not None:  # the records released, for the ledger's check at commit
                digest.texts(texts)
            return run(texts, start=first + start)

        try:  # staged: the target's name, so its extension gives the format and compression
            summary = map_text_file(src, staged, transform, options=self.read_options,
                                    format=self.format, batch_size=self.batch_size)
        except FileError as exc:
            return {"index": index, "error": str(exc)}
        summary["output"] = dst
        out = {"index": index, "summary": summary, "stats": self.release.stats()}
        if digest is not None:
            out["fingerprint"] = (digest.hexdigest(), digest.count)
        return out


def count_documents(src: str, read_options: Any, format: str | None) -> int | str:
    """The documents of one file (the counting pass of a seeded run, one call per file on the
    pool): from the Parquet footer where no record can be left out, else by reading the file
    with textdp's own reader (a malformed file gives its one-line error, as a string)."""
    from textdp.io import open_records

    try:
        with open_records(src, format=format, options=read_options) as reader:
            if reader.format == "parquet" and read_options.on_error == "fail" and \
                    read_options.null == "error":
                return int(reader.total or 0) * len(reader.text_fields)
            return sum(len(batch.texts) for batch in reader.batches(8192))
    except FileError as exc:
        return str(exc)


class Fingerprint:
    """``--ledger``'s fingerprint of the files, in name order as one input (the local engine's,
    :func:`textdp.cli._ledger.fingerprint_file`), computed in one streaming pass on the driver
    before any output — SHA-256 over the whole sequence cannot be split over workers — together
    with each file's own, which the workers compute from the records they release: comparing
    those at commit checks that the input did not change, without a second pass.

    :meth:`start` runs the pass on a thread of the driver while Ray starts (the main thread
    mostly waits on Ray's processes then) and the actors build their mechanism; calling the
    object waits for it (or, not started, runs it) and raises what it raised there."""

    def __init__(self, paths: list[Path], *, options: Any, format: str | None) -> None:
        self.paths, self.options, self.format = paths, options, format
        #: Each file's (fingerprint, count), once computed (None: no ledger).
        self.files: list[tuple[str, int]] | None = None
        self.value: tuple[str, int] | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._cancelled = threading.Event()

    def start(self) -> None:
        """The pass, begun on a thread of its own."""
        self._thread = threading.Thread(target=self._background, name="textdp-fingerprint",
                                        daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Stop a pass still running (the job failed or was interrupted), and wait for it."""
        self._cancelled.set()
        if self._thread is not None:
            self._thread.join()

    def _background(self) -> None:
        try:
            self._compute()
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread instead
            self._error = exc

    def __call__(self) -> tuple[str, int]:
        if self._thread is None:
            self._compute()
        else:
            self._thread.join()
            if self._error is not None:
                raise self._error
        assert self.value is not None
        return self.value

    def _compute(self) -> None:
        from textdp.io import open_records
        from textdp.privacy.fingerprint import InputHash

        whole, files = InputHash("texts"), []
        for path in self.paths:
            one = InputHash("texts", documents=False)  # compared only: no documents
            with open_records(path, format=self.format, options=self.options) as reader:
                for batch in reader.batches(4096):
                    if self._cancelled.is_set():
                        return
                    whole.texts(batch.texts)
                    one.texts(batch.texts)
            files.append((one.hexdigest(), one.count))
        self.files, self.value = files, (whole.hexdigest(), whole.count)


class _Windows:
    """``transform(texts, start)`` for :func:`map_text_file`: one Ray job per window."""

    def __init__(self, runner: Any, spec: ReleaseSpec, workers: int, batch_size: int) -> None:
        self.runner, self.workers, self.batch_size = runner, workers, batch_size
        self.spec = spec
        self.offset = 0  # documents in the files before this one
        self.documents = 0
        self.peak: dict[str, int] = {}  # the largest RSS of a worker process
        self.tallies: list[Any] = []  # per window, summed into the report

    def __call__(self, texts: list[str], start: int) -> list[str]:
        import numpy as np
        import pyarrow as pa
        import ray.data

        from textdp.engines.ray.data import ROW, encode_texts, preserve_order, run_text, texts_of

        first = self.offset + start
        self.documents = max(self.documents, start + len(texts))
        step = self.batch_size
        # Bytes, not an Arrow string column: a text may hold a lone surrogate (not UTF-8).
        tables = [pa.table({"text": pa.array(encode_texts(texts[a:a + step]), pa.large_binary()),
                            ROW: np.arange(first + a, first + min(len(texts), a + step))})
                  for a in range(0, len(texts), step)]
        if not tables:
            return []
        with preserve_order():
            out, tallies = run_text(ray.data.from_arrow(tables), self.runner, self.spec,
                                    column="text", workers=self.workers,
                                    batch_size=step, peak=self.peak)
            self.tallies.append(tallies)
            return list(texts_of(out))


def run(args: PrivatizeArguments, book: CommandLedger) -> None:
    """Privatise every pair of ``args.files`` on Ray with ``args.spec``; the outputs and the
    report appear together, or nothing. ``book``: the command's ledger (with ``--ledger``, the
    files are fingerprinted as one input before the release). Ray's own log lines stay off
    stderr unless ``args.verbose`` (:class:`RayLogs`); textdp's lines are printed once Ray is
    done."""
    assert args.files is not None  # the Ray engine's pairs: check_engine made them
    pairs = list(args.files)
    fingerprint = Fingerprint([s for s, _ in pairs], options=args.read_options,
                              format=args.format)
    t0 = time.perf_counter()
    with RayLogs(verbose=args.verbose) as logs:
        result = _run(pairs, args, book, fingerprint, logs, t0)
    say_outcome(result["io"], args.output, args.report, result)


def _run(pairs: list[tuple[Path, Path]], args: PrivatizeArguments, book: CommandLedger,
         fingerprint: Fingerprint, logs: RayLogs, t0: float) -> dict[str, Any]:
    """The job, its start-up overlapped: with ``--ledger`` the fingerprint pass runs on a thread
    of the driver while Ray starts, and the pool's actors are created as soon as Ray is up, so
    that they build their mechanism while the driver checks the ledger. Nothing is written
    before the ledger's check (exit 2 when it refuses: the actors are killed, Ray stopped)."""
    spec, workers = args.spec, args.workers
    windowed = any(is_stdio(p) for pair in pairs for p in pair)
    if book.book is not None and not windowed:  # standard input is read once, by the job
        fingerprint.start()
    created: list[Path] = []  # the output directory of a directory, once made
    actors: list[Any] = []
    ray, own = None, False
    try:
        ray, own = start(workers, args.ray_address, logs, data=windowed)
        workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        if not windowed:
            actors = _pool(ray, args, min(workers, len(pairs)))
        with book.check(spec.mechanism_object(), fingerprint, seed=spec.seed):
            runner = spec.privatizer()  # the driver's: its tallies add up the workers'
            result = _job(ray, pairs, runner, args, book, fingerprint, workers, actors,
                          created, t0)
    except BaseException as exc:
        for directory in created:
            remove_empty(directory)
        if isinstance(exc, Exception) and type(exc).__module__.startswith("ray"):
            raise CLIError(f"Ray: {one_line(exc)}{see_logs(logs)}") from None
        raise
    finally:
        fingerprint.cancel()
        for a in actors:  # (those of a job that ran are killed already: a no-op)
            kill_actor(ray, a)
        if own:
            stop(ray)
    return result


def _job(ray: Any, pairs: list[tuple[Path, Path]], runner: Any, args: PrivatizeArguments,
         book: CommandLedger, fingerprint: Fingerprint, workers: int, actors: list[Any],
         created: list[Path], t0: float) -> dict[str, Any]:
    """The records privatised, the outputs and the report committed together; the result."""
    from textdp.engines.ray.runtime import engine_context
    from textdp.engines.worker import peak_rss

    report = args.report
    peak: dict[str, int] = {}
    tallies: list[Any] = []  # the workers' (Tallies), summed into the one report
    with book.files() as files:
        if not actors:
            make_parent(pairs[-1][1], created)
            summaries = _windowed(pairs, runner, args, workers, files, peak, tallies)
        else:
            summaries = _distributed(ray, pairs, runner, args, book, fingerprint, actors,
                                     files, peak, created, tallies)
        # The driver's own peak RSS: flat in the input when the workers read and write the
        # files.
        result = runner.report(
            sum(tallies, Tallies.zero()),
            **engine_context(workers, time.perf_counter() - t0, peak.get("rss", 0)),
            driver_peak_rss_bytes=peak_rss())
        result = book.attach(result).with_context(io=_io(summaries))
        if report is not None:
            files.write_json(report, result)
    return result


def _pool(ray: Any, args: PrivatizeArguments, n: int) -> list[Any]:
    """The job's ``n`` :class:`FileWorker` actors, created (each builds the mechanism in its own
    process; a prestarted worker process when Ray has one) without waiting for them."""
    from textdp.engines.ray.runtime import check_no_generator

    check_no_generator(args.spec)
    # An actor that dies (a lost node, out of memory) is restarted and its file rewritten from
    # the start (the staged file is overwritten); a bounded number of times, so that a file that
    # kills every actor fails the job instead of retrying for ever.
    actor = ray.remote(num_cpus=1, max_restarts=ACTOR_RETRIES,
                       max_task_retries=ACTOR_RETRIES)(FileWorker)
    return [actor.remote(args.spec, args.read_options, args.format, args.batch_size)
            for _ in range(n)]


def _windowed(pairs: list[tuple[Path, Path]], runner: Any, args: PrivatizeArguments,
              workers: int, files: Any, peak: dict[str, int],
              tallies: list[Any]) -> list[dict[str, Any]]:
    """Standard input or output: the driver reads and writes, a window of records per Ray job
    (workers cannot open the command's own streams)."""
    batch_size = args.batch_size
    windows = _Windows(runner, args.spec, workers, batch_size)
    summaries = []
    for src, dst in pairs:
        windows.documents = 0
        summaries.append(map_text_file(
            src, dst, windows, options=args.read_options, format=args.format, files=files,
            batch_size=batch_size * workers * WINDOW_BATCHES,
            progress=progress_bar("privatize")))
        windows.offset += windows.documents
    peak.update(windows.peak)
    tallies += windows.tallies
    return summaries


def _distributed(ray: Any, pairs: list[tuple[Path, Path]], runner: Any, args: PrivatizeArguments,
                 book: CommandLedger, fingerprint: Fingerprint, actors: list[Any], files: Any,
                 peak: dict[str, int], created: list[Path], tallies: list[Any]
                 ) -> list[dict[str, Any]]:
    """Files in, files out, on the workers: one pool of actors for the job, each file read,
    privatised and written by one actor with textdp's own reader and writer, into a staging
    directory beside the output (the output directory of a directory is made only when every
    file succeeded: a driver killed outright leaves no output directory, only the hidden staging
    directory, which the next run into the same place removes); the driver holds counts only.

    Seeded, a counting pass (on the pool, in parallel) gives each file the position of its
    first document in the whole input (files in name order), so the output is the local
    engine's. When every file succeeded, the staged files are moved into ``files`` (the
    command's atomic group: they appear with the report when it commits); on any failure or
    interrupt the actors are killed first and the staging directory is removed.

    An output on an object store (``s3://…``) is staged under a hidden prefix beside it
    (:class:`~textdp.io.uri.RemoteStaging`), joined to the group when every file succeeded, and
    moved to its names when the group commits (after the ledger's check); object stores have no
    rename, so those moves are one object after the other, not one atomic step.
    """
    seed = args.spec.seed
    stage = Staging(pairs, args.output)
    try:
        firsts = _first_documents(actors, pairs) if seed is not None else [0] * len(pairs)
        # The largest files first: the pool's last file is a small one (less idle time).
        order = sorted(range(len(pairs)), key=lambda i: -file_size(pairs[i][0]))
        staged = [stage.path_for(i, dst) for i, (_, dst) in enumerate(pairs)]
        ledger = fingerprint.files is not None  # computed: --ledger
        items = [(i, for_worker(pairs[i][0]), str(pairs[i][1]), for_worker(staged[i]),
                  firsts[i], ledger) for i in order]
        released: dict[int, tuple[str, int]] = {}
        summaries: dict[int, dict[str, Any]] = {}
        bar = progress_bar("privatize")(len(pairs), "files")
        try:
            for out in pool_map(actors, "rewrite", items, file_at=1, ordered=False):
                if "error" in out:
                    raise CLIError(out["error"])
                tallies.append(Tallies.from_json(out["stats"]["tallies"]))
                peak["rss"] = max(peak.get("rss", 0), out["stats"]["peak_rss"])
                summaries[out["index"]] = out["summary"]
                if ledger:
                    released[out["index"]] = tuple(out["fingerprint"])
                bar.update(1)
        finally:
            bar.close()
        if ledger:  # checked at commit: the same records as fingerprinted before the release
            same = [released[i] for i in range(len(pairs))] == fingerprint.files
            book.released(fingerprint.value if same else
                          ("changed", sum(n for _, n in released.values())))
        stage.hand_over(pairs, staged, files, created)
    finally:
        for a in actors:  # before the staging directory goes: no actor writes there any more
            kill_actor(ray, a)
        stage.remove()
    return [summaries[i] for i in range(len(pairs))]


def _first_documents(actors: list[Any], pairs: list[tuple[Path, Path]]) -> list[int]:
    """The position of each file's first document in the whole input: the files' documents
    counted in parallel by the pool's actors (no further processes to start), summed in name
    order."""
    counts = list(pool_map(actors, "count", [(for_worker(src),) for src, _ in pairs],
                           file_at=0, ordered=True))
    firsts, total = [], 0
    for n in counts:
        if isinstance(n, str):
            raise CLIError(n)  # the first malformed file in name order, as the local engine
        firsts.append(total)
        total += n
    return firsts


def _io(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """One file's io summary as it is; a directory's summed, with each file's."""
    if len(summaries) == 1:
        return summaries[0]
    skipped = [s for f in summaries for s in f.get("skipped", [])]
    return {"files": summaries, "records_in": sum(s["records_in"] for s in summaries),
            "records_out": sum(s["records_out"] for s in summaries),
            "records_skipped": sum(s.get("records_skipped", 0) for s in summaries),
            "skipped": skipped}
