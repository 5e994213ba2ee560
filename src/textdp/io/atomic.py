"""All-or-nothing output files: write to a temporary file beside the target, rename at the end.

A reader of the target path sees either the previous file (or nothing) or the complete new one,
never a partial write: the temporary file lives in the target's own directory, so the final
:func:`os.replace` is a rename within one file system, which POSIX and Windows make atomic.

Nothing is left behind: an exception, Ctrl-C (SIGINT) or, inside :func:`sigterm_as_interrupt`,
SIGTERM removes the temporary files. A process killed outright (SIGKILL, a power cut) cannot clean
up, so temporary files are named after their target and the writing process,
``.NAME.textdp-PID-RANDOM.tmp``, and reserving a target removes those of the same target whose
process no longer runs (standard output's, ``.textdp-stdout.textdp-PID-RANDOM.tmp`` in the
temporary directory, included). The target ``-`` is standard output: it is staged in a temporary
file too and copied to standard output on commit, so a failed run writes nothing there either.

A commit is ordered so that whatever can fail comes before whatever cannot be taken back, and a
group is written whole or not at all:

1. every staged file is flushed to the disk (``fsync``);
2. every stream target (standard output, a FIFO, a device) is written, in full, and a pipe is
   waited on until its reader has read every byte (:func:`~textdp.io.durable.drain`): a reader
   that went away first (``… | head -c 100``) is a :class:`BrokenPipeError`, a short or failed
   write (``/dev/full``) a :class:`~textdp.io.FileError` — and then no file target has been
   touched;
3. joined commits (an object store's moves);
4. the renames, with SIGINT and SIGTERM held until the last (the group appears whole);
5. every directory that received a file is flushed (``fsync``), so that a power cut after the
   commit returns cannot leave an empty file — or none — under the name.

:attr:`AtomicFiles.exposed` says whether any of it may have become visible (a byte written to a
stream, a rename begun): a failure before that left the targets as they were.

Targets that are not regular files (:mod:`textdp.io.paths`): a symbolic link is followed — its
target is replaced atomically and the link stays; a FIFO or a character device (``/dev/null``, a
terminal) is never replaced: like standard output it is staged and written to once, on commit (an
aborted group opens and closes a FIFO, so that a reader waiting on it sees the end instead of
waiting for ever); sockets, block devices and directories are refused.

Permissions: a replaced file keeps its mode (and, where the process may set them, its owner and
group) — the output of private data stays 0600 if it was — and a new file gets the mode a plain
``open()`` would give it (0666 less the umask). A write that fails (a full disk) is a
:class:`~textdp.io.FileError` naming the target, not the temporary file.

The steps on descriptors (permissions, ``fsync``, full writes, a pipe's drain) are
:mod:`textdp.io.durable`; the signal handling is :mod:`textdp.io.signals`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from textdp.io.durable import default_mode as _default_mode
from textdp.io.durable import drain as _drain
from textdp.io.durable import fsync_directory as _fsync_directory
from textdp.io.durable import fsync_file as _fsync_file
from textdp.io.durable import take_permissions as _take_permissions
from textdp.io.durable import write_fd as _write_fd
from textdp.io.errors import FileError
from textdp.io.paths import check_not_input, output_kind, release_fifos, written_fifo
from textdp.io.signals import signals_held as _signals_held
from textdp.io.signals import sigterm_as_interrupt

__all__ = ["AtomicFiles", "atomic_save_npz", "atomic_write_bytes", "atomic_write_json",
           "commit_directory", "remove_stale_temporaries", "sigterm_as_interrupt",
           "staged_directory", "stdout_descriptor", "write_errors_name"]

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
    this one included, are kept. ``-`` (standard output, a FIFO or a device: a stream target) means
    the streams' staged copies in the temporary directory. A staging directory so named (``textdp
    report``'s) is removed with what it holds. Returns what was removed.
    """
    target = Path(target)
    directory, name = _stage_dir(target)
    return _remove_dead(directory, _temporary_pattern(name))


def _remove_dead(directory: Path, pattern: re.Pattern[str]) -> list[Path]:
    """Remove the entries of ``directory`` whose name ``pattern`` matches and whose writing
    process (the pattern's first group, a process id) no longer runs."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None or int(m.group(1)) == os.getpid() or _running(int(m.group(1))):
            continue
        with contextlib.suppress(FileNotFoundError, PermissionError, NotADirectoryError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
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


#: The descriptor of the process's real standard output, where something else (Ray's runtime,
#: :class:`textdp.engines.ray.logs.RayLogs`) holds descriptor 1 for a while; None: ``sys.stdout``'s.
_stdout_fd: int | None = None


def stdout_descriptor(fd: int | None) -> int | None:
    """Write standard output targets to ``fd`` from now on (None: to ``sys.stdout``'s own
    descriptor again); returns the previous setting, to be restored. For a caller that points
    descriptor 1 elsewhere while a runtime that prints to it runs."""
    global _stdout_fd
    previous, _stdout_fd = _stdout_fd, fd
    return previous


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
        #: Whether anything of the group may have become visible: a byte written to a stream
        #: target, a joined commit or a rename begun. False after a failure means that every
        #: target is as it was (a ledger may then void the release).
        self.exposed = False

    def join(self, other: Any) -> None:
        """Commit ``other`` (an object with ``commit()`` and ``abort()``, such as a job's
        :class:`~textdp.io.uri.RemoteStaging` on an object store) with this group: when the
        group commits, after its stream targets are written and before its files are renamed
        (so a check before the commit, such as the ledger's, comes before it too); aborted when
        the group is aborted, or when its own commit failed."""
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
        check_not_input(target)  # an input is never overwritten, whichever command forgot
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
        # A run killed outright (SIGKILL) left its copy here: its process is gone, so it goes.
        _remove_dead(directory, _temporary_pattern(name))
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
        """Write the group (see the module's docstring for the order): files flushed to the disk,
        then every stream target written in full, then joined commits, then the renames, then
        the directories flushed. A stream that cannot be written in full leaves every file
        target as it was.

        Raises:
            BrokenPipeError: a stream's reader went away before it read everything.
            FileError: a write, a flush or a rename failed (naming the target).
        """
        if self._done:
            return
        self._done = True
        default = _default_mode()
        staged = list(self._staged.values())
        files = [item for item in staged if item.kind == "file"]
        try:
            for item in files:  # 1. on the disk before anything is visible
                _take_permissions(item.tmp, item.real, default)
                with write_errors_name(item.target):
                    _fsync_file(item.tmp)
            for item in staged:  # 2. streams: cannot be taken back, so before any rename
                if item.kind != "stream":
                    continue
                if os.fspath(item.target) == _STDOUT:
                    self._copy_to_stdout(item.tmp)
                else:
                    self._copy_to_stream(item.tmp, item.target, item.real)
            for other in self._others:  # 3. an object store's moves
                self.exposed = True
                other.commit()
            # 4. Renames only: a signal waits until all are done (a group — the files of an
            # output directory and the report — appears whole, not cut short).
            with _signals_held(bool(files)):
                for item in files:
                    check_not_input(item.real)  # (first: before this group renamed anything)
                for item in files:
                    self.exposed = True
                    with write_errors_name(item.target):
                        os.replace(item.tmp, item.real)
            for directory in dict.fromkeys(item.real.parent for item in files):  # 5.
                with write_errors_name(directory):
                    _fsync_directory(directory)
        finally:
            self._remove_temporaries()

    def _exposing(self) -> None:
        self.exposed = True

    def _copy_to_stream(self, tmp: Path, target: Path, real: Path) -> None:
        """Write the staged ``tmp`` into the FIFO or device ``real`` (opened, never created, never
        replaced). Blocks until a FIFO has a reader, as any writer of a FIFO does, and until
        that reader has read everything (:func:`~textdp.io.durable.drain`)."""
        with write_errors_name(target):
            fd = os.open(real, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                mode = os.fstat(fd).st_mode
                if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):  # replaced since the check
                    raise FileError(target, None, "is no longer a FIFO or a device; nothing "
                                                  "written")
                _write_fd(fd, tmp, self._exposing, os.fspath(target))
                _drain(fd, os.fspath(target))
            finally:
                os.close(fd)
        written_fifo(real)

    def _copy_to_stdout(self, path: Path) -> None:
        """Standard output, by its descriptor where it has one (every byte accounted for), else
        (a test's replaced stream) by its buffer."""
        with write_errors_name("<stdout>"):
            fd = _stdout_fd
            if fd is None:
                sys.stdout.flush()
                try:
                    fd = sys.stdout.fileno()
                except (AttributeError, OSError, ValueError):
                    fd = None
            if fd is None:
                self.exposed = True
                out = sys.stdout.buffer
                with open(path, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
                out.flush()
                return
            _write_fd(fd, path, self._exposing, "standard output")
            _drain(fd, "standard output")

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


@contextlib.contextmanager
def staged_directory(out: str | os.PathLike) -> Iterator[Path]:
    """A fresh hidden directory beside ``out`` to write a command's files into; when the block
    succeeds they are moved into ``out`` (:func:`commit_directory`: the directory itself renamed
    when ``out`` does not exist yet), on any error it is removed and ``out`` is left as it was.
    One left by a run killed outright is removed first (:func:`remove_stale_temporaries`)."""
    real = Path(os.path.realpath(out))
    remove_stale_temporaries(real)
    stage = Path(tempfile.mkdtemp(prefix=f".{real.name}{_TAG}{os.getpid()}-", suffix=".tmp",
                                  dir=real.parent))
    try:
        yield stage
        umask = os.umask(0)  # mkdtemp makes 0700 directories; a finished one gets mkdir's mode
        os.umask(umask)
        os.chmod(stage, 0o777 & ~umask)
        commit_directory(stage, real)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def commit_directory(stage: Path, real: Path) -> None:
    """Move the files rendered into the staging directory ``stage`` into the directory ``real``
    (``stage`` itself renamed onto ``real`` when that does not exist yet), with an atomic group's
    guarantees: each file flushed to the disk first, none of them over an input
    (:func:`~textdp.io.paths.check_not_input`, all checked before the first move), the
    directories flushed after. Signals wait until the moves are done."""
    items = sorted(stage.iterdir())
    for item in items:
        with write_errors_name(real / item.name):
            _fsync_file(item)
    with _signals_held(True):
        if not real.exists():
            os.rename(stage, real)
        else:
            for item in items:
                check_not_input(real / item.name)
            for item in items:
                with write_errors_name(real / item.name):
                    os.replace(item, real / item.name)
    for directory in (real, real.parent):
        with write_errors_name(directory):
            _fsync_directory(directory)


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
