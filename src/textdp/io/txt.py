"""Plain text: one document per line.

Guarantees: N lines in → N documents → N lines out, empty lines included; each line keeps its own
ending (``\\n`` or ``\\r\\n``), a last line without an ending stays without one, and a UTF-8
byte-order mark is written back if the input had one. So a transformation that returns every
document unchanged reproduces the file byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from textdp.io._lines import LineFileReader, LineFileWriter, split_ending
from textdp.io.records import Batch

__all__ = ["TextLinesReader", "TextLinesWriter"]


class TextLinesReader(LineFileReader):
    """Documents are the lines of a UTF-8 text file (``text_field`` is ignored)."""

    format = "txt"

    def _records(self) -> Iterator[tuple[list[str], str]]:
        for line in self._lines:
            text, ending = split_ending(line)
            yield [text], ending

    def writer(self, path: str | os.PathLike, *, compression: str | None = None
               ) -> TextLinesWriter:
        return TextLinesWriter(path, compression=compression)


class TextLinesWriter(LineFileWriter):
    """Writes each document followed by the line ending its input line had."""

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        endings, bom = batch.payload
        for i, text in enumerate(texts):
            # A line break inside a document would split it into two lines: N in, N+1 out.
            if "\n" in text:
                raise ValueError(f"document {batch.start + i + 1} contains a line break; "
                                 "a .txt file holds one document per line")
        start = self._start(bom)
        parts = []
        for text, ending in zip(texts, endings, strict=True):
            parts.append(text)
            parts.append(ending)
        self._fh.write(start + "".join(parts).encode("utf-8"))
