"""Multivariate ("metric") Laplace noise: density ∝ exp(−‖z‖/scale) in R^d, scale = 1/ε.

Feyisetan, Balle, Drake, Diethe (WSDM 2020), §3 / Algorithm 1 (also Wu et al. 2017, PrivEmb's
footnote 1): the radius ‖z‖ follows Gamma(shape=d, scale) and the direction is uniform on the unit
sphere, independent of it. Adding such z to φ(w) gives ε·‖φ(w) − φ(w′)‖ metric DP (the density
ratio at any point is at most exp(ε‖φ(w) − φ(w′)‖) by the triangle inequality). MVC, Vickrey,
Mahalanobis (before its linear map) and PrivEmb all draw their noise here.
"""

from __future__ import annotations

import numpy as np

from textdp._checks import check_epsilon, check_rng

__all__ = ["metric_laplace", "uniform_sphere"]


def _gaussian_rows(g: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fill ``g`` with standard normals; return each row's squared norm (never 0)."""
    rng.standard_normal(dtype=g.dtype, out=g)
    squared = np.einsum("ij,ij->i", g, g)
    # A zero Gaussian vector has probability 0; redraw defensively rather than divide by zero.
    while (zero := squared == 0).any():
        g[zero] = rng.standard_normal((int(zero.sum()), g.shape[1]), dtype=g.dtype)
        squared[zero] = np.einsum("ij,ij->i", g[zero], g[zero])
    return squared


def uniform_sphere(size: int, dim: int, rng: np.random.Generator | None = None,
                   dtype=np.float64) -> np.ndarray:
    """``size`` directions uniform on the unit sphere S^{dim−1} (normalised standard normals)."""
    g = np.empty((size, dim), dtype=dtype)
    g /= np.sqrt(_gaussian_rows(g, check_rng(rng)))[:, None]
    return g


def metric_laplace(size: int, dim: int, epsilon: float | None = None,
                   rng: np.random.Generator | None = None, *, scale: float | None = None,
                   dtype=np.float64, out: np.ndarray | None = None) -> np.ndarray:
    """``size`` draws of z ∈ R^dim with density ∝ exp(−ε‖z‖) = exp(−‖z‖/scale).

    Give ``epsilon`` or ``scale`` (= 1/ε; PrivEmb's Δ/ε). Radius Gamma(dim, scale) times a
    uniform direction (normalised standard normals): the normals are drawn first, then the
    radii, one row each. Returns shape ``(size, dim)`` in ``dtype``, written into ``out`` (a
    scratch buffer of that shape and dtype) when given.
    """
    if (epsilon is None) == (scale is None):
        raise TypeError("give exactly one of epsilon and scale")
    scale = 1.0 / check_epsilon(epsilon) if scale is None else check_epsilon(scale, "scale")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    rng = check_rng(rng)
    g = np.empty((size, int(dim)), dtype=dtype) if out is None else out
    if g.shape != (size, dim):
        raise ValueError(f"out must have shape ({size}, {dim}), got {g.shape}")
    squared = _gaussian_rows(g, rng)
    radius = rng.gamma(shape=float(dim), scale=scale, size=size)
    radius /= np.sqrt(squared)  # one multiplication per row normalises and scales at once
    g *= radius.astype(g.dtype, copy=False)[:, None]
    return g
