"""Truncation baseline for ε-SentDP document embeddings: clip, average, Laplace noise.

Meehan, Mrini & Chaudhuri (ACL 2022, §4 "Motivation", §5.3 and App. A.3 "Truncation"), after
Li & Clifton (2021): every sentence embedding is clipped to a box [a_j, b_j] per dimension — the
central 75% interval of public document embeddings by default — and the clipped embeddings are
averaged. Substituting one of k sentences moves coordinate j of the mean by at most w_j / k
(w_j = b_j − a_j). Two ways to spend ε on the d coordinates, both ε-SentDP for documents of k
sentences (the privacy loss Σ_j (w_j/k)/scale_j is ≤ ε in both):

* ``allocation="l1"`` (default): the Laplace mechanism on the L1 sensitivity (Σ_j w_j)/k, i.e.
  i.i.d. Laplace noise of scale (Σ_j w_j)/(k·ε) on every coordinate;
* ``allocation="per_dimension"``: the paper's App. A.3, Laplace noise of scale d·w_j/(k·ε) on
  coordinate j ("scale factor 768w/(kε), where w is the width of the box on that dimension"),
  i.e. ε/d per coordinate.

They coincide when all widths are equal. Otherwise the L1 allocation adds less noise in total:
its summed variance 2d·(Σ_j w_j)²/(kε)² is at most the paper's 2d²·Σ_j w_j²/(kε)² (Cauchy–Schwarz),
while the paper's keeps every coordinate's noise proportional to its width. Use
``"per_dimension"`` to reproduce the paper's baseline. docs/results/deepcandidate.md runs the
default ``"l1"`` allocation (its Setup says so), a baseline at least as strong as the paper's.

The noise grows with the dimension — the reason the paper finds this baseline close to a random
guess for 768-d SBERT embeddings.

Numerics are idealised: floating-point Laplace sampling is not hardened against the attacks of
Mironov (CCS 2012); treat this as the experimental baseline it is.
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from textdp._checks import EPSILON, Parameter, check_parameters, check_rng
from textdp.mechanisms.document.base import DocumentMechanism
from textdp.mechanisms.document.candidates import fingerprint_array
from textdp.privacy import Guarantee, round_up

__all__ = ["Truncation", "ALLOCATIONS"]

#: How ε is spread over the coordinates (see the module docstring).
ALLOCATIONS = ("l1", "per_dimension")


class Truncation(DocumentMechanism):
    """Clip sentence embeddings to a public box, average, add Laplace noise per dimension.

    Args:
        epsilon: ε > 0 of ε-SentDP.
        lower, upper: (d,) bounds of the box, lower < upper everywhere; fixed from public data
            (see :meth:`from_public`).
        allocation: ``"l1"`` (scale (Σ_j w_j)/(k·ε) on every coordinate) or ``"per_dimension"``
            (scale d·w_j/(k·ε) on coordinate j, SentDP App. A.3).
    """

    name: ClassVar[str] = "truncation"
    PARAMETERS = (
        EPSILON,
        Parameter("allocation", str, "how ε is spread over the coordinates: l1 (scale Σw/(kε) "
                  "everywhere) or per_dimension (d·w_j/(kε), SentDP App. A.3)", default="l1",
                  choices=ALLOCATIONS),
    )

    def __init__(self, lower: np.ndarray, upper: np.ndarray, *, epsilon: float,
                 allocation: str = "l1") -> None:
        params = check_parameters(self.PARAMETERS, {"epsilon": epsilon, "allocation": allocation},
                                  owner=self.name)
        self._epsilon: float = params["epsilon"]
        self._allocation: str = params["allocation"]
        lo = np.array(lower, dtype=np.float64)
        hi = np.array(upper, dtype=np.float64)
        if lo.ndim != 1 or lo.shape != hi.shape or lo.size == 0:
            raise ValueError("lower and upper must be 1-D arrays of the same, non-zero length")
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            raise ValueError("the box bounds must be finite")
        if not (hi > lo).all():
            raise ValueError("the box must have upper > lower in every dimension")
        lo.setflags(write=False)
        hi.setflags(write=False)
        self._lower, self._upper = lo, hi
        # The exact widths w_j = hi_j − lo_j and the numerators of the scales (Σ_j w_j, or d·w_j),
        # kept exact: every scale is rounded up once, from exact arithmetic, so that none falls
        # below its sensitivity (a float sum of d widths can round below the exact sum).
        widths = [Fraction(h) - Fraction(x) for h, x in zip(hi.tolist(), lo.tolist(), strict=True)]
        l1 = sum(widths, Fraction(0))
        self._l1_width = round_up(l1)
        self._exact_units = ([l1] * lo.size if self._allocation == "l1"
                             else [lo.size * w for w in widths])
        self._scales: dict[int, np.ndarray] = {}

    @classmethod
    def from_public(cls, public_embeddings: np.ndarray, *, epsilon: float,
                    coverage: float = 0.75, allocation: str = "l1") -> Truncation:
        """The box of the central ``coverage`` interval of each dimension of public embeddings.

        The paper uses the central 75% of the training (public) *document* embeddings (App. A.3).
        """
        if isinstance(coverage, bool) or not isinstance(coverage, numbers.Real) \
                or not 0 < coverage < 1:
            raise ValueError(f"coverage must lie in (0, 1), got {coverage!r}")
        x = np.asarray(public_embeddings, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 2:
            raise ValueError("public_embeddings must be an (n, d) array with n ≥ 2")
        q = (1 - float(coverage)) / 2
        lo, hi = np.quantile(x, [q, 1 - q], axis=0)
        return cls(lo, hi, epsilon=epsilon, allocation=allocation)

    @property
    def dim(self) -> int:
        return int(self._lower.size)

    @property
    def lower(self) -> np.ndarray:
        return self._lower

    @property
    def upper(self) -> np.ndarray:
        return self._upper

    @property
    def allocation(self) -> str:
        return self._allocation

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self._epsilon, "allocation": self._allocation,
                "dim": int(self._lower.size), "l1_width": self._l1_width}

    @property
    def guarantee(self) -> Guarantee:
        return self._sentdp_guarantee(
            per_word="not per word: the whole substituted sentence is covered (coordinate j of "
                     "the clipped mean moves by at most w_j / k; privacy loss Σ_j (w_j/k)/scale_j "
                     "≤ ε)",
            assumptions=("x and x′ have the same number of sentences k",
                         "the box was fixed from public data only",
                         "idealised floating-point Laplace sampling"),
            reference="Meehan, Mrini & Chaudhuri, ACL 2022, §5.3 and App. A.3 (Truncation); "
                      "Li & Clifton 2021",
        )

    def describe(self) -> dict[str, Any]:
        return {"mechanism": self.name, "parameters": self.parameters,
                "box_fingerprint": fingerprint_array(np.vstack([self._lower, self._upper])),
                "guarantee": self.guarantee.to_dict()}

    def _check(self, sentence_embeddings: np.ndarray) -> np.ndarray:
        s = np.asarray(sentence_embeddings, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] != self._lower.size:
            raise ValueError(f"expected a non-empty (k, {self._lower.size}) array of sentence "
                             f"embeddings, got shape {s.shape}")
        if np.isnan(s).any():
            raise ValueError("sentence embeddings contain NaN")
        return s

    def clipped_mean(self, sentence_embeddings: np.ndarray) -> np.ndarray:
        """The non-private truncated mean (1/k) Σ_l clip(s_l) (for training a classifier)."""
        s = self._check(sentence_embeddings)
        return np.clip(s, self._lower, self._upper).mean(axis=0)

    def noise_scale(self, k: int) -> np.ndarray:
        """The (d,) Laplace scales for a document of k sentences.

        ``"l1"``: (Σ_j w_j)/(k·ε) on every coordinate; ``"per_dimension"``: d·w_j/(k·ε) on
        coordinate j (SentDP App. A.3). Rounded up, never down.
        """
        k = int(k)
        scales = self._scales.get(k)
        if scales is None:  # documents have few distinct sentence counts: computed once each
            denominator = k * Fraction(self._epsilon)
            scales = np.array([round_up(u / denominator) for u in self._exact_units])
            scales.setflags(write=False)
            if len(self._scales) < 1024:
                self._scales[k] = scales
        return scales

    def release(self, sentence_embeddings: np.ndarray,
                rng: np.random.Generator | None = None) -> np.ndarray:
        """The clipped mean plus independent Laplace noise of scale :meth:`noise_scale` (k)."""
        rng = check_rng(rng)
        s = self._check(sentence_embeddings)
        mean = np.clip(s, self._lower, self._upper).mean(axis=0)
        return mean + rng.laplace(0.0, self.noise_scale(s.shape[0]), size=mean.shape)
