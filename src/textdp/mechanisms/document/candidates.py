"""The candidate set F of DeepCandidate: document embeddings of public documents, with a fingerprint.

Meehan, Mrini & Chaudhuri (ACL 2022, §4.1): F = {f_i = g'(x_i)} for m public documents x_i drawn
from the same domain as the private ones, where g'(x) = (1/k) Σ_l H(G(s_l)) is the mean of the
(recoded) sentence embeddings — Eq. (1) with the extended encoder G' = H ∘ G of §4.3. The recoder
H is applied to every sentence *before* averaging, exactly as DeepCandidate treats the private
document's sentences; the candidate set records which recoder it was built with (its fingerprint)
so that a mechanism built with another recoder, or none, refuses it.

F must not depend on the private documents: building it from public data only is what lets the
exponential mechanism over F be ε-SentDP.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from textdp.mechanisms.document._files import save_npz

__all__ = ["CandidateSet", "build_candidates", "fingerprint_array"]

_FORMAT = "textdp.candidates/1"


def fingerprint_array(array: np.ndarray, *extra: str) -> str:
    """sha256 of a float array's shape and little-endian float64 bytes, plus optional strings."""
    a = np.ascontiguousarray(np.asarray(array, dtype="<f8"))
    h = hashlib.sha256()
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())
    for s in extra:
        h.update(b"\x00" + s.encode("utf-8"))
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class CandidateSet:
    """m candidate document embeddings (rows of ``embeddings``) with their ids.

    Attributes:
        embeddings: (m, d) float64, read-only.
        ids: m strings naming the public documents (or sub-documents) the candidates come from.
        encoder: name of the sentence encoder G the candidates were embedded with.
        recoder_fingerprint: fingerprint of the recoder H applied to each sentence before
            averaging, or None when no recoder was used.
        metadata: anything else worth recording (JSON-serialisable).
    """

    embeddings: np.ndarray
    ids: tuple[str, ...]
    encoder: str | None = None
    recoder_fingerprint: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        emb = np.array(self.embeddings, dtype=np.float64, copy=True)
        if emb.ndim != 2 or emb.shape[0] < 1 or emb.shape[1] < 1:
            raise ValueError(f"candidate embeddings must be a non-empty (m, d) array, got shape "
                             f"{emb.shape}")
        if not np.isfinite(emb).all():
            raise ValueError("candidate embeddings contain a non-finite value")
        ids = tuple(str(i) for i in self.ids)
        if len(ids) != emb.shape[0]:
            raise ValueError(f"{len(ids)} ids for {emb.shape[0]} candidates")
        emb.setflags(write=False)
        object.__setattr__(self, "embeddings", emb)
        object.__setattr__(self, "ids", ids)

    def __len__(self) -> int:
        return self.embeddings.shape[0]

    @property
    def dim(self) -> int:
        return self.embeddings.shape[1]

    @property
    def fingerprint(self) -> str:
        """sha256 over the embeddings, the ids, the encoder name and the recoder fingerprint."""
        return fingerprint_array(self.embeddings, "\x1f".join(self.ids), self.encoder or "",
                                 self.recoder_fingerprint or "")

    def describe(self) -> dict[str, Any]:
        return {"size": len(self), "dim": self.dim, "encoder": self.encoder,
                "recoder_fingerprint": self.recoder_fingerprint, "fingerprint": self.fingerprint}

    def save(self, path: str | os.PathLike) -> Path:
        """Write an ``.npz`` (embeddings, ids, metadata with the fingerprint), atomically."""
        meta = {"format": _FORMAT, "encoder": self.encoder,
                "recoder_fingerprint": self.recoder_fingerprint, "metadata": self.metadata,
                "fingerprint": self.fingerprint}
        return save_npz(path, meta, embeddings=self.embeddings, ids=np.array(self.ids, dtype=str))

    @classmethod
    def load(cls, path: str | os.PathLike) -> CandidateSet:
        """Read a file written by :meth:`save` and verify its fingerprint.

        Raises:
            ValueError: not a candidate file, or its content does not match its fingerprint.
        """
        try:
            with np.load(path, allow_pickle=False) as z:
                emb, ids, meta = z["embeddings"], z["ids"].tolist(), json.loads(str(z["meta"]))
        except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile,
                zlib.error) as exc:  # TypeError: a .npy array is no archive
            if isinstance(exc, FileNotFoundError):
                raise
            raise ValueError(f"{path}: not a textdp candidate file ({exc})") from None
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a textdp candidate file (format {meta.get('format')!r})")
        out = cls(emb, ids, meta.get("encoder"), meta.get("recoder_fingerprint"),
                  meta.get("metadata") or {})
        if out.fingerprint != meta.get("fingerprint"):
            raise ValueError(f"{path}: content does not match its fingerprint (corrupt or edited)")
        return out


def build_candidates(sentence_embeddings: Sequence[np.ndarray], ids: Sequence[str] | None = None,
                     *, recoder: Any = None, encoder: str | None = None,
                     metadata: dict[str, Any] | None = None) -> CandidateSet:
    """Candidates f = mean_l H(G(s_l)) of public documents (Meehan et al. 2022, §4.1 and §4.3).

    Args:
        sentence_embeddings: one (k_i, d) array of sentence embeddings G(s) per public document.
        ids: a name per document (default ``"0"``, ``"1"``, …).
        recoder: H, a callable (n, d) → (n, d') (e.g. :class:`~textdp.mechanisms.document.Recoder`)
            applied to every sentence before averaging; None for none. Its ``fingerprint`` is
            recorded when it has one.
        encoder: the name of G, recorded.
    """
    if ids is None:
        ids = [str(i) for i in range(len(sentence_embeddings))]
    if len(ids) != len(sentence_embeddings):
        raise ValueError(f"{len(ids)} ids for {len(sentence_embeddings)} documents")
    docs = []
    for i, s in enumerate(sentence_embeddings):
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] == 0:
            raise ValueError(f"document {ids[i]!r}: expected a non-empty (k, d) array of sentence "
                             f"embeddings, got shape {s.shape}")
        docs.append(s)
    if not docs:
        raise ValueError("no public documents to build candidates from")
    counts = np.array([s.shape[0] for s in docs])
    flat = np.vstack(docs)
    if recoder is not None:  # H on every sentence (one batched pass), then the mean
        flat = np.asarray(recoder(flat), dtype=np.float64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rows = np.add.reduceat(flat, starts, axis=0) / counts[:, None]
    fp = getattr(recoder, "fingerprint", None) if recoder is not None else None
    if recoder is not None and fp is None:
        fp = "unfingerprinted:" + getattr(recoder, "__qualname__", type(recoder).__qualname__)
    return CandidateSet(np.vstack(rows), tuple(ids), encoder, fp, dict(metadata or {}))
