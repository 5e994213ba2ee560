"""Files in, files out: streaming readers and writers of text records, and atomic output.

Nothing here knows about mechanisms or the command line; the CLI, the Python API and later
commands (embeddings, calibration, evaluation) share it.

* :func:`open_records` — a :class:`RecordReader` for ``.txt`` (one document per line), ``.jsonl``,
  ``.csv``, ``.tsv`` or ``.parquet``, chosen by extension (``.gz`` / ``.zst`` compression by a
  further extension, :mod:`textdp.io.streams`) or named for ``-`` (standard input); it yields
  batches and creates a writer that reproduces the input's layout with new texts.
* :class:`ReadOptions` — several text fields, nested JSON fields, the CSV delimiter, skipping
  malformed records, passing null texts through.
* :func:`map_text_file` — read, transform batch by batch, write atomically: N records in, N out.
* :class:`AtomicFiles`, :func:`atomic_write_json` — outputs that appear complete or not at all.
* :class:`FileError` — every problem with a user's file, as one line naming file and line.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textdp.io.atomic import AtomicFiles, atomic_write_bytes, atomic_write_json, write_errors_name
from textdp.io.errors import FileError
from textdp.io.paths import check_distinct, check_target, is_stream, output_kind
from textdp.io.records import Batch, Progress, ReadOptions, RecordReader, RecordWriter
from textdp.io.streams import STDIO, compression_of, display_name, is_stdio, strip_compression
from textdp.io.uri import RemoteFile, check_remote_input

__all__ = [
    "FORMATS", "STDIO", "AtomicFiles", "Batch", "FileError", "Progress", "ReadOptions",
    "RecordReader", "RecordWriter", "RemoteFile", "atomic_write_bytes", "atomic_write_json", "check_input",
    "check_distinct", "check_output", "check_target", "format_of", "is_stream", "map_text_file",
    "open_records", "reader_class",
]

#: Supported formats: name → its reader class as ``"module:Class"``, imported when first used
#: (pyarrow alone costs ~0.1 s of every command's start). The writer is created by the reader.
FORMATS: dict[str, str] = {
    "txt": "textdp.io.txt:TextLinesReader",
    "jsonl": "textdp.io.jsonl:JsonLinesReader",
    "csv": "textdp.io.delimited:CsvReader",
    "tsv": "textdp.io.delimited:TsvReader",
    "parquet": "textdp.io.parquet:ParquetReader",
}


def reader_class(format: str) -> type[RecordReader]:
    """The reader class of a format name of :data:`FORMATS`."""
    module, name = FORMATS[format].split(":")
    return getattr(importlib.import_module(module), name)

_EXTENSIONS = {".txt": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
               ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def format_of(path: str | os.PathLike, format: str | None = None) -> str:
    """The format of ``path``: ``format`` if given, else from the extension (case-insensitive),
    under a ``.gz`` / ``.zst`` compression extension (``x.jsonl.gz`` is JSON Lines).

    Raises:
        FileError: ``format`` is not a known format; ``path`` is ``-`` and no ``format`` is given;
            the extension is not one of .txt, .jsonl (.ndjson), .csv, .tsv, .parquet (.pq).
    """
    if format is not None:
        if format not in FORMATS:
            raise FileError(display_name(path), None,
                            f"unknown format {format!r} (use one of {', '.join(FORMATS)})")
        return format
    if is_stdio(path):
        raise FileError(display_name(path), None,
                        f"give the format of standard input/output with --format "
                        f"({', '.join(FORMATS)})")
    suffix = Path(strip_compression(path)).suffix.lower()
    try:
        return _EXTENSIONS[suffix]
    except KeyError:
        known = ", ".join(_EXTENSIONS)
        what = f"extension {suffix!r}" if suffix else "no extension"
        raise FileError(path, None, f"unsupported file type ({what}; use one of {known}, "
                                    "optionally followed by .gz or .zst)") from None


def check_input(path: str | os.PathLike, format: str | None = None) -> str:
    """Check, without reading it, that ``path`` is a non-empty file of a supported format
    (``-``, standard input, needs ``format``).

    A FIFO or a character device (``<(cmd)``, ``/dev/stdin``) is read once, as it comes, like
    standard input (Parquet, read from its end, is read into memory first); its size is unknown
    until read: an empty one is refused when read (:func:`textdp.io.streams.open_input`).

    Returns:
        the format name.

    Raises:
        FileError: no such file, a directory, an empty (0-byte) file, a socket or block device,
            or an unsupported extension.
    """
    fmt = format_of(path, format)
    if is_stdio(path):
        return fmt
    if isinstance(path, RemoteFile):
        check_remote_input(path, fmt, compression_of(path))
        return fmt
    if fmt == "parquet" and compression_of(path):
        raise FileError(path, None, "a Parquet file is compressed inside; drop the "
                                    f"{Path(path).suffix} extension")
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileError(path, None, "no such file") from None
    except OSError as exc:
        raise FileError(path, None, exc.strerror or str(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileError(path, None, "is a directory, expected a file")
    if is_stream(path):
        return fmt
    if not stat.S_ISREG(st.st_mode):
        raise FileError(path, None, "is a socket or block device, expected a file")
    if st.st_size == 0:
        raise FileError(path, None, "empty file (0 bytes)")
    return fmt


def directory_inputs(directory: str | os.PathLike, format: str | None = None,
                     check: Callable[[Any, str | None], object] | None = None) -> list[Path]:
    """The files of ``directory`` as inputs, in name order: exactly the files
    :func:`check_input` accepts (the local engine's rules: .txt, .jsonl / .ndjson, .csv, .tsv,
    .parquet / .pq in any case, under .gz / .zst; any name with ``format``), or those
    ``check(file, format)`` accepts (another command's inputs, e.g. vector files).

    Names starting with a dot are hidden files, not inputs. Every other entry must be an input:
    one that is not (another extension, a subdirectory, an empty file) is an error naming it,
    so that no file is silently left out of a corpus.

    Raises:
        FileError: an entry that is not an input file, or no input file at all.
    """
    directory = Path(directory)
    files = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    for f in files:
        try:
            (check or check_input)(f, format)
        except FileError as exc:
            raise FileError(f, None, f"{exc.problem} (an input directory must hold input "
                                     "files only; names starting with '.' are ignored)") from None
    if not files:
        raise FileError(directory, None, "has no file to read" + (
            "" if check not in (None, check_input) else f" (supported extensions: {', '.join(_EXTENSIONS)})"))
    return files


def check_output(path: str | os.PathLike, input_path: str | os.PathLike | None = None,
                 format: str | None = None) -> str:
    """Check, without writing, that ``path`` can receive the output of ``input_path``.

    The output must have the input's format (a record layout can only be reproduced in its own
    format; its compression may differ), must not be the input itself (compared as files:
    :func:`textdp.io.paths.check_distinct`), and its directory must exist. ``-`` is standard
    output, in the input's format (or ``format``). A FIFO or character device is written to
    directly, a symbolic link's target is replaced (:mod:`textdp.io.atomic`).

    Returns:
        the format name.

    Raises:
        FileError: an unsupported or different extension, the input's own file, a directory, a
            socket or block device, or a missing parent directory.
    """
    in_fmt = format_of(input_path, format) if input_path is not None else None
    if is_stdio(path):
        fmt = format_of(path, format or in_fmt)
    else:
        fmt = format_of(path, format)
    if in_fmt is not None and fmt != in_fmt:
        raise FileError(path, None,
                        f"output format {fmt} differs from the input's ({in_fmt}); "
                        f"give the output the input's extension")
    if is_stdio(path):
        return fmt
    if fmt == "parquet" and compression_of(path):
        raise FileError(path, None, "a Parquet file is compressed inside; drop the "
                                    f"{Path(path).suffix} extension")
    if isinstance(path, RemoteFile):  # an object store: the caller stages it (RemoteStaging)
        if path == input_path:
            raise FileError(path, None, "the output would overwrite the input; give the output "
                                        "its own name")
        return fmt
    check_distinct({"input": input_path}, {"output": path})
    output_kind(path, "output")
    return fmt


def open_records(path: str | os.PathLike, *, text_field: str = "text", format: str | None = None,
                 options: ReadOptions | None = None) -> RecordReader:
    """Open ``path`` for reading documents batch by batch (format by extension, or ``format``;
    ``-`` is standard input; ``.gz`` / ``.zst`` are decompressed).

    ``text_field`` names the JSON field, CSV column or Parquet column holding the document; it is
    ignored for ``.txt``. ``options`` (several fields, delimiter, skipping, nulls) replaces it when
    given. Opening checks the file (exists, not empty) and, for CSV and Parquet, the header or
    schema; problems with records are raised while reading, naming the line (or row).

    Raises:
        FileError: anything wrong with the file, as one line.
    """
    fmt = check_input(path, format)
    options = options if options is not None else ReadOptions(text_fields=(text_field,))
    try:
        return reader_class(fmt)(path, options=options, compression=compression_of(path))
    except PermissionError:
        raise FileError(path, None, "permission denied") from None
    except ValueError as exc:  # options that do not fit the file (a field inside another)
        if isinstance(exc, FileError):
            raise
        raise FileError(display_name(path), None, str(exc)) from None


def map_text_file(
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    transform: Callable[[list[str], int], Sequence[str]],
    *,
    text_field: str = "text",
    batch_size: int = 2048,
    progress: Callable[[int | None, str], Progress] | None = None,
    files: AtomicFiles | None = None,
    format: str | None = None,
    options: ReadOptions | None = None,
) -> dict[str, Any]:
    """Rewrite the documents of ``input_path`` into ``output_path``, batch by batch.

    ``transform(texts, start)`` receives about ``batch_size`` documents (a record's documents
    stay in one batch) and the position of the first among all documents, and returns one string
    per document. Everything else in each record passes through (see the format modules for
    exactly what is preserved). ``-`` is standard input / output (see :func:`open_records` and
    :func:`check_output` for ``format``, ``options`` and compression). Either path may be a
    :class:`~textdp.io.uri.RemoteFile` (``s3://…``, read and written through its pyarrow
    filesystem, with the same readers and writers: the same bytes); a remote output is written
    in place and deleted on any error (``files`` does not apply to it).

    Guarantees: N records in → N records out, in order (less the malformed ones under
    ``options.on_error="skip"``, which are counted and listed); at most one batch of records in
    memory; the output appears complete or not at all — with ``files`` it is staged in that
    :class:`AtomicFiles` group (and appears when the group commits), otherwise it is committed
    before returning, and on any error no output file is left behind.

    Args:
        progress: ``progress(total, unit)`` → an object with ``update(n)`` and ``close()``
            (e.g. ``functools.partial(tqdm, ...)`` adapted to those two arguments).

    Returns:
        ``{"input", "output", "format", "records_in", "records_out", ...}`` plus format-specific
        counts (blank lines passed through, columns), the compression of either side if any, and
        under the options, ``records_skipped`` / ``skipped`` and ``null_texts``.

    Raises:
        FileError: the input or output path is unusable, a record is malformed, or writing fails
            (a full disk: the message names ``output_path``, not the temporary file).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    fmt = check_output(output_path, input_path, format)
    # A file on a pyarrow filesystem is written in place, and removed on any error (on an
    # object store an object appears only when complete; a job stages its objects apart).
    remote = isinstance(output_path, RemoteFile)
    own = files is None and not remote
    group = AtomicFiles() if own else files
    try:
        with open_records(input_path, text_field=text_field, format=fmt, options=options
                          ) as reader:
            target = output_path if remote else group.path_for(output_path)
            writer = _copy(reader, target, transform, batch_size, progress,
                           compression_of(output_path), output_path)
            stats = reader.stats()
        if writer.records_written != reader.records_read:  # pragma: no cover - a writer bug
            raise RuntimeError(f"{reader.records_read} records read but "
                               f"{writer.records_written} written")
    except BaseException:
        if own:
            group.abort()
        if remote:
            output_path.delete()
        raise
    if own:
        group.commit()
    records = stats.pop("records")
    summary = {"input": os.fspath(input_path), "output": os.fspath(output_path), "format": fmt,
               "records_in": records + stats.get("records_skipped", 0),
               "records_out": writer.records_written, **stats}
    if len(reader.text_fields) > 1 and fmt != "txt":
        summary["text_fields"] = list(reader.text_fields)
        summary["documents"] = reader.documents_read
    for side, path in (("input", input_path), ("output", output_path)):
        if compression_of(path):
            summary[f"{side}_compression"] = compression_of(path)
    return summary


def _copy(reader: RecordReader, tmp: Path, transform: Callable[[list[str], int], Sequence[str]],
          batch_size: int, progress: Callable[[int | None, str], Progress] | None,
          compression: str | None, target: str | os.PathLike | None = None) -> RecordWriter:
    """Read, transform and write every batch of ``reader`` into ``tmp``; returns the writer.
    A failed write (a full disk) names ``target``, the file the user gave."""
    name = display_name(target if target is not None else tmp, output=True)
    bar = progress(reader.total, reader.unit) if progress is not None else None
    try:
        with write_errors_name(name):
            writer = reader.writer(tmp, compression=compression)
        try:
            for batch in reader.batches(batch_size):
                texts = transform(batch.texts, batch.start)
                with write_errors_name(name):
                    writer.write(batch, texts)
                if bar is not None:
                    bar.update(batch.progress)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.close()
            raise
        with write_errors_name(name):
            writer.close()
    finally:
        if bar is not None:
            bar.close()
    return writer
