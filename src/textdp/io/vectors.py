"""Vector files: a 2-D ``.npy`` array or a Parquet column of number lists, in and out.

Row i of a file is the vector of record i. Reading names the file, and the row where it can,
in a :class:`~textdp.io.FileError`; ``.npy`` inputs are memory-mapped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from textdp._guide import names_listing
from textdp.io.errors import FileError

__all__ = ["VECTOR_FORMATS", "first_non_finite_row", "iter_vectors", "read_vectors", "vector_shape",
           "write_vectors"]

#: The suffixes :func:`read_vectors` and :func:`write_vectors` accept.
VECTOR_FORMATS = (".npy", ".parquet")


def read_vectors(path: str | os.PathLike, field: str = "vector") -> np.ndarray:
    """The (N, d) vectors of ``path``: a ``.npy`` array (memory-mapped) or the Parquet list column
    ``field`` (float64). Raises :class:`FileError` for anything but N vectors of one length."""
    path = Path(path)
    if path.suffix.lower() == ".npy":
        return _read_npy(path)
    return _read_parquet(path, field)


def _read_npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise FileError(path, None, f"not a readable .npy array ({exc})") from None
    if not isinstance(arr, np.ndarray):
        raise FileError(path, None, "not a .npy array")
    if arr.ndim != 2:
        raise FileError(path, None, f"expected a 2-D array (N vectors × d), got shape {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating)
                                 or np.issubdtype(arr.dtype, np.integer)):
        raise FileError(path, None, f"expected real numbers, got dtype {arr.dtype}")
    return arr


def vector_shape(path: str | os.PathLike, field: str = "vector") -> tuple[int, int]:
    """(N, d) of the vectors :func:`read_vectors` would return, from the ``.npy`` header or the
    Parquet footer (and, for a column of variable-length lists, its first vector) without reading
    the data; the same one-line :class:`FileError` for a file that is not a vector file. A
    Parquet file whose later rows have another length is only found out by reading it."""
    import pyarrow as pa

    path = Path(path)
    if path.suffix.lower() == ".npy":
        arr = _read_npy(path)
        return int(arr.shape[0]), int(arr.shape[1])
    pf, t = _parquet_column(path, field)
    n = int(pf.metadata.num_rows)
    if pa.types.is_fixed_size_list(t):
        return n, int(t.list_size)
    for group in range(pf.num_row_groups):
        try:
            col = pf.read_row_group(group, columns=[field]).column(field).combine_chunks()
        except (pa.ArrowException, OSError) as exc:
            raise FileError(path, None, f"unreadable Parquet data ({exc})") from None
        if len(col):
            return n, int(_list_column(path, field, col.slice(0, 1), None).shape[1])
    return n, 0


def iter_vectors(path: str | os.PathLike, field: str = "vector", rows: int = 65536
                 ) -> Iterator[np.ndarray]:
    """The vectors of ``path`` as consecutive (k, d) float64 blocks of at most ``rows`` rows (a
    ``.npy`` memory-mapped, a Parquet file batch by batch): one pass in bounded memory, the same
    values and one-line errors as :func:`read_vectors` (a row number is the file's)."""
    import pyarrow as pa

    path = Path(path)
    if path.suffix.lower() == ".npy":
        arr = _read_npy(path)
        for start in range(0, arr.shape[0], rows):
            yield np.asarray(arr[start:start + rows], dtype=np.float64)
        return
    pf, t = _parquet_column(path, field)
    fixed = t.list_size if pa.types.is_fixed_size_list(t) else None
    first: int | None = None  # the length of row 1
    done = 0
    try:
        for batch in pf.iter_batches(batch_size=rows, columns=[field]):
            try:
                block = _list_column(path, field, batch.column(0), fixed)
            except FileError as exc:  # the row number of the batch, made the file's
                raise FileError(path, None if exc.line is None else exc.line + done, exc.problem,
                                unit="row") from None
            if first is not None and block.shape[0] and block.shape[1] != first:
                raise FileError(path, done + 1, f"vector of length {block.shape[1]}, but row 1 "
                                                f"has length {first}", unit="row")
            first = block.shape[1] if first is None and block.shape[0] else first
            done += block.shape[0]
            yield block
    except (pa.ArrowException, OSError) as exc:
        raise FileError(path, None, f"unreadable Parquet data ({exc})") from None


def _parquet_column(path: Path, field: str) -> tuple[Any, Any]:
    """The open Parquet file and the type of its vector column ``field``, checked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise FileError(path, None, f"not a readable Parquet file ({exc})") from None
    if field not in schema.names:
        shown = names_listing(field, schema.names)
        raise FileError(path, None, f"no column {field!r} ({shown}); name the vector column "
                                    "with --vector-field, or encode texts with --encode")
    t = schema.field(field).type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        raise FileError(path, None, f"column {field!r} has type {t}, expected a list of numbers")
    if not (pa.types.is_floating(t.value_type) or pa.types.is_integer(t.value_type)):
        raise FileError(path, None, f"column {field!r} holds {t.value_type}, expected numbers")
    return pf, t


def _read_parquet(path: Path, field: str) -> np.ndarray:
    import pyarrow as pa

    pf, t = _parquet_column(path, field)
    try:
        col = pf.read(columns=[field]).column(field).combine_chunks()
    except (pa.ArrowException, OSError) as exc:
        raise FileError(path, None, f"unreadable Parquet data ({exc})") from None
    return _list_column(path, field, col, t.list_size if pa.types.is_fixed_size_list(t) else None)


def _list_column(path: Path, field: str, col: object, d: int | None) -> np.ndarray:
    """A list column as an (n, d) float64 array: no nulls, every list of the same length."""
    n = len(col)
    if col.null_count:
        row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0]) + 1
        raise FileError(path, row, f"null vector in column {field!r}", unit="row")
    if d is None:
        lengths = col.value_lengths().to_numpy(zero_copy_only=False)
        d = int(lengths[0]) if n else 0
        bad = np.flatnonzero(lengths != d)
        if bad.size:
            raise FileError(path, int(bad[0]) + 1, f"vector of length {int(lengths[bad[0]])}, "
                                                   f"but row 1 has length {d}", unit="row")
    values = col.flatten()
    if values.null_count:
        row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0]) // max(d, 1) + 1
        raise FileError(path, row, "null inside a vector", unit="row")
    if d == 0:
        raise FileError(path, None, f"column {field!r} holds empty vectors")
    return values.to_numpy(zero_copy_only=False).astype(np.float64, copy=False).reshape(n, d)


def first_non_finite_row(X: np.ndarray, block: int = 32768) -> int | None:
    """The 0-based index of the first row holding NaN or infinity, or None; scans in blocks (X may
    be memory-mapped)."""
    for start in range(0, X.shape[0], block):
        bad = np.flatnonzero(~np.isfinite(np.asarray(X[start:start + block])).all(axis=1))
        if bad.size:
            return start + int(bad[0])
    return None


def write_vectors(path: str | os.PathLike, vectors: np.ndarray, field: str = "vector",
                  suffix: str | None = None) -> None:
    """Write (N, k) ``vectors`` as ``.npy`` or as one Parquet column ``field`` of fixed-size float64
    lists; ``suffix`` picks the format when ``path`` is a temporary name."""
    suffix = (suffix or Path(path).suffix).lower()
    if suffix == ".npy":
        with open(path, "wb") as f:
            np.save(f, vectors, allow_pickle=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    column = pa.FixedSizeListArray.from_arrays(pa.array(np.ravel(vectors), type=pa.float64()),
                                               vectors.shape[1])
    pq.write_table(pa.table({field: column}), path)
