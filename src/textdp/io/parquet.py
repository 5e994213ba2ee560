"""Apache Parquet; the document is the string column named ``text_field``.

Guarantees: every row in gives one row out with every other column unchanged (same values, types
and schema metadata); the file is read with ``iter_batches``, so memory holds one batch, never the
whole table; the output keeps the input's compression codec where pyarrow can write it. A text
column must be a string column; a null in it is an error naming the row (it is not a document,
and silently passing it through would hide missing data) unless ``null="pass"``. A text value that is not
valid UTF-8 (Parquet writers do not all check) is an error naming the row and the column; under
``on_error="skip"`` such rows, like null ones, are left out and listed. A dictionary-encoded text
column is written back as a plain string column.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from textdp._guide import names_listing
from textdp.io.errors import FileError
from textdp.io.paths import is_stream
from textdp.io.records import Batch, ReadOptions, RecordReader, RecordWriter
from textdp.io.streams import read_all
from textdp.io.uri import RemoteFile

__all__ = ["ParquetReader", "ParquetWriter"]

_CODECS = {"UNCOMPRESSED": "NONE", "SNAPPY": "SNAPPY", "GZIP": "GZIP", "BROTLI": "BROTLI",
           "ZSTD": "ZSTD", "LZ4": "LZ4", "LZ4_RAW": "LZ4"}


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


class _Invalid:
    """A text value that is not valid UTF-8: why, in words."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _decoded(column: pa.Array) -> list[Any]:
    """``column.to_pylist()`` with an :class:`_Invalid` for each value that is not UTF-8."""
    out: list[Any] = []
    for r in range(len(column)):
        try:
            out.append(column[r].as_py())
        except UnicodeDecodeError as exc:
            bad = exc.object[exc.start:exc.start + 1].hex()
            out.append(_Invalid(f"invalid UTF-8 (byte 0x{bad} at byte {exc.start + 1} of the "
                                "value)"))
    return out


class ParquetReader(RecordReader):
    """Documents are the text-field columns of a Parquet file, read batch by batch."""

    format = "parquet"
    unit = "rows"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text",
                 options: ReadOptions | None = None, compression: str | None = None) -> None:
        super().__init__(path, text_field=text_field, options=options, compression=compression)
        p = self.name
        self._source: Any = None  # a file this reader opened and closes (a RemoteFile's)
        if compression is not None:
            raise FileError(p, None, "a Parquet file is compressed inside; drop the "
                                     f"{compression} extension")
        try:
            # Parquet needs random access: standard input is read into memory first.
            if is_stream(path):
                source: Any = pa.BufferReader(read_all(path))
            elif isinstance(self.path, RemoteFile):  # random access through its filesystem
                source = self._source = self.path.open_input_file()
            else:
                source = self.path
            self._file = pq.ParquetFile(source)
            schema = self._file.schema_arrow
        except (pa.ArrowException, OSError) as exc:
            if self._source is not None:
                self._source.close()
            raise FileError(p, None, f"not a readable Parquet file ({exc})") from None
        self.text_indices = [self._column(schema, name) for name in self.text_fields]
        self.text_index = self.text_indices[0]
        for index in self.text_indices:
            field = schema.field(index)
            value_type = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
            schema = schema.set(index, field.with_type(value_type))
        self.schema = schema
        self.total = self._file.metadata.num_rows
        self.compression = self._codec()

    def _column(self, schema: pa.Schema, name: str) -> int:
        p, names = self.name, schema.names
        count = names.count(name)
        if count == 0:
            raise FileError(p, None, f"no column {name!r} ({names_listing(name, names)})")
        if count > 1:
            raise FileError(p, None, f"column {name!r} appears {count} times")
        index = names.index(name)
        t = schema.field(index).type
        value_type = t.value_type if pa.types.is_dictionary(t) else t
        scalar = name in self.options.scalar_fields and (pa.types.is_integer(t)
                                                         or pa.types.is_boolean(t))
        if not (_is_string(value_type) or scalar):
            expected = ("string, integer or boolean" if name in self.options.scalar_fields
                        else "string")
            raise FileError(p, None, f"column {name!r} has type {t}, expected {expected}")
        return index

    def _codec(self) -> str:
        meta = self._file.metadata
        if meta.num_row_groups == 0:
            return "SNAPPY"
        codec = str(meta.row_group(0).column(self.text_index).compression).upper()
        return _CODECS.get(codec, "SNAPPY")

    def batches(self, batch_size: int) -> Iterator[Batch]:
        it = self._file.iter_batches(batch_size=batch_size)
        rows_seen = 0
        while True:
            try:
                record_batch = next(it)
            except StopIteration:
                return
            except (pa.ArrowException, OSError) as exc:
                raise FileError(self.name, rows_seen + 1, f"unreadable Parquet data ({exc})",
                                unit="row") from None
            first_row, rows_seen = rows_seen, rows_seen + record_batch.num_rows
            # An integer or boolean label column is read as text ("3", "true"); never written.
            columns = [c if _is_string(c.type) or pa.types.is_dictionary(c.type)
                       else c.cast(pa.string())
                       for c in (record_batch.column(i) for i in self.text_indices)]
            nulls = any(c.null_count for c in columns)
            try:
                values = [c.to_pylist() for c in columns]
                checked = nulls
            except UnicodeDecodeError:  # Parquet does not validate UTF-8; to_pylist does
                values, checked = [_decoded(c) for c in columns], True
            if checked:
                record_batch, values = self._check_rows(record_batch, values, first_row)
            texts = values[0] if len(values) == 1 else [v for row in zip(*values, strict=True) for v in row]
            if nulls:
                texts = [t for t in texts if t is not None]
            batch = Batch(texts, self.documents_read, record_batch.num_rows,
                          (record_batch, values), record_batch.num_rows)
            self.records_read += record_batch.num_rows
            self.documents_read += len(texts)
            yield batch

    def _check_rows(self, record_batch: pa.RecordBatch, values: list[list[Any]], first_row: int
                    ) -> tuple[pa.RecordBatch, list[list[str | None]]]:
        """Rows with a text that is not valid UTF-8 (a :class:`_Invalid` in ``values``) are
        rejected (an error naming the row and column, or left out under ``on_error="skip"``);
        rows with a null text are passed through (``null="pass"``), else rejected too."""
        keep = [True] * record_batch.num_rows
        passing = self.options.null == "pass"
        for r, row in enumerate(zip(*values, strict=True)):
            for name, v in zip(self.text_fields, row, strict=True):
                if type(v) is _Invalid:
                    problem = f"column {name!r}: {v.problem}"
                elif v is None and not passing:
                    problem = f"column {name!r} is null"
                else:
                    continue
                self.reject(first_row + r + 1, problem, unit="row")
                keep[r] = False
                break
        if all(keep):
            kept, values = record_batch, values
        else:
            kept = record_batch.filter(pa.array(keep))
            values = [[v for v, k in zip(column, keep, strict=True) if k] for column in values]
        if passing:
            self.null_texts += sum(v is None for column in values for v in column)
        return kept, values

    def writer(self, path: str | os.PathLike, *, compression: str | None = None
               ) -> ParquetWriter:
        return ParquetWriter(path, self.schema, self.text_indices, compression=self.compression)

    def stats(self) -> dict[str, Any]:
        return {"records": self.records_read, "columns": len(self.schema), **self.error_stats()}

    def close(self) -> None:
        self._file.close()
        if self._source is not None:
            self._source.close()


class ParquetWriter(RecordWriter):
    """Writes each batch as it comes, with its text columns replaced; the footer on close."""

    def __init__(self, path: str | os.PathLike, schema: pa.Schema,
                 text_indices: int | Sequence[int], *, compression: str = "SNAPPY") -> None:
        super().__init__(path)
        self.schema = schema
        self.text_indices = [text_indices] if isinstance(text_indices, int) else list(text_indices)
        if isinstance(self.path, RemoteFile):
            self._writer = pq.ParquetWriter(self.path.path, schema, compression=compression,
                                            filesystem=self.path.filesystem)
        else:
            self._writer = pq.ParquetWriter(self.path, schema, compression=compression)

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        record_batch, values = batch.payload
        columns = list(record_batch.columns)
        k = len(values)
        if len(texts) == record_batch.num_rows * k:  # no nulls: row-major, as the reader flattened
            new = [list(texts[j::k]) for j in range(k)]
        else:  # a null stays null
            it = iter(texts)
            new = [list(column) for column in values]
            for r in range(record_batch.num_rows):
                for column in new:
                    if column[r] is not None:
                        column[r] = next(it)
        for index, column in zip(self.text_indices, new, strict=True):
            columns[index] = pa.array(column, type=self.schema.field(index).type)
        self._writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self._writer.close()
