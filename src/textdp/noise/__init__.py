"""Noise samplers: pure functions of (parameters, size, rng). No files, no global state."""

from textdp.noise.laplace import metric_laplace, uniform_sphere

__all__ = ["metric_laplace", "uniform_sphere"]
from textdp.noise.geometric import clamped_geometric, two_sided_geometric  # noqa: F401,E402
from textdp.noise.gumbel import choose_from_weights, gumbel, gumbel_max, truncated_gumbel  # noqa: F401,E402
from textdp.noise.poisson import truncated_poisson  # noqa: F401,E402
