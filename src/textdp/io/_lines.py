"""Physical lines of a UTF-8 file, decoded strictly, counted, with their endings kept; and the
reader and writer the line-based formats (.txt, .jsonl, .csv) share."""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any, BinaryIO

from textdp.io.errors import FileError
from textdp.io.records import Batch, RecordReader, RecordWriter

BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")


class Utf8Lines:
    """Iterate over the lines of a binary file as ``str``, each with its ending (``\\n``,
    ``\\r\\n`` or none for a last line without one).

    Lines end at ``\\n`` only — a lone ``\\r`` is a character inside the line — so that writing the
    lines back reproduces the file byte for byte. A UTF-8 byte-order mark at the very start is
    removed from the first line and recorded in :attr:`bom`.

    Raises:
        FileError: a line is not valid UTF-8 (names the line and the byte).
    """

    def __init__(self, fh: BinaryIO, path: str) -> None:
        self._fh = fh
        self._path = path
        self.bom = False
        #: Lines read so far (= the number of the last line read, 1-based).
        self.line = 0
        #: Bytes read so far, for a progress bar.
        self.bytes_read = 0

    def __iter__(self) -> Iterator[str]:
        for raw in self._fh:
            self.line += 1
            self.bytes_read += len(raw)
            if self.line == 1 and raw.startswith(_BOM_BYTES):
                self.bom = True
                raw = raw[len(_BOM_BYTES):]
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = raw[exc.start:exc.start + 1].hex()
                raise FileError(self._path, self.line,
                                f"invalid UTF-8 (byte 0x{bad} at byte {exc.start + 1} of the line)"
                                ) from None


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

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        super().__init__(path, text_field=text_field)
        self.total = os.path.getsize(self.path)
        self._fh: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        self._lines = Utf8Lines(self._fh, str(path))

    @abstractmethod
    def _records(self) -> Iterator[tuple[str | None, Any]]:
        """(the document, or None for a record without one; what the writer needs to rebuild the
        record), for each record in file order."""

    def batches(self, batch_size: int) -> Iterator[Batch]:
        texts: list[str] = []
        entries: list[Any] = []
        mark = self._lines.bytes_read
        for text, entry in self._records():
            entries.append(entry)
            if text is None:
                continue
            texts.append(text)
            if len(texts) == batch_size:
                yield self._batch(texts, entries, mark)
                mark = self._lines.bytes_read
                texts, entries = [], []
        if entries:
            yield self._batch(texts, entries, mark)

    def _batch(self, texts: list[str], entries: list[Any], mark: int) -> Batch:
        batch = Batch(texts, self.records_read, self._lines.bytes_read - mark,
                      self._payload(entries))
        self.records_read += len(texts)
        return batch

    def _payload(self, entries: list[Any]) -> Any:
        return entries, self._lines.bom

    def close(self) -> None:
        self._fh.close()


class LineFileWriter(RecordWriter):
    """A writer of a binary file that restores the input's byte-order mark once, at the start."""

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path)
        self._fh: BinaryIO = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._started = False

    def _start(self, bom: bool) -> bytes:
        """The bytes that precede the first batch: the byte-order mark if the input had one."""
        first, self._started = not self._started, True
        return _BOM_BYTES if bom and first else b""

    def close(self) -> None:
        self._fh.close()
