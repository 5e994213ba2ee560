"""Bytes that reach the disk, and streams, in full: a staged file's permissions, ``fsync`` of a file
and of a directory, a copy into a descriptor that continues short writes, and the wait until a
pipe's reader has read everything. The steps :class:`textdp.io.atomic.AtomicFiles` commits with
(its module docstring gives their order).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import stat
import sys
from pathlib import Path
from typing import Any

__all__ = ["default_mode", "drain", "fsync_directory", "fsync_file", "take_permissions",
           "write_fd"]


def default_mode() -> int:
    # mkstemp creates 0600 files; a finished output should get the permissions a plain open()
    # would have given it. The umask can only be read by setting it, so set it back at once.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def take_permissions(tmp: Path, real: Path, default: int) -> None:
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


def fsync_file(path: Path) -> None:
    """Flush ``path``'s content to the disk (a read-only descriptor suffices for ``fsync``)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_directory(directory: Path) -> None:
    """Flush ``directory``'s entries (the renames into it) to the disk, where the system can
    (POSIX; a file system that cannot — EINVAL — is left as it is)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(directory, flags)
    except (PermissionError, IsADirectoryError):  # Windows, or no right to open it: nothing to do
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def write_fd(fd: int, path: Path, written: Any, name: str) -> None:
    """Copy the file ``path`` into the descriptor ``fd`` (the stream ``name``) in full: short
    writes are continued, a non-blocking descriptor waited on; ``written()`` is called once
    bytes went out. A reader that went away is a :class:`BrokenPipeError` naming the stream."""
    try:
        _copy_fd(fd, path, written)
    except BrokenPipeError:
        raise BrokenPipeError(errno.EPIPE, f"the reader of {name} went away before reading "
                                           "everything") from None


def _copy_fd(fd: int, path: Path, written: Any) -> None:
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            view = memoryview(chunk)
            while view:
                try:
                    n = os.write(fd, view)
                except BlockingIOError:  # a descriptor left non-blocking by someone else
                    select.select([], [fd], [])
                    continue
                if n <= 0:
                    raise OSError(errno.EIO, "short write (no byte written)")
                written()
                view = view[n:]


def drain(fd: int, name: str) -> None:
    """Wait until the reader of the pipe (or FIFO) ``fd`` has read every byte written to it.

    A pipe takes up to its buffer (64 KiB on Linux) without a reader reading: a reader that then
    exits (``… | head -c 100``) drops the rest, and the writer is told nothing. Here that is a
    :class:`BrokenPipeError`, as a write after its exit would be. Linux only (``FIONREAD`` on the
    writing end); elsewhere, or on anything but a pipe, nothing to do.
    """
    try:
        import fcntl
        import termios

        if not stat.S_ISFIFO(os.fstat(fd).st_mode) or not sys.platform.startswith("linux"):
            return
        poll = select.poll()
    except (ImportError, OSError, AttributeError):
        return
    poll.register(fd, 0)  # POLLERR is reported whatever is asked: the last reader is gone
    delay = 1
    while True:
        try:
            left = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"),
                                  sys.byteorder, signed=True)
        except OSError:
            return
        if left <= 0:
            return
        for _, events in poll.poll(delay):
            if events & (select.POLLERR | select.POLLHUP):
                raise BrokenPipeError(errno.EPIPE, f"the reader of {name} went away with "
                                                   f"{left:,} bytes unread")
        delay = min(2 * delay, 50)
