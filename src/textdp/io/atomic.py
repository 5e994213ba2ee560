"""All-or-nothing output files: write to a temporary file beside the target, rename at the end.

A reader of the target path sees either the previous file (or nothing) or the complete new one,
never a partial write: the temporary file lives in the target's own directory, so the final
:func:`os.replace` is a rename within one file system, which POSIX and Windows make atomic.

Nothing is left behind: an exception, Ctrl-C (SIGINT) or, inside :func:`sigterm_as_interrupt`,
SIGTERM removes the temporary files. A process killed outright (SIGKILL, a power cut) cannot clean
up, so temporary files are named after their target and the writing process,
``.NAME.textdp-PID-RANDOM.tmp``, and reserving a target removes those of the same target whose
process no longer runs. The target ``-`` is standard output: it is staged in a temporary file too
and copied to standard output on commit, so a failed run writes nothing there either.

Targets that are not regular files (:mod:`textdp.io.paths`): a symbolic link is followed — its
target is replaced atomically and the link stays; a FIFO or a character device (``/dev/null``, a
terminal) is never replaced: like standard output it is staged and written to once, on commit (an
aborted group opens and closes a FIFO, so that a reader waiting on it sees the end instead of
waiting for ever); sockets, block devices and directories are refused.

Permissions: a replaced file keeps its mode (and, where the process may set them, its owner and
group) — the output of private data stays 0600 if it was — and a new file gets the mode a plain
``open()`` would give it (0666 less the umask). A write that fails (a full disk) is a
:class:`~textdp.io.FileError` naming the target, not the temporary file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from textdp.io.errors import FileError
from textdp.io.paths import output_kind, release_fifos, written_fifo

__all__ = ["AtomicFiles", "atomic_save_npz", "atomic_write_bytes", "atomic_write_json",
           "remove_stale_temporaries", "sigterm_as_interrupt", "write_errors_name"]

_STDOUT = "-"
# Standard output is staged under this name in the temporary directory.
_STDOUT_STAGE = "textdp-stdout"
_TAG = ".textdp-"


def _temporary_pattern(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(f".{name}{_TAG}") + r"(\d+)-[^/]*\.tmp\Z")


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists (on this machine); unknown counts as running."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(target: str | os.PathLike) -> list[Path]:
    """Remove the temporary files of ``target`` left by processes that no longer run.

    Only files named as :class:`AtomicFiles` names them for this target are considered, and only
    those whose process id is not a running process (a killed run's); files of running processes,
    this one included, are kept. Returns the files removed.
    """
    target = Path(target)
    directory, name = _stage_dir(target)
    pattern = _temporary_pattern(name)
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None or int(m.group(1)) == os.getpid() or _running(int(m.group(1))):
            continue
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _stage_dir(target: Path) -> tuple[Path, str]:
    """(directory, name) of the temporary files of ``target``: beside the file a symbolic link
    points to (the rename must replace the target, not the link)."""
    if os.fspath(target) == _STDOUT:
        return Path(tempfile.gettempdir()), _STDOUT_STAGE
    real = Path(os.path.realpath(target))
    return real.parent, real.name


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that cleanup runs as for Ctrl-C."""


def _raise_terminated(signum: int, _frame: object) -> None:
    raise _Terminated(f"signal {signum}")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` (as SIGINT does), so that every
    ``except``/``finally`` — the removal of temporary files included — runs before the process
    ends. Outside the main thread (where signals cannot be handled) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_held(hold: bool) -> Iterator[None]:
    """Within the block (``hold``: short work that must not be cut in two), SIGINT and SIGTERM
    are noted instead of handled; the first is raised again, to its own handler, when the block
    ends. Only in the main thread, and only where both handlers were set from Python."""
    names = (signal.SIGINT, signal.SIGTERM)
    if not hold or threading.current_thread() is not threading.main_thread() or \
            any(signal.getsignal(s) is None for s in names):
        yield
        return
    held: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: held.append(signum)) for s in names}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if held:
            signal.raise_signal(held[0])


def _default_mode() -> int:
    # mkstemp creates 0600 files; a finished output should get the permissions a plain open()
    # would have given it. The umask can only be read by setting it, so set it back at once.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@dataclass(frozen=True, slots=True)
class _Staged:
    """One target of a group: the name given, the file written (a link's target, or the stream
    itself), the temporary file, and ``"file"`` (renamed onto ``real``) or ``"stream"`` (copied
    into it)."""

    target: Path
    real: Path
    tmp: Path
    kind: str


class AtomicFiles:
    """A group of output files that appear together, or not at all.

    Use as a context manager. :meth:`path_for` reserves a temporary file for each target; on a
    normal exit every temporary file is renamed onto its target (in the order reserved), on any
    exception — ``KeyboardInterrupt`` included — every temporary file is removed and no target is
    touched. A target that existed before keeps its old content when the group is aborted. See the
    module's docstring for symbolic links, FIFOs and devices, and permissions.

    >>> with AtomicFiles() as files:
    ...     files.write_json("report.json", {"ok": True})   # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._staged: dict[Path | str, _Staged] = {}
        self._others: list[Any] = []
        self._done = False

    def join(self, other: Any) -> None:
        """Commit ``other`` (an object with ``commit()`` and ``abort()``, such as a job's
        :class:`~textdp.io.uri.RemoteStaging` on an object store) with this group: first, when
        the group commits (so a check before the commit, such as the ledger's, comes before
        it too); aborted when the group is aborted, or when its own commit failed."""
        if self._done:
            raise RuntimeError("this group of files has already been committed or aborted")
        self._others.append(other)

    def path_for(self, target: str | os.PathLike) -> Path:
        """A fresh temporary path for ``target``, renamed onto it (or, for ``-``, a FIFO or a
        character device, copied into it) on commit.

        Raises:
            FileNotFoundError: the directory of ``target`` does not exist.
            FileError: ``target`` is a directory, a socket or a block device, or no file can be
                created in its directory.
            ValueError: ``target`` is already part of this group.
        """
        if self._done:
            raise RuntimeError("this group of files has already been committed or aborted")
        target = Path(target)
        stdout = os.fspath(target) == _STDOUT
        # An existing target is checked (a device is not replaced); a missing directory is
        # mkstemp's FileNotFoundError below.
        kind = "stream" if stdout else output_kind(target) if os.path.exists(target) else "file"
        # A stream is opened by the name given (/dev/stdout on a pipe resolves to no name).
        real = target if stdout or kind == "stream" else Path(os.path.realpath(target))
        key: Path | str = _STDOUT if stdout else real
        if key in self._staged:
            raise ValueError(f"{target} is written twice")
        if kind == "stream":  # standard output, a FIFO, a device: staged apart, copied on commit
            directory, name = Path(tempfile.gettempdir()), _STDOUT_STAGE
        else:
            directory, name = _stage_dir(target)
            remove_stale_temporaries(target)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}{_TAG}{os.getpid()}-", suffix=".tmp",
                                       dir=directory)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise FileError(target, None, f"cannot create a file in {os.fspath(directory)!r} "
                                          f"({exc.strerror or exc})") from None
        os.close(fd)
        self._staged[key] = _Staged(target, real, Path(tmp), kind)
        return Path(tmp)

    @contextlib.contextmanager
    def writing(self, target: str | os.PathLike) -> Iterator[Path]:
        """:meth:`path_for` ``target``, as a block in which a failed write (a full disk, a quota)
        is a :class:`FileError` naming ``target`` rather than the temporary file."""
        tmp = self.path_for(target)
        with write_errors_name(target):
            yield tmp

    def write_bytes(self, target: str | os.PathLike, data: bytes) -> None:
        with self.writing(target) as tmp:
            tmp.write_bytes(data)

    def write_json(self, target: str | os.PathLike, obj: Any) -> None:
        """Stage ``obj`` as UTF-8 JSON (indented, non-ASCII kept readable, final newline)."""
        text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        self.write_bytes(target, text.encode("utf-8"))

    def commit(self) -> None:
        """Rename every staged file onto its target (copy it into a stream target)."""
        if self._done:
            return
        self._done = True
        default = _default_mode()
        staged = list(self._staged.values())
        try:
            for other in self._others:
                other.commit()
            for item in staged:
                if item.kind == "file":
                    _take_permissions(item.tmp, item.real, default)
            # Renames only: a signal waits until all are done (a group — the files of an output
            # directory and the report — appears whole, not cut short); a stream, whose write
            # may wait for its reader, stays interruptible.
            with _signals_held(all(item.kind == "file" for item in staged)):
                for item in staged:
                    if os.fspath(item.target) == _STDOUT:
                        with write_errors_name("<stdout>"):
                            _copy_to_stdout(item.tmp)
                    elif item.kind == "stream":
                        _copy_to_stream(item.tmp, item.target, item.real)
                    else:
                        os.replace(item.tmp, item.real)
        finally:
            self._remove_temporaries()

    def abort(self) -> None:
        """Remove every staged file; the targets stay as they were (a FIFO's reader, if one is
        waiting, is given the end of the stream)."""
        self._done = True
        release_fifos([item.real for item in self._staged.values()
                       if item.kind == "stream" and os.fspath(item.target) != _STDOUT])
        others, self._others = self._others, []
        for other in others:
            other.abort()
        self._remove_temporaries()

    def _remove_temporaries(self) -> None:
        for item in self._staged.values():
            try:
                item.tmp.unlink()
            except FileNotFoundError:
                pass
        self._staged.clear()

    def __enter__(self) -> AtomicFiles:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


@contextlib.contextmanager
def write_errors_name(target: str | os.PathLike) -> Iterator[None]:
    """Within the block, an ``OSError`` (a full disk, a quota, an I/O error) becomes a
    :class:`FileError` naming ``target`` — the file the user named, not a temporary file."""
    try:
        yield
    except BrokenPipeError:  # the reader went away: not a write error of ours (the CLI: exit 141)
        raise
    except OSError as exc:
        raise FileError(target, None, f"cannot write: {exc.strerror or exc}") from None


def _take_permissions(tmp: Path, real: Path, default: int) -> None:
    """Give ``tmp`` the mode (and where allowed the owner and group) of the file it replaces,
    or the default mode of a new file."""
    try:
        old = os.stat(real)
    except (FileNotFoundError, NotADirectoryError):
        os.chmod(tmp, default)
        return
    mine = os.stat(tmp)
    if (old.st_uid, old.st_gid) != (mine.st_uid, mine.st_gid):
        with contextlib.suppress(PermissionError):  # only root, or a group of one's own
            os.chown(tmp, old.st_uid if os.geteuid() == 0 else -1, old.st_gid)
    os.chmod(tmp, stat.S_IMODE(old.st_mode))


def _copy_to_stream(tmp: Path, target: Path, real: Path) -> None:
    """Write the staged ``tmp`` into the FIFO or device ``real`` (opened, never created, never
    replaced). Blocks until a FIFO has a reader, as any writer of a FIFO does."""
    with write_errors_name(target):
        fd = os.open(real, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        with open(fd, "wb", buffering=0) as out:
            mode = os.fstat(out.fileno()).st_mode
            if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):  # replaced since the check
                raise FileError(target, None, "is no longer a FIFO or a device; nothing written")
            with open(tmp, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
    written_fifo(real)


def _copy_to_stdout(path: Path) -> None:
    sys.stdout.flush()
    out = sys.stdout.buffer
    with open(path, "rb") as f:
        shutil.copyfileobj(f, out, 1 << 20)
    out.flush()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :class:`AtomicFiles`)."""
    with AtomicFiles() as files:
        files.write_bytes(path, data)


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as indented UTF-8 JSON to ``path`` atomically (see :class:`AtomicFiles`)."""
    with AtomicFiles() as files:
        files.write_json(path, obj)


def atomic_save_npz(path: str | os.PathLike, **arrays: Any) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` to ``path`` atomically, creating its directory."""
    import io

    import numpy as np

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())
