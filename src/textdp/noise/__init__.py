"""Noise samplers: pure functions of (parameters, size, rng). No files, no global state.

Every sampler of textdp lives here once, and mechanisms import these public names only:

* :func:`metric_laplace` — density ∝ exp(−‖z‖/scale) in R^d (MVC, Mahalanobis, Vickrey, PrivEmb);
  :func:`uniform_sphere` its direction;
* :func:`two_sided_geometric`, :func:`clamped_geometric` and their exact pmf (1-Diffractor);
* :func:`gumbel_max` — the exponential mechanism (DeepCandidate), :func:`choose_from_weights` —
  the same law by certified sequential halving (TEM, SanText), :func:`gumbel`,
  :func:`truncated_gumbel` (truncated Gumbel);
* :func:`truncated_poisson` (truncated Gumbel's number of candidates).
"""

from textdp.noise.geometric import (
    clamped_geometric,
    clamped_geometric_log_pmf,
    clamped_geometric_pmf,
    two_sided_geometric,
)
from textdp.noise.gumbel import (
    choose_from_weights,
    gumbel,
    gumbel_max,
    halving_levels,
    truncated_gumbel,
    truncated_gumbel_cdf,
)
from textdp.noise.laplace import metric_laplace, uniform_sphere
from textdp.noise.poisson import truncated_poisson, truncated_poisson_pmf

__all__ = [
    "choose_from_weights",
    "clamped_geometric",
    "clamped_geometric_log_pmf",
    "clamped_geometric_pmf",
    "gumbel",
    "gumbel_max",
    "halving_levels",
    "metric_laplace",
    "truncated_gumbel",
    "truncated_gumbel_cdf",
    "truncated_poisson",
    "truncated_poisson_pmf",
    "two_sided_geometric",
    "uniform_sphere",
]
