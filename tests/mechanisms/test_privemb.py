"""PrivEmb (M2) and LaplaceVector (M1): noise law, projection, strict mode, snapping, audit, errors.

Statistical tests follow TESTING.md §1 at α = 1e-6, each with a power check on a deliberately
wrong sampler (scale × 1.05, i.i.d. Laplace coordinates) that must be rejected.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtri

from textdp import LaplaceVector, PrivEmb
from textdp.mechanisms.embedding import (
    default_gaussian_width,
    finite_gaussian_width,
    gordon_delta,
    projected_dimension,
    projection_matrix,
    spectral_norm_upper,
)

ALPHA = 1e-6


# --- helpers -------------------------------------------------------------------------------------

def _radius_p(z: np.ndarray, shape: int, scale: float) -> float:
    r = np.linalg.norm(z, axis=1)
    return stats.kstest(r, stats.gamma(a=shape, scale=scale).cdf).pvalue


def _direction_p(z: np.ndarray, v: np.ndarray) -> float:
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    k = z.shape[1]
    return stats.kstest((u @ v) ** 2, stats.beta(0.5, (k - 1) / 2).cdf).pvalue


def _directions(k: int, rng: np.random.Generator) -> list[np.ndarray]:
    vs = rng.standard_normal((2, k))
    return [np.eye(k)[0]] + [v / np.linalg.norm(v) for v in vs]


def _noise_of(mech: PrivEmb, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return mech.release(X, rng) - X @ mech.projection.T


# --- m, ω, δ -------------------------------------------------------------------------------------

# (d, δ, β) → m = ⌈(√log₂ d + √ln(1/δ))² / β²⌉, worked out independently:
# d = 300, δ = 1e-6: √log₂ 300 = 2.86926, √ln 1e6 = 3.71692 → (6.58618)² = 43.3778.
M_TABLE = [
    (300, 1e-6, 0.93, 51),   # 43.3778 / 0.8649 = 50.15  (paper: m = 50)
    (300, 1e-6, 0.66, 100),  # 43.3778 / 0.4356 = 99.58  (paper: m = 100)
    (300, 1e-6, 0.468, 199),  # 43.3778 / 0.219024 = 198.05 (paper: m = 200)
    (50, 1e-6, 0.5, 149),
    (50, 1e-6, 0.9, 46),
    (384, 1e-6, 0.5, 177),
    (384, 1e-6, 0.6, 123),
    (384, 1e-6, 0.7, 91),
    (384, 1e-6, 0.9, 55),
    (384, 1e-3, 0.9, 39),    # (2.93001 + 2.62826)² / 0.81 = 38.14
    (2, 0.5, 0.99, 4),       # (1 + 0.83255)² / 0.9801 = 3.43
    (4096, 1e-9, 0.3, 715),  # (3.46410 + 4.55222)² / 0.09 = 714.03
]


@pytest.mark.parametrize("d,delta,beta,m", M_TABLE)
def test_m_matches_the_formula(d, delta, beta, m):
    omega = math.sqrt(math.log2(d))
    assert math.ceil((omega + math.sqrt(math.log(1 / delta))) ** 2 / beta**2) == m
    assert PrivEmb(epsilon=1.0, delta=delta, beta=beta, dim=d).m == m
    assert projected_dimension(delta, beta, default_gaussian_width(d)) == m


def test_user_gaussian_width_overrides_the_default():
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.5, dim=384, gaussian_width=6.0)
    assert mech.gaussian_width == 6.0
    assert mech.m == math.ceil((6.0 + math.sqrt(math.log(1e6))) ** 2 / 0.25)
    assert mech.describe()["gaussian_width"]["source"] == "user"


def test_explicit_calibration_makes_the_requested_delta_provable():
    paper = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=384)
    explicit = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=384, calibration="explicit")
    # The paper's m supports about √δ; the explicit m supports δ itself.
    assert 1e-4 < paper.delta_bound < 1.1e-3
    assert paper.guarantee.delta == paper.delta_bound
    assert explicit.m > paper.m
    assert explicit.delta_bound <= 1e-6
    assert gordon_delta(10, 0.1, 5.0) == 1.0


def test_finite_domain_gives_a_verified_guarantee():
    mech = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=50, domain_size=47_883)
    assert mech.gaussian_width == pytest.approx(math.sqrt(2 * math.log(47_883 * 47_882)))
    assert mech.gaussian_width == finite_gaussian_width(47_883)
    assert mech.guarantee.verified and 0 < mech.guarantee.delta < 1e-2
    assert not PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=50).guarantee.verified


# --- the projection ------------------------------------------------------------------------------

def test_projection_is_reproducible_from_its_seed_alone():
    a = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.7, dim=384, projection_seed=7)
    # ε, strict: same Φ
    b = PrivEmb(epsilon=5.0, delta=1e-6, beta=0.7, dim=384, projection_seed=7, strict=True)
    c = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.7, dim=384, projection_seed=8)
    assert a.projection.shape == (a.m, 384)
    assert np.array_equal(a.projection, b.projection)
    assert a.projection_fingerprint == b.projection_fingerprint
    assert not np.array_equal(a.projection, c.projection)
    assert a.projection_fingerprint != c.projection_fingerprint
    # Independent of the data: releasing does not touch Φ, and Φ is read-only.
    before = a.projection.copy()
    a.release(np.random.default_rng(0).standard_normal((10, 384)), np.random.default_rng(1))
    assert np.array_equal(a.projection, before)
    with pytest.raises(ValueError):
        a.projection[0, 0] = 1.0


def test_projection_follows_its_documented_derivation():
    m, d = 4, 3
    raw = np.random.PCG64(0).random_raw(m * d)
    u = ((raw >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
    expected = ndtri(u).reshape(m, d) / math.sqrt(m)
    assert np.array_equal(projection_matrix(0, m, d), expected)
    # Pinned, so that a change of derivation (or of numpy's PCG64 stream) cannot pass unnoticed.
    np.testing.assert_allclose(projection_matrix(0, m, d)[0] * 2,
                               [0.350349227256564, -0.613458178703528, -1.73949888676593],
                               rtol=1e-13)


@pytest.mark.statistical
def test_projection_entries_are_normal_with_variance_1_over_m():
    m, d = 400, 2000
    entries = (projection_matrix(3, m, d) * math.sqrt(m)).ravel()
    assert stats.kstest(entries, stats.norm.cdf).pvalue > ALPHA
    # Power: the same test rejects entries with standard deviation × 1.05.
    assert stats.kstest(entries * 1.05, stats.norm.cdf).pvalue < ALPHA


# --- the noise -----------------------------------------------------------------------------------

@pytest.mark.statistical
@pytest.mark.parametrize("d,eps,beta,n", [(8, 1.0, 0.5, 100_000), (50, 10.0, 0.7, 100_000),
                                          (384, 0.5, 0.9, 40_000)])
def test_noise_radius_is_gamma_m_scale_1_plus_beta_over_eps(d, eps, beta, n):
    rng = np.random.default_rng(100 + d)
    mech = PrivEmb(epsilon=eps, delta=1e-6, beta=beta, dim=d)
    X = 3.0 * rng.standard_normal((n, d))
    z = _noise_of(mech, X, rng)
    assert z.shape == (n, mech.m)
    assert _radius_p(z, mech.m, (1 + beta) / eps) > ALPHA
    # Power: the radius test rejects the scale × 1.05 (and ÷ 1.05) on the same draws.
    assert _radius_p(z * 1.05, mech.m, (1 + beta) / eps) < ALPHA
    assert _radius_p(z / 1.05, mech.m, (1 + beta) / eps) < ALPHA


@pytest.mark.statistical
def test_noise_direction_is_uniform():
    rng = np.random.default_rng(5)
    mech = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=50)
    z = _noise_of(mech, rng.standard_normal((100_000, 50)), rng)
    k = mech.m
    for v in _directions(k, rng):
        assert _direction_p(z, v) > ALPHA
    # Radius independent of direction.
    r = np.linalg.norm(z, axis=1)
    assert stats.ks_2samp(r[z[:, 0] > 0], r[z[:, 0] < 0]).pvalue > ALPHA
    # Power: i.i.d. Laplace coordinates (the L1-vs-L2 bug) fail the direction test.
    mutant = rng.laplace(size=(100_000, k))
    assert _direction_p(mutant, np.eye(k)[0]) < ALPHA


@pytest.mark.statistical
def test_laplace_vector_radius_is_gamma_d_scale_1_over_eps():
    rng = np.random.default_rng(9)
    d, eps = 50, 2.0
    X = rng.standard_normal((100_000, d))
    z = LaplaceVector(epsilon=eps).release(X, rng) - X
    assert _radius_p(z, d, 1 / eps) > ALPHA
    assert _direction_p(z, np.eye(d)[0]) > ALPHA
    assert _radius_p(z * 1.05, d, 1 / eps) < ALPHA


def test_release_is_the_projection_when_noise_is_negligible():
    rng = np.random.default_rng(2)
    mech = PrivEmb(epsilon=1e12, delta=1e-6, beta=0.6, dim=20)
    X = rng.standard_normal((5000, 20))  # spans several internal blocks
    np.testing.assert_allclose(mech.release(X, rng), X @ mech.projection.T, atol=1e-6)


def test_a_seeded_generator_reproduces_the_release():
    X = np.random.default_rng(0).standard_normal((300, 30))
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=30)
    a = mech.release(X, np.random.default_rng(42))
    b = mech.release(X, np.random.default_rng(42))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, mech.release(X, np.random.default_rng(43)))
    assert mech.release(X[:0], np.random.default_rng(0)).shape == (0, mech.m)


# --- strict mode ---------------------------------------------------------------------------------

def test_strict_sensitivity_is_the_spectral_norm_rounded_up():
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=384, strict=True)
    sigma = np.linalg.svd(mech.projection, compute_uv=False)[0]
    assert mech.sensitivity == mech.spectral_norm == spectral_norm_upper(mech.projection)
    assert sigma < mech.sensitivity <= sigma * (1 + 1e-8)
    assert mech.sensitivity > 1 + mech.beta  # Φ stretches some direction of R^384 beyond 1 + β
    g = mech.guarantee
    assert g.delta == 0.0 and g.verified and "pure" in g.notion


def test_strict_pure_epsilon_bound_holds_with_the_spectral_norm():
    rng = np.random.default_rng(3)
    eps, d = 0.7, 128
    mech = PrivEmb(epsilon=eps, delta=1e-6, beta=0.8, dim=d, strict=True)
    phi, lam = mech.projection, mech.noise_scale
    assert lam >= mech.sensitivity / eps
    # Pairs: random, very close, and along Φ's top right singular vector (the worst direction).
    top = np.linalg.svd(phi)[2][0]
    x = rng.standard_normal((3000, d))
    delta = np.concatenate([rng.standard_normal((1000, d)), 1e-6 * rng.standard_normal((1000, d)),
                            rng.standard_normal((1000, 1)) * top])
    xp = x + delta
    dist = np.linalg.norm(delta, axis=1)
    # 1. the sensitivity bound ‖Φ(x − x′)‖ ≤ s‖x − x′‖
    assert np.all(np.linalg.norm(delta @ phi.T, axis=1) <= mech.sensitivity * dist)
    # 2. the density ratio at outputs w drawn from M(x): ln p(w|x) − ln p(w|x′) ≤ ε‖x − x′‖
    w = mech.release(x, rng)
    log_ratio = (np.linalg.norm(w - xp @ phi.T, axis=1) - np.linalg.norm(w - x @ phi.T, axis=1)) / lam
    assert np.all(log_ratio <= eps * dist * (1 + 1e-9) + 1e-12)
    # ... and it is tight: at any w on the ray from Φx along Φ(x − x′), the ratio is ‖Φ(x − x′)‖/λ,
    # which for the top pairs is σ₁‖x − x′‖ε/s ≈ ε‖x − x′‖.
    step = (x - xp)[2000:] @ phi.T
    w_far = x[2000:] @ phi.T + step / np.linalg.norm(step, axis=1, keepdims=True)
    tight = (np.linalg.norm(w_far - xp[2000:] @ phi.T, axis=1)
             - np.linalg.norm(w_far - x[2000:] @ phi.T, axis=1)) / lam
    assert np.all(tight <= eps * dist[2000:] * (1 + 1e-9))
    assert np.all(tight >= eps * dist[2000:] * (1 - 1e-6))
    # Power: noise calibrated to 1 + β (non-strict) violates ε along the same direction.
    loose = PrivEmb(epsilon=eps, delta=1e-6, beta=0.8, dim=d)
    assert np.array_equal(loose.projection, phi)
    loose_ratio = tight * lam / loose.noise_scale
    assert np.all(loose_ratio > eps * dist[2000:] * 1.2)


@pytest.mark.statistical
def test_strict_noise_radius_is_gamma_m_scale_s_over_eps():
    rng = np.random.default_rng(4)
    mech = PrivEmb(epsilon=3.0, delta=1e-6, beta=0.9, dim=100, strict=True)
    z = _noise_of(mech, rng.standard_normal((100_000, 100)), rng)
    assert _radius_p(z, mech.m, mech.spectral_norm / 3.0) > ALPHA
    assert _radius_p(z, mech.m, 1.9 / 3.0) < ALPHA  # not the non-strict calibration


# --- snapping ------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [-6, 0, 3])
def test_snapped_coordinates_are_exact_multiples_of_2_to_the_k(k):
    X = np.random.default_rng(0).standard_normal((2000, 40))
    snapped = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.8, dim=40, snap=k)
    plain = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.8, dim=40)
    w = snapped.release(X, np.random.default_rng(5))
    w_plain = plain.release(X, np.random.default_rng(5))
    grid = 2.0**k
    q = w / grid
    assert np.array_equal(q, np.round(q))  # every coordinate is an integer multiple of 2^k
    assert np.max(np.abs(w - w_plain)) <= grid / 2
    info = snapped.describe()["snap"]
    assert info["grid"] == grid and info["max_shift_per_vector"] == grid / 2 * math.sqrt(snapped.m)
    assert any(f"2^{k}" in a for a in snapped.guarantee.assumptions)
    assert snapped.guarantee.epsilon == plain.guarantee.epsilon
    assert snapped.guarantee.delta == plain.guarantee.delta


def test_auto_snap_uses_the_smallest_power_of_two_above_the_noise_scale():
    mech = PrivEmb(epsilon=3.0, delta=1e-6, beta=0.9, dim=64, snap="auto")
    k = mech.snap_exponent
    assert 2.0 ** (k - 1) < mech.noise_scale <= 2.0**k
    w = LaplaceVector(epsilon=4.0, snap="auto").release(np.ones((10, 5)), np.random.default_rng(0))
    assert np.array_equal(w / 0.25, np.round(w / 0.25))


# --- audit ---------------------------------------------------------------------------------------

def test_audit_uses_every_pair_when_n_is_small_and_matches_brute_force():
    rng = np.random.default_rng(6)
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=30)
    X = rng.standard_normal((40, 30))
    X[5] = X[3]  # one identical pair: skipped
    result = mech.audit(X)
    ratios = [np.linalg.norm(mech.projection @ (X[i] - X[j])) / np.linalg.norm(X[i] - X[j])
              for i in range(40) for j in range(i + 1, 40) if not np.array_equal(X[i], X[j])]
    assert result.exhaustive and result.n_pairs == 40 * 39 // 2 - 1 and result.n_identical == 1
    assert result.max_ratio == pytest.approx(max(ratios), rel=1e-12)
    assert result.min_ratio == pytest.approx(min(ratios), rel=1e-12)
    assert result.bound == mech.sensitivity
    assert result.count_above == sum(r > mech.sensitivity for r in ratios)
    assert result.max_ratio <= result.spectral_norm
    assert "not privatised" in result.to_dict()["note"]


def test_audit_samples_pairs_when_n_is_large():
    rng = np.random.default_rng(7)
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=30)
    result = mech.audit(rng.standard_normal((2000, 30)), max_pairs=5000, rng=rng)
    assert not result.exhaustive and result.n_pairs == 5000


def test_audit_flags_data_along_the_stretched_direction():
    # m < d: Φ stretches some directions well beyond 1.5
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.5, dim=200)
    top = np.linalg.svd(mech.projection)[2][0]
    X = np.outer(np.arange(10.0), top) + 1.0
    result = mech.audit(X)
    assert not result.passed and result.fraction_above == 1.0
    assert result.max_ratio == pytest.approx(np.linalg.svd(mech.projection, compute_uv=False)[0])
    assert "ABOVE" in result.summary()


# --- guarantee and report ------------------------------------------------------------------------

def test_guarantee_states_delta_assumptions_and_composition():
    mech = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=384, projection_seed=11)
    g = mech.guarantee
    assert g.notion == "(ε, δ)-Lipschitz privacy" and g.epsilon == 2.0 and not g.verified
    assert g.delta == gordon_delta(mech.m, 0.9, mech.gaussian_width)
    text = " ".join(g.assumptions)
    assert "public seed 11" in text and "Gaussian width" in text and "1e-06" in text
    assert "not N·δ" in g.per_document
    m1 = LaplaceVector(epsilon=2.0).guarantee
    assert m1.delta == 0.0 and m1.verified and "pure" in m1.notion


def test_describe_has_everything_a_report_needs():
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.5, dim=50)
    d = mech.describe()
    assert d["m"] == 149 and d["projection"]["shape"] == [149, 50]
    assert len(d["projection"]["sha256"]) == 64
    assert d["noise"]["radius"] == "Gamma(shape=149, scale=1.5)"
    # m ≥ d and more noise than the baseline: both warned.
    assert any("does not reduce" in w for w in d["warnings"])
    assert any("baseline" in w for w in d["warnings"])
    assert not any("baseline" in w for w in PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=384).warnings())


# --- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("X,error,match", [
    (np.array([[1.0, np.nan, 0.0]]), ValueError, "NaN or infinity"),
    (np.array([[1.0, 0.0, 0.0], [np.inf, 0.0, 0.0]]), ValueError, r"rows 1"),
    (np.zeros(3), ValueError, r"2-D array .*X\[None, :\]"),
    (np.zeros((2, 3, 1)), ValueError, "2-D array"),
    (np.zeros((2, 4)), ValueError, "d = 4 but this mechanism was built for d = 3"),
    (np.array([["a", "b", "c"]]), TypeError, "real numbers"),
    (np.zeros((2, 3), dtype=complex), TypeError, "real numbers"),
    (np.zeros((2, 3), dtype=bool), TypeError, "real numbers"),
])
def test_bad_vectors_are_rejected_clearly(X, error, match):
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=3)
    with pytest.raises(error, match=match):
        mech.release(X, np.random.default_rng(0))
    with pytest.raises(error, match=match):
        mech.audit(X)


def test_laplace_vector_rejects_nan_and_accepts_any_dimension():
    m1 = LaplaceVector(epsilon=1.0)
    assert m1.release(np.zeros((2, 7), dtype=np.float32), np.random.default_rng(0)).shape == (2, 7)
    with pytest.raises(ValueError, match="NaN"):
        m1.release(np.array([[np.nan]]))


@pytest.mark.parametrize("kwargs,error", [
    ({"epsilon": 0}, ValueError), ({"epsilon": -1}, ValueError), ({"epsilon": "1"}, TypeError),
    ({"epsilon": float("nan")}, ValueError),
    ({"delta": 0}, ValueError), ({"delta": 1}, ValueError), ({"beta": 1.0}, ValueError),
    ({"beta": 0}, ValueError), ({"dim": 0}, ValueError), ({"dim": 2.5}, TypeError),
    ({"gaussian_width": -1}, ValueError), ({"gaussian_width": 1, "domain_size": 10}, ValueError),
    ({"domain_size": 1}, ValueError), ({"projection_seed": -1}, ValueError),
    ({"projection_seed": 1.5}, ValueError), ({"calibration": "tight"}, ValueError),
    ({"strict": "yes"}, TypeError), ({"snap": 0.5}, TypeError), ({"snap": "coarse"}, TypeError),
])
def test_bad_parameters_are_rejected(kwargs, error):
    params = {"epsilon": 1.0, "delta": 1e-6, "beta": 0.9, "dim": 10} | kwargs
    with pytest.raises(error):
        PrivEmb(**params)


def test_bad_rng_and_audit_arguments():
    mech = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=3)
    with pytest.raises(TypeError, match="Generator"):
        mech.release(np.zeros((1, 3)), rng=42)
    with pytest.raises(ValueError, match="at least 2"):
        mech.audit(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="identical"):
        mech.audit(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="max_pairs"):
        mech.audit(np.eye(3), max_pairs=0)
