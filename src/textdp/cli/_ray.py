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
:func:`textdp.integrations.ray.run_text`. Without ``--ray-address`` a local Ray runtime is started
(``--workers`` CPUs, a small object store, no dashboard) and shut down at the end; with one, the
job runs on that cluster (``ray start --head`` on its head node; token authentication named in
one line when it refuses this process).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any, BinaryIO, NoReturn, TextIO

import typer

from textdp.cli._arguments import PrivatizeArguments, check_paths, check_report_path, say_outcome
from textdp.cli._common import CLIError, one_line, progress_bar
from textdp.cli._ledger import CommandLedger
from textdp.io import (
    FileError,
    check_distinct,
    check_input,
    check_output,
    directory_inputs,
    map_text_file,
)
from textdp.io.streams import is_stdio
from textdp.io.uri import (
    RemoteFile,
    RemoteStaging,
    check_output_file,
    check_output_prefix,
    is_uri,
    list_inputs,
    resolve,
)
from textdp.spec import ReleaseSpec
from textdp.tallies import Tallies

EngineOption = Annotated[str, typer.Option(
    "--engine", metavar="local|ray",
    help="local: this process; ray: a Ray Data actor pool (the 'ray' extra: pip install -e '.[ray]'), "
         "the same output for a seed. INPUT may then be a directory of files, a quoted glob "
         "pattern such as 'data/*.jsonl', several files, or a URI such as s3://bucket/prefix/ "
         "(OUTPUT: a directory or a prefix).")]
WorkersOption = Annotated[int | None, typer.Option(
    "--workers", min=1, show_default=False,
    help="--engine ray: actors in the pool, one CPU each (default: the CPUs of this machine, "
         "or of the cluster with --ray-address).")]
AddressOption = Annotated[str | None, typer.Option(
    "--ray-address", metavar="ADDR", show_default=False,
    help="--engine ray: run on this Ray cluster (e.g. 10.0.0.1:6379 or auto) instead of a "
         "local Ray runtime started for the run.")]
VerboseOption = Annotated[bool, typer.Option(
    "--verbose",
    help="--engine ray: let Ray's own log lines through to stderr (by default they go to Ray's "
         "log directory, and stderr carries textdp's lines only).")]

#: Records privatised per Ray job: a window of --batch-size × workers × this many.
WINDOW_BATCHES = 64
#: Restarts of a dead actor, and retries of the file it was writing.
ACTOR_RETRIES = 3
#: The object store of a local runtime (spills to disk beyond it).
OBJECT_STORE_BYTES = 256 * 2**20
#: Ray's system settings of a local runtime. ``worker_niceness``: Ray raises its workers'
#: niceness by 15 so that its own daemons keep priority over the work; here the workers *are*
#: the command's work (the driver waits), and at +15 they ran at a fraction of the local
#: engine's share of a busy machine (two actors on 2 loaded cores no faster than one): they run
#: at the command's own priority instead (a user's ``nice textdp …`` still applies to them).
LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0}


def resolve_paths(inputs: list[str], output: str, engine: str
                  ) -> tuple[list[Path | RemoteFile], Path | RemoteFile]:
    """INPUT... and OUTPUT as given on the command line: local paths (a ``file://`` URI is one),
    or :class:`~textdp.io.uri.RemoteFile` for a URI of another pyarrow filesystem (``s3://``,
    ``gs://``, …), resolved without reading anything. The local engine reads one local file:
    several INPUTs, or a URI, are refused in one line."""
    # Path("") is ".": an empty argument (an unset shell variable) would be named "." after.
    if any(not p.strip() for p in inputs):
        raise CLIError("INPUT is an empty string: give a file (or - for standard input)")
    if not output.strip():
        raise CLIError("OUTPUT (-o) is an empty string: give a file (or - for standard output)")
    if len(inputs) > 1 and any(is_stdio(p) for p in inputs):
        raise CLIError("- (standard input) must be the only INPUT")
    if engine == "local":  # before resolving: resolving an s3:// URI asks the bucket's region
        if len(inputs) > 1:
            raise CLIError("several INPUT files need --engine ray")
        for p in (*inputs, output):
            if is_uri(p) and not p.lower().startswith("file://"):
                raise CLIError(f"{p.split('?', 1)[0]}: a URI needs --engine ray")
    return [resolve(p) for p in inputs], resolve(output)


def local(path: Any) -> bool:
    """Whether ``path`` is a local path (or ``-``), not a file of a remote filesystem."""
    return not isinstance(path, RemoteFile)


def _check_privatize_pair(src: Path | RemoteFile, output: Path | RemoteFile,
                          report: Path | None, format: str | None) -> None:
    """``privatize``'s one input file and its output file (local or remote)."""
    if local(src) and local(output):
        check_paths(src, output, report, format)
        return
    check_output(output, src, format)
    check_input(src, format)
    if not local(output):
        check_output_file(output, src)


@dataclass(frozen=True, kw_only=True)
class InputRules:
    """What a command reads and writes with ``--engine ray``, for :func:`check_engine`:
    ``check(file, format)`` accepts one input file (raises a one-line FileError otherwise;
    local or :class:`~textdp.io.uri.RemoteFile`), ``output_name(file)`` names its output in the
    output directory or prefix of several files, and ``check_pair(input, output, report, format)``
    checks one input file and its output file. The default: ``privatize``'s."""

    check: Callable[[Any, str | None], object] = check_input
    output_name: Callable[[Any], str] = lambda file: file.name
    check_pair: Callable[[Any, Any, Path | None, str | None], None] = _check_privatize_pair


def check_engine(engine: str, workers: int | None, address: str | None,
                 inputs: list[Path | RemoteFile], output: Path | RemoteFile, report: Path | None,
                 format: str | None, rules: InputRules = InputRules()  # noqa: B008 - frozen
                 ) -> list[tuple[Any, Any]] | None:
    """The paths, checked without reading or writing anything: None for the local engine; for
    Ray, the (input, output) file pairs: one input file gives one output file; a directory, a
    glob pattern, a URI prefix or several INPUTs give their files (each in name order, the
    INPUTs in the order given) and the files ``rules.output_name`` names in the output directory
    (or prefix), which must be new or hold none of those names (a prefix: new or empty).
    ``privatize``, ``embed`` and ``docembed`` share it, each with its :class:`InputRules`."""
    if engine == "local":
        if workers is not None or address is not None:
            raise CLIError("--workers and --ray-address need --engine ray")
        rules.check_pair(inputs[0], output, report, format)
        return None
    if engine != "ray":
        raise CLIError(f"--engine must be local or ray, got {engine!r}")
    locals_ = [p for p in inputs if local(p)]
    if report is not None:
        check_report_path(report, locals_, output if local(output) else None)
    files: list[Any] = []
    many = len(inputs) > 1
    for given in inputs:
        found, several = _expand(given, format, rules.check)
        files += found
        many = many or several
    if not many:  # one file in, one file out
        rules.check_pair(files[0], output, report, format)
        return [(files[0], output)]
    if is_stdio(output):
        raise CLIError("the output of several files is a directory (or a URI prefix), not -")
    names: dict[str, Any] = {}
    for f in files:
        name = rules.output_name(f)
        if name in names:
            raise FileError(f, None, f"gives the output name {name!r}, as {names[name]} does: "
                                     "the output directory would hold both under one name")
        names[name] = f
    if not local(output):
        check_output_prefix(output)
        return [(f, output.child(name)) for name, f in names.items()]
    if output.exists() and not output.is_dir():
        raise FileError(output, None, "is a file; the output of several files is a directory")
    check_distinct({"input": locals_}, {"output": output})  # as files, not as names
    if not output.parent.is_dir():
        raise FileError(output, None, f"directory {str(output.parent)!r} does not exist")
    taken = [name for name in names if (output / name).exists()]
    if taken:
        raise FileError(output / taken[0], None, "exists; give a new or empty output directory")
    return [(f, output / name) for name, f in names.items()]


def _expand(given: Path | RemoteFile, format: str | None,
            check: Callable[[Any, str | None], object]) -> tuple[list[Any], bool]:
    """The input files one INPUT names (each accepted by ``check``), and whether it named
    several (a directory, a pattern, a prefix) rather than one file."""
    if not local(given):
        return list_inputs(given, format, check)
    if is_stdio(given):
        return [given], False
    pattern = not given.exists() and any(c in str(given) for c in "*?[")
    if pattern:
        return glob_inputs(given, format, check), True
    if given.is_dir():
        return directory_inputs(given, format, check), True
    return [given], False


def glob_inputs(pattern: Path, format: str | None,
                check: Callable[[Any, str | None], object] = check_input) -> list[Path]:
    """The files a glob pattern (``'data/*.jsonl'``, quoted for the shell) names, in name order:
    each must be an input file (``check``: by default :func:`textdp.io.check_input`)."""
    import glob

    files = sorted(Path(p) for p in glob.glob(str(pattern)))
    if not files:
        raise FileError(pattern, None, "matches no file")
    for f in files:
        check(f, format)
    return files


def start(workers: int | None, address: str | None, logs: RayLogs | None = None, *,
          data: bool = True) -> tuple[Any, bool]:
    """The ``ray`` module, connected; and whether this run started (and must stop it:
    :func:`stop`). ``logs``: where Ray's own lines go (told Ray's log directory once it is
    known). ``data``: whether this process runs Ray Data jobs (their progress bars and start-up
    lines are then turned off); the file workers' pool does not, and is spared its import."""
    from textdp.integrations.ray import require_ray

    try:
        ray = require_ray(data=data)
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    if data:
        from ray.data import DataContext

        context = DataContext.get_current()  # no bars from Ray Data: the command draws its own
        context.enable_progress_bars = False
        context.print_on_execution_start = False
    verbose = logs is None or logs.verbose
    level = "INFO" if verbose else "ERROR"  # INFO: Ray's default
    own = not ray.is_initialized()  # else a caller's runtime (Python, tests): used as it is
    sigterm = _sigterm_handler()
    try:
        if own and address is not None:
            ray.init(address=address, log_to_driver=verbose, logging_level=level)
        elif own:
            with _lean_runtime(enabled=not data, log_monitor=verbose):
                ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                         object_store_memory=OBJECT_STORE_BYTES, log_to_driver=verbose,
                         logging_level=level, _system_config=LOCAL_SYSTEM_CONFIG)
    except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; all are one line here
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        said = f"{exc}\n{logs.captured() if logs is not None else ''}"
        if address is not None and ("InvalidAuthToken" in said or "no authentication token"
                                    in said):
            raise CLIError(f"cannot join {where}: {_token_problem(said)}") from None
        raise CLIError(f"cannot start {where}: {one_line(exc)}") from None
    finally:
        # ray.init replaces the SIGTERM handler with one that exits with status 1: the command's
        # own (SIGTERM unwinds as Ctrl-C does: the cleanup runs, status 130) is put back.
        if sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)
    if logs is not None:
        logs.started(ray)
    return ray, own


@contextlib.contextmanager
def _lean_runtime(*, enabled: bool, log_monitor: bool) -> Iterator[None]:
    """While ``ray.init`` starts the local runtime of a file workers' job: without Ray's
    autoscaler monitor (a runtime of fixed size has nothing to scale) and, unless the workers'
    lines are to reach the driver (``--verbose``), without its log monitor — two Python
    processes that nothing of the job uses, and whose start-up competes with the runtime's own
    for the CPUs (about 0.8 s of CPU, 0.8 s of the start on 2 loaded cores). ``ray start`` has
    ``--no-monitor`` and Ray's node parameters have both switches, but ``ray.init`` passes
    neither: they are set on the parameters of the head node that ``ray.init`` builds. Where
    Ray's private ``Node`` differs, ``ray.init`` runs as it is. (Ray Data's jobs, which may
    ask the autoscaler for resources, keep the full runtime.)"""
    try:
        from ray._private import node
        original = node.Node.__init__
    except Exception:  # noqa: BLE001 - a private API
        enabled = False
    if not enabled:
        yield
        return

    def init(self: Any, ray_params: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("head") and kwargs.get("ray_init_cluster"):  # ray.init's own runtime
            ray_params.no_monitor = True
            if not log_monitor:
                ray_params.include_log_monitor = False
        original(self, ray_params, *args, **kwargs)

    node.Node.__init__ = init
    try:
        yield
    finally:
        node.Node.__init__ = original


def stop(ray: Any) -> None:
    """``ray.shutdown()`` of a runtime this process started, less the second it spends on Ray's
    autoscaler monitor: ``ray.shutdown`` stops the GCS before the monitor, whose SIGTERM handler
    then waits on the GCS it can no longer reach until ``shutdown`` gives up and kills it. A
    local runtime has nothing to autoscale: the monitor is killed first (and reaped), the rest
    stops as Ray stops it. Every process of the runtime is gone when this returns, as with
    ``ray.shutdown`` itself."""
    try:  # a private API: where it differs, ray.shutdown alone (the second is only time)
        node = ray._private.worker._global_node
        monitors = [info.process for info in node.all_processes.get("monitor", [])]
    except Exception:  # noqa: BLE001
        monitors = []
    for process in monitors:
        try:
            process.kill()
            process.wait(timeout=5)
        except Exception:  # noqa: BLE001 - gone already, or not ours to wait for: Ray's turn
            pass
    ray.shutdown()


def _sigterm_handler() -> Any:
    """The SIGTERM handler to restore after ``ray.init`` (None: none can be set here)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.getsignal(signal.SIGTERM)


def _token_problem(said: str) -> str:
    """The cause of a refused connection, in one line, from what Ray raised and logged."""
    give = ("give the cluster's token (`ray get-auth-token` on its head node prints it) as "
            "RAY_AUTH_TOKEN or in ~/.ray/auth_token")
    if "InvalidAuthToken" in said:
        return ("the cluster uses token authentication and refused this process's token "
                "(InvalidAuthToken: missing or not the cluster's): set RAY_AUTH_MODE=token and "
                f"{give}")
    return f"RAY_AUTH_MODE=token, but no token was found: {give}"


class RayLogs:
    """Context: Ray's own lines kept off this command's stderr, unless ``verbose``.

    Ray writes to the driver's stderr from three places, and each is rerouted into a file in Ray's
    log directory (``textdp-driver-PID.log`` beside ``ray-data.log``; before Ray has started,
    a spool that is copied there): its Python loggers (``ray``, ``ray.data``: the "Dataset job will
    hang" and "Progress bars disabled" warnings), Python warnings raised in Ray's modules, and
    the C++ core worker of the driver process, which writes to file descriptor 2 itself (a
    ``core_worker.cc`` line on every actor pool). For the last, descriptor 2 is pointed at that
    file while Ray runs, and ``sys.stderr`` — where textdp's own lines and progress bar go —
    at a copy of the original descriptor. Everything is restored on exit.

    Standard output is textdp's data stream (``-o -``), which the command writes only when it
    commits (:class:`textdp.io.AtomicFiles`, through a copy of descriptor 1 kept here:
    :func:`textdp.io.atomic.stdout_descriptor`). While Ray runs, descriptor 1 goes where Ray's
    lines go (the log file; stderr with ``verbose``): the driver's printing of worker and raylet
    lines, and every process Ray starts — which inherits descriptor 1, and may outlive an
    interrupted driver — never reach the data stream.
    """

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose
        #: The file that received Ray's lines (None: verbose, or nothing written yet).
        self.path: Path | None = None
        self._saved_fd: int | None = None
        self._sink: BinaryIO | None = None
        self._stderr: TextIO | None = None
        self._showwarning: Any = None
        self._filtered: list[logging.Handler] = []
        self._warnings: Any = None
        self._saved_stdout: int | None = None
        self._stdout_before: int | None = None

    def __enter__(self) -> RayLogs:
        self._hold_stdout()
        if self.verbose:
            if self._saved_stdout is not None:
                os.dup2(2, 1)  # Ray's lines on stderr, as asked; never in the data stream
            return self
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        self._showwarning, warnings.showwarning = warnings.showwarning, self._warning
        sys.stderr.flush()
        try:
            self._saved_fd = os.dup(2)
        except OSError:  # no descriptor 2 (closed by the caller): nothing to keep clean
            return self
        self._sink = tempfile.TemporaryFile()  # until Ray's log directory is known
        self._point_at(self._sink.fileno())
        if _fileno(sys.stderr) == 2:  # textdp's lines: to the original descriptor
            self._stderr = sys.stderr
            sys.stderr = open(self._saved_fd, "w", encoding=sys.stderr.encoding,  # noqa: SIM115
                              errors=sys.stderr.errors, buffering=1, closefd=False)
        return self

    def started(self, ray: Any) -> None:
        """Ray is up: its loggers exist, and its log directory is known."""
        if self.verbose:
            return
        for name in ("ray", "ray.data"):
            for handler in logging.getLogger(name).handlers:
                if isinstance(handler, logging.StreamHandler) and \
                        not isinstance(handler, logging.FileHandler):
                    handler.addFilter(self._record)
                    self._filtered.append(handler)
        if self._sink is None:
            return
        try:
            directory = Path(ray._private.worker._global_node.get_logs_dir_path())
        except Exception:  # noqa: BLE001 - a private API: the temporary directory instead
            directory = Path(tempfile.gettempdir())
        self._move(directory / f"textdp-driver-{os.getpid()}.log")

    def _move(self, path: Path) -> None:
        """Ray's lines so far, and every later one, into ``path`` (appended)."""
        try:
            sink = open(path, "ab")  # noqa: SIM115 - kept open while Ray runs
        except OSError:
            return
        assert self._sink is not None
        self._sink.seek(0)
        sink.write(self._sink.read())
        sink.flush()
        self._point_at(sink.fileno())
        self._sink.close()
        self._sink, self.path = sink, path

    def _hold_stdout(self) -> None:
        """Keep a copy of descriptor 1 for the command's own standard output."""
        from textdp.io.atomic import stdout_descriptor

        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        try:
            self._saved_stdout = os.dup(1)
        except OSError:  # no descriptor 1: nothing to keep clean
            return
        self._stdout_before = stdout_descriptor(self._saved_stdout)

    def _point_at(self, fd: int) -> None:
        """Descriptors 2 (and 1, when held) to ``fd``."""
        os.dup2(fd, 2)
        if self._saved_stdout is not None:
            os.dup2(fd, 1)

    def _release_stdout(self) -> None:
        """Descriptor 1 back (anything Ray printed flushed first, where Ray's lines went)."""
        from textdp.io.atomic import stdout_descriptor

        if self._saved_stdout is None:
            return
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(self._saved_stdout, 1)
        os.close(self._saved_stdout)
        self._saved_stdout = None
        stdout_descriptor(self._stdout_before)

    def captured(self) -> str:
        """Ray's lines kept off stderr so far (for an error message that names their cause)."""
        if self._sink is None:
            return ""
        try:
            self._sink.flush()
            fd = self._sink.fileno()
            size = os.fstat(fd).st_size
            return os.pread(fd, min(size, 1 << 20), max(0, size - (1 << 20))).decode(
                "utf-8", "replace")  # the last MiB at most
        except (OSError, ValueError):
            return ""

    def _record(self, record: logging.LogRecord) -> bool:
        """A filter on Ray's console handlers: the record goes to the file, not to stderr."""
        self._write(f"{record.levelname} {record.name}: {record.getMessage()}\n")
        return False

    def _warning(self, message: Any, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
        if f"{os.sep}ray{os.sep}" in filename:
            self._write(warnings.formatwarning(message, category, filename, lineno, line))
        else:
            self._showwarning(message, category, filename, lineno, file, line)

    def _write(self, text: str) -> None:
        try:
            os.write(2, text.encode("utf-8", "backslashreplace"))
        except OSError:
            pass

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self._exit(exc_type, exc, tb)
        finally:
            self._release_stdout()

    def _exit(self, exc_type: type[BaseException] | None, exc: BaseException | None,
              tb: TracebackType | None) -> None:
        if self.verbose:
            return
        for handler in self._filtered:
            handler.removeFilter(self._record)
        self._warnings.__exit__(exc_type, exc, tb)  # restores warnings.showwarning
        if self._saved_fd is None:
            return
        if self._stderr is not None:
            sys.stderr.flush()
            sys.stderr.close()  # the wrapper only: the descriptor is restored below
            sys.stderr = self._stderr
        os.dup2(self._saved_fd, 2)
        os.close(self._saved_fd)
        self._saved_fd = None
        if self._sink is not None:  # the log file, or the spool if Ray never started
            self._sink.close()


def _fileno(stream: Any) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _see(logs: RayLogs) -> str:
    """Where Ray's own lines went, for an error message."""
    return "" if logs.path is None else f" (Ray's own messages: {logs.path})"


class FileWorker:
    """An actor of the job's one pool: receives the release spec and builds the mechanism and
    its Privatizer from it once (in its own process: an unseeded Privatizer keys its secure
    generator from this process's ``os.urandom``), then rewrites whole files with textdp's own
    readers and writers — every format, JSONL byte for byte, exactly as the local engine — into
    the staging paths the driver names. Only counts travel back: the records never reach the
    driver."""

    def __init__(self, spec: ReleaseSpec, read_options: Any, format: str | None,
                 batch_size: int, threads: int = 1) -> None:
        from textdp.integrations.ray import limit_threads

        limit_threads(threads)
        self.privatizer = spec.privatizer()
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
        from textdp.integrations.ray import peak_rss
        from textdp.privacy.fingerprint import InputHash

        before = self.privatizer.tallies()
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
        stats = {"tallies": (self.privatizer.tallies() - before).to_json(),
                 "peak_rss": peak_rss()}
        out = {"index": index, "summary": summary, "stats": stats}
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

        from textdp.integrations.ray import ROW, encode_texts, preserve_order, run_text, texts_of

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
            _remove_empty(directory)
        if isinstance(exc, Exception) and type(exc).__module__.startswith("ray"):
            raise CLIError(f"Ray: {one_line(exc)}{_see(logs)}") from None
        raise
    finally:
        fingerprint.cancel()
        for a in actors:  # (those of a job that ran are killed already: a no-op)
            _kill(ray, a)
        if own:
            stop(ray)
    return result


def _job(ray: Any, pairs: list[tuple[Path, Path]], runner: Any, args: PrivatizeArguments,
         book: CommandLedger, fingerprint: Fingerprint, workers: int, actors: list[Any],
         created: list[Path], t0: float) -> dict[str, Any]:
    """The records privatised, the outputs and the report committed together; the result."""
    from textdp.integrations.ray import engine_context, peak_rss

    report = args.report
    peak: dict[str, int] = {}
    tallies: list[Any] = []  # the workers' (Tallies), summed into the one report
    with book.files() as files:
        if not actors:
            _make_parent(pairs[-1][1], created)
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
    from textdp.integrations.ray import check_no_generator

    check_no_generator(args.spec)
    # An actor that dies (a lost node, out of memory) is restarted and its file rewritten from
    # the start (the staged file is overwritten); a bounded number of times, so that a file that
    # kills every actor fails the job instead of retrying for ever.
    actor = ray.remote(num_cpus=1, max_restarts=ACTOR_RETRIES,
                       max_task_retries=ACTOR_RETRIES)(FileWorker)
    return [actor.remote(args.spec, args.read_options, args.format, args.batch_size)
            for _ in range(n)]


def _kill(ray: Any, actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # noqa: BLE001 - dead already, or its cluster gone: nothing left to stop
        pass


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
    stage = _Staging(pairs, args.output)
    try:
        firsts = _first_documents(actors, pairs) if seed is not None else [0] * len(pairs)
        # The largest files first: the pool's last file is a small one (less idle time).
        order = sorted(range(len(pairs)), key=lambda i: -_size(pairs[i][0]))
        staged = [stage.path_for(i, dst) for i, (_, dst) in enumerate(pairs)]
        ledger = fingerprint.files is not None  # computed: --ledger
        items = [(i, _for_worker(pairs[i][0]), str(pairs[i][1]), _for_worker(staged[i]),
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
            _kill(ray, a)
        stage.remove()
    return [summaries[i] for i in range(len(pairs))]


class _Staging:
    """Where a job's outputs are written until every file succeeded: a hidden directory beside
    the output (a local or shared file system: moved into the command's group by renames), or,
    for an output on an object store, a hidden prefix beside it (joined to the group, which
    moves its objects when it commits: :class:`~textdp.io.uri.RemoteStaging`)."""

    def __init__(self, pairs: list[tuple[Any, Any]], output: Path | RemoteFile) -> None:
        self.remote: RemoteStaging | None = None
        self.directory: Path | None = None
        if not local(output):  # beside the output: the object of one file, the prefix of several
            self.remote = RemoteStaging(output if pairs[0][1] == output else pairs[0][1].parent)
        else:
            out_dir = pairs[-1][1].parent
            self.directory = _staging_directory(out_dir if out_dir.is_dir() else out_dir.parent)

    def path_for(self, index: int, dst: Any) -> Any:
        if self.remote is not None:
            return self.remote.path_for(index, dst)
        assert self.directory is not None
        return self.directory / f"{index:06d}-{dst.name}"

    def hand_over(self, pairs: list[tuple[Any, Any]], staged: list[Any], files: Any,
                  created: list[Path]) -> None:
        """Every file succeeded: the staged files become part of the command's group."""
        if self.remote is not None:  # moved to their names when the group commits
            self.remote.moves = [(staged[i], dst) for i, (_, dst) in enumerate(pairs)]
            files.join(self.remote)
            self.remote = None  # the group's now: committed or aborted with it
            return
        _make_parent(pairs[-1][1], created)
        for i, (_, dst) in enumerate(pairs):
            os.replace(staged[i], files.path_for(dst))

    def remove(self) -> None:
        """The staging area, unless the group has it (after the actors are killed)."""
        if self.directory is not None:
            _remove_tree(self.directory)
        if self.remote is not None:
            self.remote.abort()


def _first_documents(actors: list[Any], pairs: list[tuple[Path, Path]]) -> list[int]:
    """The position of each file's first document in the whole input: the files' documents
    counted in parallel by the pool's actors (no further processes to start), summed in name
    order."""
    counts = list(pool_map(actors, "count", [(_for_worker(src),) for src, _ in pairs],
                           file_at=0, ordered=True))
    firsts, total = [], 0
    for n in counts:
        if isinstance(n, str):
            raise CLIError(n)  # the first malformed file in name order, as the local engine
        firsts.append(total)
        total += n
    return firsts


def pool_map(actors: list[Any], method: str, items: list[tuple[Any, ...]], *, file_at: int,
             ordered: bool) -> Iterator[Any]:
    """``actor.method(*item)`` for every item on the job's pool (:class:`ray.util.ActorPool`),
    the answers in the items' order (``ordered``) or as they finish. An actor that died for good
    (its restarts spent) ends the job with one line naming the file it was given (argument
    ``file_at`` of its item), not with Ray's message naming an actor id. Every command's file
    workers (privatize, embed, docembed) go through it."""
    import ray
    from ray.util import ActorPool

    given: dict[str | None, str] = {}
    pool = ActorPool(actors)
    try:
        yield from (pool.map if ordered else pool.map_unordered)(
            _submit(method, file_at, given), items)
    except ray.exceptions.RayActorError as exc:
        _died(exc, given)


def _submit(method: str, at: int, given: dict[str | None, str]) -> Any:
    """For :class:`ray.util.ActorPool`: call the actor's ``method`` with the arguments, noting
    in ``given`` the file (argument ``at``) each actor was given last, for :func:`_died`."""
    def submit(actor: Any, args: tuple[Any, ...]) -> Any:
        given[_actor_id(actor)] = args[at]
        return getattr(actor, method).remote(*args)

    return submit


def _actor_id(actor: Any) -> str | None:
    actor_id = getattr(actor, "_actor_id", None)  # private; RayActorError names it in hex
    return actor_id.hex() if actor_id is not None else None


def _died(exc: Exception, given: dict[str | None, str]) -> NoReturn:
    """An actor died for good (its restarts spent, see ACTOR_RETRIES): one line naming the file
    it was working on (Ray's own message, unchanged, where the actor is not known)."""
    import re

    actor = getattr(exc, "actor_id", None)
    src = given.get(actor) if actor is not None else None
    if src is None:
        raise exc
    said = one_line(exc)
    detail = re.search(r"Worker exit detail: (.*?)(?: Some common causes|$)", said)
    raise CLIError(f"{src}: the Ray worker on this file died for good, its {ACTOR_RETRIES} "
                   "restarts spent (out of memory, a crash or a lost node?); nothing was "
                   f"written (Ray: {detail.group(1) if detail else said})") from None


#: The staging directory of a job: hidden (never an input), named after the driver's process.
_STAGE_PREFIX = ".textdp-ray-"


def _staging_directory(parent: Path) -> Path:
    """A fresh staging directory in ``parent`` (the output's own file system: the final moves
    are renames); those of drivers that no longer run (killed outright) are removed first."""
    from textdp.io.atomic import _running

    for old in parent.glob(f"{_STAGE_PREFIX}*"):
        pid = old.name[len(_STAGE_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            _remove_tree(old)
    return Path(tempfile.mkdtemp(prefix=f"{_STAGE_PREFIX}{os.getpid()}-", dir=parent))


def _remove_tree(path: Path) -> None:
    import shutil

    for _ in range(3):  # an actor being killed may still close a file there
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.2)


def _for_worker(path: Path | RemoteFile) -> str | RemoteFile:
    """A path as an actor receives it: a local one as a string (the workers share the file
    system), a remote one as it is (its filesystem is pickled; the actor opens it)."""
    return path if isinstance(path, RemoteFile) else str(path)


def _size(path: Path | RemoteFile) -> int:
    if isinstance(path, RemoteFile):
        return path.size or 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _make_parent(path: Path, created: list[Path]) -> None:
    """The directory of ``path``, made if missing (and then added to ``created``)."""
    if not path.parent.is_dir():
        path.parent.mkdir()
        created.append(path.parent)


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
