"""Streaming text records: the reader/writer protocol every file format implements.

A *record* is one document plus whatever travels with it (other JSON fields, other CSV or Parquet
columns, the line ending of a text line). A :class:`RecordReader` yields records in
:class:`Batch` es of at most ``batch_size`` documents; the :class:`RecordWriter` it creates
writes the same records back with new texts, in the input's layout. Only one batch is in memory
at a time, so memory is bounded by the batch size, not by the file.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Protocol

__all__ = ["Batch", "DEFAULT_MAX_LINE_BYTES", "ReadOptions", "RecordReader", "RecordWriter",
           "Progress", "max_line_bytes"]

#: How many skipped records a reader lists individually (all are counted).
MAX_LISTED_SKIPS = 1000


#: The longest line a line-based file may hold by default: 64 MiB (a document of ~10 million
#: words). ``TEXTDP_MAX_LINE_BYTES``, ``ReadOptions(max_line_bytes=)`` and ``--max-line-bytes``
#: change it.
DEFAULT_MAX_LINE_BYTES = 64 * 2**20
MAX_LINE_BYTES_ENV = "TEXTDP_MAX_LINE_BYTES"


def check_line_bound(value: object, name: str) -> int:
    """A line-length bound: an integer ≥ 1 (bytes)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number of bytes ≥ 1, got {value!r}")
    return value


def max_line_bytes(options: ReadOptions | None = None) -> int:
    """The line-length bound in force: ``options.max_line_bytes``, else the environment's
    ``TEXTDP_MAX_LINE_BYTES``, else :data:`DEFAULT_MAX_LINE_BYTES`."""
    if options is not None and options.max_line_bytes is not None:
        return options.max_line_bytes
    text = os.environ.get(MAX_LINE_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_LINE_BYTES
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = -1
    return check_line_bound(value if value >= 1 else text, MAX_LINE_BYTES_ENV)


def as_path(path: str | os.PathLike) -> Any:
    """``path`` as a :class:`~pathlib.Path`, except a :class:`~textdp.io.uri.RemoteFile`, which
    stays one (its readers and writers open it through its filesystem)."""
    from textdp.io.uri import RemoteFile

    return path if isinstance(path, RemoteFile) else Path(path)


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read records, beyond the format.

    Attributes:
        text_fields: the fields (JSON: dotted paths such as ``meta.text``; CSV and Parquet: column
            names) holding documents. Each is privatised as its own document.
        scalar_fields: those of ``text_fields`` whose integer or boolean values are read as their
            text (``"3"``, ``"true"``): class labels, as most labelled sets store them (JSON
            numbers, Parquet integer or boolean columns; CSV values are text already). For reading
            (``textdp assess``'s labels): JSON Lines writes such a value back as it was, Parquet
            as text. A float or any other value is still an error.
        delimiter: the field separator of CSV / TSV (default ``,`` for .csv, tab for .tsv).
        on_error: ``"fail"`` — a malformed record stops the run (no output); ``"skip"`` — it is
            left out of the output, counted and listed by line.
        null: ``"error"`` — a null text is an error; ``"pass"`` — it passes through as null.
        max_line_bytes: the longest line (bytes, its ending not counted) a line-based file
            (.txt, .jsonl, .csv, .tsv) may hold; a longer one stops the run in one line, so an
            endless line (``/dev/zero``) cannot fill the memory. None: :func:`max_line_bytes`
            (``TEXTDP_MAX_LINE_BYTES``, else :data:`DEFAULT_MAX_LINE_BYTES`).
    """

    text_fields: tuple[str, ...] = ("text",)
    scalar_fields: tuple[str, ...] = field(default=(), kw_only=True)
    delimiter: str | None = None
    on_error: str = "fail"
    null: str = "error"
    max_line_bytes: int | None = None

    def __post_init__(self) -> None:
        if not self.text_fields or not all(isinstance(f, str) and f for f in self.text_fields):
            raise ValueError("give at least one non-empty text field")
        if len(set(self.text_fields)) != len(self.text_fields):
            raise ValueError(f"a text field is given twice: {list(self.text_fields)}")
        if not set(self.scalar_fields) <= set(self.text_fields):
            raise ValueError(f"scalar fields {list(self.scalar_fields)} must be among the text "
                             f"fields {list(self.text_fields)}")
        if self.on_error not in ("fail", "skip"):
            raise ValueError(f"on_error must be 'fail' or 'skip', got {self.on_error!r}")
        if self.null not in ("error", "pass"):
            raise ValueError(f"null must be 'error' or 'pass', got {self.null!r}")
        if self.max_line_bytes is not None:
            check_line_bound(self.max_line_bytes, "max_line_bytes")
        if self.delimiter is not None and (len(self.delimiter) != 1 or self.delimiter in "\"\r\n"):
            raise ValueError(f"the delimiter must be one character other than a quote or a line "
                             f"break, got {self.delimiter!r}")


@dataclass(slots=True)
class Batch:
    """Consecutive records of one file.

    Attributes:
        texts: the documents, in file order.
        start: the position (0-based, in documents) of ``texts[0]`` in the file.
        progress: how far this batch advanced the reader, in :attr:`RecordReader.unit`.
        payload: format-specific data the writer needs to reproduce the records.
    """

    texts: list[str]
    start: int
    progress: int = 0
    payload: Any = field(default=None, repr=False)
    #: Records the writer writes for this batch (None: one per document).
    records: int | None = None

    @property
    def n_records(self) -> int:
        return len(self.texts) if self.records is None else self.records


class Progress(Protocol):
    """What a progress display needs: ``update(n)`` and ``close()`` (a ``tqdm`` bar fits)."""

    def update(self, n: int) -> Any: ...

    def close(self) -> Any: ...


ProgressFactory = Callable[[int | None, str], Progress]


class RecordReader(ABC):
    """Reads the documents of one file, batch by batch.

    Opening a reader checks what can be checked without reading the records (the file exists and is
    not empty, a CSV header or Parquet schema has the text column); every later problem is raised
    as a :class:`~textdp.io.FileError` naming the line (or row) when the batch holding it is read.
    """

    format: ClassVar[str]

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text",
                 options: ReadOptions | None = None, compression: str | None = None) -> None:
        self.path = as_path(path)
        self.options = options if options is not None else ReadOptions(text_fields=(text_field,))
        self.text_fields = self.options.text_fields
        self.text_field = self.text_fields[0]
        self.compression = compression
        #: Records read and kept (skipped ones are not counted), and the documents they held.
        self.records_read = 0
        self.documents_read = 0
        #: Records left out under ``on_error="skip"``, and the first of them: (unit, number,
        #: problem), the unit being "line" or "row".
        self.records_skipped = 0
        self.skipped: list[tuple[str, int, str]] = []
        #: Texts that were null and passed through under ``null="pass"``.
        self.null_texts = 0

    @property
    def name(self) -> str:
        """The input as messages name it (``<stdin>`` for ``-``)."""
        from textdp.io.streams import display_name

        return display_name(self.path)

    def reject(self, line: int | None, problem: str, *, unit: str = "line") -> None:
        """A malformed record: raise a :class:`FileError`, or count and list it under ``skip``."""
        from textdp.io.errors import FileError

        if self.options.on_error != "skip":
            raise FileError(self.name, line, problem, unit=unit)
        self.records_skipped += 1
        if len(self.skipped) < MAX_LISTED_SKIPS:
            self.skipped.append((unit, line or 0, " ".join(problem.split())))

    #: Total progress units (bytes or rows) if known, for a progress bar.
    total: int | None = None
    #: The unit of :attr:`Batch.progress`: ``"B"`` (bytes) or ``"rows"``.
    unit: str = "B"

    @abstractmethod
    def batches(self, batch_size: int) -> Iterator[Batch]:
        """Yield batches of at most ``batch_size`` documents until the file ends."""

    @abstractmethod
    def writer(self, path: str | os.PathLike, *, compression: str | None = None) -> RecordWriter:
        """A writer for ``path`` that reproduces this file's layout (header, schema, line endings),
        compressed with ``compression`` (see :mod:`textdp.io.streams`)."""

    def stats(self) -> dict[str, Any]:
        """Counts for a report: at least ``records``; formats add what they passed through."""
        return {"records": self.records_read, **self.error_stats()}

    def error_stats(self) -> dict[str, Any]:
        """Skipped records and null texts, for a report (empty when there were none)."""
        out: dict[str, Any] = {}
        if self.options.on_error == "skip":
            out["records_skipped"] = self.records_skipped
            out["skipped"] = [{unit: n, "problem": problem} for unit, n, problem in self.skipped]
        if self.options.null == "pass":
            out["null_texts"] = self.null_texts
        return out

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the file."""

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class RecordWriter(ABC):
    """Writes records back with new texts; one :meth:`write` per batch the reader produced."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = as_path(path)
        self.records_written = 0

    def write(self, batch: Batch, texts: Sequence[str]) -> None:
        """Write ``batch`` with ``texts[i]`` in place of ``batch.texts[i]``.

        Raises:
            ValueError: ``texts`` does not hold exactly one string per document of the batch.
        """
        if len(texts) != len(batch.texts):
            raise ValueError(f"{len(texts)} texts for a batch of {len(batch.texts)} documents")
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"text {i} of the batch is {type(t).__name__}, expected str")
        self._write(batch, texts)
        self.records_written += batch.n_records

    @abstractmethod
    def _write(self, batch: Batch, texts: Sequence[str]) -> None: ...

    @abstractmethod
    def close(self) -> None:
        """Flush and finish the file (a Parquet footer, for example)."""

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
