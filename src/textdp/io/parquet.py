"""Apache Parquet; the document is the string column named ``text_field``.

Guarantees: every row in gives one row out with every other column unchanged (same values, types
and schema metadata); the file is read with ``iter_batches``, so memory holds one batch, never the
whole table; the output keeps the input's compression codec where pyarrow can write it. The text
column must be a string column without nulls (a null is an error naming the row: it is not a
document, and silently passing it through would hide missing data). A dictionary-encoded text
column is written back as a plain string column.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from textdp.io.errors import FileError
from textdp.io.records import Batch, RecordReader, RecordWriter

__all__ = ["ParquetReader", "ParquetWriter"]

_CODECS = {"UNCOMPRESSED": "NONE", "SNAPPY": "SNAPPY", "GZIP": "GZIP", "BROTLI": "BROTLI",
           "ZSTD": "ZSTD", "LZ4": "LZ4", "LZ4_RAW": "LZ4"}


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


class ParquetReader(RecordReader):
    """Documents are the ``text_field`` column of a Parquet file, read batch by batch."""

    format = "parquet"
    unit = "rows"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        super().__init__(path, text_field=text_field)
        p = str(self.path)
        try:
            self._file = pq.ParquetFile(self.path)
            schema = self._file.schema_arrow
        except (pa.ArrowException, OSError) as exc:
            raise FileError(p, None, f"not a readable Parquet file ({exc})") from None
        names = schema.names
        count = names.count(text_field)
        if count == 0:
            shown = ", ".join(repr(n) for n in names[:20]) + (", …" if len(names) > 20 else "")
            raise FileError(p, None, f"no column {text_field!r} (columns: {shown})")
        if count > 1:
            raise FileError(p, None, f"column {text_field!r} appears {count} times")
        self.text_index = names.index(text_field)
        field = schema.field(self.text_index)
        value_type = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if not _is_string(value_type):
            raise FileError(p, None, f"column {text_field!r} has type {field.type}, expected string")
        self.schema = schema.set(self.text_index, field.with_type(value_type))
        self.total = self._file.metadata.num_rows
        self.compression = self._codec()

    def _codec(self) -> str:
        meta = self._file.metadata
        if meta.num_row_groups == 0:
            return "SNAPPY"
        codec = str(meta.row_group(0).column(self.text_index).compression).upper()
        return _CODECS.get(codec, "SNAPPY")

    def batches(self, batch_size: int) -> Iterator[Batch]:
        p, field, index = str(self.path), self.text_field, self.text_index
        it = self._file.iter_batches(batch_size=batch_size)
        while True:
            try:
                record_batch = next(it)
            except StopIteration:
                return
            except (pa.ArrowException, OSError) as exc:
                raise FileError(p, self.records_read + 1, f"unreadable Parquet data ({exc})",
                                unit="row") from None
            column = record_batch.column(index)
            if column.null_count:
                first = column.is_null().to_pylist().index(True)
                raise FileError(p, self.records_read + first + 1,
                                f"column {field!r} is null", unit="row")
            texts = column.to_pylist()
            batch = Batch(texts, self.records_read, len(texts), record_batch)
            self.records_read += len(texts)
            yield batch

    def writer(self, path: str | os.PathLike) -> ParquetWriter:
        return ParquetWriter(path, self.schema, self.text_index, compression=self.compression)

    def stats(self) -> dict[str, Any]:
        return {"records": self.records_read, "columns": len(self.schema)}

    def close(self) -> None:
        self._file.close()


class ParquetWriter(RecordWriter):
    """Writes each batch as it comes, with its text column replaced; the footer on close."""

    def __init__(self, path: str | os.PathLike, schema: pa.Schema, text_index: int, *,
                 compression: str = "SNAPPY") -> None:
        super().__init__(path)
        self.schema = schema
        self.text_index = text_index
        self._writer = pq.ParquetWriter(self.path, schema, compression=compression)

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        record_batch: pa.RecordBatch = batch.payload
        columns = list(record_batch.columns)
        columns[self.text_index] = pa.array(texts, type=self.schema.field(self.text_index).type)
        self._writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self._writer.close()
