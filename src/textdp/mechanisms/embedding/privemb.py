"""Private release of embedding vectors: PrivEmb (M2) and the baseline LaplaceVector (M1).

Feyisetan & Kasiviswanathan, "Private Release of Text Embedding Vectors", TrustNLP 2021
(``papers/privemb_feyisetan_kasiviswanathan_2021.md``; SPEC §3).

* **M1**, :class:`LaplaceVector` — the baseline of Feyisetan et al. (WSDM 2020): v = x + N with N of
  density ∝ exp(−ε‖N‖) in R^d. Pure ε metric DP for every pair of vectors of R^d (Claim 3 with Δ = 1).
* **M2**, :class:`PrivEmb` — Algorithm 1: w = Φx + κ, Φ ∈ R^{m×d} with i.i.d. N(0, 1/m) entries
  drawn once from a public seed, κ of density ∝ exp(−ε‖κ‖/(1+β)) in R^m (Claim 3 with Δ = 1+β),
  m = ⌈(ω + √ln(1/δ))²/β²⌉ (Lemma 4 with the Ω(·) constant set to 1, as the paper does).

What textdp adds (SPEC §3 "worth doing that the paper does not"):

* an explicit-constant δ. Lemma 4 is stated with an unspecified constant. Gordon's theorem with its
  constants (Sudakov–Fernique comparison + Gaussian concentration of the 1-Lipschitz map
  G ↦ sup_{u∈T}‖Gu‖) gives, for T the set of normalised differences (x − x′)/‖x − x′‖ of the input
  domain, Pr[sup_{u∈T} ‖Φu‖ > 1 + (ω(T) + t)/√m] ≤ exp(−t²/2). Hence for a given m,
  δ ≤ exp(−(β√m − ω)²/2) whenever ω(T) ≤ ω (:func:`gordon_delta`). The paper's m therefore
  supports δ ≈ √δ_requested; ``calibration="explicit"`` uses √(2 ln(1/δ)) so that the requested δ
  is the provable one.
* :meth:`PrivEmb.audit` — the projection's empirical Lipschitz constant on the user's own vectors.
* ``strict=True`` — sensitivity = ‖Φ‖₂ (rounded up), which bounds ‖Φ(x − x′)‖/‖x − x′‖ for *every*
  pair of R^d: pure ε, δ = 0, no assumption on the data, more noise.
* ``snap`` — released coordinates rounded to multiples of 2^k (Mironov, CCS 2012, against
  floating-point attacks on released reals). See :func:`snap_to_grid` for what this guarantees.

All guarantees are for the idealised real-valued mechanism (OpenDP's "idealized numerics"):
the float64 arithmetic of Φx and of the sampler is not covered by a proof.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from textdp import _random
from textdp._checks import DELTA, EPSILON, Parameter, check_nonnegative_int, check_parameters, check_rng
from textdp.noise import metric_laplace
from textdp.privacy import Budget, Guarantee, Notion, Numerics, check_distance, round_up_product
from textdp.privacy.measurement import Measurement, measurement_of

__all__ = [
    "DEFAULT_PROJECTION_SEED", "AuditResult", "EmbeddingMechanism", "LaplaceVector", "PrivEmb",
    "check_vectors", "default_gaussian_width", "finite_gaussian_width", "gordon_delta",
    "projected_dimension", "projection_matrix", "snap_to_grid", "spectral_norm_upper",
]

#: The public seed of the projection when none is given. Every party that wants comparable vectors
#: must use the same seed (and the same d, m); it is public, not a secret.
DEFAULT_PROJECTION_SEED = 2021

REFERENCE = ("Feyisetan & Kasiviswanathan, Private Release of Text Embedding Vectors, TrustNLP 2021: "
             "Algorithm 1, Claim 3, Lemma 4, Proposition 5")
M1_REFERENCE = ("Feyisetan, Balle, Drake, Diethe, WSDM 2020 (mechanism M1 of Feyisetan & "
                "Kasiviswanathan 2021, Claim 3 with Δ = 1)")
METRIC = "Euclidean distance ‖x − x′‖ between input vectors"
NUMERICS = ("idealised real arithmetic: the bound is proven for exact Φx and exact noise; "
            "float64 rounding in Φx and in the sampler is not covered by the proof")
_EPS64 = 2.0 ** -52
_BLOCK_FLOATS = 1 << 17  # float64s per block in release() (1 MiB): keeps the noise buffer in cache


# --- parameter and data checks ------------------------------------------------------------------

def _check_snap(snap: object) -> int | Literal["auto"]:
    if snap == "auto":
        return snap  # type: ignore[return-value]
    if isinstance(snap, bool) or not isinstance(snap, numbers.Integral):
        raise TypeError(f"snap must be None, 'auto' or an integer exponent k (grid 2^k), got {snap!r}")
    if not -1000 <= int(snap) <= 1000:
        raise ValueError(f"snap exponent must lie in [-1000, 1000], got {snap!r}")
    return int(snap)


# The parameters of the embedding mechanisms, declared once (validation, ``parameters``, CLI).
SNAP = Parameter("snap", object, "round released coordinates to multiples of 2^k: an integer k, "
                 "or 'auto' (k = ⌈log₂ noise scale⌉)", default=None, nullable=True,
                 check=_check_snap)
BETA = Parameter("beta", float, "β, the distortion allowed to Φ (sets m; does not change ε)",
                 low=0.0, high=1.0, low_open=True, high_open=True)
DIM = Parameter("dim", int, "d, the dimension of the input vectors", low=1)
GAUSSIAN_WIDTH = Parameter("gaussian_width", float, "ω, the assumed Gaussian width of the input "
                           "domain's normalised differences (default √log₂ d)", default=None,
                           low=0.0, nullable=True)
PROJECTION_SEED = Parameter("projection_seed", int, "public seed of the projection Φ",
                            default=DEFAULT_PROJECTION_SEED,
                            check=lambda v: check_nonnegative_int(v, "projection_seed"))


def check_vectors(X: object, dim: int | None = None, name: str = "X") -> np.ndarray:
    """``X`` as a C-contiguous float64 array of shape (N, d), or a clear error.

    Raises:
        TypeError: not an array of real numbers (complex, bool, strings, objects).
        ValueError: not 2-D, ``d`` differs from ``dim``, or a row holds NaN or infinity.
    """
    arr = np.asarray(X)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating)
                                 or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = f" (one vector: {name}[None, :])" if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be a 2-D array (N vectors × d dimensions), got shape "
                         f"{arr.shape}{hint}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} has dimension d = {arr.shape[1]} but this mechanism was built for "
                         f"d = {dim}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        shown = ", ".join(str(i) for i in bad[:5]) + (", …" if bad.size > 5 else "")
        raise ValueError(f"{name} has {bad.size} row(s) with NaN or infinity (rows {shown})")
    return arr


# --- the projection and its dimension ------------------------------------------------------------

def default_gaussian_width(dim: int) -> float:
    """ω = √log₂ d, the default width (SPEC §3).

    The paper says it sets ω = √log d; only the base-2 logarithm reproduces the (β, m) pairs of its
    appendix (d = 300, δ = 1e-6: β = 0.93, 0.66, 0.468 give (ω + √ln(1/δ))²/β² = 50.1, 99.6, 198.0
    for its m = 50, 100, 200). It is a modelling assumption about the data, not a property of R^d.
    """
    return math.sqrt(math.log2(DIM.validate(dim)))


def finite_gaussian_width(n_points: int) -> float:
    """√(2 ln(n(n−1))): an upper bound on ω(T) when the inputs are among n fixed points.

    T, the set of normalised differences of n points, has at most n(n−1) unit vectors, and the
    expected maximum of K standard normals is at most √(2 ln K). With this width the δ of
    :func:`gordon_delta` is proven (e.g. n = the size of a vocabulary whose vectors are released).
    """
    if isinstance(n_points, bool) or not isinstance(n_points, numbers.Integral) or n_points < 2:
        raise ValueError(f"domain_size must be an integer >= 2, got {n_points!r}")
    n = int(n_points)
    return math.sqrt(2.0 * math.log(n * (n - 1)))


def projected_dimension(delta: float, beta: float, gaussian_width: float,
                        calibration: Literal["paper", "explicit"] = "paper") -> int:
    """m = ⌈(ω + √ln(1/δ))² / β²⌉ (Algorithm 1 / Lemma 4 with constant 1), or with ``"explicit"``
    m = ⌈(ω + √(2 ln(1/δ)))² / β²⌉, for which :func:`gordon_delta` ≤ δ."""
    delta = DELTA.validate(delta)
    beta = BETA.validate(beta)
    omega = GAUSSIAN_WIDTH.validate(gaussian_width)
    if calibration == "paper":
        t = math.sqrt(math.log(1.0 / delta))
    elif calibration == "explicit":
        t = math.sqrt(2.0 * math.log(1.0 / delta))
    else:
        raise ValueError(f"calibration must be 'paper' or 'explicit', got {calibration!r}")
    return max(1, math.ceil((omega + t) ** 2 / beta**2))


def gordon_delta(m: int, beta: float, gaussian_width: float) -> float:
    """Pr[Φ stretches some u ∈ T beyond 1 + β] ≤ exp(−(β√m − ω)²/2), given ω(T) ≤ ω.

    Gordon's theorem with explicit constants for the upper tail only (the only side privacy needs):
    E sup_{u∈T}‖Gu‖ ≤ E‖g_m‖ + ω(T) ≤ √m + ω(T) (Sudakov–Fernique), and G ↦ sup_{u∈T}‖Gu‖ is
    1-Lipschitz in the Frobenius norm, so it exceeds its mean by t with probability ≤ exp(−t²/2).
    With Φ = G/√m and t = β√m − ω this is the event ‖Φu‖ > 1 + β. Returns 1 when β√m ≤ ω.

    Rounded up (a δ never falls below its exact value): t is lowered past the rounding of √m,
    the product and the difference (each ≤ one half-ulp of its operands' magnitude), t²/2 past
    its two roundings, and exp(−t²/2) raised by two ulps past the libm exponential's (< 1 ulp).
    """
    root = beta * math.sqrt(m)
    t = root - gaussian_width
    t = t - 4 * _EPS64 * (root + gaussian_width)  # |computed t − exact t| ≤ 3·2⁻⁵³·(β√m + ω)
    if t <= 0:
        return 1.0
    half_square = 0.5 * t * t * (1 - 4 * _EPS64)  # below the exact t²/2 of the lowered t
    return min(1.0, math.nextafter(math.nextafter(math.exp(-half_square), 2.0), 2.0))


def projection_matrix(seed: int, m: int, dim: int) -> np.ndarray:
    """Φ ∈ R^{m×d}, entries i.i.d. N(0, 1/m), a function of (seed, m, d) only (never of the data).

    Derivation, reproducible in any language with PCG64: the first m·d outputs of
    ``numpy.random.PCG64(seed).random_raw``, each mapped to u = (r >> 11 + ½)·2⁻⁵³ ∈ (0, 1), then
    Φ = Φ⁻¹(u)/√m row-major (Φ⁻¹ the standard normal quantile, ``scipy.special.ndtri``). NumPy
    guarantees the raw bit stream of a BitGenerator across versions (NEP 19), unlike
    ``Generator.standard_normal``; the sha256 fingerprint in the report detects any drift.
    """
    from scipy.special import ndtri

    seed = PROJECTION_SEED.validate(seed)
    raw = _random.public_bit_generator(seed).random_raw(m * dim)
    u = ((raw >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
    phi = ndtri(u).reshape(m, dim)
    phi /= math.sqrt(m)
    return phi


def matrix_fingerprint(matrix: np.ndarray) -> str:
    """sha256 of the shape and the float64 little-endian bytes of ``matrix``."""
    a = np.ascontiguousarray(matrix, dtype="<f8")
    h = hashlib.sha256(f"{a.shape[0]}x{a.shape[1]}:".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def spectral_norm_upper(matrix: np.ndarray) -> float:
    """An upper bound on ‖Φ‖₂ (the largest singular value), rounded up.

    LAPACK's SVD returns σ̂ with |σ̂ − σ| ≲ p(m, d)·2⁻⁵²·σ (backward stability). The bound adds a
    relative margin of max(1e-9, 64·(m + d)·2⁻⁵²), orders of magnitude above that error, then
    rounds up to the next float (TESTING.md §5: sensitivities computed in floating point round up).
    """
    a = np.asarray(matrix, dtype=np.float64)
    sigma = float(np.linalg.svd(a, compute_uv=False)[0])
    margin = max(1e-9, 64.0 * (a.shape[0] + a.shape[1]) * _EPS64)
    return float(np.nextafter(sigma * (1.0 + margin), np.inf))


def _round_up(x: float) -> float:
    return float(np.nextafter(x, np.inf))


def snap_to_grid(W: np.ndarray, exponent: int) -> np.ndarray:
    """Round every coordinate to the nearest multiple of 2^exponent (ties to even), in place.

    Division and multiplication by a power of two are exact in binary floating point (barring
    overflow/underflow), so every output coordinate is exactly an integer multiple of 2^k.

    What this guarantees: for the idealised real-valued mechanism, rounding is a deterministic
    function of its output, i.e. post-processing — ε and δ are unchanged, and each vector moves by
    at most 2^(k−1)·√m (accounted for in the utility, :meth:`EmbeddingMechanism.describe`). What it
    does not: Mironov (CCS 2012) showed that the low-order bits of floating-point Laplace samples
    reveal the input, and proved that snapping (with clamping) repairs the one-dimensional Laplace
    mechanism at an explicit cost in ε. No such proof exists for this multivariate sampler
    (Gaussian direction × Gamma radius); snapping to a grid at least as coarse as the noise scale
    discards the bits such attacks read, as a mitigation.
    """
    scale = math.ldexp(1.0, exponent)
    np.divide(W, scale, out=W)
    np.rint(W, out=W)
    np.multiply(W, scale, out=W)
    return W


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


# --- the mechanisms ------------------------------------------------------------------------------

class EmbeddingMechanism(ABC):
    """A mechanism that releases vectors: (N, d) array in, (N, output_dim) array out.

    Built once, validated once, immutable afterwards; randomness only through :meth:`release`'s
    ``rng``. Each input vector is released independently (local model).
    """

    name: str
    #: Every constructor parameter, declared once (see :mod:`textdp._checks`).
    PARAMETERS: ClassVar[tuple[Parameter, ...]] = (EPSILON, SNAP)

    def __init__(self, **params: Any) -> None:
        self._params = check_parameters(self.PARAMETERS, params, owner=self.name)
        self._epsilon: float = self._params["epsilon"]
        self._snap_request: int | Literal["auto"] | None = self._params["snap"]

    @property
    def epsilon(self) -> float:
        return self._epsilon

    # -- the guarantee as code
    @property
    @abstractmethod
    def notion(self) -> Notion: ...

    @property
    def numerics(self) -> Numerics:
        """Snapped outputs when a grid is set, else idealised float."""
        return Numerics.IDEALIZED if self.snap_exponent is None else Numerics.SNAPPED

    def _map_delta(self) -> float:
        return 0.0

    def privacy_map(self, d_in: Any) -> Budget:
        """(ε·d_in rounded up, δ) for two input vectors at Euclidean distance ``d_in`` (vectorised).

        The noise is calibrated to ε per unit of ‖x − x′‖ (Claim 3); δ is the mechanism's (0 for
        LaplaceVector and strict PrivEmb; for PrivEmb, it covers the input domain it assumes).
        """
        return Budget(round_up_product(self._epsilon, check_distance(d_in)), self._map_delta())

    #: The stable id of the metric ``d_in`` is measured in: ‖x − x′‖ between input vectors (a
    #: release's input space adds the encoder when the vectors are embeddings of texts).
    input_metric: ClassVar[str] = "vector-l2"

    @property
    def measurement(self) -> Measurement:
        """Input metric, notion and :meth:`privacy_map` as one measurement."""
        return measurement_of(self)

    def _guarantee(self, **prose: Any) -> Guarantee:
        """The guarantee with its notion, ε, δ and numerics from the code, the rest in words."""
        return Guarantee(notion=self.notion, epsilon=self._epsilon, metric=METRIC,
                         delta=self.privacy_map(1.0).delta, numerics=self.numerics, **prose)

    @property
    @abstractmethod
    def input_dim(self) -> int | None:
        """d, or None when any d is accepted."""

    @abstractmethod
    def output_dim(self, dim: int) -> int:
        """The dimension of released vectors for inputs of dimension ``dim``."""

    @property
    @abstractmethod
    def sensitivity(self) -> float:
        """Δ: the noise density is ∝ exp(−ε‖z‖/Δ) (Claim 3)."""

    @property
    def noise_scale(self) -> float:
        """λ = Δ/ε rounded up: the radius of the noise is Gamma(output_dim, λ)."""
        return _round_up(self.sensitivity / self._epsilon)

    @property
    def snap_exponent(self) -> int | None:
        """k of the grid 2^k, or None. ``"auto"`` gives k = ⌈log₂ λ⌉, Mironov's choice of the
        smallest power of two at least the noise scale."""
        if self._snap_request == "auto":
            return math.ceil(math.log2(self.noise_scale))
        return self._snap_request

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee: ...

    @property
    @abstractmethod
    def parameters(self) -> dict[str, Any]: ...

    @abstractmethod
    def _transform_into(self, X: np.ndarray, out: np.ndarray) -> None:
        """The deterministic part f(X) of a block of rows, written into ``out`` (float64)."""

    def release(self, X: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Private vectors f(x_i) + z_i, z_i i.i.d. with density ∝ exp(−ε‖z‖/Δ), optionally snapped.

        The noise is a uniform direction (normalised standard normals) times a Gamma(k, λ) radius,
        λ = Δ/ε (Wu et al. 2017, the paper's footnote 1; TESTING.md §1). Rows are processed in
        blocks of a fixed size so the noise buffer stays in cache; for a given ``rng`` state the
        output does not depend on anything but X.

        Args:
            X: (N, d) array of real numbers, no NaN or infinity.
            rng: the source of the noise; None draws a fresh OS-entropy generator.

        Returns:
            float64 array (N, output_dim).
        """
        rng = check_rng(rng)
        X = check_vectors(X, self.input_dim)
        n = X.shape[0]
        k = self.output_dim(X.shape[1])
        out = np.empty((n, k), dtype=np.float64)
        rows = max(64, _BLOCK_FLOATS // max(k, 1))
        buffer = np.empty((min(n, rows), k), dtype=np.float64)
        scale = self.noise_scale
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            block = out[start:stop]
            self._transform_into(X[start:stop], block)
            block += metric_laplace(stop - start, k, rng=rng, scale=scale,
                                    out=buffer[: stop - start])
        if self.snap_exponent is not None:
            snap_to_grid(out, self.snap_exponent)
        return out

    def expected_noise_norm(self, dim: int | None = None) -> float:
        """E‖z‖ = output_dim · λ."""
        return self.output_dim(dim if dim is not None else self.input_dim or 0) * self.noise_scale

    def _snap_description(self, k_out: int) -> dict[str, Any] | None:
        k = self.snap_exponent
        if k is None:
            return None
        grid = math.ldexp(1.0, k)
        return {"exponent": k, "grid": grid, "requested": self._snap_request,
                "max_shift_per_coordinate": grid / 2,
                "max_shift_per_vector": grid / 2 * math.sqrt(k_out),
                "privacy": "post-processing of the ideal mechanism: ε and δ unchanged",
                "floating_point": "mitigation against Mironov (2012)-style attacks on the low-order "
                                  "bits; no floating-point proof exists for this sampler"}

    def _snap_assumption(self) -> tuple[str, ...]:
        k = self.snap_exponent
        if k is None:
            return ()
        return (f"released coordinates are rounded to multiples of 2^{k}: post-processing of the "
                "ideal mechanism, so ε and δ are unchanged; each coordinate moves by at most "
                f"2^{k - 1}. It mitigates, but no proof covers, floating-point attacks (Mironov 2012) "
                "on this multivariate sampler",)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f"{type(self).__name__}({params})"


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
