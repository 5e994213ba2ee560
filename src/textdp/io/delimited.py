"""CSV and TSV with a header row; the documents are the columns named by the text fields.

Guarantees: every data row in gives one row out, with every other column's value unchanged and in
its place (quoting may be normalised: values, not bytes, are preserved); quoted fields may span
lines; blank lines are passed through where they were (they are not documents); the output uses
the header's line ending and keeps a UTF-8 byte-order mark. Errors name the line: invalid UTF-8,
malformed quoting, a row whose number of fields differs from the header's.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from textdp._guide import names_listing
from textdp.io._lines import BOM, LineFileReader
from textdp.io.errors import FileError
from textdp.io.records import Batch, ReadOptions, RecordWriter, as_path
from textdp.io.streams import open_output

__all__ = ["CsvReader", "CsvWriter", "TsvReader"]

# The csv module refuses fields over 128 KiB by default; a document can be longer. Raising the
# process-wide limit only ever accepts more input, so it cannot break another user of csv.
_FIELD_LIMIT = 2**31 - 1


class CsvReader(LineFileReader):
    """Documents are the text-field columns of a comma-separated file with a header row."""

    format = "csv"
    default_delimiter = ","

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text",
                 options: ReadOptions | None = None, compression: str | None = None) -> None:
        if csv.field_size_limit() < _FIELD_LIMIT:
            csv.field_size_limit(_FIELD_LIMIT)
        # As a Path, so that an invalid-UTF-8 error names the file as every other CSV error does.
        super().__init__(as_path(path), text_field=text_field, options=options,
                         compression=compression)
        self.delimiter = self.options.delimiter or self.default_delimiter
        self.blank_lines = 0
        try:
            self._open()
        except BaseException:
            self._fh.close()
            raise

    def _open(self) -> None:
        path = self.name
        self._first_ending = "\r\n"

        def lines() -> Iterator[str]:
            for line in self._lines:
                if self._lines.line == 1:
                    self._first_ending = "\r\n" if line.endswith("\r\n") else "\n"
                yield line

        # strict: malformed quoting is an error, not a silently different value.
        self._reader = csv.reader(lines(), strict=True, delimiter=self.delimiter)
        header = self._next_row()
        while header == []:
            self.blank_lines += 1
            header = self._next_row()
        if header is None:
            raise FileError(path, None, "no header row (the file holds only blank lines)")
        self.header = header
        self._leading_blank = self.blank_lines
        self._header_line = self._lines.line
        self.text_indices = [self._column(name) for name in self.text_fields]
        self.text_index = self.text_indices[0]
        self.line_ending = self._first_ending

    def _column(self, name: str) -> int:
        header, path = self.header, self.name
        count = header.count(name)
        if count == 0:
            raise FileError(path, self._header_line,
                            f"no column {name!r} in the header ({names_listing(name, header)})")
        if count > 1:
            raise FileError(path, self._header_line,
                            f"column {name!r} appears {count} times in the header")
        return header.index(name)

    def _next_row(self, *, header: bool = True) -> list[str] | None:
        """The next row; None at the end, or (``header=False``, skipping) ``[None]`` for a
        malformed one that was skipped."""
        start = self._lines.line + 1
        try:
            return next(self._reader)
        except StopIteration:
            return None
        except csv.Error as exc:
            end = self._lines.line
            where = f" (the record runs from line {start} to {end})" if end > start else ""
            problem = f"malformed CSV: {exc}{where}"
            if header:
                raise FileError(self.name, start, problem) from None
            self.reject(start, problem)
            return [None]  # type: ignore[list-item]

    def _records(self) -> Iterator[tuple[list[str] | None, list[str]]]:
        width, indices = len(self.header), self.text_indices
        while True:
            start = self._lines.line + 1
            row = self._next_row(header=False)
            if row is None:
                return
            if row == [None]:
                continue
            if not row:
                self.blank_lines += 1
                yield None, row
                continue
            if len(row) != width:
                self.reject(start, f"{len(row)} fields where the header has {width}")
                continue
            yield [row[i] for i in indices], row

    def _payload(self, entries: list[Any]) -> Any:
        return entries  # the rows; the writer has the header, the line ending and the BOM

    def writer(self, path: str | os.PathLike, *, compression: str | None = None) -> CsvWriter:
        return CsvWriter(path, self.header, self.text_indices, line_ending=self.line_ending,
                         bom=self._lines.bom, leading_blank_lines=self._leading_blank,
                         delimiter=self.delimiter, compression=compression)

    def stats(self) -> dict[str, Any]:
        return {"records": self.records_read, "blank_lines": self.blank_lines,
                "columns": len(self.header), **self.error_stats()}


class TsvReader(CsvReader):
    """Tab-separated values: CSV with a tab as the delimiter (the same quoting rules)."""

    format = "tsv"
    default_delimiter = "\t"


class CsvWriter(RecordWriter):
    """Writes the header, then each row with its text columns replaced."""

    def __init__(self, path: str | os.PathLike, header: Sequence[str],
                 text_indices: int | Sequence[int], *, line_ending: str = "\r\n",
                 bom: bool = False, leading_blank_lines: int = 0, delimiter: str = ",",
                 compression: str | None = None) -> None:
        super().__init__(path)
        self.text_indices = [text_indices] if isinstance(text_indices, int) else list(text_indices)
        self._fh: TextIO = io.TextIOWrapper(open_output(self.path, compression),
                                            encoding="utf-8", newline="")
        if bom:
            self._fh.write(BOM)
        self._writer = csv.writer(self._fh, lineterminator=line_ending, delimiter=delimiter)
        self._writer.writerows([[]] * leading_blank_lines)
        self._writer.writerow(header)

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        it = iter(texts)
        indices = self.text_indices
        for row in batch.payload:
            if row:
                for index in indices:
                    row[index] = next(it)
        self._writer.writerows(batch.payload)

    def close(self) -> None:
        self._fh.close()
