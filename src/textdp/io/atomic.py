"""All-or-nothing output files: write to a temporary file beside the target, rename at the end.

A reader of the target path sees either the previous file (or nothing) or the complete new one,
never a partial write: the temporary file lives in the target's own directory, so the final
:func:`os.replace` is a rename within one file system, which POSIX and Windows make atomic.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["AtomicFiles", "atomic_save_npz", "atomic_write_bytes", "atomic_write_json"]


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
        key = target.absolute()
        if key in self._staged:
            raise ValueError(f"{target} is written twice")
        directory = target.parent
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
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
            for _, tmp in staged:
                os.chmod(tmp, mode)
            for target, tmp in staged:
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
