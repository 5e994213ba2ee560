"""Metric Laplace noise (density ∝ exp(−ε‖z‖)): distribution tests with power checks.

TESTING.md §1: KS of the radius against Gamma(d, 1/ε), of (v·u)² against Beta(½, (d−1)/2), the
χ² test of the mean direction, and radius–direction independence — at α = 1e-6, n = 200,000.
Every test is also run on a deliberately wrong sampler and must reject it.
"""

import numpy as np
import pytest
from scipy import stats

from textdp.noise import metric_laplace

ALPHA = 1e-6
N = 200_000
pytestmark = pytest.mark.statistical


def _radius_p(z, d, eps):
    return stats.kstest(np.linalg.norm(z, axis=1), stats.gamma(a=d, scale=1 / eps).cdf).pvalue


def _direction_p(z, v):
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    d = z.shape[1]
    return stats.kstest((u @ v) ** 2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue


def _mean_direction_p(z):
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    n, d = u.shape
    stat = n * d * float(np.sum(u.mean(axis=0) ** 2))
    return stats.chi2(d).sf(stat)


def _independence_p(z):
    r = np.linalg.norm(z, axis=1)
    return stats.ks_2samp(r[z[:, 0] > 0], r[z[:, 0] < 0]).pvalue


def _iid_laplace(n, d, eps, rng):
    """The classic L1-vs-L2 bug: independent Laplace coordinates."""
    return rng.laplace(scale=1 / eps, size=(n, d))


@pytest.mark.parametrize("d,eps", [(2, 0.1), (2, 10.0), (50, 1.0), (50, 10.0), (384, 0.1)])
def test_radius_is_gamma(d, eps):
    rng = np.random.default_rng(1000 + d)
    z = metric_laplace(N, d, eps, rng)
    assert z.shape == (N, d)
    assert _radius_p(z, d, eps) > ALPHA


def test_one_dimension_is_laplace():
    z = metric_laplace(N, 1, 2.0, np.random.default_rng(7))[:, 0]
    assert stats.kstest(z, stats.laplace(scale=0.5).cdf).pvalue > ALPHA


@pytest.mark.parametrize("d", [2, 50, 384])
def test_direction_is_uniform(d):
    rng = np.random.default_rng(2000 + d)
    z = metric_laplace(N, d, 2.0, rng)
    vs = [np.eye(d)[0]] + [v / np.linalg.norm(v) for v in rng.standard_normal((2, d))]
    for v in vs:
        assert _direction_p(z, v) > ALPHA
    assert _mean_direction_p(z) > ALPHA
    assert _independence_p(z) > ALPHA


def test_float32_draws_have_the_same_law():
    z = metric_laplace(N, 50, 2.0, np.random.default_rng(3), dtype=np.float32)
    assert z.dtype == np.float32
    assert _radius_p(z.astype(np.float64), 50, 2.0) > ALPHA
    assert _direction_p(z.astype(np.float64), np.eye(50)[0]) > ALPHA


# --- power checks: the same tests must reject wrong samplers --------------------------------

def test_radius_test_rejects_scale_times_1_05():
    rng = np.random.default_rng(11)
    assert _radius_p(metric_laplace(N, 50, 2.0, rng) * 1.05, 50, 2.0) < ALPHA
    assert _radius_p(metric_laplace(N, 50, 2.0, rng) / 1.05, 50, 2.0) < ALPHA


def test_direction_test_rejects_iid_laplace_coordinates():
    z = _iid_laplace(N, 50, 2.0, np.random.default_rng(12))
    assert _direction_p(z, np.eye(50)[0]) < ALPHA


def test_independence_test_rejects_direction_dependent_radius():
    rng = np.random.default_rng(13)
    z = metric_laplace(N, 50, 2.0, rng)
    z[z[:, 0] > 0] *= 1.05
    assert _independence_p(z) < ALPHA


def test_mean_direction_test_rejects_a_biased_direction():
    rng = np.random.default_rng(14)
    z = metric_laplace(N, 50, 2.0, rng)
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    u[:, 0] += 0.01
    assert _mean_direction_p(u) < ALPHA


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        metric_laplace(3, 2, eps, np.random.default_rng(0))


def test_bad_rng_and_dim():
    with pytest.raises(TypeError, match="Generator"):
        metric_laplace(3, 2, 1.0, rng=42)
    with pytest.raises(ValueError, match="dim"):
        metric_laplace(3, 0, 1.0, np.random.default_rng(0))


def test_scale_and_out_buffer():
    """``scale`` = 1/ε gives the same draws; ``out`` is filled and returned; one of the two only."""
    a = metric_laplace(1000, 7, 2.0, np.random.default_rng(3))
    buf = np.empty((1000, 7))
    b = metric_laplace(1000, 7, rng=np.random.default_rng(3), scale=0.5, out=buf)
    assert b is buf
    np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="exactly one"):
        metric_laplace(3, 2, 1.0, np.random.default_rng(), scale=1.0)
    with pytest.raises(TypeError, match="exactly one"):
        metric_laplace(3, 2, rng=np.random.default_rng())
    with pytest.raises(ValueError, match="out"):
        metric_laplace(3, 2, 1.0, np.random.default_rng(), out=np.empty((2, 2)))


@pytest.mark.parametrize("d,scale", [(50, 0.5), (384, 3.0)])
def test_radius_is_gamma_of_scale(d, scale):
    """PrivEmb's parametrisation: radius Gamma(d, scale) — and the test rejects scale × 1.05."""
    rng = np.random.default_rng(d)
    assert _radius_p(metric_laplace(N, d, rng=rng, scale=scale), d, 1 / scale) > ALPHA
    assert _radius_p(metric_laplace(N, d, rng=rng, scale=scale * 1.05), d, 1 / scale) < ALPHA
