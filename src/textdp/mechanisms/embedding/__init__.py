"""Embedding release: vectors in, private vectors out (SPEC §3).

* :class:`PrivEmb` — random projection + calibrated noise (Feyisetan & Kasiviswanathan 2021, M2),
  with :meth:`PrivEmb.audit`, strict mode and snapping.
* :class:`LaplaceVector` — the baseline M1: x + noise of density ∝ exp(−ε‖z‖).
"""

from textdp.mechanisms.embedding.privemb import (
    DEFAULT_PROJECTION_SEED,
    AuditResult,
    EmbeddingMechanism,
    LaplaceVector,
    PrivEmb,
    check_vectors,
    default_gaussian_width,
    finite_gaussian_width,
    gordon_delta,
    projected_dimension,
    projection_matrix,
    snap_to_grid,
    spectral_norm_upper,
)

__all__ = [
    "DEFAULT_PROJECTION_SEED", "AuditResult", "EmbeddingMechanism", "LaplaceVector", "PrivEmb",
    "check_vectors", "default_gaussian_width", "finite_gaussian_width", "gordon_delta",
    "projected_dimension", "projection_matrix", "snap_to_grid", "spectral_norm_upper",
]
