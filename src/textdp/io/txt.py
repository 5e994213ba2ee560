"""Plain text: one document per line.

Guarantees: N lines in → N documents → N lines out, empty lines included; each line keeps its own
ending (``\\n`` or ``\\r\\n``), a last line without an ending stays without one, and a UTF-8
byte-order mark is written back if the input had one. So a transformation that returns every
document unchanged reproduces the file byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from textdp.io._lines import BOM, Utf8Lines, split_ending
from textdp.io.records import Batch, RecordReader, RecordWriter

__all__ = ["TextLinesReader", "TextLinesWriter"]


class TextLinesReader(RecordReader):
    """Documents are the lines of a UTF-8 text file (``text_field`` is ignored)."""

    format = "txt"
    unit = "B"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        super().__init__(path, text_field=text_field)
        self.total = os.path.getsize(self.path)
        self._fh: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        self._lines = Utf8Lines(self._fh, str(path))

    def batches(self, batch_size: int) -> Iterator[Batch]:
        texts: list[str] = []
        endings: list[str] = []
        mark = 0
        for line in self._lines:
            text, ending = split_ending(line)
            texts.append(text)
            endings.append(ending)
            if len(texts) == batch_size:
                yield self._batch(texts, endings, mark)
                mark = self._lines.bytes_read
                texts, endings = [], []
        if texts:
            yield self._batch(texts, endings, mark)

    def _batch(self, texts: list[str], endings: list[str], mark: int) -> Batch:
        batch = Batch(texts, self.records_read, self._lines.bytes_read - mark,
                      (endings, self._lines.bom))
        self.records_read += len(texts)
        return batch

    def writer(self, path: str | os.PathLike) -> TextLinesWriter:
        return TextLinesWriter(path)

    def close(self) -> None:
        self._fh.close()


class TextLinesWriter(RecordWriter):
    """Writes each document followed by the line ending its input line had."""

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path)
        self._fh: BinaryIO = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._started = False

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        endings, bom = batch.payload
        for i, text in enumerate(texts):
            # A line break inside a document would split it into two lines: N in, N+1 out.
            if "\n" in text:
                raise ValueError(f"document {batch.start + i + 1} contains a line break; "
                                 "a .txt file holds one document per line")
        parts = [BOM] if bom and not self._started else []
        self._started = True
        for text, ending in zip(texts, endings, strict=True):
            parts.append(text)
            parts.append(ending)
        self._fh.write("".join(parts).encode("utf-8"))

    def close(self) -> None:
        self._fh.close()
