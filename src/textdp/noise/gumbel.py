"""Gumbel noise, truncated Gumbel noise and exponential-mechanism selection.

* ``gumbel``: Gumbel(0, b), CDF F(x) = exp(−e^{−x/b}).
* ``truncated_gumbel``: Gumbel(0, b) *conditioned* on |g| ≤ B — the noise of the density-aware
  truncated-Gumbel mechanism (Xu, Aggarwal, Feyisetan, Teissier, FLAIRS 2021), B = the
  vocabulary's largest word distance. Sampled by inversion of the truncated CDF, so no draw is
  wasted and none is clipped (clipping would put mass on ±B, a different law).
* ``gumbel_max``: the exponential mechanism by the Gumbel-max trick (argmax of score + Gumbel(0, b)
  has law softmax(score / b); McSherry & Talwar 2007, with b = 2Δ/ε).
* ``choose_from_weights``: the same categorical law sampled by inversion from one uniform per
  draw, for rows of weights shared by many draws (TEM and SanText precompute one row per distinct
  input word and reuse it for every token of that word). The randomness (the uniform) is drawn
  before the weights are known, which keeps a mechanism's ``draw``/``apply`` split.

Numerics are idealised, as for every floating-point sampler: an outcome whose probability is
below about 2⁻⁵³ relative to the row total may be sampled with a probability off by that much.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from textdp._checks import check_rng

__all__ = [
    "gumbel",
    "truncated_gumbel",
    "truncated_gumbel_cdf",
    "gumbel_max",
    "choose_from_weights",
]


def _check_size(size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"size must be an integer, got {type(size).__name__}")
    if size < 0:
        raise ValueError(f"size must be ≥ 0, got {size}")
    return int(size)


def _check_positive(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def gumbel(size: int, scale: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """``size`` draws of Gumbel(0, ``scale``) (float64)."""
    size = _check_size(size)
    scale = _check_positive(scale, "scale")
    return check_rng(rng).gumbel(0.0, scale, size=size)


def truncated_gumbel(size: int, scale: float, bound: float,
                     rng: np.random.Generator | None = None) -> np.ndarray:
    """``size`` draws of Gumbel(0, ``scale``) conditioned on |g| ≤ ``bound`` (float64).

    Inversion: with y = e^{−x/b}, F(x) = e^{−y}; a uniform u on [F(−B), F(B)] gives
    x = −b·ln(−ln u). The result lies in [−B, B] exactly (a final clip only absorbs rounding).
    """
    size = _check_size(size)
    b = _check_positive(scale, "scale")
    bound = _check_positive(bound, "bound")
    rng = check_rng(rng)
    lo = math.exp(-math.exp(bound / b)) if bound / b < 700 else 0.0  # F(−B), may underflow to 0
    hi = math.exp(-math.exp(-bound / b))                              # F(B)
    u = lo + (hi - lo) * (1.0 - rng.random(size))                     # (lo, hi]
    with np.errstate(divide="ignore"):
        x = -b * np.log(-np.log(u))
    # u = hi can round −ln(−ln u) a hair past B; u ≈ lo ≈ 0 maps to −B or just inside it.
    np.clip(x, -bound, bound, out=x)
    return x


def truncated_gumbel_cdf(x: np.ndarray, scale: float, bound: float) -> np.ndarray:
    """CDF of Gumbel(0, scale) conditioned on |g| ≤ bound (for tests and audits)."""
    b, bound = float(scale), float(bound)
    x = np.clip(np.asarray(x, dtype=np.float64), -bound, bound)
    lo = math.exp(-math.exp(bound / b)) if bound / b < 700 else 0.0
    hi = math.exp(-math.exp(-bound / b))
    return (np.exp(-np.exp(-x / b)) - lo) / (hi - lo)


def gumbel_max(scores: np.ndarray, scale: float,
               rng: np.random.Generator | None = None) -> np.ndarray:
    """Exponential mechanism by Gumbel-max: argmax over the last axis of scores + Gumbel(0, scale).

    Pr[i] = exp(score_i / scale) / Σ_j exp(score_j / scale) for each row; with scale = 2Δ/ε this is
    the ε-DP exponential mechanism for a utility of sensitivity Δ. Scores of −inf never win; NaN
    or +inf scores, or a row with no finite score, raise ValueError.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 0 or s.shape[-1] == 0:
        raise ValueError("scores must have at least one candidate on the last axis")
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("scores contain NaN or +inf")
    if not np.isfinite(s).any(axis=-1).all():
        raise ValueError("every row needs at least one finite score")
    scale = _check_positive(scale, "scale")
    # Shifting a row by its maximum changes no argmax and keeps ±1e300 scores from overflowing.
    shifted = s - s.max(axis=-1, keepdims=True)
    noisy = shifted + check_rng(rng).gumbel(0.0, scale, size=s.shape)
    return noisy.argmax(axis=-1)


def choose_from_weights(weights: np.ndarray, rows: np.ndarray, u: np.ndarray, *,
                        tile: int = 64, margin: np.ndarray | None = None):
    """For each draw i, a column of ``weights[rows[i]]`` with probability ∝ its weight.

    Inversion from the uniform ``u[i]`` ∈ [0, 1): with running sums C_j of the row and total Z,
    the column is the first j with C_j ≥ (1 − u)·Z (a target in (0, Z]). Columns are summed tile
    by tile, so a draw only accumulates one tile: O(|V|/tile + tile) per draw after an O(|V|)
    pass per row. A column of weight 0 is never returned.

    Args:
        weights: (R, n) non-negative finite weights (float64); every row needs a positive total.
        rows: (N,) row of each draw.
        u: (N,) uniforms in [0, 1).
        tile: columns per tile.
        margin: optional (R,) bound κ_r on the relative error of every running sum and total of
            row r against exact arithmetic on the exact weights. Given it, the function also
            returns which choices are *certain*: the target lies farther than the error from
            both ends of the chosen column's interval, so inversion of the exact weights picks
            the same column. Uncertain draws (rare: probability ≈ 4·n·κ) should be redone
            exactly by the caller.

    Returns:
        (N,) int64 column indices, or ``(columns, certain)`` when ``margin`` is given.
    """
    w = np.asarray(weights, dtype=np.float64)
    r_count, n = w.shape
    rows = np.asarray(rows, dtype=np.int64)
    u = np.asarray(u, dtype=np.float64)
    if rows.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty if margin is None else (empty, np.empty(0, dtype=bool))
    tile = max(1, min(int(tile), n))
    full = n // tile
    # The weights are only viewed, never copied: a last partial tile is summed on its own.
    sums = w[:, :full * tile].reshape(r_count, full, tile).sum(axis=2)
    if full * tile < n:
        sums = np.concatenate([sums, w[:, full * tile:].sum(axis=1, keepdims=True)], axis=1)
    n_tiles = sums.shape[1]
    cum = np.cumsum(sums, axis=1)
    total = cum[:, -1]
    if not (total > 0).all() or not np.isfinite(total).all():
        raise ValueError("every row of weights needs a positive finite total")
    target = (1.0 - u) * total[rows]                                   # (0, total]
    # One searchsorted over all rows: row r's running sums, divided by the total, shifted by r.
    flat = (cum / total[:, None] + np.arange(r_count)[:, None]).ravel()
    pos = np.searchsorted(flat, rows + target / total[rows], side="left")
    t = np.minimum(pos - rows * n_tiles, n_tiles - 1)
    empty = np.flatnonzero(sums[rows, t] <= 0)
    for i in empty.tolist():  # rounding landed on a tile without mass: take the nearest with mass
        positive = np.flatnonzero(sums[rows[i]] > 0)
        t[i] = positive[np.argmin(np.abs(positive - t[i]))]
    before = np.where(t > 0, cum[rows, np.maximum(t - 1, 0)], 0.0)
    cols = t[:, None] * tile + np.arange(tile)
    inside = w[rows[:, None], np.minimum(cols, n - 1)]                 # (N, tile) copy
    inside[cols >= n] = 0.0
    running = np.cumsum(inside, axis=1)
    residual = target - before
    j = (running < residual[:, None]).sum(axis=1)
    # Rounding can put the residual outside the tile's running sums: take the tile's last (or
    # first) positive column — never a zero-weight one — and call the draw uncertain.
    odd = (j >= tile) | (residual <= 0)
    if odd.any():
        positive = inside[odd] > 0
        last = tile - 1 - np.argmax(positive[:, ::-1], axis=1)
        first = np.argmax(positive, axis=1)
        j[odd] = np.where(residual[odd] <= 0, first, last)
    out = t * tile + j
    if margin is None:
        return out
    k = np.arange(rows.size)
    lower = before + np.where(j > 0, running[k, np.maximum(j - 1, 0)], 0.0)
    upper = before + running[k, j]
    m = 2.02 * np.asarray(margin, dtype=np.float64)[rows] * total[rows]
    certain = (target - lower > m) & (upper - target > m) & ~odd
    return out, certain
