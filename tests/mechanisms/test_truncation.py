"""Truncation baseline (Meehan et al. 2022, App. A.3; SPEC §4): box, sensitivity, Laplace noise."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from textdp.mechanisms.document import Truncation

ALPHA = 1e-6


def _box(d: int = 5, allocation: str = "l1") -> Truncation:
    lo = -np.linspace(0.5, 1.0, d)
    return Truncation(lo, lo + np.linspace(1.0, 2.0, d), epsilon=2.0, allocation=allocation)


def test_box_is_the_central_75_percent_of_public_embeddings():
    rng = np.random.default_rng(0)
    public = rng.normal(0, [1.0, 3.0], size=(100_001, 2))
    t = Truncation.from_public(public, epsilon=1.0)
    np.testing.assert_allclose(t.lower, np.quantile(public, 0.125, axis=0))
    np.testing.assert_allclose(t.upper, np.quantile(public, 0.875, axis=0))
    inside = ((public >= t.lower) & (public <= t.upper)).mean(axis=0)
    np.testing.assert_allclose(inside, 0.75, atol=1e-3)


def test_noise_scale_is_l1_width_over_k_epsilon():
    t = _box()
    width = float(np.sum(t.upper - t.lower))
    for k in (1, 3, 40):
        assert t.noise_scale(k).shape == (5,)
        assert (t.noise_scale(k) >= width / (k * t.epsilon)).all()
        np.testing.assert_allclose(t.noise_scale(k), width / (k * t.epsilon), rtol=1e-15)


def test_per_dimension_scale_is_sentdp_app_a3():
    """SentDP App. A.3: Laplace noise of scale d·w_j/(k·ε) on dimension j ("768w/(kε)")."""
    t = _box(allocation="per_dimension")
    w = t.upper - t.lower
    d = w.size
    for k in (1, 3, 40):
        assert (t.noise_scale(k) >= d * w / (k * t.epsilon)).all()
        np.testing.assert_allclose(t.noise_scale(k), d * w / (k * t.epsilon), rtol=1e-15)
    # Not the L1 allocation: the widths differ, so the scales differ between coordinates.
    assert np.ptp(t.noise_scale(1)) > 0.1
    assert t.parameters["allocation"] == "per_dimension"
    with pytest.raises(ValueError):
        Truncation(np.zeros(2), np.ones(2), epsilon=1.0, allocation="l2")


def test_allocations_agree_on_a_cube_and_l1_adds_less_total_noise():
    cube_l1 = Truncation(np.zeros(4), np.full(4, 2.0), epsilon=1.0)
    cube_pd = Truncation(np.zeros(4), np.full(4, 2.0), epsilon=1.0, allocation="per_dimension")
    np.testing.assert_allclose(cube_l1.noise_scale(3), cube_pd.noise_scale(3), rtol=1e-15)
    l1, pd = _box(), _box(allocation="per_dimension")
    assert (l1.noise_scale(2) ** 2).sum() < (pd.noise_scale(2) ** 2).sum()  # Cauchy–Schwarz


def test_clipped_mean_clips_each_sentence_before_averaging():
    t = Truncation(np.zeros(2), np.ones(2), epsilon=1.0)
    s = np.array([[5.0, -5.0], [0.5, 0.5]])
    np.testing.assert_allclose(t.clipped_mean(s), [0.75, 0.25])


@pytest.mark.parametrize("allocation", ["l1", "per_dimension"])
def test_exact_privacy_neighbouring_documents(allocation):
    """Σ_j |Δ_j|/scale_j of the clipped means of neighbours ≤ ε: the density ratio is ≤ e^ε."""
    rng = np.random.default_rng(1)
    t = _box(8, allocation)
    worst = 0.0
    for _ in range(500):
        k = int(rng.integers(1, 20))
        x = rng.normal(0, 2, (k, 8))
        x2 = x.copy()
        x2[rng.integers(k)] = rng.choice([-1e9, 1e9], size=8)
        ratio = (np.abs(t.clipped_mean(x) - t.clipped_mean(x2)) / t.noise_scale(k)).sum()
        worst = max(worst, ratio)
    assert worst <= t.epsilon + 1e-12
    assert worst > 0.9 * t.epsilon  # the box is used almost fully: the bound is not vacuous


def _laplace_ks_pvalue(t: Truncation, s: np.ndarray, rng, scale_factor: float = 1.0,
                       n: int = 40_000) -> float:
    mean = t.clipped_mean(s)
    scale = t.noise_scale(s.shape[0])
    z = np.vstack([t.release(s, rng) for _ in range(n)]) - mean
    return float(stats.kstest((z / (scale * scale_factor)).ravel(), stats.laplace.cdf).pvalue)


@pytest.mark.statistical
@pytest.mark.parametrize("allocation", ["l1", "per_dimension"])
def test_release_noise_is_laplace_with_the_right_scale(allocation):
    rng = np.random.default_rng(2)
    t = _box(allocation=allocation)
    s = rng.normal(0, 1, (4, 5))
    assert _laplace_ks_pvalue(t, s, rng) > ALPHA


@pytest.mark.statistical
def test_release_noise_power_wrong_allocation():
    """Power: per-dimension noise read with the L1 allocation's scales (or back) must reject."""
    rng = np.random.default_rng(4)
    pd, l1 = _box(allocation="per_dimension"), _box()
    s = rng.normal(0, 1, (4, 5))
    mean = pd.clipped_mean(s)
    z = np.vstack([pd.release(s, rng) for _ in range(5000)]) - mean
    # Per coordinate: the narrowest one (scale 0.625 against the L1 allocation's 0.9375).
    assert stats.kstest(z[:, 0] / pd.noise_scale(4)[0], stats.laplace.cdf).pvalue > ALPHA
    assert stats.kstest(z[:, 0] / l1.noise_scale(4)[0], stats.laplace.cdf).pvalue < ALPHA
    z = np.vstack([l1.release(s, rng) for _ in range(5000)]) - mean
    assert stats.kstest(z[:, 0] / pd.noise_scale(4)[0], stats.laplace.cdf).pvalue < ALPHA


@pytest.mark.statistical
def test_release_noise_power_wrong_scale():
    rng = np.random.default_rng(3)
    t = _box()
    s = rng.normal(0, 1, (4, 5))
    # The same test with the scale off by 5% either way must reject.
    assert _laplace_ks_pvalue(t, s, rng, scale_factor=1.05) < ALPHA
    assert _laplace_ks_pvalue(t, s, rng, scale_factor=1 / 1.05) < ALPHA


def test_guarantee_and_bad_inputs():
    t = _box()
    g = t.guarantee
    assert "SentDP" in g.notion and g.epsilon == 2.0
    assert any("same number of sentences" in a for a in g.assumptions)
    with pytest.raises(ValueError):
        Truncation(np.ones(3), np.ones(3), epsilon=1.0)
    with pytest.raises(ValueError):
        Truncation(np.zeros(3), np.ones(2), epsilon=1.0)
    with pytest.raises(ValueError):
        Truncation(np.zeros(3), np.ones(3), epsilon=0.0)
    with pytest.raises(ValueError):
        Truncation.from_public(np.zeros((10, 3)), epsilon=1.0, coverage=1.0)
    with pytest.raises(ValueError):
        t.release(np.zeros((0, 5)))
    with pytest.raises(ValueError):
        t.release(np.zeros(5))
    with pytest.raises(ValueError):
        t.release(np.full((2, 5), np.nan))
    with pytest.raises(TypeError):
        t.release(np.zeros((2, 5)), rng=0)
