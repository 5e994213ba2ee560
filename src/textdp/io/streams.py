"""Where bytes come from and go to: files, ``-`` (standard input / output), and ``.gz`` / ``.zst``
compression chosen by the file name's last extension.

Readers and writers of every format open their streams here, so that each format module sees a
plain binary file object whatever the source: compression and standard streams are handled once.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
from typing import BinaryIO

from textdp.io.errors import FileError
from textdp.io.uri import RemoteFile

__all__ = ["COMPRESSIONS", "STDIO", "compression_of", "display_name", "is_stdio", "open_input",
           "open_output", "read_all", "strip_compression"]

#: The path that means standard input (for an input) or standard output (for an output).
STDIO = "-"

#: Compression extensions → codec name.
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}

# Decompression failures surface as these (gzip: BadGzipFile is an OSError, a truncated stream an
# EOFError; zstandard: ZstdError); they become one-line FileErrors naming the file.
_STREAM_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError)
try:  # pragma: no branch - zstandard is a dependency; without it .zst is refused, not crashed
    import zstandard as _zstd

    _STREAM_ERRORS = (*_STREAM_ERRORS, _zstd.ZstdError)
except ImportError:  # pragma: no cover
    _zstd = None


def is_stdio(path: str | os.PathLike) -> bool:
    return os.fspath(path) == STDIO


def display_name(path: str | os.PathLike, *, output: bool = False) -> str:
    """How messages name ``path``: ``<stdin>`` / ``<stdout>`` for ``-``."""
    if is_stdio(path):
        return "<stdout>" if output else "<stdin>"
    return os.fspath(path)


def compression_of(path: str | os.PathLike) -> str | None:
    """``"gzip"`` for ``x.jsonl.gz``, ``"zstd"`` for ``x.csv.zst``, None otherwise (and for ``-``)."""
    if is_stdio(path):
        return None
    return COMPRESSIONS.get(os.path.splitext(os.fspath(path))[1].lower())


def strip_compression(path: str | os.PathLike) -> str:
    """The name without its compression extension: ``x.jsonl.gz`` → ``x.jsonl``."""
    name = os.fspath(path)
    stem, ext = os.path.splitext(name)
    return stem if ext.lower() in COMPRESSIONS else name


def _need_zstd(path: str | os.PathLike) -> None:
    if _zstd is None:  # pragma: no cover - zstandard is a dependency
        raise FileError(path, None, ".zst needs the zstandard package (pip install zstandard)")


class _Guarded(io.RawIOBase):
    """A readable stream whose decompression errors are :class:`FileError`s naming the file;
    closing it closes ``inner`` unless it is a standard stream."""

    def __init__(self, inner: BinaryIO, path: str, codec: str | None, *,
                 close_inner: bool = True) -> None:
        self._inner, self._path, self._codec, self._close_inner = inner, path, codec, close_inner
        self._read = getattr(inner, "read1", inner.read)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        try:
            # read1 where there is one: a pipe gives what it has, without waiting for a full buffer
            data = self._read(len(buffer))
        except _STREAM_ERRORS as exc:
            what = f"corrupt or truncated {self._codec} data" if self._codec else "read error"
            raise FileError(self._path, None, f"{what} ({exc})") from None
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        try:
            if self._close_inner:
                self._inner.close()
        finally:
            super().close()


def open_input(path: str | os.PathLike | RemoteFile, compression: str | None = None) -> BinaryIO:
    """A buffered binary stream of ``path``'s content, decompressed; ``-`` is standard input
    (closing the stream leaves standard input open).

    Standard input, a FIFO or a device is read as it comes; one that ends before its first byte is
    refused, as an empty (0-byte) file is (:func:`textdp.io.check_input`): a pipeline whose
    producer failed must not pass for an empty corpus.

    Raises:
        FileError: an empty stream (on opening); the data is corrupt or truncated (while
            reading), or .zst without zstandard.
    """
    if is_stdio(path):
        stdin = _Guarded(sys.stdin.buffer, display_name(path), None, close_inner=False)
        return _not_empty(io.BufferedReader(stdin, buffer_size=1 << 16), display_name(path))
    if isinstance(path, RemoteFile):  # through its filesystem; a failed read names the file
        raw: BinaryIO = io.BufferedReader(_Guarded(path.open_input(), os.fspath(path), None),
                                          buffer_size=1 << 20)
    else:
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            _not_empty(raw, os.fspath(path))
    if compression is None:
        return raw
    name = os.fspath(path)
    if compression == "gzip":
        inner: BinaryIO = _GzipOwner(filename="", mode="rb", fileobj=raw)  # type: ignore[assignment]
    else:
        _need_zstd(path)
        inner = _ZstdFrames(raw)
    return io.BufferedReader(_Guarded(inner, name, compression), buffer_size=1 << 16)


def read_all(path: str | os.PathLike) -> bytes:
    """The whole content of standard input (``-``), a FIFO or a device, for a format read from its
    end (Parquet); an empty one is refused, as by :func:`open_input`."""
    with open_input(path) as stream:
        return stream.read()


def _not_empty(stream: io.BufferedReader, name: str) -> io.BufferedReader:
    """``stream``, after checking (by peeking, nothing consumed) that it holds a first byte."""
    try:
        empty = not stream.peek(1)
    except BaseException:
        stream.close()
        raise
    if empty:
        stream.close()
        raise FileError(name, None, "empty input (0 bytes)")
    return stream


class _ZstdFrames:
    """The decompressed content of a file of zstd frames; a truncated last frame is an error
    (zstandard's stream reader would end silently, losing records)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._dobj = _zstd.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._in_frame = False

    def read(self, size: int = -1) -> bytes:
        while not self._pending:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                if self._in_frame:
                    raise EOFError("the last zstd frame is truncated")
                return b""
            while chunk:
                self._in_frame = True
                self._pending += self._dobj.decompress(chunk)
                chunk = b""
                if self._dobj.eof:  # a frame ended: what follows starts the next one
                    chunk = self._dobj.unused_data
                    self._dobj = _zstd.ZstdDecompressor().decompressobj()
                    self._in_frame = False
        n = len(self._pending) if size < 0 else size
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def close(self) -> None:
        self._raw.close()


class _GzipOwner(gzip.GzipFile):
    """A gzip stream (reading or writing) that also closes the file under it."""

    def close(self) -> None:
        raw = self.fileobj
        try:
            super().close()
        finally:
            if raw is not None:
                raw.close()


def open_output(path: str | os.PathLike, compression: str | None = None) -> BinaryIO:
    """A binary stream writing ``path`` (a real file: standard output is staged by
    :class:`~textdp.io.AtomicFiles`; a :class:`~textdp.io.uri.RemoteFile` through its
    filesystem), compressed with ``compression``."""
    # The caller closes it.
    raw = path.open_output() if isinstance(path, RemoteFile) else open(path, "wb")  # noqa: SIM115
    if compression is None:
        return raw
    if compression == "gzip":
        # No file name and mtime 0 in the header: a seeded run gives the same bytes every time.
        return _GzipOwner(filename="", mode="wb", fileobj=raw, mtime=0)  # type: ignore[return-value]
    _need_zstd(path)
    return _zstd.ZstdCompressor().stream_writer(raw, closefd=True)  # type: ignore[return-value]
