"""MVC: multivariate calibrated noise on word embeddings.

Feyisetan, Balle, Drake, Diethe, "Privacy- and Utility-Preserving Textual Analysis via Calibrated
Multivariate Perturbations", WSDM 2020, Algorithm 1: ŵ = argmin_v ‖φ(v) − (φ(w) + z)‖ with z of
density ∝ exp(−ε‖z‖) (radius Gamma(n, 1/ε), uniform direction). Theorem 1: ε·‖φ(w) − φ(w′)‖
metric DP. The nearest-neighbour step is post-processing of the noisy vector, so the exact
search only serves utility and reproducibility; the input word itself is a legal output.
"""

from __future__ import annotations

import numpy as np

from textdp._checks import EPSILON
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors.approximate import NEIGHBORS, search_note, searcher
from textdp.noise import metric_laplace
from textdp.vocab import Vocabulary


@register
class MVC(WordMechanism):
    """Metric-DP word replacement by noisy embedding + exact nearest neighbour (MVC 2020, Alg. 1)."""

    name = "mvc"
    PARAMETERS = (EPSILON, NEIGHBORS)
    reference = "Feyisetan et al., WSDM 2020, Algorithm 1 and Theorem 1"

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 neighbors: str = "exact") -> None:
        super().__init__(vocabulary, epsilon=epsilon, neighbors=neighbors)
        self._nn = searcher(self.vocabulary, self._params)

    @property
    def assumptions(self) -> tuple[str, ...]:
        return super().assumptions + search_note(self)

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return metric_laplace(ids.size, self.vocabulary.dim, self.epsilon, rng, dtype=np.float32)

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        noisy = self.vocabulary.vectors[ids]
        noisy += noise
        return self._nn.query(noisy)
