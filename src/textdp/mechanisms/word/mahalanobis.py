"""Mahalanobis: elliptical noise shaped by the embedding covariance, then the nearest word.

Xu, Aggarwal, Feyisetan, Teissier, "A Differentially Private Text Perturbation Method Using a
Regularized Mahalanobis Metric", PrivateNLP @ EMNLP 2020 (SPEC §2.2):

* Σ = covariance of the vocabulary's vectors, scaled so that its trace is n (divided by the mean
  per-dimension variance); Σ_λ = λΣ + (1 − λ)I, λ ∈ [0, 1] (the paper uses λ = 0.2).
* z = r · Σ_λ^{1/2} u with r ~ Gamma(n, 1/ε) and u uniform on the unit sphere — *not*
  re-normalised afterwards; ŵ = argmin_v ‖φ(v) − (φ(w) + z)‖.

Guarantee (the paper's theorem, re-derived here): r·u has density ∝ exp(−ε‖x‖); the linear map
z = Σ_λ^{1/2}(r·u) has density ∝ exp(−ε‖Σ_λ^{−1/2} z‖), so for every noisy point the density
ratio between inputs w and w′ is at most exp(ε‖Σ_λ^{−1/2}(φ(w) − φ(w′))‖) by the triangle
inequality: ε-metric DP in the regularised Mahalanobis norm ‖x‖_R = sqrt(xᵀΣ_λ^{−1}x). The exact
nearest-neighbour step is post-processing. λ = 0 is MVC.

Σ_λ^{1/2} is computed once, by a symmetric eigendecomposition, when the mechanism is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from textdp._checks import EPSILON, Parameter
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors.approximate import NEIGHBORS, search_note, searcher
from textdp.noise import metric_laplace
from textdp.vocab import Vocabulary

__all__ = ["Mahalanobis", "regularized_covariance"]


def regularized_covariance(vectors: np.ndarray, lam: float) -> np.ndarray:
    """Σ_λ = λΣ + (1 − λ)I with Σ the row covariance scaled to trace n (float64, n × n)."""
    e = np.asarray(vectors, dtype=np.float64)
    n = e.shape[1]
    cov = np.atleast_2d(np.cov(e, rowvar=False))
    mean_var = np.trace(cov) / n
    if not mean_var > 0:
        raise ValueError("the vocabulary's vectors have zero variance: Σ cannot be scaled")
    return lam * (cov / mean_var) + (1.0 - lam) * np.eye(n)


@register
class Mahalanobis(WordMechanism):
    """Regularised-Mahalanobis noise + exact nearest neighbour (Xu et al. 2020).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter per unit of the regularised Mahalanobis norm.
        lam: λ ∈ [0, 1], the weight of the covariance in Σ_λ (0 gives MVC's spherical noise).
        neighbors: "exact" (certified) or "approximate" (faiss HNSW, for big vocabularies;
            post-processing, see :mod:`textdp.neighbors.approximate`).
    """

    name = "mahalanobis"
    PARAMETERS = (EPSILON, Parameter(
        "lam", float, "λ, the weight of the covariance in Σ_λ = λΣ + (1 − λ)I (0: MVC's noise)",
        default=0.2, low=0.0, high=1.0), NEIGHBORS)
    reference = ("Xu, Aggarwal, Feyisetan, Teissier, PrivateNLP 2020 (regularised Mahalanobis "
                 "mechanism and its metric-DP theorem); SPEC §2.2")

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 lam: float = 0.2, neighbors: str = "exact") -> None:
        super().__init__(vocabulary, epsilon=epsilon, lam=lam, neighbors=neighbors)
        self._lam: float = self._params["lam"]
        sigma = regularized_covariance(self.vocabulary.vectors, self._lam)
        values, vecs = np.linalg.eigh(sigma)
        if values.min() <= 0:
            raise ValueError(
                "Σ_λ is singular (λ = 1 and the vectors span a proper subspace): the Mahalanobis "
                "norm is undefined; use lam < 1")
        # Symmetric square root and inverse square root, once: z = S u and ‖x‖_R = ‖S⁻¹x‖.
        self._sqrt = (vecs * np.sqrt(values)) @ vecs.T
        self._inv_sqrt = (vecs / np.sqrt(values)) @ vecs.T
        # Rounding of x ↦ Σ_λ^{−1/2}x relative to ‖Σ_λ^{−1/2}x‖ grows with the condition number.
        self._inv_sqrt_cond = float(np.sqrt(values.max() / values.min()))
        # The float inverse root is not the exact inverse of the float root S the sampler uses:
        # its residual ‖I − S·S⁻¹‖ enters the distance's error bound (_distance_error).
        dim = sigma.shape[0]
        self._inverse_residual = float(np.linalg.norm(np.eye(dim) - self._sqrt @ self._inv_sqrt,
                                                      2))
        self._sqrt32 = self._sqrt.astype(np.float32)
        self._nn = searcher(self.vocabulary, self._params)

    @property
    def lam(self) -> float:
        return self._lam

    @property
    def sqrt_covariance(self) -> np.ndarray:
        """Σ_λ^{1/2} (float64, read-only copy)."""
        return self._sqrt.copy()

    def distance(self, a: Any, b: Any) -> np.ndarray:
        """The guarantee's metric ‖φ(a) − φ(b)‖_R = ‖Σ_λ^{−1/2}(φ(a) − φ(b))‖ for word ids."""
        v = self.vocabulary.vectors
        diff = v[np.asarray(a)].astype(np.float64) - v[np.asarray(b)].astype(np.float64)
        return np.linalg.norm(diff @ self._inv_sqrt, axis=-1)

    def _distance_error(self) -> float:
        """A relative bound on how far :meth:`distance` may fall below ‖S⁻¹x‖, S the float root
        the noise is drawn with and S⁻¹ its exact inverse.

        With M the float inverse root, S⁻¹ − M = S⁻¹(I − S·M), so ‖S⁻¹x‖ ≤ ‖Mx‖ + κ·r·‖S⁻¹x‖,
        κ the condition number of S and r = ‖I − S·M‖ (itself computed in floats, to within about
        d·2⁻⁵³·κ); the float evaluation of ‖Mx‖ adds (2d + 3)·2⁻⁵³·κ. The bound doubles r and
        takes 4d + 8 for the rounding terms: the earlier (2d + 3)·2⁻⁵³·κ alone was exceeded by
        up to 1.4 times on random vocabularies (tests/privacy/test_safe_side.py)."""
        kappa = self._inv_sqrt_cond
        return kappa * (2.0 * self._inverse_residual
                        + (4 * self.vocabulary.dim + 8) * 2.0**-53 * kappa)

    @property
    def metric(self) -> str:
        return ("regularised Mahalanobis norm ‖φ(w)−φ(w′)‖_R = sqrt(xᵀ Σ_λ⁻¹ x), "
                f"Σ_λ = {self._lam:g}·Σ + {1 - self._lam:g}·I, Σ the covariance of the "
                f"word vectors of {self.vocabulary.name} scaled to trace {self.vocabulary.dim}")

    @property
    def input_metric(self) -> str:
        # Σ_λ is a function of the vocabulary's vectors and λ alone.
        return f"word-mahalanobis:lam={self._lam!r}:{self.vocabulary.fingerprint}"

    @property
    def per_word(self) -> str:
        return ("Pr[M(w)=y] ≤ exp(ε·‖φ(w)−φ(w′)‖_R)·Pr[M(w′)=y] for all words w, w′ and "
                "outputs y")

    @property
    def assumptions(self) -> tuple[str, ...]:
        return ("Σ is computed from the public embedding matrix only",) + search_note(self)

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # float32 like MVC's noise: the noisy vector is float32 anyway. z = Σ_λ^{1/2}·(r·u) with
        # r·u metric Laplace, deliberately not re-normalised (the norm of S·u carries the
        # ellipse's shape). (S·xᵀ)ᵀ rather than x·S: BLAS handles the wide product far better
        # than the tall-and-skinny one.
        x = metric_laplace(ids.size, self.vocabulary.dim, self.epsilon, rng, dtype=np.float32)
        return np.ascontiguousarray((self._sqrt32 @ x.T).T)

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        noisy = self.vocabulary.vectors[ids]
        noisy += noise
        return self._nn.query(noisy)
