"""Multivariate ("metric") Laplace noise: density ∝ exp(−ε‖z‖) in R^d.

Feyisetan, Balle, Drake, Diethe (WSDM 2020), §3 / Algorithm 1: the radius ‖z‖ follows
Gamma(shape=d, scale=1/ε) and the direction is uniform on the unit sphere, independent of it.
Adding such z to φ(w) gives ε·‖φ(w) − φ(w′)‖ metric DP (the density ratio at any point is at
most exp(ε‖φ(w) − φ(w′)‖) by the triangle inequality).
"""

from __future__ import annotations

import numpy as np

from textdp._checks import check_epsilon, check_rng


def uniform_sphere(size: int, dim: int, rng: np.random.Generator | None = None,
                   dtype=np.float64) -> np.ndarray:
    """``size`` directions uniform on the unit sphere S^{dim−1} (normalised standard normals)."""
    rng = check_rng(rng)
    g = rng.standard_normal((size, dim), dtype=dtype)
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    # A zero Gaussian vector has probability 0; redraw defensively rather than divide by zero.
    while (bad := norms[:, 0] == 0).any():
        g[bad] = rng.standard_normal((int(bad.sum()), dim), dtype=dtype)
        norms[bad] = np.linalg.norm(g[bad], axis=1, keepdims=True)
    g /= norms
    return g


def metric_laplace(size: int, dim: int, epsilon: float,
                   rng: np.random.Generator | None = None, *, dtype=np.float64) -> np.ndarray:
    """``size`` draws of z ∈ R^dim with density ∝ exp(−ε‖z‖).

    Radius Gamma(dim, 1/ε) times a uniform direction. Returns shape ``(size, dim)``.
    """
    epsilon = check_epsilon(epsilon)
    if not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    rng = check_rng(rng)
    direction = uniform_sphere(size, int(dim), rng, dtype=dtype)
    radius = rng.gamma(shape=float(dim), scale=1.0 / epsilon, size=size)
    direction *= radius.astype(dtype, copy=False)[:, None]
    return direction
