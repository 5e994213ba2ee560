"""Mahalanobis (Xu et al. 2020): Σ_λ, its square root, the noise law after whitening (with power
checks against a re-normalised and an unscaled variant), the guarantee's metric, pipeline."""

import numpy as np
import pytest
from scipy import stats

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.word.mahalanobis import Mahalanobis, regularized_covariance
from textdp.noise import uniform_sphere
from textdp.vocab import Vocabulary

ALPHA = 1e-6
N = 200_000


def _anisotropic_vocab(n=200, d=5, seed=0):
    """Strongly correlated, unequal-variance vectors: the covariance matters."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((d, d)) * np.array([3.0, 1.0, 0.5, 0.2, 0.1])[:d]
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)) @ a + 1.0)


def test_regularized_covariance():
    v = _anisotropic_vocab()
    x = v.vectors.astype(np.float64)
    cov = np.cov(x, rowvar=False)
    for lam in (0.0, 0.2, 1.0):
        s = regularized_covariance(x, lam)
        np.testing.assert_allclose(s, lam * cov / (np.trace(cov) / 5) + (1 - lam) * np.eye(5),
                                   rtol=1e-12)
        assert np.trace(s) == pytest.approx(5.0, rel=1e-12)
    np.testing.assert_array_equal(regularized_covariance(x, 0.0), np.eye(5))


def test_square_root_computed_once_and_correct():
    m = Mahalanobis(_anisotropic_vocab(), epsilon=1.0, lam=0.2)
    s = m.sqrt_covariance
    np.testing.assert_allclose(s, s.T, atol=1e-14)
    np.testing.assert_allclose(s @ s, regularized_covariance(m.vocabulary.vectors, 0.2),
                               atol=1e-12)
    assert m.parameters == {"epsilon": 1.0, "lam": 0.2}


def _whitened(z, m):
    return np.asarray(z, dtype=np.float64) @ np.linalg.inv(m.sqrt_covariance)


@pytest.mark.statistical
@pytest.mark.parametrize("lam,eps", [(0.2, 1.0), (0.9, 4.0), (0.0, 0.5)])
def test_whitened_noise_is_metric_laplace(lam, eps):
    m = Mahalanobis(_anisotropic_vocab(), epsilon=eps, lam=lam)
    w = _whitened(m.draw(np.zeros(N, dtype=np.int64), np.random.default_rng(7)), m)
    r = np.linalg.norm(w, axis=1)
    assert stats.kstest(r, stats.gamma(a=5, scale=1 / eps).cdf).pvalue > ALPHA
    u = w / r[:, None]
    e = np.random.default_rng(8).standard_normal(5)
    e /= np.linalg.norm(e)
    assert stats.kstest((u @ e) ** 2, stats.beta(0.5, 2.0).cdf).pvalue > ALPHA


@pytest.mark.statistical
def test_whitened_noise_power():
    """A re-normalised S·u (the bug SPEC warns about) and an unscaled Σ are both rejected."""
    eps, lam = 1.0, 0.9
    m = Mahalanobis(_anisotropic_vocab(), epsilon=eps, lam=lam)
    rng = np.random.default_rng(9)
    gamma = stats.gamma(a=5, scale=1 / eps).cdf
    su = uniform_sphere(N, 5, rng) @ m.sqrt_covariance
    renorm = rng.gamma(5, 1 / eps, N)[:, None] * su / np.linalg.norm(su, axis=1, keepdims=True)
    assert stats.kstest(np.linalg.norm(_whitened(renorm, m), axis=1), gamma).pvalue < ALPHA
    x = m.vocabulary.vectors.astype(np.float64)
    raw = lam * np.cov(x, rowvar=False) + (1 - lam) * np.eye(5)  # Σ not scaled to trace n
    vals, vecs = np.linalg.eigh(raw)
    unscaled = rng.gamma(5, 1 / eps, N)[:, None] * (uniform_sphere(N, 5, rng)
                                                    @ ((vecs * np.sqrt(vals)) @ vecs.T))
    assert stats.kstest(np.linalg.norm(_whitened(unscaled, m), axis=1), gamma).pvalue < ALPHA


def test_metric_is_the_regularised_mahalanobis_norm():
    m = Mahalanobis(_anisotropic_vocab(), epsilon=1.0, lam=0.5)
    x = m.vocabulary.vectors.astype(np.float64)
    inv = np.linalg.inv(regularized_covariance(x, 0.5))
    a, b = np.array([0, 3, 7]), np.array([1, 3, 150])
    diff = x[a] - x[b]
    want = np.sqrt(np.einsum("ij,jk,ik->i", diff, inv, diff))
    np.testing.assert_allclose(m.distance(a, b), want, rtol=1e-10)
    assert m.distance(3, 3) == 0


def test_output_is_the_exact_nearest_word_of_the_noisy_vector():
    m = Mahalanobis(_anisotropic_vocab(), epsilon=2.0)
    rng = np.random.default_rng(10)
    ids = rng.integers(0, 200, 3000)
    z = m.draw(ids, rng)
    q = (m.vocabulary.vectors[ids] + z).astype(np.float64)
    x = m.vocabulary.vectors.astype(np.float64)
    want = np.argmin(((x[None] - q[:, None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(m.apply(ids, z), want)


def test_guarantee_pipeline_and_registry():
    g = Mahalanobis(_anisotropic_vocab(), epsilon=3.0, lam=0.2).guarantee
    assert g.notion.startswith("metric DP") and g.epsilon == 3.0 and g.verified
    assert "Mahalanobis" in g.metric and "0.2·Σ + 0.8·I" in g.metric
    texts = ["the house is on the hill", "An OLD man."]
    a = textdp.privatize(texts, mechanism="mahalanobis", epsilon=5.0, seed=4, lam=0.3)
    b = textdp.privatize(texts, mechanism="mahalanobis", epsilon=5.0, seed=4, lam=0.3,
                         batch_size=1)
    assert a.texts == b.texts
    assert a.report["mechanism"]["parameters"] == {"epsilon": 5.0, "lam": 0.3}
    assert "mahalanobis" in textdp.mechanisms.available()
    huge = create("mahalanobis", epsilon=1e5)
    assert huge.privatize_words(["house", "hill"], np.random.default_rng(0)) == ["house", "hill"]


def test_bad_parameters():
    v = _anisotropic_vocab()
    for lam in (-0.1, 1.1, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            Mahalanobis(v, epsilon=1.0, lam=lam)
    with pytest.raises(TypeError, match="lam"):
        Mahalanobis(v, epsilon=1.0, lam="0.2")
    flat = Vocabulary(["a", "b", "c"], np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
    with pytest.raises(ValueError, match="singular"):
        Mahalanobis(flat, epsilon=1.0, lam=1.0)
    Mahalanobis(flat, epsilon=1.0, lam=0.5)  # regularised: fine
