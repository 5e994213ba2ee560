"""Embedding release: vectors in, private vectors out (SPEC §3).

* :class:`PrivEmb` — random projection + calibrated noise (Feyisetan & Kasiviswanathan 2021, M2),
  with :meth:`PrivEmb.audit`, strict mode and snapping.
* :class:`LaplaceVector` — the baseline M1: x + noise of density ∝ exp(−ε‖z‖).

Modules: :mod:`.base` (the common part: noise, release, snap), :mod:`.projection` (Φ, m and the
explicit-constant δ), :mod:`.laplace_vector` (M1), :mod:`.privemb` (M2 and its audit),
:mod:`.release` (many vectors in chunks, the audit).
"""

from textdp.mechanisms.embedding.base import EmbeddingMechanism, check_vectors, snap_to_grid
from textdp.mechanisms.embedding.laplace_vector import LaplaceVector
from textdp.mechanisms.embedding.privemb import AuditResult, PrivEmb
from textdp.mechanisms.embedding.projection import (
    DEFAULT_PROJECTION_SEED,
    default_gaussian_width,
    finite_gaussian_width,
    gordon_delta,
    projected_dimension,
    projection_matrix,
    spectral_norm_upper,
)

__all__ = [
    "DEFAULT_PROJECTION_SEED", "AuditResult", "EmbeddingMechanism", "LaplaceVector", "PrivEmb",
    "check_vectors", "default_gaussian_width", "finite_gaussian_width", "gordon_delta",
    "projected_dimension", "projection_matrix", "snap_to_grid", "spectral_norm_upper",
]
