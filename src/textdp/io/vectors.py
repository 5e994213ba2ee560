"""Vector files: a 2-D ``.npy`` array or a Parquet column of number lists, in and out.

Row i of a file is the vector of record i. Reading names the file, and the row where it can,
in a :class:`~textdp.io.FileError`; ``.npy`` inputs are memory-mapped. A
:class:`~textdp.io.uri.RemoteFile` (``s3://…``, for ``--engine ray``) is read and written through
its filesystem: a Parquet file with random access, a ``.npy`` file as a stream (its header, then
its rows: :func:`vector_shape` and :func:`iter_vectors` read no more than they need).
"""

from __future__ import annotations

import io
import os
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from textdp._guide import names_listing
from textdp.io.errors import FileError
from textdp.io.streams import open_output
from textdp.io.uri import RemoteFile

__all__ = ["VECTOR_FORMATS", "first_non_finite_row", "iter_vectors", "read_vectors", "vector_shape",
           "write_vectors"]

#: The suffixes :func:`read_vectors` and :func:`write_vectors` accept.
VECTOR_FORMATS = (".npy", ".parquet")

VectorPath = str | os.PathLike | RemoteFile


def _file(path: VectorPath) -> Path | RemoteFile:
    """A local path as a :class:`Path`; a remote file as it is (``Path`` would fold its ``//``)."""
    return path if isinstance(path, RemoteFile) else Path(path)


def _is_npy(path: Path | RemoteFile) -> bool:
    return posixpath.splitext(os.fspath(path))[1].lower() == ".npy"


def read_vectors(path: VectorPath, field: str = "vector") -> np.ndarray:
    """The (N, d) vectors of ``path``: a ``.npy`` array (memory-mapped; a remote one read into
    memory) or the Parquet list column ``field`` (float64). Raises :class:`FileError` for anything
    but N vectors of one length."""
    path = _file(path)
    if _is_npy(path):
        return _read_npy(path)
    return _read_parquet(path, field)


def _read_npy(path: Path | RemoteFile) -> np.ndarray:
    try:
        if isinstance(path, RemoteFile):
            with path.open_input() as stream:  # np.load seeks: the bytes, in memory
                arr = np.load(io.BytesIO(stream.read()), allow_pickle=False)
        else:
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise FileError(path, None, f"not a readable .npy array ({exc})") from None
    if not isinstance(arr, np.ndarray):
        raise FileError(path, None, "not a .npy array")
    _check_npy(path, arr.shape, arr.dtype)
    return arr


def _check_npy(path: Path | RemoteFile, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if len(shape) != 2:
        raise FileError(path, None, f"expected a 2-D array (N vectors × d), got shape {shape}")
    if dtype.kind == "b" or not (np.issubdtype(dtype, np.floating)
                             or np.issubdtype(dtype, np.integer)):
        raise FileError(path, None, f"expected real numbers, got dtype {dtype}")


def _npy_header(path: RemoteFile, stream: Any) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) of a remote ``.npy`` file, from the stream's first bytes
    (the stream is left at the first byte of the data)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(stream)
        read = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"format version {version} (textdp reads 1.0 and 2.0 remotely)")
        shape, fortran, dtype = read(stream)
    except (ValueError, OSError, EOFError) as exc:
        raise FileError(path, None, f"not a readable .npy array ({exc})") from None
    _check_npy(path, shape, dtype)
    return shape, fortran, dtype


def vector_shape(path: VectorPath, field: str = "vector") -> tuple[int, int]:
    """(N, d) of the vectors :func:`read_vectors` would return, from the ``.npy`` header or the
    Parquet footer (and, for a column of variable-length lists, its first vector) without reading
    the data; the same one-line :class:`FileError` for a file that is not a vector file. A
    Parquet file whose later rows have another length is only found out by reading it."""
    import pyarrow as pa

    path = _file(path)
    if _is_npy(path) and isinstance(path, RemoteFile):
        with path.open_input() as stream:
            shape, _, _ = _npy_header(path, stream)
        return int(shape[0]), int(shape[1])
    if _is_npy(path):
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


def iter_vectors(path: VectorPath, field: str = "vector", rows: int = 65536
                 ) -> Iterator[np.ndarray]:
    """The vectors of ``path`` as consecutive (k, d) float64 blocks of at most ``rows`` rows (a
    ``.npy`` memory-mapped, a Parquet file batch by batch): one pass in bounded memory, the same
    values and one-line errors as :func:`read_vectors` (a row number is the file's)."""
    import pyarrow as pa

    path = _file(path)
    if _is_npy(path) and isinstance(path, RemoteFile):
        yield from _iter_remote_npy(path, rows)
        return
    if _is_npy(path):
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


def _iter_remote_npy(path: RemoteFile, rows: int) -> Iterator[np.ndarray]:
    """:func:`iter_vectors` of a remote ``.npy`` file: the header, then ``rows`` rows at a time
    from the stream (a Fortran-ordered array, whose rows are not contiguous, is read whole)."""
    with path.open_input() as stream:
        (n, d), fortran, dtype = _npy_header(path, stream)
        if fortran:
            arr = _read_npy(path)
            for start in range(0, n, rows):
                yield np.asarray(arr[start:start + rows], dtype=np.float64)
            return
        row_bytes = d * dtype.itemsize
        for start in range(0, n, rows):
            k = min(rows, n - start)
            data = stream.read(k * row_bytes)
            if len(data) != k * row_bytes:
                raise FileError(path, None, f"not a readable .npy array (truncated: {n} rows in "
                                            f"its header, fewer in the file)")
            yield np.frombuffer(data, dtype=dtype).reshape(k, d).astype(np.float64)


def _parquet_column(path: Path | RemoteFile, field: str) -> tuple[Any, Any]:
    """The open Parquet file and the type of its vector column ``field``, checked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path.open_input_file() if isinstance(path, RemoteFile) else path)
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


def _read_parquet(path: Path | RemoteFile, field: str) -> np.ndarray:
    import pyarrow as pa

    pf, t = _parquet_column(path, field)
    try:
        col = pf.read(columns=[field]).column(field).combine_chunks()
    except (pa.ArrowException, OSError) as exc:
        raise FileError(path, None, f"unreadable Parquet data ({exc})") from None
    return _list_column(path, field, col, t.list_size if pa.types.is_fixed_size_list(t) else None)


def _list_column(path: Path | RemoteFile, field: str, col: object, d: int | None) -> np.ndarray:
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


def write_vectors(path: VectorPath, vectors: np.ndarray, field: str = "vector",
                  suffix: str | None = None) -> None:
    """Write (N, k) ``vectors`` as ``.npy`` or as one Parquet column ``field`` of fixed-size float64
    lists; ``suffix`` picks the format when ``path`` is a temporary name. A remote file is written
    through its filesystem (the same bytes)."""
    suffix = (suffix or posixpath.splitext(os.fspath(path))[1]).lower()
    if suffix == ".npy":
        with open_output(path) as f:
            np.save(f, vectors, allow_pickle=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    column = pa.FixedSizeListArray.from_arrays(pa.array(np.ravel(vectors), type=pa.float64()),
                                               vectors.shape[1])
    with open_output(path) as f:
        pq.write_table(pa.table({field: column}), f)
