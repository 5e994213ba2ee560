"""Private release of embedding vectors: PrivEmb (M2), with its audit.

Feyisetan & Kasiviswanathan, "Private Release of Text Embedding Vectors", TrustNLP 2021
(``papers/privemb_feyisetan_kasiviswanathan_2021.md``; SPEC §3).

* **M2**, :class:`PrivEmb` — Algorithm 1: w = Φx + κ, Φ ∈ R^{m×d} with i.i.d. N(0, 1/m) entries
  drawn once from a public seed, κ of density ∝ exp(−ε‖κ‖/(1+β)) in R^m (Claim 3 with Δ = 1+β),
  m = ⌈(ω + √ln(1/δ))²/β²⌉ (Lemma 4 with the Ω(·) constant set to 1, as the paper does).
* **M1**, the baseline :class:`~textdp.mechanisms.embedding.laplace_vector.LaplaceVector` of
  Feyisetan et al. (WSDM 2020): v = x + N with N of density ∝ exp(−ε‖N‖) in R^d. Pure ε metric DP
  for every pair of vectors of R^d (Claim 3 with Δ = 1).

What textdp adds (SPEC §3 "worth doing that the paper does not"):

* an explicit-constant δ (:func:`~textdp.mechanisms.embedding.projection.gordon_delta`; the
  projection, its dimension and the bound are in :mod:`textdp.mechanisms.embedding.projection`);
* :meth:`PrivEmb.audit` — the projection's empirical Lipschitz constant on the user's own vectors.
* ``strict=True`` — sensitivity = ‖Φ‖₂ (rounded up), which bounds ‖Φ(x − x′)‖/‖x − x′‖ for *every*
  pair of R^d: pure ε, δ = 0, no assumption on the data, more noise.
* ``snap`` — released coordinates rounded to multiples of 2^k (Mironov, CCS 2012, against
  floating-point attacks on released reals; :mod:`textdp.mechanisms.embedding.base`).

All guarantees are for the idealised real-valued mechanism (OpenDP's "idealized numerics"):
the float64 arithmetic of Φx and of the sampler is not covered by a proof.

This module also re-exports the names that lived here before the split (the common part, the
projection and M1), so ``from textdp.mechanisms.embedding.privemb import …`` keeps working.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from textdp._checks import DELTA, EPSILON, Parameter, check_rng
from textdp.mechanisms.embedding.base import (
    NUMERICS,
    SNAP,
    EmbeddingMechanism,
    _round_up,
    check_vectors,
    snap_to_grid,
)
from textdp.mechanisms.embedding.laplace_vector import LaplaceVector
from textdp.mechanisms.embedding.projection import (
    BETA,
    DEFAULT_PROJECTION_SEED,
    DIM,
    GAUSSIAN_WIDTH,
    PROJECTION_SEED,
    default_gaussian_width,
    finite_gaussian_width,
    gordon_delta,
    matrix_fingerprint,
    projected_dimension,
    projection_matrix,
    spectral_norm_upper,
)
from textdp.privacy import Guarantee, Notion

__all__ = [
    "DEFAULT_PROJECTION_SEED", "AuditResult", "EmbeddingMechanism", "LaplaceVector", "PrivEmb",
    "check_vectors", "default_gaussian_width", "finite_gaussian_width", "gordon_delta",
    "projected_dimension", "projection_matrix", "snap_to_grid", "spectral_norm_upper",
]

REFERENCE = ("Feyisetan & Kasiviswanathan, Private Release of Text Embedding Vectors, TrustNLP 2021: "
             "Algorithm 1, Claim 3, Lemma 4, Proposition 5")


# --- audit ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AuditResult:
    """The projection's empirical Lipschitz constant on a set of vectors (see :meth:`PrivEmb.audit`).

    Attributes:
        n_points: vectors audited.
        n_pairs: pairs evaluated (pairs of identical vectors are skipped: the ratio is undefined).
        exhaustive: True when every pair of the N vectors was evaluated, False when sampled.
        n_identical: pairs skipped because the two vectors are equal.
        max_ratio: max ‖Φ(x − x′)‖/‖x − x′‖ over the pairs (the empirical Lipschitz constant).
        min_ratio: the smallest ratio (contraction; matters for utility, not privacy).
        quantiles: ratio quantiles {"0.5", "0.99", "0.999"}.
        bound: the sensitivity the noise is calibrated to (1 + β, or ‖Φ‖₂ in strict mode).
        count_above: pairs whose ratio exceeds ``bound``.
        fraction_above: ``count_above / n_pairs``.
        fraction_below_1_minus_beta: pairs contracted below 1 − β (utility side of Lemma 4).
        spectral_norm: ‖Φ‖₂, the worst ratio over all of R^d.
        passed: ``count_above == 0``.
    """

    n_points: int
    n_pairs: int
    exhaustive: bool
    n_identical: int
    max_ratio: float
    min_ratio: float
    quantiles: dict[str, float]
    bound: float
    count_above: int
    fraction_above: float
    fraction_below_1_minus_beta: float
    spectral_norm: float
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["note"] = ("computed from the raw input vectors: it is not privatised, keep it with the "
                     "data owner. Evidence about these pairs only, not a proof for the whole input "
                     "domain.")
        return d

    def summary(self) -> str:
        pairs = f"all {self.n_pairs:,} pairs" if self.exhaustive else f"{self.n_pairs:,} sampled pairs"
        verdict = "within" if self.passed else "ABOVE"
        return (f"audit: max ‖Φ(x−x′)‖/‖x−x′‖ = {self.max_ratio:.4f} over {pairs}, "
                f"{verdict} the bound {self.bound:.4f} "
                f"({self.count_above:,} pairs above, fraction {self.fraction_above:.2e}); "
                f"‖Φ‖₂ = {self.spectral_norm:.4f}")


def _pair_ratios(X: np.ndarray, phi: np.ndarray, i: np.ndarray, j: np.ndarray,
                 block: int = 8192) -> tuple[np.ndarray, int]:
    out = []
    identical = 0
    for s in range(0, i.size, block):
        diff = X[i[s:s + block]] - X[j[s:s + block]]
        nx = np.linalg.norm(diff, axis=1)
        keep = nx > 0
        identical += int((~keep).sum())
        ny = np.linalg.norm(diff[keep] @ phi.T, axis=1)
        out.append(ny / nx[keep])
    return (np.concatenate(out) if out else np.empty(0)), identical


# --- the mechanism ----------------------------------------------------------------------------

class PrivEmb(EmbeddingMechanism):
    """PrivEmb (M2): w = Φx + κ in R^m, (ε, δ)-Lipschitz private (Algorithm 1, Proposition 5).

    Args:
        epsilon: ε > 0 per unit of Euclidean distance between input vectors.
        delta: δ ∈ (0, 1), the probability (over Φ) that Φ stretches some difference of the input
            domain by more than 1 + β. Ignored for the noise in ``strict`` mode (δ = 0).
        beta: β ∈ (0, 1), the distortion allowed to Φ. It sets m (larger β → smaller m → less noise
            but coarser distances); it does not change ε.
        dim: d, the dimension of the input vectors (m and Φ depend on it).
        gaussian_width: ω, the Gaussian width assumed for the set T of normalised differences of
            the input domain. Default √log₂ d (:func:`default_gaussian_width`), which reproduces the
            paper's (β, m) pairs; an assumption, never checked — see :meth:`audit`.
        domain_size: instead of ``gaussian_width``: the inputs are among this many fixed points
            (e.g. a vocabulary), which bounds ω(T) by :func:`finite_gaussian_width` and makes δ a
            proven bound.
        projection_seed: public seed of Φ (:func:`projection_matrix`); share it to share Φ.
        calibration: ``"paper"``: m = ⌈(ω + √ln(1/δ))²/β²⌉ (the issue's and paper's formula);
            ``"explicit"``: m = ⌈(ω + √(2 ln(1/δ)))²/β²⌉, so the provable δ is the requested one.
        strict: calibrate the noise to ‖Φ‖₂ (rounded up) instead of 1 + β: pure ε for all of R^d.
        snap: None, an integer k (round outputs to multiples of 2^k) or ``"auto"``.

    The guarantee's δ is :func:`gordon_delta` for the chosen m — with ``calibration="paper"`` about
    √δ, not δ (see the module docstring) — and rests on ω(T) ≤ ω; it is ``verified`` only with
    ``domain_size`` or ``strict``.
    """

    name = "privemb"
    PARAMETERS = (
        EPSILON,
        DELTA,
        BETA,
        DIM,
        GAUSSIAN_WIDTH,
        Parameter("domain_size", int, "the inputs are among this many fixed points (bounds ω; "
                  "makes δ proven)", default=None, low=2, nullable=True),
        PROJECTION_SEED,
        Parameter("calibration", str, "m from the paper's formula or the explicit-constant one",
                  default="paper", choices=("paper", "explicit")),
        Parameter("strict", bool, "noise calibrated to ‖Φ‖₂: pure ε for all of R^d",
                  default=False),
        SNAP,
    )

    def __init__(self, *, epsilon: float, delta: float, beta: float, dim: int,
                 gaussian_width: float | None = None, domain_size: int | None = None,
                 projection_seed: int = DEFAULT_PROJECTION_SEED,
                 calibration: Literal["paper", "explicit"] = "paper",
                 strict: bool = False, snap: int | Literal["auto"] | None = None) -> None:
        super().__init__(epsilon=epsilon, delta=delta, beta=beta, dim=dim,
                         gaussian_width=gaussian_width, domain_size=domain_size,
                         projection_seed=projection_seed, calibration=calibration, strict=strict,
                         snap=snap)
        p = self._params
        self._delta_requested: float = p["delta"]
        self._beta: float = p["beta"]
        self._dim: int = p["dim"]
        if gaussian_width is not None and domain_size is not None:
            raise ValueError("give gaussian_width or domain_size, not both")
        self._domain_size: int | None = p["domain_size"]
        if self._domain_size is not None:
            self._omega = finite_gaussian_width(self._domain_size)
            self._omega_source = (f"finite domain of {self._domain_size:,} points: "
                                  "√(2 ln(n(n−1))) bounds ω(T)")
        elif gaussian_width is not None:
            self._omega = p["gaussian_width"]
            self._omega_source = "user"
        else:
            self._omega = default_gaussian_width(self._dim)
            self._omega_source = "default √log₂ d (the paper's heuristic; an assumption)"
        self._calibration: str = p["calibration"]
        self._strict: bool = p["strict"]
        self._seed: int = p["projection_seed"]
        self._m = projected_dimension(self._delta_requested, self._beta, self._omega,
                                      self._calibration)
        phi = projection_matrix(self._seed, self._m, self._dim)
        phi.setflags(write=False)
        self._phi = phi
        self._phi_t = np.ascontiguousarray(phi.T)
        self._fingerprint: str | None = None
        self._spectral: float | None = None
        if strict:
            self._sensitivity = self.spectral_norm
        else:
            self._sensitivity = _round_up(1.0 + self._beta)

    # -- read-only properties
    @property
    def delta(self) -> float:
        """The requested δ (the paper's accounting). See :attr:`delta_bound` for the provable one."""
        return self._delta_requested

    @property
    def beta(self) -> float:
        return self._beta

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def input_dim(self) -> int:
        return self._dim

    def output_dim(self, dim: int | None = None) -> int:
        return self._m

    @property
    def m(self) -> int:
        """The projected dimension m = ⌈(ω + √ln(1/δ))²/β²⌉ (or the explicit variant)."""
        return self._m

    @property
    def gaussian_width(self) -> float:
        """ω used in m."""
        return self._omega

    @property
    def projection_seed(self) -> int:
        return self._seed

    @property
    def projection(self) -> np.ndarray:
        """Φ (m × d, read-only), i.i.d. N(0, 1/m), from :attr:`projection_seed` alone."""
        return self._phi

    @property
    def projection_fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = matrix_fingerprint(self._phi)
        return self._fingerprint

    @property
    def spectral_norm(self) -> float:
        """An upper bound on ‖Φ‖₂ (:func:`spectral_norm_upper`)."""
        if self._spectral is None:
            self._spectral = spectral_norm_upper(self._phi)
        return self._spectral

    @property
    def strict(self) -> bool:
        return self._strict

    @property
    def sensitivity(self) -> float:
        """1 + β (rounded up), or ‖Φ‖₂ (rounded up) in strict mode."""
        return self._sensitivity

    @property
    def delta_bound(self) -> float:
        """The δ supported by Gordon's theorem with explicit constants, given ω(T) ≤ ω; 0 if strict."""
        return 0.0 if self._strict else gordon_delta(self._m, self._beta, self._omega)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self._epsilon, "delta": self._delta_requested, "beta": self._beta,
                "dim": self._dim, "gaussian_width": self._omega, "domain_size": self._domain_size,
                "projection_seed": self._seed, "calibration": self._calibration,
                "strict": self._strict, "snap": self._snap_request}

    def _transform_into(self, X: np.ndarray, out: np.ndarray) -> None:
        np.matmul(X, self._phi_t, out=out)

    # -- the guarantee
    @property
    def notion(self) -> Notion:
        return Notion.PURE_LIPSCHITZ if self._strict else Notion.APPROXIMATE_LIPSCHITZ

    def _map_delta(self) -> float:
        """δ of the map: Gordon's explicit-constant bound for this m (0 in strict mode)."""
        return self.delta_bound

    @property
    def guarantee(self) -> Guarantee:
        eps = self._epsilon
        independence = (f"Φ is drawn from the public seed {self._seed} independently of the data, "
                        "and the input domain (the embedding model's range) was fixed without "
                        "knowledge of Φ")
        common = (NUMERICS,) + self._snap_assumption()
        if self._strict:
            return self._guarantee(
                per_word=(f"per vector: Pr[M(x) ∈ U] ≤ exp({eps:g}·‖x − x′‖)·Pr[M(x′) ∈ U] for all "
                          f"x, x′ ∈ R^{self._dim} (strict mode): noise calibrated to "
                          f"‖Φ‖₂ ≤ {self._sensitivity:.9g} (Claim 3), which bounds ‖Φ(x − x′)‖/‖x − x′‖ "
                          "for every pair"),
                per_document=(f"vectors are released independently: x_1..x_N and x′_1..x′_N are "
                              f"indistinguishable up to exp({eps:g}·Σ_i ‖x_i − x′_i‖); N is "
                              "released"),
                assumptions=common,
                verified=True,
                reference=REFERENCE + "; strict mode: Claim 3 with Δ = ‖Φ‖₂ (textdp)",
            )
        bound = self.delta_bound
        width = (f"the set T of normalised differences (x − x′)/‖x − x′‖ of the input domain has "
                 f"Gaussian width ω(T) ≤ {self._omega:.4g} ({self._omega_source})")
        accounting = (f"δ = {bound:.3g} is Gordon's theorem with explicit constants for m = {self._m}, "
                      f"β = {self._beta:g}, ω = {self._omega:.4g}: Pr[sup_(u∈T) ‖Φu‖ > 1 + β] ≤ "
                      "exp(−(β√m − ω)²/2)")
        if self._calibration == "paper":
            accounting += (f"; the paper's accounting (Lemma 4 with its Ω-constant set to 1) states "
                           f"δ = {self._delta_requested:g} for this m, which the explicit-constant bound "
                           "does not reach")
        return self._guarantee(
            per_word=(f"per vector: Pr[M(x) ∈ U] ≤ exp({eps:g}·‖x − x′‖)·Pr[M(x′) ∈ U] + δ for x, x′ in "
                      "the input domain, δ the probability over Φ that Φ stretches a difference of "
                      f"the domain beyond 1 + β = {1 + self._beta:g} (Proposition 5)"),
            per_document=(f"vectors are released independently with the same Φ: x_1..x_N and "
                          f"x′_1..x′_N are indistinguishable up to exp({eps:g}·Σ_i ‖x_i − x′_i‖) "
                          "with the same δ, not N·δ (one event about Φ covers every vector); N is "
                          "released"),
            assumptions=(independence, width, accounting,
                         "pairs outside the assumed input domain are not covered (use strict=True "
                         "for a bound over all of R^d)") + common,
            verified=self._domain_size is not None and bound < 1.0,
            reference=REFERENCE,
        )

    # -- audit
    def audit(self, X: np.ndarray, *, max_pairs: int = 200_000,
              rng: np.random.Generator | None = None) -> AuditResult:
        """Empirical Lipschitz constant of x ↦ Φx on ``X``, against the calibrated sensitivity.

        Every pair when N(N−1)/2 ≤ ``max_pairs``, otherwise ``max_pairs`` pairs (i ≠ j) drawn
        uniformly with replacement from ``rng``. Each ratio ‖Φ(x_i − x_j)‖/‖x_i − x_j‖ is
        computed from the difference itself (no cancellation through ‖Φx_i‖, ‖Φx_j‖).

        A ratio above 1 + β on real data is a concrete failure of the assumption behind δ for that
        pair: its release has less privacy than ε·‖x − x′‖. ``passed`` is evidence, not proof.
        The result is a statistic of the raw data and is not privatised.
        """
        if isinstance(max_pairs, bool) or not isinstance(max_pairs, numbers.Integral) or max_pairs < 1:
            raise ValueError(f"max_pairs must be a positive integer, got {max_pairs!r}")
        X = check_vectors(X, self._dim)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"the audit needs at least 2 vectors, got {n}")
        total = n * (n - 1) // 2
        if total <= max_pairs:
            i, j = np.triu_indices(n, 1)
            exhaustive = True
        else:
            rng = check_rng(rng)
            i = rng.integers(0, n, size=int(max_pairs))
            j = rng.integers(0, n - 1, size=int(max_pairs))
            j += j >= i
            exhaustive = False
        ratios, identical = _pair_ratios(X, self._phi, i, j)
        bound = self._sensitivity
        if ratios.size == 0:
            raise ValueError("every audited pair consists of two identical vectors")
        above = int((ratios > bound).sum())
        q = np.quantile(ratios, [0.5, 0.99, 0.999])
        return AuditResult(
            n_points=n, n_pairs=int(ratios.size), exhaustive=exhaustive, n_identical=identical,
            max_ratio=float(ratios.max()), min_ratio=float(ratios.min()),
            quantiles={"0.5": float(q[0]), "0.99": float(q[1]), "0.999": float(q[2])},
            bound=bound, count_above=above, fraction_above=above / ratios.size,
            fraction_below_1_minus_beta=float((ratios < 1 - self._beta).mean()),
            spectral_norm=self.spectral_norm, passed=above == 0,
        )

    # -- report
    def warnings(self) -> list[str]:
        out = []
        m, d = self._m, self._dim
        if m >= d:
            out.append(f"m = {m} ≥ d = {d}: the projection does not reduce the dimension")
        m2, m1 = m * self.noise_scale, d / self._epsilon
        if m2 >= m1:
            out.append(f"PrivEmb's expected noise norm {m2:.4g} (m·Δ/ε) is not below the baseline "
                       f"LaplaceVector's {m1:.4g} (d/ε) at this d and β: the baseline is at least as "
                       "accurate and gives pure ε")
        if not self._strict and self._domain_size is None:
            out.append("δ rests on an assumed Gaussian width of the input domain; run the audit "
                       "on representative data, or use strict=True or domain_size")
        if not self._strict and self.delta_bound >= 1.0:
            out.append(f"β√m ≤ ω: no δ < 1 can be proven for m = {m}")
        return out

    def describe(self) -> dict[str, Any]:
        """Everything a privacy report needs about this mechanism."""
        return {
            "name": self.name,
            "parameters": self.parameters,
            "m": self._m,
            "d": self._dim,
            "gaussian_width": {"omega": self._omega, "source": self._omega_source},
            "projection": {
                "shape": [self._m, self._dim],
                "seed": self._seed,
                "distribution": "i.i.d. N(0, 1/m)",
                "derivation": "Φ = ndtri(((PCG64(seed).random_raw(m·d) >> 11) + 0.5)·2^-53)"
                              ".reshape(m, d) / √m",
                "sha256": self.projection_fingerprint,
                "spectral_norm_upper": self.spectral_norm,
            },
            "sensitivity": {"value": self._sensitivity,
                            "kind": "‖Φ‖₂ (strict)" if self._strict else "1 + β (Lemma 4)"},
            "noise": {"density": f"∝ exp(−{self._epsilon:g}‖z‖/{self._sensitivity:.6g}) in R^{self._m}",
                      "radius": f"Gamma(shape={self._m}, scale={self.noise_scale:.6g})",
                      "expected_norm": self.expected_noise_norm(),
                      "baseline_expected_norm": self._dim / self._epsilon,
                      "direction": "uniform on the unit sphere"},
            "delta": {"requested": self._delta_requested, "provable": self.delta_bound,
                      "calibration": self._calibration},
            "snap": self._snap_description(self._m),
            "guarantee": self.guarantee.to_dict(),
            "warnings": self.warnings(),
        }
