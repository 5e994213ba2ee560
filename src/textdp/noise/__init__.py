"""Noise samplers: pure functions of (parameters, size, rng). No files, no global state."""

from textdp.noise.laplace import metric_laplace, uniform_sphere

__all__ = ["metric_laplace", "uniform_sphere"]
