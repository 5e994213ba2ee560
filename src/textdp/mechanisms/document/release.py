"""Releasing many documents: one DeepCandidate (or Truncation) draw per document, reproducibly.

What ``textdp docembed`` does between encoding and writing, as a library function. A seeded run
gives document i (0-based, counted from ``start``) its own generator, derived from (seed, i)
alone, so the output does not depend on batching; an unseeded run draws from one generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp import _random
from textdp._checks import check_rng, check_seed
from textdp.mechanisms.document.base import DocumentMechanism

__all__ = ["release_documents"]


def release_documents(mechanism: DocumentMechanism, documents: Sequence[np.ndarray], *,
                      seed: int | None = None, rng: np.random.Generator | None = None,
                      start: int = 0, ledger: Any = None) -> np.ndarray:
    """One private embedding per document: an (n, d) float64 array, row i for ``documents[i]``.

    Args:
        mechanism: a document mechanism (:class:`DeepCandidate`, :class:`Truncation`).
        documents: one (k_i, d) array of sentence embeddings per document.
        seed: reproducible run (document ``start + i`` uses the generator derived from
            (seed, start + i)); for testing only. Exclusive with ``rng``.
        rng: the generator of an unseeded run (default: a fresh one from the secure source).
        start: the position of ``documents[0]`` in the whole corpus (seeded runs).
        ledger: a :class:`textdp.ledger.Ledger` (with its policy and budget): the release is
            checked against it first (``documents`` fingerprinted as sentence-embedding arrays,
            :mod:`textdp.privacy.fingerprint`) and recorded once done. The core opens no file:
            it only calls the ledger's ``release``.
    """
    if ledger is not None:  # the guarded release: the runner calls this again without it
        from textdp.runner import Call, Documents, Outcome, run_release
        from textdp.spec import VectorSpec

        def engine(spec: Any, source: Any, measurement: Any) -> Any:
            return Outcome(release_documents(mechanism, source.documents, seed=seed, rng=rng,
                                             start=start), None)

        return run_release(VectorSpec(mechanism, seed, kind="document", start=start),
                           Documents(documents), Call(engine), ledger=ledger).output
    seed = check_seed(seed)
    if seed is not None and rng is not None:
        raise ValueError("give seed or rng, not both")
    if seed is None and hasattr(mechanism, "release_many"):
        return mechanism.release_many(documents, check_rng(rng))[0]
    shared = check_rng(rng) if seed is None else None
    rows = [_embedding(mechanism.release(doc, shared if seed is None
                                         else _random.document_generator(seed, start + i)))
            for i, doc in enumerate(documents)]
    return np.vstack(rows) if rows else np.zeros((0, mechanism.dim))


def _embedding(released: Any) -> np.ndarray:
    """DeepCandidate releases a :class:`CandidateRelease`, Truncation a vector."""
    return np.asarray(getattr(released, "embedding", released), dtype=np.float64)
