"""Two-sided geometric noise, plain and clamped (1-Diffractor, Eq. (3)–(5)).

TESTING.md §2: χ² against the exact pmf (n = 200,000, bins merged until expected ≥ 5), symmetry,
fitted log-ratio slope −ε, and an exhaustive deterministic ε·|x − x′| check from the pmf. Each
distributional test is also run on a deliberately wrong sampler (ε × 1.05, a renormalised clamp)
and must reject it.
"""

import math

import numpy as np
import pytest
from scipy import stats

from textdp.noise import clamped_geometric, two_sided_geometric
from textdp.noise.geometric import clamped_geometric_log_pmf, clamped_geometric_pmf

ALPHA = 1e-6
N = 200_000


def _chi2_p(samples, support, probs):
    """χ² goodness of fit of integer ``samples`` against ``probs`` on ``support`` (merged bins)."""
    observed = np.zeros(support.size)
    idx = samples - support[0]
    assert idx.min() >= 0 and idx.max() < support.size, "sample outside the support"
    np.add.at(observed, idx, 1)
    expected = probs * samples.size
    # Merge adjacent bins (in order) until every merged bin expects ≥ 5.
    obs_m, exp_m, o, e = [], [], 0.0, 0.0
    for ob, ex in zip(observed, expected, strict=True):
        o += ob
        e += ex
        if e >= 5:
            obs_m.append(o)
            exp_m.append(e)
            o = e = 0.0
    if e > 0 or o > 0:
        obs_m[-1] += o
        exp_m[-1] += e
    obs_m, exp_m = np.array(obs_m), np.array(exp_m)
    stat = float(((obs_m - exp_m) ** 2 / exp_m).sum())
    return stats.chi2(len(obs_m) - 1).sf(stat)


def _two_sided_pmf(support, eps):
    a = math.exp(-eps)
    return (1 - a) / (1 + a) * a ** np.abs(support)


def _plain_p(samples, eps):
    k = int(np.abs(samples).max()) + 1
    support = np.arange(-k, k + 1)
    return _chi2_p(samples, support, _two_sided_pmf(support, eps))


# --- argument checks --------------------------------------------------------------------------

def test_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        two_sided_geometric(10, 0.0, rng)
    with pytest.raises(ValueError):
        two_sided_geometric(10, float("inf"), rng)
    with pytest.raises(TypeError):
        two_sided_geometric(10, "1", rng)
    with pytest.raises(ValueError):
        two_sided_geometric(-1, 1.0, rng)
    with pytest.raises(TypeError):
        two_sided_geometric(2.5, 1.0, rng)
    with pytest.raises(TypeError):
        two_sided_geometric(3, 1.0, 42)
    with pytest.raises(ValueError):
        clamped_geometric(np.array([5]), 1.0, 0, 4, rng)
    with pytest.raises(ValueError):
        clamped_geometric(np.array([0]), 1.0, 3, 2, rng)
    with pytest.raises(TypeError):
        clamped_geometric(np.array([0.5]), 1.0, 0, 4, rng)
    with pytest.raises(ValueError):
        clamped_geometric_pmf(7, 1.0, 0, 4)


def test_shapes_and_types():
    rng = np.random.default_rng(1)
    x = two_sided_geometric(0, 1.0, rng)
    assert x.shape == (0,) and x.dtype == np.int64
    y = clamped_geometric(np.zeros((3, 4), dtype=np.int64), 1.0, 0, 9, rng)
    assert y.shape == (3, 4) and y.min() >= 0 and y.max() <= 9
    # Tiny ε: huge offsets never overflow or saturate, the clamp puts them on either endpoint.
    for eps in (1e-8, 1e-15, 1e-300):
        z = clamped_geometric(np.full(10_000, 5), eps, 0, 10, rng)
        assert set(np.unique(z).tolist()) <= {0, 10}
        assert stats.binomtest(int((z == 0).sum()), z.size, 0.5).pvalue > ALPHA


@pytest.mark.statistical
def test_small_draws_have_the_same_law():
    """Draws of fewer than 64 values use numpy's geometric sampler instead of inversion."""
    def many_small(eps, seed):
        rng = np.random.default_rng(seed)
        return np.concatenate([two_sided_geometric(16, eps, rng) for _ in range(N // 16)])

    assert _plain_p(many_small(0.8, 17), 0.8) > ALPHA
    assert _plain_p(many_small(0.2, 19), 0.2) > ALPHA  # numpy's inversion branch (p < 1/3)
    assert _plain_p(many_small(0.84, 18), 0.8) < ALPHA


# --- distribution -----------------------------------------------------------------------------

@pytest.mark.statistical
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_two_sided_matches_pmf(eps):
    rng = np.random.default_rng(int(eps * 100) + 5)
    assert _plain_p(two_sided_geometric(N, eps, rng), eps) > ALPHA


@pytest.mark.statistical
def test_power_two_sided_rejects_epsilon_times_1_05():
    rng = np.random.default_rng(9)
    assert _plain_p(two_sided_geometric(N, 1.05, rng), 1.0) < ALPHA
    assert _plain_p(two_sided_geometric(N, 1.0 / 1.05, rng), 1.0) < ALPHA


@pytest.mark.statistical
def test_symmetry_and_slope():
    eps = 0.7
    x = two_sided_geometric(N, eps, np.random.default_rng(13))
    counts = np.bincount(np.abs(x))
    pos = np.bincount(x[x > 0])
    neg = np.bincount(-x[x < 0])
    # Symmetry: for each |k|, the sign is a fair coin.
    m = min(pos.size, neg.size, 12)
    for k in range(1, m):
        n_k = pos[k] + neg[k]
        if n_k >= 50:
            assert stats.binomtest(int(pos[k]), int(n_k), 0.5).pvalue > ALPHA / 12
    # Log-ratio slope between neighbouring |k| ≥ 1 counts: −ε (weighted least squares).
    k = np.arange(1, 12)
    c = counts[1:12].astype(float)
    slope, _ = np.polyfit(k, np.log(c), 1, w=np.sqrt(c))
    se = 1 / math.sqrt(c.sum() * np.var(k))  # rough standard error of the slope
    assert abs(slope + eps) < 6 * se


def _renormalised_clamp(x, eps, lo, hi, rng, size):
    """The bug the SPEC warns about: renormalise the geometric on [lo, hi] instead of clamping."""
    support = np.arange(lo, hi + 1)
    p = _two_sided_pmf(support - x, eps)
    return rng.choice(support, size=size, p=p / p.sum())


@pytest.mark.statistical
@pytest.mark.parametrize("x", [0, 3, 10, 20])
def test_clamped_matches_pmf(x):
    eps, lo, hi = 0.5, 0, 20
    rng = np.random.default_rng(100 + x)
    y = clamped_geometric(np.full(N, x), eps, lo, hi, rng)
    support = np.arange(lo, hi + 1)
    assert _chi2_p(y, support, clamped_geometric_pmf(x, eps, lo, hi)) > ALPHA


@pytest.mark.statistical
def test_power_clamped_rejects_renormalised_and_wrong_epsilon():
    eps, lo, hi, x = 0.5, 0, 20, 3
    rng = np.random.default_rng(77)
    support = np.arange(lo, hi + 1)
    pmf = clamped_geometric_pmf(x, eps, lo, hi)
    assert _chi2_p(_renormalised_clamp(x, eps, lo, hi, rng, N), support, pmf) < ALPHA
    assert _chi2_p(clamped_geometric(np.full(N, x), eps * 1.05, lo, hi, rng), support, pmf) < ALPHA


def test_clamped_pmf_closed_form():
    eps, lo, hi = 0.8, 2, 30
    a = math.exp(-eps)
    for x in (2, 3, 16, 29, 30):
        p = clamped_geometric_pmf(x, eps, lo, hi)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        # Endpoints = tail sums of the unclamped pmf.
        k = np.arange(0, 2000)
        assert p[0] == pytest.approx(((1 - a) / (1 + a) * a ** (x - lo + k)).sum(), rel=1e-12)
        assert p[-1] == pytest.approx(((1 - a) / (1 + a) * a ** (hi - x + k)).sum(), rel=1e-12)
        inner = np.arange(lo + 1, hi)
        assert np.allclose(p[1:-1], (1 - a) / (1 + a) * a ** np.abs(inner - x), rtol=1e-12)
    assert clamped_geometric_pmf(4, 1.0, 4, 4).tolist() == [1.0]


@pytest.mark.parametrize("eps", [0.05, 1.0, 7.0, 40.0])
def test_exhaustive_privacy_from_pmf(eps):
    """max_y |ln p(y|x) − ln p(y|x′)| ≤ ε·|x − x′| for all x, x′ (TESTING.md §2)."""
    lo, hi = 0, 40
    logp = np.array([clamped_geometric_log_pmf(x, eps, lo, hi) for x in range(lo, hi + 1)])
    assert np.isfinite(logp).all()
    gap = np.abs(logp[:, None, :] - logp[None, :, :]).max(axis=2)
    dist = np.abs(np.arange(lo, hi + 1)[:, None] - np.arange(lo, hi + 1)[None, :])
    assert (gap <= eps * dist + 1e-12 * (1 + eps * dist)).all()
    # The bound is attained (the mechanism is not over-noised): neighbouring interior positions.
    assert gap[10, 11] == pytest.approx(eps, rel=1e-9)


@pytest.mark.statistical
def test_renormalised_clamp_breaks_privacy():
    """Why textdp clamps and never renormalises: at the list end the renormalised pmf exceeds
    ε·|x − x′|, textdp's clamped law (pmf and sampler) meets it, and it is not the renormalised law."""
    eps, lo, hi = 1.0, 0, 5
    support = np.arange(lo, hi + 1)

    def renormalised_log_pmf(x):
        p = _two_sided_pmf(support - x, eps)
        return np.log(p / p.sum())

    # The hazard: neighbours 0 and 1 are more than ε apart under renormalisation.
    assert np.abs(renormalised_log_pmf(0) - renormalised_log_pmf(1)).max() > eps + 1e-3
    # textdp's law for the same pair meets ε·|x − x′| and differs from the renormalised one.
    ours = [clamped_geometric_log_pmf(x, eps, lo, hi) for x in (0, 1)]
    assert np.abs(ours[0] - ours[1]).max() <= eps * (1 + 1e-12)
    assert np.abs(ours[0] - renormalised_log_pmf(0)).max() > 0.1
    # textdp's sampler follows the clamped law, and the χ² test tells it from the renormalised one.
    y = clamped_geometric(np.full(N, 0), eps, lo, hi, np.random.default_rng(31))
    assert _chi2_p(y, support, np.exp(ours[0])) > ALPHA
    assert _chi2_p(y, support, np.exp(renormalised_log_pmf(0))) < ALPHA
