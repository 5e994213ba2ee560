"""Which file a path names, and what kind of file it is: the checks every command makes on all of
its paths before it reads or writes anything.

* :func:`check_distinct` — no two paths of one command (input, output, report, ledger, deny-list,
  …) are the same file, however they are spelled: existing files are compared by identity (device
  and inode, after following symbolic links, so hard links and symbolic links to a file are that
  file), files that do not exist yet by their resolved path (:func:`os.path.realpath`).
* :func:`output_kind` — what writing to a path does: a new or regular file is replaced atomically
  (through a symbolic link: the link's target is replaced, the link stays); a FIFO or a character
  device (``/dev/null``, a terminal, ``/dev/stdout`` on a pipe) is written to directly, once, when
  the run has succeeded — never replaced; sockets, block devices and directories are refused.
* :func:`is_stream` — ``-`` or a FIFO / character device given as input (``<(cmd)``): read once,
  as it comes (no size, no second pass).
* :func:`directory_outputs` — the files a command writes into an output directory, for
  :func:`check_distinct`: a directory is checked file by file (``textdp report d/report.md -o d``
  would write ``d/report.md``, its input).
* :func:`protecting_inputs` / :func:`check_not_input` — the input-never-overwritten rule as one
  chokepoint: within the block (the CLI runs every command inside it) every path
  :func:`check_distinct` was given to read is remembered, and :class:`~textdp.io.AtomicFiles`
  refuses to stage or rename over any of them, whichever command forgot to check.

Why identity and not names: ``../DIR/in.txt``, ``./in.txt``, ``DIR//in.txt``, a symbolic link or a
hard link all name the same bytes, and writing the report "somewhere else" that is in fact the
input destroys the user's data. Two names of files that do not exist yet can only be compared by
path; on a case-insensitive file system two such names differing in case are not recognised as one
(both outputs would be new files, so no input is at risk).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

from textdp.io.errors import FileError
from textdp.io.streams import is_stdio
from textdp.io.uri import RemoteFile

__all__ = ["PathArg", "check_distinct", "check_not_input", "check_target", "directory_outputs",
           "is_stream", "output_kind", "protecting_inputs", "release_fifos", "written_fifo"]

PathArg = str | os.PathLike
#: How a target is written: ``"file"`` — replaced atomically (new or regular file);
#: ``"stream"`` — opened and written once, never replaced (FIFO, character device, ``-``).
OutputKind = Literal["file", "stream"]


#: FIFOs named as outputs in this process and not yet written: a run that fails before writing them
#: closes them (:func:`release_fifos`), so that their readers see the end instead of waiting.
_fifos: set[str] = set()


def release_fifos(paths: Sequence[PathArg] | None = None) -> None:
    """Open and close, without blocking, the FIFOs ``paths`` (default: every FIFO output named so
    far and not written): a reader waiting on one sees the end of the stream (with no reader
    there is nothing to do). A failed command calls this, as a closed pipe ends for its reader."""
    for path in list(_fifos) if paths is None else [os.path.abspath(p) for p in paths]:
        _fifos.discard(path)
        try:
            if stat.S_ISFIFO(os.stat(path).st_mode):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)))
        except OSError:  # ENXIO: no reader; or it is gone
            pass


def written_fifo(path: PathArg) -> None:
    """``path`` has been written (and closed): no longer to be released."""
    _fifos.discard(os.path.abspath(path))


#: Inside :func:`protecting_inputs`: (device, inode) → (role, path) of every existing file that
#: :func:`check_distinct` was given to read; None outside (a library caller's files are its own).
_inputs: dict[tuple[int, int], tuple[str, str]] | None = None


@contextlib.contextmanager
def protecting_inputs() -> Iterator[None]:
    """Within the block, no :class:`~textdp.io.AtomicFiles` target may be a file that
    :func:`check_distinct` was given to read (:func:`check_not_input`)."""
    global _inputs
    previous, _inputs = _inputs, {}
    try:
        yield
    finally:
        _inputs = previous


def _remember_input(role: str, path: PathArg) -> None:
    if _inputs is None or is_stdio(path) or isinstance(path, RemoteFile):
        return
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode):
        _inputs.setdefault((st.st_dev, st.st_ino), (role, os.fspath(path)))


def check_not_input(target: PathArg) -> None:
    """Refuse ``target`` (about to be written or replaced) when it is a file read as an input
    within :func:`protecting_inputs` (compared as files: links and other spellings included).

    Raises:
        FileError: one line naming the target and the input it would overwrite.
    """
    if not _inputs or is_stdio(target):
        return
    try:
        st = os.stat(target)
    except (OSError, ValueError):
        return
    known = _inputs.get((st.st_dev, st.st_ino))
    if known is not None:
        role, path = known
        raise FileError(target, None, f"the output would overwrite the {role} ({path} is the "
                                      "same file); nothing was written: give the output its own "
                                      "file or directory")


def directory_outputs(directory: PathArg, names: Sequence[str], role: str = "output"
                      ) -> dict[str, Path]:
    """``{role NAME: directory/NAME}`` for the files ``names`` a command writes into
    ``directory``: :func:`check_distinct`'s ``writes`` for a directory output."""
    return {f"{role} {name}": Path(directory) / name for name in names}


def _kind_name(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def _stat(path: PathArg) -> os.stat_result | None:
    """``os.stat`` (links followed), else that of the resolved path (``x/`` is ``x`` to Path() and
    open()), or None where nothing exists (a dangling link included). The path itself comes first:
    ``/dev/fd/N`` of a pipe resolves to no name."""
    for one in (path, os.path.realpath(path)):
        try:
            return os.stat(one)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return None


def is_stream(path: PathArg) -> bool:
    """Whether ``path`` is read once, as it comes: ``-``, or an existing FIFO or character device
    (``<(cmd)`` is a ``/dev/fd/N`` pipe)."""
    if is_stdio(path):
        return True
    if isinstance(path, RemoteFile):
        return False
    st = _stat(path)
    return st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode))


def output_kind(path: PathArg, what: str = "output", *, stream: bool = True) -> OutputKind:
    """How ``path`` will be written (see the module's docstring), checked without writing.

    Args:
        what: the role, for messages ("output", "report", …).
        stream: whether a FIFO or character device may be written to directly; a file that is read
            back (a ledger) must be a regular file.

    Raises:
        FileError: a directory, socket, block device (or, without ``stream``, a FIFO or character
            device), or a missing directory.
    """
    if is_stdio(path):
        return "stream"
    st = _stat(path)
    if st is None:
        parent = os.path.dirname(os.path.realpath(path))
        if not os.path.isdir(parent):
            given = os.path.dirname(os.fspath(path)) or "."
            shown = given if not os.path.isdir(given) else parent
            raise FileError(path, None, f"directory {shown!r} does not exist")
        return "file"
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        raise FileError(path, None, "is a directory, expected a file name")
    if stream and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        if stat.S_ISFIFO(st.st_mode):
            _fifos.add(os.path.abspath(path))  # not resolved: /dev/fd/N of a pipe has no name
        return "stream"
    why = "must be a regular file" if not stream else "cannot be written to"
    raise FileError(path, None, f"is {_kind_name(st.st_mode)}; the {what} {why}")


def check_target(path: PathArg, what: str = "output", *, stream: bool = True) -> None:
    """:func:`output_kind`, for its checks only."""
    output_kind(path, what, stream=stream)


def _identity(path: PathArg, written: bool) -> tuple | None:
    """What makes two paths the same file: (device, inode) of an existing file; the resolved path
    of one that does not exist yet; for ``-``, the regular file standard input / output is
    redirected to, if it is one (``textdp privatize - -o in.txt < in.txt``)."""
    if is_stdio(path):
        stream = sys.stdout if written else sys.stdin
        try:
            st = os.fstat(stream.fileno())
        except (AttributeError, OSError, ValueError):  # replaced streams (tests), closed ones
            return None
        return ("inode", st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None
    try:
        st = _stat(path)
    except OSError:  # no permission to look: the name is all there is
        st = None
    if st is None:  # not there yet
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def check_distinct(reads: Mapping[str, PathArg | Sequence[PathArg] | None] | None = None,
                   writes: Mapping[str, PathArg | None] | None = None) -> None:
    """Refuse any two paths of one command that are the same file (see the module's docstring).

    Args:
        reads: role → path (or several paths) the command only reads: ``{"input": …,
            "deny-list": …}``.
        writes: role → path the command writes (the ledger included: it is appended to). A role
            whose path is None is not used by this run.

    ``-`` is exempt (standard input and output are different streams), except that two roles
    cannot both be written to standard output, and ``-`` redirected from or to a regular file is
    that file.

    Raises:
        FileError: one line naming the path, the two roles and the other path.
    """
    entries: list[tuple[str, PathArg, bool]] = []
    for role, value in (reads or {}).items():
        if value is None:
            continue
        many = isinstance(value, Sequence) and not isinstance(value, str)
        for one in (value if many else [value]):  # type: ignore[union-attr]
            entries.append((role, one, False))
            _remember_input(role, one)
    entries += [(role, value, True) for role, value in (writes or {}).items() if value is not None]
    seen: list[tuple[tuple | None, str, PathArg, bool]] = []
    stdout_role: str | None = None
    for role, path, written in entries:
        if is_stdio(path) and written:
            if stdout_role is not None:
                raise FileError(path, None, f"standard output is given as both the {stdout_role}"
                                            f" and the {role}; give the {role} its own file")
            stdout_role = role
        key = _identity(path, written)
        for other_key, other_role, other_path, other_written in seen:
            if key is None or key != other_key or (role == other_role and not written):
                continue
            # Name the one that would be written (it is the one that would destroy the other).
            if written or not other_written:
                name, at, also, shown = role, path, other_role, other_path
            else:
                name, at, also, shown = other_role, other_path, role, path
            if is_stdio(shown):
                also_written = other_written if name == role else written
                shown = "standard output" if also_written else "standard input"
            if not (written or other_written):
                clash = f"the {name} is the {also} ({os.fspath(shown)} is the same file)"
            else:
                verb = "would write into" if name == "ledger" else "would overwrite"
                clash = f"the {name} {verb} the {also} ({os.fspath(shown)} is the same file)"
            raise FileError(at, None, f"{clash}; give the {name} its own file")
        seen.append((key, role, path, written))
