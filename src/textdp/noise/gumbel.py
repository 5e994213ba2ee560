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
                        tile: int = 64) -> np.ndarray:
    """For each draw i, a column of ``weights[rows[i]]`` with probability ∝ its weight.

    Inversion from the uniform ``u[i]`` ∈ [0, 1): the target (1 − u)·total lies in (0, total], the
    column is the first whose running sum reaches it. Columns are summed tile by tile so that each
    draw only accumulates one tile (O(|V|/tile + tile) per draw after an O(|V|) pass per row).
    A column of weight 0 is never returned.

    Args:
        weights: (R, n) non-negative finite weights; every row must have a positive total.
        rows: (N,) row of each draw.
        u: (N,) uniforms in [0, 1).
        tile: columns per tile.

    Returns:
        (N,) int64 column indices.
    """
    w = np.asarray(weights)
    r_count, n = w.shape
    rows = np.asarray(rows, dtype=np.int64)
    u = np.asarray(u, dtype=np.float64)
    if rows.size == 0:
        return np.empty(0, dtype=np.int64)
    tile = max(1, min(int(tile), n))
    full = n // tile
    # Tile sums in the weights' own precision (float32: relative error ~1e-7 per tile, far
    # below anything a privacy bound or a test can see), running sums over tiles in float64.
    # The weights are only viewed, never copied: a last partial tile is summed on its own.
    sums = w[:, :full * tile].reshape(r_count, full, tile).sum(axis=2)
    if full * tile < n:
        sums = np.concatenate([sums, w[:, full * tile:].sum(axis=1, keepdims=True)], axis=1)
    sums = sums.astype(np.float64)
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
    inside = w[rows[:, None], np.minimum(cols, n - 1)].astype(np.float64)  # (N, tile)
    inside[cols >= n] = 0.0
    running = np.cumsum(inside, axis=1)
    # Inside the tile, invert the tile's own running sum at the same fraction of its mass, so
    # the choice is ∝ the weights whatever the rounding of the tile sums. A positive fraction
    # never selects a zero-weight column (the running sum must grow to reach it).
    frac = np.clip((target - before) / sums[rows, t], np.finfo(np.float64).tiny, 1.0)
    j = (running < (frac * running[:, -1])[:, None]).sum(axis=1)
    # Rounding can leave the target a hair above the last running sum: take the tile's last
    # positive column (it has one: it was chosen with positive mass).
    over = j >= tile
    if over.any():
        positive = inside[over] > 0
        j[over] = tile - 1 - np.argmax(positive[:, ::-1], axis=1)
    return t * tile + j
