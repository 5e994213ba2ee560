"""Ray's own log lines kept off the command's stderr and out of its standard output
(:class:`RayLogs`), and where they went (:func:`see_logs`, for an error message).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, TextIO

__all__ = ["RayLogs", "see_logs"]

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


def see_logs(logs: RayLogs) -> str:
    """Where Ray's own lines went, for an error message."""
    return "" if logs.path is None else f" (Ray's own messages: {logs.path})"
