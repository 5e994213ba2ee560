"""Truncated (conditioned) Poisson: χ² against the exact pmf at α = 1e-6, with power checks."""

import math

import numpy as np
import pytest
from scipy import stats

from textdp.noise import truncated_poisson
from textdp.noise.poisson import truncated_poisson_pmf

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


def _law_p(x, lam, low, high):
    top = int(x.max()) + 5 if high is None else high
    ks = np.arange(low, top + 1)
    p = truncated_poisson_pmf(ks, lam, low, high)
    p[-1] += max(0.0, 1.0 - p.sum())  # the (astronomically small) mass beyond the table
    return _chi2_p(np.bincount(x - low, minlength=ks.size), p)


CASES = [
    (math.log(47_883), 1, 47_883),  # the truncated-Gumbel mechanism on the default vocabulary
    (math.log(30), 1, 30),
    (1.0, 1, None),                 # a quarter of the mass removed: rejection sampling
    (2.0, 15, 20),                  # far upper tail: inversion of the survival function
    (30.0, 0, 5),                   # far lower tail: inversion of the CDF
]


@pytest.mark.statistical
@pytest.mark.parametrize("lam,low,high", CASES)
def test_law(lam, low, high):
    x = truncated_poisson(lam, low, high, N, np.random.default_rng(int(lam * 100) + low))
    assert x.dtype == np.int64
    assert x.min() >= low and (high is None or x.max() <= high)
    assert _law_p(x, lam, low, high) > ALPHA


@pytest.mark.statistical
def test_power():
    rng = np.random.default_rng(9)
    # Clamping K = 0 to 1 instead of conditioning on K ≥ 1 is rejected.
    clamped = np.maximum(rng.poisson(1.0, N), 1)
    assert _law_p(clamped, 1.0, 1, None) < ALPHA
    # A 5% wrong mean is rejected at the mechanism's own λ = ln|V|.
    lam = math.log(47_883)
    wrong = truncated_poisson(lam * 1.05, 1, 47_883, N, rng)
    assert _law_p(wrong, lam, 1, 47_883) < ALPHA


def test_pmf_sums_to_one_and_matches_scipy():
    ks = np.arange(0, 60)
    p = truncated_poisson_pmf(ks, 3.4, 1, 30)
    assert p[0] == 0 and p[31:].sum() == 0
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    raw = stats.poisson.pmf(ks[1:31], 3.4)
    np.testing.assert_allclose(p[1:31], raw / raw.sum(), rtol=1e-12)


def test_argument_checks():
    with pytest.raises(ValueError, match="lam"):
        truncated_poisson(0.0, 1, 3, 5)
    with pytest.raises(ValueError, match="low ≤ high"):
        truncated_poisson(1.0, 4, 3, 5)
    with pytest.raises(ValueError, match="size"):
        truncated_poisson(1.0, 1, 3, -1)
    assert truncated_poisson(1.0, 2, 2, 7, np.random.default_rng(0)).tolist() == [2] * 7
