"""CSV with a header row; the document is the column named ``text_field``.

Guarantees: every data row in gives one row out, with every other column's value unchanged and in
its place (quoting may be normalised: values, not bytes, are preserved); quoted fields may span
lines; blank lines are passed through where they were (they are not documents); the output uses
the header's line ending and keeps a UTF-8 byte-order mark. Errors name the line: invalid UTF-8,
malformed quoting, a row whose number of fields differs from the header's.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from textdp.io._lines import BOM, LineFileReader
from textdp.io.errors import FileError
from textdp.io.records import Batch, RecordWriter

__all__ = ["CsvReader", "CsvWriter"]

# The csv module refuses fields over 128 KiB by default; a document can be longer. Raising the
# process-wide limit only ever accepts more input, so it cannot break another user of csv.
_FIELD_LIMIT = 2**31 - 1


class CsvReader(LineFileReader):
    """Documents are the ``text_field`` column of a comma-separated file with a header row."""

    format = "csv"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        if csv.field_size_limit() < _FIELD_LIMIT:
            csv.field_size_limit(_FIELD_LIMIT)
        # As a Path, so that an invalid-UTF-8 error names the file as every other CSV error does.
        super().__init__(Path(path), text_field=text_field)
        self.blank_lines = 0
        try:
            self._open()
        except BaseException:
            self._fh.close()
            raise

    def _open(self) -> None:
        path = str(self.path)
        self._first_ending = "\r\n"

        def lines() -> Iterator[str]:
            for line in self._lines:
                if self._lines.line == 1:
                    self._first_ending = "\r\n" if line.endswith("\r\n") else "\n"
                yield line

        # strict: malformed quoting is an error, not a silently different value.
        self._reader = csv.reader(lines(), strict=True)
        header = self._next_row()
        while header == []:
            self.blank_lines += 1
            header = self._next_row()
        if header is None:
            raise FileError(path, None, "no header row (the file holds only blank lines)")
        self.header = header
        self._leading_blank = self.blank_lines
        self._header_line = self._lines.line
        count = header.count(self.text_field)
        if count == 0:
            shown = ", ".join(repr(h) for h in header[:20]) + (", …" if len(header) > 20 else "")
            raise FileError(path, self._header_line,
                            f"no column {self.text_field!r} in the header (columns: {shown})")
        if count > 1:
            raise FileError(path, self._header_line,
                            f"column {self.text_field!r} appears {count} times in the header")
        self.text_index = header.index(self.text_field)
        self.line_ending = self._first_ending

    def _next_row(self) -> list[str] | None:
        start = self._lines.line + 1
        try:
            return next(self._reader)
        except StopIteration:
            return None
        except csv.Error as exc:
            end = self._lines.line
            where = f" (the record runs from line {start} to {end})" if end > start else ""
            raise FileError(str(self.path), start, f"malformed CSV: {exc}{where}") from None

    def _records(self) -> Iterator[tuple[str | None, list[str]]]:
        path, width, index = str(self.path), len(self.header), self.text_index
        while True:
            start = self._lines.line + 1
            row = self._next_row()
            if row is None:
                return
            if not row:
                self.blank_lines += 1
                yield None, row
                continue
            if len(row) != width:
                raise FileError(path, start,
                                f"{len(row)} fields where the header has {width}")
            yield row[index], row

    def _payload(self, entries: list[Any]) -> Any:
        return entries  # the rows; the writer has the header, the line ending and the BOM

    def writer(self, path: str | os.PathLike) -> CsvWriter:
        return CsvWriter(path, self.header, self.text_index, line_ending=self.line_ending,
                         bom=self._lines.bom, leading_blank_lines=self._leading_blank)

    def stats(self) -> dict[str, Any]:
        return {"records": self.records_read, "blank_lines": self.blank_lines,
                "columns": len(self.header)}


class CsvWriter(RecordWriter):
    """Writes the header, then each row with its text column replaced."""

    def __init__(self, path: str | os.PathLike, header: Sequence[str], text_index: int, *,
                 line_ending: str = "\r\n", bom: bool = False,
                 leading_blank_lines: int = 0) -> None:
        super().__init__(path)
        self.text_index = text_index
        self._fh: TextIO = open(self.path, "w", encoding="utf-8", newline="")  # noqa: SIM115
        if bom:
            self._fh.write(BOM)
        self._writer = csv.writer(self._fh, lineterminator=line_ending)
        self._writer.writerows([[]] * leading_blank_lines)
        self._writer.writerow(header)

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        it = iter(texts)
        index = self.text_index
        for row in batch.payload:
            if row:
                row[index] = next(it)
        self._writer.writerows(batch.payload)

    def close(self) -> None:
        self._fh.close()
