"""Releasing many vectors: chunked noise with reproducible per-chunk generators, and the audit.

What ``textdp embed`` does between reading the vectors and writing them, as library functions:
:func:`release_vectors` runs an :class:`~textdp.mechanisms.embedding.EmbeddingMechanism` over an
(N, d) array — possibly memory-mapped — in chunks of :data:`CHUNK_ROWS` rows, and
:func:`audit_projection` measures PrivEmb's projection on the input (Feyisetan & Kasiviswanathan
2021, Lemma 4: the guarantee assumes ‖Φ(x − x′)‖ ≤ (1 + β)‖x − x′‖).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from textdp import _random
from textdp._checks import check_rng, check_seed

__all__ = ["AUDIT_KEY", "CHUNK_ROWS", "audit_projection", "release_rows", "release_vectors"]

#: Rows per noise chunk. With a seed, chunk c draws from ``_random.document_generator(seed, c)``,
#: so the output depends on the seed and the data only (not on how the caller batches them).
CHUNK_ROWS = 4096
#: The position of the audit's pair sampling among the seeded generators, apart from every chunk.
AUDIT_KEY = 2**32


def release_vectors(mechanism: Any, X: np.ndarray, *, seed: int | None = None,
                    rng: np.random.Generator | None = None,
                    progress: Callable[[int], object] | None = None,
                    ledger: Any = None) -> np.ndarray:
    """The private vectors of every row of ``X`` as an (N, k) float64 array.

    Args:
        mechanism: an embedding mechanism (``release(X, rng)``, ``output_dim(d)``).
        X: (N, d) real array without NaN or infinity; read chunk by chunk.
        seed: reproducible run (chunk c uses the generator derived from (seed, c)); for testing
            only. Exclusive with ``rng``.
        rng: the generator of an unseeded run (default: a fresh one from the secure source).
        progress: called with the number of rows done after each chunk.
        ledger: a :class:`textdp.ledger.Ledger` (with its policy and budget): the release of
            ``X`` (fingerprinted as vectors, :mod:`textdp.privacy.fingerprint`) is checked
            against it first (a ``refuse`` policy raises before any noise is drawn) and recorded
            once done, through :func:`textdp.runner.run_release`.
    """
    if ledger is not None:  # the guarded release: the runner calls this again without it
        from textdp.runner import Call, Outcome, Vectors, run_release
        from textdp.spec import VectorSpec

        def engine(spec: Any, source: Any, measurement: Any) -> Any:
            return Outcome(release_vectors(mechanism, source.X, seed=seed, rng=rng,
                                           progress=progress), None)

        X = np.asarray(X) if not isinstance(X, np.ndarray) else X
        return run_release(VectorSpec(mechanism, seed), Vectors(X), Call(engine),
                           ledger=ledger).output
    seed = check_seed(seed)
    if seed is not None and rng is not None:
        raise ValueError("give seed or rng, not both")
    return release_rows(mechanism, X, seed=seed, rng=check_rng(rng) if seed is None else None,
                        progress=progress)


def release_rows(mechanism: Any, X: np.ndarray, *, first: int = 0, n_rows: int | None = None,
                 seed: int | None = None, rng: np.random.Generator | None = None,
                 progress: Callable[[int], object] | None = None) -> np.ndarray:
    """Rows ``first`` … ``first + len(X) − 1`` of an input of ``n_rows`` rows (default: ``X`` is
    the whole input), released exactly as :func:`release_vectors` releases them in the whole
    input: the one place where the seeded chunk streams are laid out, for one process and for
    every distributed engine (a Ray Data batch, a Ray worker's file).

    Seeded, chunk c (the input's rows ``CHUNK_ROWS·c`` …) is drawn in full from
    ``document_generator(seed, c)``; where ``X`` holds only part of a chunk, the chunk's other
    rows are drawn as zeros and dropped (a row's output depends on its own input and the chunk's
    draws only). Unseeded, ``X`` is released in chunks of :data:`CHUNK_ROWS` rows from ``rng``
    (the calling process's generator; required).
    """
    n = X.shape[0]
    n_rows = first + n if n_rows is None else n_rows
    out = np.empty((n, mechanism.output_dim(X.shape[1])), dtype=np.float64)
    if seed is None:
        for a in range(0, n, CHUNK_ROWS):
            b = min(n, a + CHUNK_ROWS)
            out[a:b] = mechanism.release(X[a:b], rng)
            if progress is not None:
                progress(b - a)
        return out
    for c in range(first // CHUNK_ROWS, (first + n - 1) // CHUNK_ROWS + 1) if n else ():
        lo, hi = c * CHUNK_ROWS, min((c + 1) * CHUNK_ROWS, n_rows)  # chunk c, the input's rows
        a, b = max(lo, first), min(hi, first + n)  # the rows of X in it
        if (a, b) == (lo, hi):
            block = X[a - first:b - first]
        else:
            block = np.zeros((hi - lo, X.shape[1]), dtype=np.float64)
            block[a - lo:b - lo] = X[a - first:b - first]
        released = mechanism.release(block, _random.document_generator(seed, c))
        out[a - first:b - first] = released[a - lo:b - lo]
        if progress is not None:
            progress(b - a)
    return out


def audit_projection(mechanism: Any, X: np.ndarray, *, max_pairs: int, seed: int | None = None,
                     rng: np.random.Generator | None = None) -> Any:
    """PrivEmb's :meth:`~textdp.mechanisms.embedding.PrivEmb.audit` of ``X`` on ``max_pairs`` pairs.

    Returns None when there is nothing to audit (not a projection mechanism, ``max_pairs`` 0, or
    fewer than two vectors). A seeded run samples its pairs from the generator at
    :data:`AUDIT_KEY`, apart from the noise. Raises ValueError where the audit cannot run (e.g.
    all vectors identical).
    """
    if not hasattr(mechanism, "audit") or max_pairs <= 0 or X.shape[0] < 2:
        return None
    audit_rng = check_rng(rng) if seed is None else _random.document_generator(seed, AUDIT_KEY)
    return mechanism.audit(X, max_pairs=max_pairs, rng=audit_rng)
