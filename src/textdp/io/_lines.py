"""Physical lines of a UTF-8 file, decoded strictly, counted, with their endings kept; and the
reader and writer the line-based formats (.txt, .jsonl, .csv) share."""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from textdp.io.errors import FileError
from textdp.io.paths import is_stream
from textdp.io.records import (
    DEFAULT_MAX_LINE_BYTES,
    MAX_LINE_BYTES_ENV,
    Batch,
    ReadOptions,
    RecordReader,
    RecordWriter,
    max_line_bytes,
)
from textdp.io.streams import is_stdio, open_input, open_output
from textdp.io.uri import RemoteFile

BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")


class Utf8Lines:
    """Iterate over the lines of a binary file as ``str``, each with its ending (``\\n``,
    ``\\r\\n`` or none for a last line without one).

    Lines end at ``\\n`` only — a lone ``\\r`` is a character inside the line — so that writing the
    lines back reproduces the file byte for byte. A UTF-8 byte-order mark at the very start is
    removed from the first line and recorded in :attr:`bom`.

    A line that is not valid UTF-8 goes to ``reject(line, problem)``, which raises (the default:
    a :class:`FileError` naming the line and the byte) or returns, and the line is then left out.
    """

    def __init__(self, fh: BinaryIO, path: str,
                 reject: Callable[[int, str], None] | None = None, *,
                 max_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._fh = fh
        self._path = path
        self._reject = reject
        #: The longest line (its ending not counted): a longer one raises, whatever ``reject``.
        self.max_bytes = max_bytes
        self.bom = False
        #: Lines read so far (= the number of the last line read, 1-based).
        self.line = 0
        #: Bytes read so far, for a progress bar.
        self.bytes_read = 0

    def raw(self) -> Iterator[bytes]:
        """The lines as bytes (not decoded; the byte-order mark removed), counted."""
        limit = self.max_bytes
        # readline(n) never holds more than n bytes of one line: an endless line (/dev/zero,
        # a file without line breaks) is refused at the bound instead of filling the memory.
        while raw := self._fh.readline(limit + 2):
            self.line += 1
            self.bytes_read += len(raw)
            if len(raw) > limit and len(raw) - _ending_size(raw) > limit:
                raise FileError(self._path, self.line, _too_long(limit))
            if self.line == 1 and raw.startswith(_BOM_BYTES):
                self.bom = True
                raw = raw[len(_BOM_BYTES):]
            yield raw

    def decode(self, raw: bytes) -> str | None:
        """``raw`` (the current line) decoded; None if it is invalid and was rejected."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start:exc.start + 1].hex()
            problem = f"invalid UTF-8 (byte 0x{bad} at byte {exc.start + 1} of the line)"
            if self._reject is None:
                raise FileError(self._path, self.line, problem) from None
            self._reject(self.line, problem)
            return None

    def __iter__(self) -> Iterator[str]:
        for raw in self.raw():
            line = self.decode(raw)
            if line is not None:
                yield line


def _ending_size(raw: bytes) -> int:
    return 2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0


def _too_long(limit: int) -> str:
    size = f"{limit // 2**20:,} MiB" if limit % 2**20 == 0 else f"{limit:,} bytes"
    return (f"the line is longer than {size}, the bound on a line's length; raise it with "
            f"--max-line-bytes N or {MAX_LINE_BYTES_ENV}=N "
            "(Python: ReadOptions(max_line_bytes=N)) if the file really holds such lines")


def split_ending(line: str) -> tuple[str, str]:
    """``"abc\\r\\n"`` → ``("abc", "\\r\\n")``; the ending is ``""`` for a last line without one."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""


class LineFileReader(RecordReader):
    """A reader of a UTF-8 file read line by line: opens it, counts progress in bytes read, and
    cuts the records it parses (:meth:`_records`) into batches of ``batch_size`` documents.

    A batch's payload is ``(entries, bom)``: one entry per record, documents and the records that
    hold none (blank lines) alike, in file order, and whether the file began with a byte-order mark.
    """

    unit = "B"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text",
                 options: ReadOptions | None = None, compression: str | None = None) -> None:
        super().__init__(path, text_field=text_field, options=options, compression=compression)
        # Progress in bytes of the file: known for a plain file only (not a pipe, not compressed).
        stdio = is_stdio(path)
        self.total = (None if is_stream(path) or compression else
                      self.path.byte_size() if isinstance(self.path, RemoteFile) else
                      os.path.getsize(self.path))
        self._fh: BinaryIO = open_input("-" if stdio else self.path, compression)
        self._lines = Utf8Lines(self._fh, self.name, self.reject,
                                max_bytes=max_line_bytes(self.options))

    @abstractmethod
    def _records(self) -> Iterator[tuple[list[str] | None, Any]]:
        """(the record's documents — None for a line that is not a record, such as a blank line —;
        what the writer needs to rebuild the line), for each line or record in file order."""

    def batches(self, batch_size: int) -> Iterator[Batch]:
        texts: list[str] = []
        entries: list[Any] = []
        records = 0
        mark = self._lines.bytes_read
        for docs, entry in self._records():
            entries.append(entry)
            if docs is None:
                continue
            records += 1
            texts += docs
            if len(texts) >= batch_size:
                yield self._batch(texts, entries, records, mark)
                mark = self._lines.bytes_read
                texts, entries, records = [], [], 0
        if entries:
            yield self._batch(texts, entries, records, mark)

    def _batch(self, texts: list[str], entries: list[Any], records: int, mark: int) -> Batch:
        batch = Batch(texts, self.documents_read, self._lines.bytes_read - mark,
                      self._payload(entries), records)
        self.records_read += records
        self.documents_read += len(texts)
        return batch

    def _payload(self, entries: list[Any]) -> Any:
        return entries, self._lines.bom

    def close(self) -> None:
        self._fh.close()


class LineFileWriter(RecordWriter):
    """A writer of a binary file that restores the input's byte-order mark once, at the start."""

    def __init__(self, path: str | os.PathLike, *, compression: str | None = None) -> None:
        super().__init__(path)
        self._fh: BinaryIO = open_output(self.path, compression)
        self._started = False

    def _start(self, bom: bool) -> bytes:
        """The bytes that precede the first batch: the byte-order mark if the input had one."""
        first, self._started = not self._started, True
        return _BOM_BYTES if bom and first else b""

    def close(self) -> None:
        self._fh.close()
