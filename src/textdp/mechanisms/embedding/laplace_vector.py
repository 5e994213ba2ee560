"""The baseline embedding mechanism M1: v = x + N, N of density ∝ exp(−ε‖N‖) in R^d.

Feyisetan, Balle, Drake, Diethe, "Privacy- and Utility-Preserving Textual Analysis via Calibrated
Multivariate Perturbations", WSDM 2020, as used by Feyisetan & Kasiviswanathan, "Private Release
of Text Embedding Vectors", TrustNLP 2021 (§4.1, §5; mechanism M1): pure ε metric DP for every
pair of vectors of R^d (Claim 3 with Δ = 1).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from textdp.mechanisms.embedding.base import NUMERICS, EmbeddingMechanism
from textdp.privacy import Guarantee, Notion

__all__ = ["LaplaceVector"]

M1_REFERENCE = ("Feyisetan, Balle, Drake, Diethe, WSDM 2020 (mechanism M1 of Feyisetan & "
                "Kasiviswanathan 2021, Claim 3 with Δ = 1)")


class LaplaceVector(EmbeddingMechanism):
    """Baseline M1: v = x + N, N ∈ R^d with density ∝ exp(−ε‖N‖); pure ε metric DP.

    Feyisetan et al. (WSDM 2020) as used by Feyisetan & Kasiviswanathan (2021, §4.1, §5): the
    noise norm is Gamma(d, 1/ε), mean d/ε — it grows with the dimension, which PrivEmb avoids.
    Holds for every pair of vectors of R^d, with any d.
    """

    name = "laplace-vector"
    notion = Notion.PURE_LIPSCHITZ

    def __init__(self, *, epsilon: float, snap: int | Literal["auto"] | None = None) -> None:
        super().__init__(epsilon=epsilon, snap=snap)

    @property
    def input_dim(self) -> None:
        return None

    def output_dim(self, dim: int) -> int:
        return dim

    @property
    def sensitivity(self) -> float:
        return 1.0

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self._epsilon, "snap": self._snap_request}

    def _transform_into(self, X: np.ndarray, out: np.ndarray) -> None:
        out[...] = X

    @property
    def guarantee(self) -> Guarantee:
        eps = self._epsilon
        return self._guarantee(
            per_word=(f"per vector: Pr[M(x) ∈ U] ≤ exp({eps:g}·‖x − x′‖)·Pr[M(x′) ∈ U] for all "
                      "x, x′ ∈ R^d"),
            per_document=(f"vectors are released independently: x_1..x_N and x′_1..x′_N are "
                          f"indistinguishable up to exp({eps:g}·Σ_i ‖x_i − x′_i‖); N is released"),
            assumptions=(NUMERICS,) + self._snap_assumption(),
            verified=True,
            reference=M1_REFERENCE,
        )

    def describe(self, dim: int | None = None) -> dict[str, Any]:
        """Everything a privacy report needs about this mechanism (``dim``: the input d, if known)."""
        d = {"name": self.name, "parameters": self.parameters,
             "sensitivity": 1.0,
             "noise": {"density": f"∝ exp(−{self._epsilon:g}‖z‖) in R^d",
                       "radius": f"Gamma(shape=d, scale={self.noise_scale:.6g})",
                       "direction": "uniform on the unit sphere"},
             "guarantee": self.guarantee.to_dict(), "warnings": []}
        if dim is not None:
            d["noise"]["expected_norm"] = self.expected_noise_norm(dim)
            d["snap"] = self._snap_description(dim)
        else:
            d["snap"] = self._snap_description(1) if self.snap_exponent is not None else None
        return d
