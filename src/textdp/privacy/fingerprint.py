"""The input fingerprint a ledger records: sha256 over the released values, in order.

Pure hashing, no files. The encoding (``textdp.input/1``) is unambiguous — no two different
sequences of values give the same bytes — because every value carries its length:

* **texts** (``textdp privatize``, ``textdp embed --encode``, ``textdp docembed``,
  :func:`textdp.privatize`): ``b"textdp.input/1 texts\\n"``, then for each text in order its
  UTF-8 bytes (lone surrogates as ``surrogatepass`` writes them) preceded by their length as an
  8-byte big-endian unsigned integer;
* **vectors** (``textdp embed`` of .npy/.parquet, :func:`release_vectors`):
  ``b"textdp.input/1 vectors\\n"``, the row count n and the dimension d (8 bytes big-endian each),
  then the values as little-endian float64 in row-major order (the values, whatever dtype they
  were stored in);
* **documents** (:func:`release_documents` of sentence-embedding arrays):
  ``b"textdp.input/1 documents\\n"``, then per document its sentence count k and dimension d
  (8 bytes big-endian each) and its k·d values as little-endian float64, row-major.

The fingerprint identifies an input; it is not a secret and does not hide it (anyone holding a
candidate input can recompute it: docs/accounting.md).

:meth:`InputHash.hexdigest` also carries the input's documents (:class:`Digest`, a ``str`` with a
``documents`` attribute: :class:`textdp.privacy.documents.DocumentRecords`), so a ledger given a
fingerprint computed here composes budgets per document (docs/accounting.md, "Per document").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import numpy as np

from textdp.privacy.documents import DocumentRecords

__all__ = ["ENCODING", "Digest", "InputHash", "fingerprint_documents", "fingerprint_texts",
           "fingerprint_vectors"]

#: The name of the encoding, recorded next to every fingerprint.
ENCODING = "textdp.input/1"
_ROWS_PER_BLOCK = 8192


def _u64(n: int) -> bytes:
    return int(n).to_bytes(8, "big")


class Digest(str):
    """A fingerprint (64 hex digits) that also carries the input's documents (None: not kept):
    what :meth:`textdp.ledger.Ledger.release` composes per document. Compares, hashes and
    serialises as the plain string."""

    documents: DocumentRecords | None

    def __new__(cls, value: str, documents: DocumentRecords | None = None) -> Digest:
        obj = super().__new__(cls, value)
        obj.documents = documents
        return obj


class InputHash:
    """An incremental fingerprint of one kind of input (``texts``, ``vectors``, ``documents``).

    Feed values in order with :meth:`texts`, :meth:`vectors` (all at once: the header holds the
    shape) or :meth:`document`; :attr:`count` is the number of values fed, :meth:`hexdigest` the
    fingerprint. With ``documents`` (default) it also keeps each document's digest and size for
    per-document accounting (:mod:`textdp.privacy.documents`; 20 bytes a document, in memory).
    """

    def __init__(self, kind: str, *, documents: bool = True) -> None:
        if kind not in ("texts", "vectors", "documents"):
            raise ValueError(f"unknown input kind {kind!r}")
        self.kind = kind
        self.count = 0
        self._h = hashlib.sha256(f"{ENCODING} {kind}\n".encode("ascii"))
        self.documents = DocumentRecords(kind) if documents else None

    def texts(self, texts: Iterable[str]) -> InputHash:
        """Feed texts, in order (length-prefixed UTF-8)."""
        if self.kind != "texts":
            raise ValueError("texts fed to a fingerprint of another kind")
        update, docs = self._h.update, self.documents
        seen: list[str] = []
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"a released value must be a string, got {type(text).__name__}")
            data = text.encode("utf-8", "surrogatepass")
            update(_u64(len(data)))
            update(data)
            self.count += 1
            if docs is not None:
                seen.append(text)
        if seen:
            docs.texts(seen)  # one split for the batch
        return self

    def vectors(self, X: Any) -> InputHash:
        """Feed an (n, d) array of vectors (once: its shape is part of the header)."""
        if self.kind != "vectors" or self.count:
            raise ValueError("vectors are fed once, to a fingerprint of kind 'vectors'")
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError("vectors must be a 2-D array")
        self._h.update(_u64(X.shape[0]) + _u64(X.shape[1]))
        for start in range(0, X.shape[0], _ROWS_PER_BLOCK):  # blocks: X may be memory-mapped
            block = np.ascontiguousarray(X[start:start + _ROWS_PER_BLOCK], dtype="<f8")
            self._h.update(block.tobytes())
            self._rows(block)
        self.count = int(X.shape[0])
        return self

    def vector_blocks(self, n: int, d: int, blocks: Iterable[Any]) -> InputHash:
        """Feed n vectors of dimension d given as consecutive (k, d) blocks (several files read
        one after the other): the same fingerprint as :meth:`vectors` of their concatenation,
        without holding it. Raises ValueError if the blocks do not hold n rows of d values."""
        if self.kind != "vectors" or self.count:
            raise ValueError("vectors are fed once, to a fingerprint of kind 'vectors'")
        self._h.update(_u64(n) + _u64(d))
        rows = 0
        for block in blocks:
            B = np.asarray(block)
            if B.ndim != 2 or B.shape[1] != d:
                raise ValueError(f"a block of shape {B.shape}, expected (k, {d})")
            for start in range(0, B.shape[0], _ROWS_PER_BLOCK):
                part = np.ascontiguousarray(B[start:start + _ROWS_PER_BLOCK], dtype="<f8")
                self._h.update(part.tobytes())
                self._rows(part)
            rows += B.shape[0]
        if rows != n:
            raise ValueError(f"{rows} vectors fed, {n} announced")
        self.count = int(n)
        return self

    def document(self, sentences: Any) -> InputHash:
        """Feed one document's (k, d) sentence embeddings."""
        if self.kind != "documents":
            raise ValueError("a document fed to a fingerprint of another kind")
        D = np.asarray(sentences)
        if D.ndim != 2:
            raise ValueError("a document must be a 2-D array of sentence embeddings")
        self._h.update(_u64(D.shape[0]) + _u64(D.shape[1]))
        values = np.ascontiguousarray(D, dtype="<f8").tobytes()
        self._h.update(values)
        if self.documents is not None and D.shape[0]:  # a document of no sentence spends nothing
            self.documents.add(_u64(D.shape[0]) + _u64(D.shape[1]) + values, D.shape[0])
        self.count += 1
        return self

    def _rows(self, block: np.ndarray) -> None:
        """Each vector is one document of size 1 (its values, as hashed)."""
        if self.documents is not None:
            for row in block:
                self.documents.add(row.tobytes(), 1)

    def hexdigest(self) -> Digest:
        return Digest(self._h.hexdigest(), self.documents)


def fingerprint_texts(texts: Iterable[str]) -> tuple[str, int]:
    """(fingerprint, count) of texts in order."""
    h = InputHash("texts").texts(texts)
    return h.hexdigest(), h.count


def fingerprint_vectors(X: Any) -> tuple[str, int]:
    """(fingerprint, rows) of an (n, d) array."""
    h = InputHash("vectors").vectors(X)
    return h.hexdigest(), h.count


def fingerprint_documents(documents: Iterable[Any]) -> tuple[str, int]:
    """(fingerprint, count) of documents given as (k, d) sentence-embedding arrays."""
    h = InputHash("documents")
    for doc in documents:
        h.document(doc)
    return h.hexdigest(), h.count
