"""Two-sided geometric noise on integers, and its version clamped to a range of positions.

Meisenbacher, Chevli, Matthes, "1-Diffractor", IWSPA 2024, Eq. (4): for b = 1/ε,

    P[X = x] = ((e^ε − 1)/(e^ε + 1)) · e^{−ε|x|} = ((1 − a)/(1 + a)) · a^{|x|},   a = e^{−ε},

and Theorem 1: adding X to a position Φ(w) gives ε·|Φ(w) − Φ(w′)| metric DP. Clamping the noisy
position to [lo, hi] (Eq. (5)) is post-processing and keeps ε; the endpoints then carry the whole
tail mass. Renormalising the pmf on [lo, hi] instead would *not* keep ε (TESTING.md §2).

Sampling (both exact in law; numerics idealised, as for every floating-point sampler — the output
is an integer, so the low-order-bit leak of a floating-point Laplace release does not arise):

* small draws: X = G₁ − G₂ with G₁, G₂ independent geometric on {1, 2, …} with success
  probability p = 1 − a (numpy's ``Generator.geometric``): P[G₁ − G₂ = x] = Σ_k p²a^{k−1}a^{k+|x|−1}
  = p·a^{|x|}/(2 − p) = ((1 − a)/(1 + a))·a^{|x|};
* large draws, and any draw with ε < 1e-9 (where numpy's geometric sampler nears its int64
  saturation and two saturated draws would give X = 0): inversion, X = sign(v)·⌊T⌋ with v uniform
  on [−1, 1) and T = (ln(1 − |v|) + ln((1 + a)/2))/(−ε), because P[|X| ≥ k] = 2a^k/(1 + a) for
  k ≥ 1 and the sign is independent of |X|.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from textdp._checks import check_epsilon, check_rng
from textdp._checks import check_size as _check_size

__all__ = [
    "two_sided_geometric",
    "clamped_geometric",
    "clamped_geometric_pmf",
    "clamped_geometric_log_pmf",
]

# Offsets beyond ±2^62 are clipped (post-processing; no position range comes anywhere near it),
# so that adding a position never overflows int64.
_MAX_OFFSET = 2.0**62
# Below this ε numpy's geometric sampler could approach its int64 saturation.
_SMALL_EPSILON = 1e-9
# From this many draws on, inversion (one uniform and one log per draw) beats numpy's geometric.
_INVERSION_SIZE = 64


def _check_range(lo: object, hi: object) -> tuple[int, int]:
    for name, v in (("lo", lo), ("hi", hi)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be an integer, got {type(v).__name__}")
    lo, hi = int(lo), int(hi)
    if lo > hi:
        raise ValueError(f"empty range: lo={lo} > hi={hi}")
    return lo, hi


def two_sided_geometric(size: int, epsilon: float, rng: np.random.Generator | None = None,
                        ) -> np.ndarray:
    """``size`` draws of X with P[X = x] = ((1 − a)/(1 + a))·a^{|x|}, a = e^{−ε} (int64).

    Diffractor 2024, Eq. (4) with b = 1/ε. Values of magnitude above 2^62 (possible only for
    ε < 1e-9) are clipped, which is post-processing for any position range.
    """
    # The common call (an int, a finite float > 0, a Generator) is recognised in a few hundred
    # nanoseconds: 1-Diffractor draws once per document of a seeded run, a few words each.
    if not (type(size) is int and size >= 0 and type(epsilon) is float and 0 < epsilon < math.inf
            and type(rng) is np.random.Generator):
        size, epsilon, rng = _check_size(size), check_epsilon(epsilon), check_rng(rng)
    if size < _INVERSION_SIZE and epsilon >= _SMALL_EPSILON:
        # Two calls: cheapest for the small per-document draws of a seeded run.
        g = rng.geometric(-math.expm1(-epsilon), size=2 * size)
        return np.subtract(g[:size], g[size:], out=g[:size])
    # Inversion from one uniform v on [−1, 1): sign(v) is the sign, and |X| = ⌊T⌋ with
    # T = (ln(1 − |v|) + ln((1 + a)/2))/(−ε), since P[|X| ≥ k] = 2a^k/(1 + a) for k ≥ 1.
    v = rng.uniform(-1.0, 1.0, size)
    t = np.abs(v)
    np.negative(t, out=t)
    with np.errstate(divide="ignore"):  # |v| = 1 gives ln 0 = −∞, clipped below
        np.log1p(t, out=t)
    t += math.log1p(math.expm1(-epsilon) / 2.0)
    t *= -1.0 / epsilon
    np.floor(t, out=t)
    np.minimum(t, _MAX_OFFSET, out=t)  # also maps the |v| = 1 endpoint (T = ∞) to a finite value
    np.copysign(t, v, out=t)
    return t.astype(np.int64)


def clamped_geometric(positions: np.ndarray | int, epsilon: float, lo: int, hi: int,
                      rng: np.random.Generator | None = None) -> np.ndarray:
    """clamp(x + X, lo, hi) for every x in ``positions``, X two-sided geometric (Diffractor Eq. (3), (5)).

    The clamp is post-processing: the result satisfies ε·|x − x′| metric DP. It is *not*
    renormalised: the endpoints take the tail mass (see :func:`clamped_geometric_pmf`).
    """
    lo, hi = _check_range(lo, hi)
    x = np.asarray(positions)
    if not np.issubdtype(x.dtype, np.integer):
        raise TypeError("positions must be integers")
    if x.size and (x.min() < lo or x.max() > hi):
        raise ValueError(f"positions must lie in [{lo}, {hi}]")
    noise = two_sided_geometric(x.size, epsilon, rng).reshape(x.shape)
    # Clipping the noise to ±(hi − lo) first cannot change the clamped result and avoids overflow.
    span = hi - lo
    np.clip(noise, -span, span, out=noise)
    noise += x
    np.clip(noise, lo, hi, out=noise)
    return noise


def clamped_geometric_log_pmf(position: int, epsilon: float, lo: int, hi: int) -> np.ndarray:
    """ln P[clamp(x + X, lo, hi) = y] for y = lo, …, hi (exact closed form, never −inf).

    Inside: ln((1 − a)/(1 + a)) + |y − x|·ln a. Endpoints carry the tail: P[y = lo] = a^{x−lo}/(1 + a),
    P[y = hi] = a^{hi−x}/(1 + a) (for lo < hi; a single point has probability 1).
    """
    lo, hi = _check_range(lo, hi)
    epsilon = check_epsilon(epsilon)
    if isinstance(position, bool) or not isinstance(position, numbers.Integral):
        raise TypeError("position must be an integer")
    x = int(position)
    if not lo <= x <= hi:
        raise ValueError(f"position must lie in [{lo}, {hi}], got {x}")
    y = np.arange(lo, hi + 1, dtype=np.float64)
    if lo == hi:
        return np.zeros(1)
    log_a = -epsilon
    log_1pa = math.log1p(math.exp(log_a))
    out = math.log(-math.expm1(log_a)) - log_1pa + np.abs(y - x) * log_a
    out[0] = (x - lo) * log_a - log_1pa
    out[-1] = (hi - x) * log_a - log_1pa
    return out


def clamped_geometric_pmf(position: int, epsilon: float, lo: int, hi: int) -> np.ndarray:
    """P[clamp(x + X, lo, hi) = y] for y = lo, …, hi (sums to 1 up to rounding)."""
    return np.exp(clamped_geometric_log_pmf(position, epsilon, lo, hi))
