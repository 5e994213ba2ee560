"""Truncated Poisson: Poisson(λ) conditioned on low ≤ K ≤ high.

The density-aware truncated-Gumbel mechanism (Xu, Aggarwal, Feyisetan, Teissier, FLAIRS 2021)
draws its number of candidate words k ~ Poisson(ln|V|) truncated to [1, |V|]: conditioned, not
clamped — max(1, K) would put the mass of K = 0 on k = 1, a different law.

Sampling: by rejection when the window holds at least a quarter of the mass (expected < 4 draws),
otherwise by inversion of the conditional CDF from the side of the window farther from the mean,
using the survival function for an upper tail so that no probability is lost to 1 − F rounding.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from textdp._checks import check_rng

__all__ = ["truncated_poisson", "truncated_poisson_pmf"]


def _check(lam: object, low: object, high: object) -> tuple[float, int, float]:
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        raise TypeError(f"lam must be a real number, got {type(lam).__name__}")
    lam = float(lam)
    if not math.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a finite number > 0, got {lam!r}")
    if isinstance(low, bool) or not isinstance(low, numbers.Integral) or low < 0:
        raise ValueError(f"low must be an integer ≥ 0, got {low!r}")
    if high is None:
        hi = math.inf
    elif isinstance(high, bool) or not isinstance(high, numbers.Integral):
        raise ValueError(f"high must be an integer or None, got {high!r}")
    else:
        hi = float(high)
    if hi < low:
        raise ValueError(f"need low ≤ high, got low={low}, high={high}")
    return lam, int(low), hi


def _stats():
    """scipy.stats, imported on first use: ``import textdp`` must not pay for it."""
    from scipy import stats

    return stats


def _window_mass(lam: float, low: int, hi: float) -> float:
    stats = _stats()
    upper = 1.0 if math.isinf(hi) else stats.poisson.cdf(hi, lam)
    return float(upper - (stats.poisson.cdf(low - 1, lam) if low > 0 else 0.0))


def truncated_poisson_pmf(k: np.ndarray, lam: float, low: int, high: int | None) -> np.ndarray:
    """P[K = k | low ≤ K ≤ high] for K ~ Poisson(lam) (float64; 0 outside the window)."""
    lam, low, hi = _check(lam, low, high)
    stats = _stats()
    k = np.asarray(k)
    logp = stats.poisson.logpmf(k, lam)
    # log of the window's mass, accurate in either tail.
    if low > lam:
        log_mass = np.log(stats.poisson.sf(low - 1, lam) -
                          (0.0 if math.isinf(hi) else stats.poisson.sf(hi, lam)))
    else:
        log_mass = np.log(_window_mass(lam, low, hi))
    inside = (k >= low) & (k <= hi)
    return np.where(inside, np.exp(logp - log_mass), 0.0)


def truncated_poisson(lam: float, low: int, high: int | None, size: int,
                      rng: np.random.Generator | None = None) -> np.ndarray:
    """``size`` draws of Poisson(``lam``) conditioned on ``low`` ≤ K ≤ ``high`` (int64).

    ``high=None`` means no upper bound.
    """
    lam, low, hi = _check(lam, low, high)
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise ValueError(f"size must be an integer ≥ 0, got {size!r}")
    rng = check_rng(rng)
    size = int(size)
    if _window_mass(lam, low, hi) >= 0.25:
        out = rng.poisson(lam, size=size).astype(np.int64)
        bad = np.flatnonzero((out < low) | (out > hi))
        while bad.size:
            redraw = rng.poisson(lam, size=bad.size)
            out[bad] = redraw
            bad = bad[(redraw < low) | (redraw > hi)]
        return out
    u = 1.0 - rng.random(size)  # (0, 1]
    stats = _stats()
    if low > lam:
        # Window in the upper tail: invert the survival function, S(k) = P[K > k].
        s_lo = stats.poisson.sf(low - 1, lam)
        s_hi = 0.0 if math.isinf(hi) else stats.poisson.sf(hi, lam)
        k = stats.poisson.isf(s_hi + u * (s_lo - s_hi), lam)
    else:
        f_lo = stats.poisson.cdf(low - 1, lam) if low > 0 else 0.0
        f_hi = 1.0 if math.isinf(hi) else stats.poisson.cdf(hi, lam)
        k = stats.poisson.ppf(f_lo + u * (f_hi - f_lo), lam)
    return np.clip(k, low, hi).astype(np.int64)
