"""PrivEmb's random projection Φ and its dimension m, with the explicit-constant δ.

Feyisetan & Kasiviswanathan, "Private Release of Text Embedding Vectors", TrustNLP 2021
(``papers/privemb_feyisetan_kasiviswanathan_2021.md``; SPEC §3): Algorithm 1 draws
Φ ∈ R^{m×d} with i.i.d. N(0, 1/m) entries from a public seed and sets
m = ⌈(ω + √ln(1/δ))²/β²⌉ (Lemma 4 with the Ω(·) constant set to 1, as the paper does).

What textdp adds: an explicit-constant δ. Lemma 4 is stated with an unspecified constant.
Gordon's theorem with its constants (Sudakov–Fernique comparison + Gaussian concentration of the
1-Lipschitz map G ↦ sup_{u∈T}‖Gu‖) gives, for T the set of normalised differences
(x − x′)/‖x − x′‖ of the input domain, Pr[sup_{u∈T} ‖Φu‖ > 1 + (ω(T) + t)/√m] ≤ exp(−t²/2).
Hence for a given m, δ ≤ exp(−(β√m − ω)²/2) whenever ω(T) ≤ ω (:func:`gordon_delta`). The
paper's m therefore supports δ ≈ √δ_requested; ``calibration="explicit"`` uses √(2 ln(1/δ)) so
that the requested δ is the provable one.

Everything here is a function of public parameters (seed, m, d, β, δ, ω), never of the data.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from typing import Literal

import numpy as np

from textdp import _random
from textdp._checks import DELTA, Parameter, check_nonnegative_int

__all__ = ["BETA", "DEFAULT_PROJECTION_SEED", "DIM", "GAUSSIAN_WIDTH", "PROJECTION_SEED",
           "default_gaussian_width", "finite_gaussian_width", "gordon_delta", "matrix_fingerprint",
           "projected_dimension", "projection_matrix", "spectral_norm_upper"]

#: The public seed of the projection when none is given. Every party that wants comparable vectors
#: must use the same seed (and the same d, m); it is public, not a secret.
DEFAULT_PROJECTION_SEED = 2021

_EPS64 = 2.0 ** -52

# The projection's parameters, declared once (validation, ``parameters``, CLI).
BETA = Parameter("beta", float, "β, the distortion allowed to Φ (sets m; does not change ε)",
                 low=0.0, high=1.0, low_open=True, high_open=True)
DIM = Parameter("dim", int, "d, the dimension of the input vectors", low=1)
GAUSSIAN_WIDTH = Parameter("gaussian_width", float, "ω, the assumed Gaussian width of the input "
                           "domain's normalised differences (default √log₂ d)", default=None,
                           low=0.0, nullable=True)
PROJECTION_SEED = Parameter("projection_seed", int, "public seed of the projection Φ",
                            default=DEFAULT_PROJECTION_SEED,
                            check=lambda v: check_nonnegative_int(v, "projection_seed"))


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
