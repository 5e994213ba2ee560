"""Gumbel, truncated Gumbel, Gumbel-max selection and inversion from weight rows.

Distribution tests at α = 1e-6 (KS for continuous laws, χ² with merged bins for categorical ones),
each with a power check: the same test must reject a deliberately wrong sampler.
"""

import math

import numpy as np
import pytest
from scipy import special, stats

from textdp.noise import choose_from_weights, gumbel, gumbel_max, truncated_gumbel
from textdp.noise.gumbel import halving_levels, truncated_gumbel_cdf

ALPHA = 1e-6
N = 200_000


def _chi2_p(counts, probs):
    """χ² p-value with cells merged (in order) until every expected count is ≥ 5."""
    expected = probs * counts.sum()
    obs_m, exp_m, o, e = [], [], 0.0, 0.0
    for c, x in zip(counts, expected, strict=True):
        o, e = o + c, e + x
        if e >= 5:
            obs_m.append(o)
            exp_m.append(e)
            o = e = 0.0
    if e > 0:
        obs_m[-1] += o
        exp_m[-1] += e
    return stats.chisquare(obs_m, exp_m).pvalue


def test_gumbel_is_gumbel():
    x = gumbel(N, 1.7, np.random.default_rng(1))
    assert stats.kstest(x, stats.gumbel_r(scale=1.7).cdf).pvalue > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("scale,bound", [(1.0, 2.0), (0.3, 5.0), (12.2, 5.66), (376.0, 5.66)])
def test_truncated_gumbel_law(scale, bound):
    x = truncated_gumbel(N, scale, bound, np.random.default_rng(int(scale * 10)))
    assert np.abs(x).max() <= bound
    assert stats.kstest(x, lambda t: truncated_gumbel_cdf(t, scale, bound)).pvalue > ALPHA


@pytest.mark.statistical
def test_truncated_gumbel_power():
    """A 5% wrong scale, and clipping instead of conditioning, are both rejected."""
    scale, bound = 1.0, 2.0
    cdf = lambda t: truncated_gumbel_cdf(t, scale, bound)  # noqa: E731
    wrong = truncated_gumbel(N, scale * 1.05, bound, np.random.default_rng(2))
    assert stats.kstest(wrong, cdf).pvalue < ALPHA
    clipped = np.clip(np.random.default_rng(3).gumbel(0, scale, N), -bound, bound)
    assert stats.kstest(clipped, cdf).pvalue < ALPHA


def test_truncated_gumbel_cdf_matches_scipy():
    t = np.linspace(-3, 3, 13)
    g = stats.gumbel_r(scale=0.8)
    want = (g.cdf(np.clip(t, -2, 2)) - g.cdf(-2)) / (g.cdf(2) - g.cdf(-2))
    np.testing.assert_allclose(truncated_gumbel_cdf(t, 0.8, 2.0), want, atol=1e-14)


def test_truncated_gumbel_extreme_ratio_stays_finite():
    # bound/scale far beyond exp's range: F(−B) underflows to 0, draws stay inside [−B, B].
    x = truncated_gumbel(10_000, 0.01, 50.0, np.random.default_rng(4))
    assert np.isfinite(x).all() and np.abs(x).max() <= 50.0


@pytest.mark.statistical
def test_gumbel_max_is_softmax():
    scores = np.array([0.0, -0.5, -1.0, -3.0, -np.inf, 0.2])
    scale = 0.8
    probs = special.softmax(np.where(np.isinf(scores), -np.inf, scores / scale))
    rng = np.random.default_rng(5)
    choices = gumbel_max(np.tile(scores, (100_000, 1)), scale, rng)
    counts = np.bincount(choices, minlength=6)
    assert counts[4] == 0
    keep = probs > 0
    assert _chi2_p(counts[keep], probs[keep]) > ALPHA
    # Power: the law of scale × 1.1 is rejected.
    wrong = np.bincount(gumbel_max(np.tile(scores, (100_000, 1)), scale * 1.1, rng), minlength=6)
    assert _chi2_p(wrong[keep], probs[keep]) < ALPHA


def test_gumbel_max_numerics():
    rng = np.random.default_rng(6)
    out = gumbel_max(np.array([[1e300, -1e300, 0.0], [-1e300, 1e300, -np.inf]]), 1.0, rng)
    np.testing.assert_array_equal(out, [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        gumbel_max(np.array([0.0, np.nan]), 1.0, rng)
    with pytest.raises(ValueError, match="finite"):
        gumbel_max(np.array([-np.inf, -np.inf]), 1.0, rng)
    with pytest.raises(ValueError, match="scale"):
        gumbel_max(np.array([0.0]), 0.0, rng)


@pytest.mark.statistical
def test_choose_from_weights_law_and_power():
    rng = np.random.default_rng(7)
    n = 1000  # not a multiple of the tile: the partial last tile is exercised
    w = np.exp(-rng.random((3, n)) * 8).astype(np.float32)
    w[1, 100:400] = 0.0  # zero weights are never chosen
    rows = np.repeat(np.arange(3), 100_000)
    u = rng.random((rows.size, halving_levels(n, 64)))
    got = choose_from_weights(w, rows, u, tile=64)
    for r in range(3):
        counts = np.bincount(got[rows == r], minlength=n)
        p = w[r].astype(np.float64) / w[r].sum(dtype=np.float64)
        if r == 1:
            assert counts[100:400].sum() == 0
        assert _chi2_p(counts[p > 0], p[p > 0]) > ALPHA
    # Power: weights sharpened as if ε were 10% larger are rejected.
    sharper = (w.astype(np.float64) ** 1.1).astype(np.float32)
    got = choose_from_weights(sharper, rows, u, tile=64)
    counts = np.bincount(got[rows == 0], minlength=n)
    p = w[0].astype(np.float64) / w[0].sum(dtype=np.float64)
    assert _chi2_p(counts, p) < ALPHA


def test_halving_decisions_and_their_certificate():
    # Two columns, weights 1 and 3: left with probability 1/4, decided by the single uniform.
    w = np.array([[1.0, 3.0]])
    u = np.array([[0.0], [0.2499], [0.2501], [0.9]])
    rows = np.zeros(4, dtype=int)
    np.testing.assert_array_equal(choose_from_weights(w, rows, u, tile=2), [0, 0, 1, 1])
    cols, certain = choose_from_weights(w, rows, u, tile=2, rel_error=np.array([1e-3]))
    np.testing.assert_array_equal(cols, [0, 0, 1, 1])
    # With weights off by up to 0.1%, the threshold 1/4 could lie in [0.2496, 0.2504].
    np.testing.assert_array_equal(certain, [True, False, False, True])
    # Exact weights (no error) certify everything, and a column of weight 0 is never taken.
    w = np.array([[0.0, 1.0, 0.0, 2.0, 1.0, 0.0]], dtype=np.float32)
    u = np.random.default_rng(1).random((500, halving_levels(6, 2)))
    cols, certain = choose_from_weights(w, np.zeros(500, dtype=int), u, tile=2,
                                        rel_error=np.zeros(1))
    assert certain.all() and not np.isin(cols, [0, 2, 5]).any()
    with pytest.raises(ValueError, match="positive"):
        choose_from_weights(np.zeros((1, 4), np.float32), np.array([0]), np.zeros((1, 2)), tile=2)
    with pytest.raises(ValueError, match="power of two"):
        choose_from_weights(np.ones((1, 8)), np.array([0]), np.zeros((1, 3)), tile=3)
    with pytest.raises(ValueError, match="shape"):
        choose_from_weights(np.ones((1, 8)), np.array([0]), np.zeros((1, 2)), tile=2)


@pytest.mark.statistical
def test_certified_choices_match_exact_weights():
    """Perturb weights within the stated error: certified draws never change column."""
    rng = np.random.default_rng(8)
    n = 3000
    w = np.exp(-rng.random((2, n)) * 6)
    rho = 1e-3
    noisy = w * (1 + rng.uniform(-rho, rho, w.shape))
    rows = rng.integers(0, 2, 50_000)
    u = rng.random((rows.size, halving_levels(n, 64)))
    exact = choose_from_weights(w, rows, u)
    got, certain = choose_from_weights(noisy, rows, u, rel_error=np.full(2, rho))
    assert (got[certain] == exact[certain]).all()
    assert 0.9 < certain.mean() < 1.0  # the certificate is neither vacuous nor all-rejecting


def test_argument_checks():
    with pytest.raises(TypeError):
        truncated_gumbel(1.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="bound"):
        truncated_gumbel(3, 1.0, 0.0)
    with pytest.raises(ValueError, match="scale"):
        gumbel(3, -1.0)
    assert math.isclose(truncated_gumbel_cdf(np.array([5.0]), 1.0, 2.0)[0], 1.0)


@pytest.mark.statistical
def test_gumbel_max_size_draws_one_row_with_the_same_law():
    """``size`` draws of one row (DeepCandidate's sampler): the same softmax law, in blocks."""
    scores = np.array([0.0, -0.5, -1.0, -3.0, -np.inf, 0.2])
    probs = special.softmax(np.where(np.isinf(scores), -np.inf, scores / 0.8))
    rng = np.random.default_rng(9)
    choices = gumbel_max(scores, 0.8, rng, size=400_000)  # more than one block of 2^20 values
    assert choices.shape == (400_000,)
    counts = np.bincount(choices, minlength=6)
    keep = probs > 0
    assert counts[4] == 0 and _chi2_p(counts[keep], probs[keep]) > ALPHA
    wrong = np.bincount(gumbel_max(scores, 0.8 * 1.1, rng, size=400_000), minlength=6)
    assert _chi2_p(wrong[keep], probs[keep]) < ALPHA
    with pytest.raises(ValueError, match="single row"):
        gumbel_max(np.zeros((2, 3)), 1.0, rng, size=5)
