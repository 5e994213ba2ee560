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
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["AtomicFiles", "atomic_save_npz", "atomic_write_bytes", "atomic_write_json",
           "remove_stale_temporaries", "sigterm_as_interrupt"]

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
    """(directory, name) of the temporary files of ``target``."""
    if os.fspath(target) == _STDOUT:
        return Path(tempfile.gettempdir()), _STDOUT_STAGE
    return target.parent, target.name


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


def _default_mode() -> int:
    # mkstemp creates 0600 files; a finished output should get the permissions a plain open()
    # would have given it. The umask can only be read by setting it, so set it back at once.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class AtomicFiles:
    """A group of output files that appear together, or not at all.

    Use as a context manager. :meth:`path_for` reserves a temporary file for each target; on a
    normal exit every temporary file is renamed onto its target (in the order reserved), on any
    exception — ``KeyboardInterrupt`` included — every temporary file is removed and no target is
    touched. A target that existed before keeps its old content when the group is aborted.

    >>> with AtomicFiles() as files:
    ...     files.write_json("report.json", {"ok": True})   # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._staged: dict[Path, Path] = {}
        self._done = False

    def path_for(self, target: str | os.PathLike) -> Path:
        """A fresh temporary path in ``target``'s directory, renamed onto ``target`` on commit.

        Raises:
            FileNotFoundError: the directory of ``target`` does not exist.
            ValueError: ``target`` is already part of this group.
        """
        if self._done:
            raise RuntimeError("this group of files has already been committed or aborted")
        target = Path(target)
        key = target if os.fspath(target) == _STDOUT else target.absolute()
        if key in self._staged:
            raise ValueError(f"{target} is written twice")
        directory, name = _stage_dir(target)
        remove_stale_temporaries(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}{_TAG}{os.getpid()}-", suffix=".tmp",
                                   dir=directory)
        os.close(fd)
        self._staged[key] = Path(tmp)
        return Path(tmp)

    def write_bytes(self, target: str | os.PathLike, data: bytes) -> None:
        self.path_for(target).write_bytes(data)

    def write_json(self, target: str | os.PathLike, obj: Any) -> None:
        """Stage ``obj`` as UTF-8 JSON (indented, non-ASCII kept readable, final newline)."""
        text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        self.write_bytes(target, text.encode("utf-8"))

    def commit(self) -> None:
        """Rename every staged file onto its target."""
        if self._done:
            return
        self._done = True
        mode = _default_mode()
        staged = list(self._staged.items())
        try:
            for target, tmp in staged:
                if os.fspath(target) != _STDOUT:
                    os.chmod(tmp, mode)
            for target, tmp in staged:
                if os.fspath(target) == _STDOUT:
                    _copy_to_stdout(tmp)
                else:
                    os.replace(tmp, target)
        finally:
            self._remove_temporaries()

    def abort(self) -> None:
        """Remove every staged file; the targets stay as they were."""
        self._done = True
        self._remove_temporaries()

    def _remove_temporaries(self) -> None:
        for tmp in self._staged.values():
            try:
                tmp.unlink()
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
