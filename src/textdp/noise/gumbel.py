"""Gumbel noise, truncated Gumbel noise and exponential-mechanism selection.

* ``gumbel``: Gumbel(0, b), CDF F(x) = exp(−e^{−x/b}).
* ``truncated_gumbel``: Gumbel(0, b) *conditioned* on |g| ≤ B — the noise of the density-aware
  truncated-Gumbel mechanism (Xu, Aggarwal, Feyisetan, Teissier, FLAIRS 2021), B = the
  vocabulary's largest word distance. Sampled by inversion of the truncated CDF, so no draw is
  wasted and none is clipped (clipping would put mass on ±B, a different law).
* ``gumbel_max``: the exponential mechanism by the Gumbel-max trick (argmax of score + Gumbel(0, b)
  has law softmax(score / b); McSherry & Talwar 2007, with b = 2Δ/ε).
* ``choose_from_weights``: the same categorical law sampled by sequential halving from a few
  uniforms per draw, for rows of weights shared by many draws (TEM and SanText precompute one row
  per distinct input word and reuse it for every token of that word). The randomness (the
  uniforms) is drawn before the weights are known, which keeps a mechanism's ``draw``/``apply``
  split, and each decision can be certified against a bound on the weights' errors.

Numerics are idealised, as for every floating-point sampler: an outcome whose probability is
below about 2⁻⁵³ relative to the row total may be sampled with a probability off by that much.
"""

from __future__ import annotations

import math

import numpy as np

from textdp._checks import check_epsilon, check_rng
from textdp._checks import check_size as _check_size

__all__ = [
    "gumbel",
    "truncated_gumbel",
    "truncated_gumbel_cdf",
    "gumbel_max",
    "choose_from_weights",
    "halving_levels",
]


def gumbel(size: int, scale: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """``size`` draws of Gumbel(0, ``scale``) (float64)."""
    size = _check_size(size)
    scale = check_epsilon(scale, "scale")
    return check_rng(rng).gumbel(0.0, scale, size=size)


def truncated_gumbel(size: int, scale: float, bound: float,
                     rng: np.random.Generator | None = None) -> np.ndarray:
    """``size`` draws of Gumbel(0, ``scale``) conditioned on |g| ≤ ``bound`` (float64).

    Inversion: with y = e^{−x/b}, F(x) = e^{−y}; a uniform u on [F(−B), F(B)] gives
    x = −b·ln(−ln u). The result lies in [−B, B] exactly (a final clip only absorbs rounding).
    """
    size = _check_size(size)
    b = check_epsilon(scale, "scale")
    bound = check_epsilon(bound, "bound")
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


def gumbel_max(scores: np.ndarray, scale: float, rng: np.random.Generator | None = None, *,
               size: int | None = None) -> np.ndarray:
    """Exponential mechanism by Gumbel-max: argmax over the last axis of scores + Gumbel(0, scale).

    Pr[i] = exp(score_i / scale) / Σ_j exp(score_j / scale) for each row; with scale = 2Δ/ε this is
    the ε-DP exponential mechanism for a utility of sensitivity Δ (McSherry & Talwar 2007). Scores
    of −inf never win; NaN or +inf scores, or a row with no finite score, raise ValueError.
    With ``size``, ``size`` independent draws from the one row ``scores`` (1-D), the noise drawn
    in blocks of at most 2^20 values.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 0 or s.shape[-1] == 0:
        raise ValueError("scores must have at least one candidate on the last axis")
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("scores contain NaN or +inf")
    if not np.isfinite(s).any(axis=-1).all():
        raise ValueError("every row needs at least one finite score")
    scale = check_epsilon(scale, "scale")
    rng = check_rng(rng)
    # Shifting a row by its maximum changes no argmax and keeps ±1e300 scores from overflowing.
    shifted = s - s.max(axis=-1, keepdims=True)
    if size is None:
        return (shifted + rng.gumbel(0.0, scale, size=s.shape)).argmax(axis=-1)
    if s.ndim != 1:
        raise ValueError("size needs a single row of scores")
    out = np.empty(_check_size(size), dtype=np.int64)
    rows = max(1, (1 << 20) // s.size)
    for start in range(0, out.size, rows):
        n = min(rows, out.size - start)
        out[start:start + n] = (shifted + rng.gumbel(0.0, scale, size=(n, s.size))).argmax(axis=1)
    return out


def _tile_for(n: int, tile: int) -> int:
    """The tile actually used: ``tile``, or the smallest power of two ≥ n when n is smaller."""
    tile = int(tile)
    if tile < 1 or tile & (tile - 1):
        raise ValueError(f"tile must be a power of two, got {tile}")
    return min(tile, 1 << max(0, int(n) - 1).bit_length())


def halving_levels(n: int, tile: int = 64) -> int:
    """How many uniforms :func:`choose_from_weights` needs per draw for rows of ``n`` weights."""
    tile = _tile_for(n, tile)
    n_tiles = -(-int(n) // tile)
    return (n_tiles - 1).bit_length() + (tile - 1).bit_length()


def choose_from_weights(weights: np.ndarray, rows: np.ndarray, u: np.ndarray, *,
                        tile: int = 64, rel_error: np.ndarray | None = None,
                        abs_error: float = 0.0):
    """For each draw i, a column of ``weights[rows[i]]`` with probability ∝ its weight.

    Sequential halving: the columns form a binary tree (tiles of ``tile`` columns, then the
    columns inside a tile); at each node the draw goes left when its own uniform for that level
    is below left mass / (left + right mass). The product of those choices is exactly
    weight / total, and each choice reads only the two masses at hand — so errors in the weights
    move each decision's threshold by a *relative* amount, instead of moving the ends of a whole
    cumulative sum, which is what lets :func:`textdp.mechanisms.word.tem.sample_by_distinct_word`
    certify choices made from float32 weights. Cost: one O(|V|) pass per row, then
    O(log|V| + tile) per draw. A column of weight 0 is never returned.

    Args:
        weights: (R, n) non-negative finite weights (float32 or float64), positive row totals.
        rows: (N,) row of each draw.
        u: (N, L) uniforms in [0, 1), L = :func:`halving_levels` (n, tile).
        tile: columns per tile (a power of two).
        rel_error: optional (R,) bound ρ_r < 1: every weight of row r is within
            ρ_r·w + ``abs_error`` of its exact value w (masses summed from the given weights may
            carry their own rounding inside ρ_r). Given it, the function also returns which
            draws are *certain*: at every decision the uniform lies outside the range the
            threshold could take under those errors, so exact weights give the same column.
        abs_error: absolute error allowed per weight (underflow), with ``rel_error``.

    Returns:
        (N,) int64 column indices, or ``(columns, certain)`` when ``rel_error`` is given.
    """
    w = np.asarray(weights)
    n = w.shape[1]
    rows = np.asarray(rows, dtype=np.int64)
    u = np.asarray(u, dtype=np.float64)
    tile = _tile_for(n, tile)
    levels = halving_levels(n, tile)
    if u.shape != (rows.size, levels):
        raise ValueError(f"u must have shape ({rows.size}, {levels}), got {u.shape}")
    certify = rel_error is not None
    if rows.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return (empty, np.empty(0, dtype=bool)) if certify else empty
    rel = None if not certify else np.asarray(rel_error, dtype=np.float64)[rows]
    certain = np.ones(rows.size, dtype=bool)
    tree, counts = _tile_tree(w, tile, levels - (tile - 1).bit_length())
    node = np.zeros(rows.size, dtype=np.int64)
    for level in range(1, len(tree)):
        left = tree[level][rows, 2 * node]
        right = tree[level][rows, 2 * node + 1]
        go_right = _decide(left, right, u[:, level - 1], rel, counts[level][2 * node],
                           counts[level][2 * node + 1], abs_error, certain)
        node = 2 * node + go_right
    j = _inside_tile(w, rows, node, tile, u[:, len(tree) - 1:], rel, abs_error, certain)
    out = node * tile + j
    return (out, certain) if certify else out


def _tile_tree(w: np.ndarray, tile: int, tile_levels: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Binary tree of the tile masses of every row (root first) and the columns under each node."""
    r_count, n = w.shape
    full = n // tile
    # Tile sums as a product with a vector of ones: BLAS sums 64 contiguous values several times
    # faster than a reduction; the error of summing positive terms in any order is ≤ tile·u of
    # the sum, which the caller's error budget covers.
    ones = np.ones(tile, dtype=w.dtype)
    sums = (w[:, :full * tile].reshape(r_count, full, tile) @ ones).astype(np.float64)
    if full * tile < n:
        last = w[:, full * tile:].sum(axis=1, keepdims=True, dtype=np.float64)
        sums = np.concatenate([sums, last], axis=1)
    n_tiles = sums.shape[1]
    if not ((sums.sum(axis=1) > 0).all() and np.isfinite(sums).all()):
        raise ValueError("every row of weights needs a positive finite total")
    width = 1 << tile_levels
    tree = [np.zeros((r_count, width))]
    tree[0][:, :n_tiles] = sums
    counts = [np.zeros(width)]  # columns under each node (for the absolute error term)
    counts[0][:n_tiles] = tile
    counts[0][n_tiles - 1] = n - (n_tiles - 1) * tile
    while tree[-1].shape[1] > 1:  # pairs summed by strided adds (a length-2 reduction is slow)
        tree.append(tree[-1][:, 0::2] + tree[-1][:, 1::2])
        counts.append(counts[-1][0::2] + counts[-1][1::2])
    return tree[::-1], counts[::-1]


def _inside_tile(w, rows, node, tile, u, rel, abs_error, certain) -> np.ndarray:
    """The column inside each draw's chosen tile: the same halving, masses in float64."""
    n = w.shape[1]
    cols = node[:, None] * tile + np.arange(tile)
    inside = w[rows[:, None], np.minimum(cols, n - 1)].astype(np.float64)
    inside[cols >= n] = 0.0
    nodes = [inside]
    while nodes[-1].shape[1] > 1:
        nodes.append(nodes[-1][:, 0::2] + nodes[-1][:, 1::2])
    nodes.reverse()
    j = np.zeros(rows.size, dtype=np.int64)
    k = np.arange(rows.size)
    for level in range(1, len(nodes)):
        size = float(tile >> level)
        go_right = _decide(nodes[level][k, 2 * j], nodes[level][k, 2 * j + 1],
                           u[:, level - 1], rel, size, size, abs_error, certain)
        j = 2 * j + go_right
    return j


def _decide(left, right, u, rel, n_left, n_right, abs_error, certain):
    """Go right where u ≥ left/(left + right); clear ``certain`` where the errors could flip it."""
    total = left + right
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(total > 0, left / np.where(total > 0, total, 1.0), 0.5)
    # A side without mass is never entered (rounding in the parent cannot force it).
    go_right = np.where(left <= 0, True, np.where(right <= 0, False, u >= f))
    if rel is not None:
        # |ŵ − w| ≤ ρw + τ for the exact w gives |ŵ − w| ≤ (ρŵ + τ)/(1 − ρ) in computed terms.
        grow = 1.0 / np.maximum(1.0 - rel, 1e-12)
        e_left = (rel * left + n_left * abs_error) * grow
        e_right = (rel * right + n_right * abs_error) * grow
        lo_l, hi_l = np.maximum(left - e_left, 0.0), left + e_left
        lo_r, hi_r = np.maximum(right - e_right, 0.0), right + e_right
        with np.errstate(invalid="ignore", divide="ignore"):
            f_lo = np.where(lo_l + hi_r > 0, lo_l / (lo_l + hi_r), 0.0)
            f_hi = np.where(hi_l + lo_r > 0, hi_l / (hi_l + lo_r), 1.0)
        # f computed in float64 carries a few units of rounding: widen by 1e-14.
        certain &= (u < f_lo - 1e-14) | (u >= f_hi + 1e-14)
    return go_right.astype(np.int64)
