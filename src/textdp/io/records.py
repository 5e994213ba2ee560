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

__all__ = ["Batch", "RecordReader", "RecordWriter", "Progress"]


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

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        self.path = Path(path)
        self.text_field = text_field
        self.records_read = 0

    #: Total progress units (bytes or rows) if known, for a progress bar.
    total: int | None = None
    #: The unit of :attr:`Batch.progress`: ``"B"`` (bytes) or ``"rows"``.
    unit: str = "B"

    @abstractmethod
    def batches(self, batch_size: int) -> Iterator[Batch]:
        """Yield batches of at most ``batch_size`` documents until the file ends."""

    @abstractmethod
    def writer(self, path: str | os.PathLike) -> RecordWriter:
        """A writer for ``path`` that reproduces this file's layout (header, schema, line endings)."""

    def stats(self) -> dict[str, Any]:
        """Counts for a report: at least ``records``; formats add what they passed through."""
        return {"records": self.records_read}

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
        self.path = Path(path)
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
        self.records_written += len(texts)

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
