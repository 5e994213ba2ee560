"""Truncated Gumbel (Xu et al., FLAIRS 2021): exact global Δ and Δ₀, the feasibility bound, the scale,
the sampler against the exact law computed by quadrature (with power checks), the paper's bound
checked on that exact law, candidate semantics, the on-disk cache."""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

import textdp
from textdp.mechanisms.word import gumbel as gumbel_module
from textdp.mechanisms.word.gumbel import (
    TruncatedGumbel,
    lambert_w0,
    smallest_feasible_epsilon,
    vocabulary_graph,
)
from textdp.noise.poisson import truncated_poisson_pmf
from textdp.vocab import Vocabulary

ALPHA = 1e-6


def _vocab(n=6, d=4, seed=3):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


def _pairwise(v):
    x = v.vectors.astype(np.float64)
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


def _exact_law(v, w, scale, bound, poisson_mean=None):
    """Pr[M(w) = y] by quadrature: Σ_k P(k) Σ_{j<k} ∫ f(x − d_j) Π_{i≠j} (1 − F(x − d_i)) dx."""
    n = len(v)
    lo = math.exp(-math.exp(bound / scale))
    hi = math.exp(-math.exp(-bound / scale))

    def cdf(x):
        return (math.exp(-math.exp(-min(max(x, -bound), bound) / scale)) - lo) / (hi - lo)

    def pdf(x):
        if abs(x) > bound:
            return 0.0
        return math.exp(-x / scale - math.exp(-x / scale)) / scale / (hi - lo)

    d = _pairwise(v)[w]
    order = [w] + [i for i in np.lexsort((np.arange(n), d)) if i != w]
    dd = d[order]
    pk = truncated_poisson_pmf(np.arange(1, n + 1), poisson_mean or math.log(n), 1, n)
    law = np.zeros(n)
    for k in range(1, n + 1):
        for j in range(k):
            def f(x, j=j, k=k):
                val = pdf(x - dd[j])
                for i in range(k):
                    if i != j:
                        val *= 1.0 - cdf(x - dd[i])
                return val
            breaks = sorted({dd[i] + s for i in range(k) for s in (-bound, bound)})
            inner = [b for b in breaks if dd[j] - bound < b < dd[j] + bound]
            val, _ = integrate.quad(f, dd[j] - bound, dd[j] + bound, points=inner or None,
                                    limit=200, epsabs=1e-13, epsrel=1e-11)
            law[order[j]] += pk[k - 1] * val
    return law


def _chi2_p(counts, probs):
    order = np.argsort(probs)
    obs_m, exp_m, o, e = [], [], 0.0, 0.0
    for c, x in zip(counts[order], probs[order] * counts.sum(), strict=True):
        o, e = o + c, e + x
        if e >= 5:
            obs_m.append(o)
            exp_m.append(e)
            o = e = 0.0
    if e > 0:
        obs_m[-1] += o
        exp_m[-1] += e
    return stats.chisquare(obs_m, exp_m).pvalue


def test_lambert_w0_real_and_accurate():
    for x in (1e-12, 0.1, 1.0, math.e, 10.0, 1e3, 1e12):
        w = lambert_w0(x)
        assert w * math.exp(w) == pytest.approx(x, rel=1e-13)
        assert w == pytest.approx(special.lambertw(x).real, rel=1e-13)
    assert lambert_w0(0.0) == 0.0
    with pytest.raises(ValueError):
        lambert_w0(-0.1)


def test_global_extremes_are_exact():
    v = _vocab(n=40, d=5)
    g = vocabulary_graph(v)
    d = _pairwise(v)
    np.fill_diagonal(d, np.inf)
    assert g.min_distance == pytest.approx(d.min(), abs=1e-12)
    np.fill_diagonal(d, -np.inf)
    assert g.max_distance == pytest.approx(d.max(), abs=1e-12)
    m = TruncatedGumbel(v, epsilon=smallest_feasible_epsilon(40, g.min_distance) * 1.2)
    assert (m.min_distance, m.max_distance) == (g.min_distance, g.max_distance)


def test_infeasible_epsilon_names_the_smallest_feasible_one():
    v = _vocab(n=40, d=5)
    d0 = vocabulary_graph(v).min_distance
    bound = (5 + 2 * math.log(40)) / d0
    assert smallest_feasible_epsilon(40, d0) == pytest.approx(bound, rel=1e-15)
    for eps in (0.5, bound * 0.999, bound):
        with pytest.raises(ValueError, match=f"{bound:.6g}") as err:
            TruncatedGumbel(v, epsilon=eps)
        assert "infeasible" in str(err.value)
    m = TruncatedGumbel(v, epsilon=bound * 1.001)
    assert m.scale > 0 and math.isfinite(m.scale)


def test_scale_formula():
    v = _vocab(n=40, d=5)
    g = vocabulary_graph(v)
    eps = smallest_feasible_epsilon(40, g.min_distance) * 2
    alpha = (eps - 2 * (1 + math.log(40)) / g.min_distance) / 3
    want = 2 * g.max_distance / min(special.lambertw(2 * alpha * g.max_distance).real,
                                    math.log(alpha * g.min_distance))
    assert TruncatedGumbel(v, epsilon=eps).scale == pytest.approx(want, rel=1e-12)


def test_duplicate_vectors_are_rejected():
    x = np.random.default_rng(0).standard_normal((10, 3))
    x[7] = x[2]
    with pytest.raises(ValueError, match="same vector"):
        TruncatedGumbel(Vocabulary([f"w{i}" for i in range(10)], x), epsilon=1e6)


def test_candidates_and_noisy_argmin():
    v = _vocab(n=30, d=5)
    m = TruncatedGumbel(v, epsilon=smallest_feasible_epsilon(30, vocabulary_graph(v).min_distance) * 3)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 30, 4000)
    k, g = m.draw(ids, rng)
    assert k.min() >= 1 and k.max() <= 30 and g.size == k.sum()
    assert np.abs(g).max() <= m.max_distance
    got = m.apply(ids, (k, g))
    d = _pairwise(v)
    offsets = np.concatenate([[0], np.cumsum(k)])
    for i in range(ids.size):
        cand = [ids[i]] + [c for c in np.lexsort((np.arange(30), d[ids[i]])) if c != ids[i]]
        cand = np.array(cand[:k[i]])
        noisy = d[ids[i], cand] + g[offsets[i]:offsets[i + 1]]
        assert got[i] == cand[np.argmin(noisy)]
    # k = 1: the word itself is the only candidate.
    ones = np.ones(ids.size, dtype=np.int64)
    np.testing.assert_array_equal(m.apply(ids, (ones, g[:ids.size])), ids)


def test_candidates_beyond_the_cached_lists_are_searched_exactly():
    v = _vocab(n=80, d=5)
    m = TruncatedGumbel(v, epsilon=1e4)
    full = m._graph
    m._graph = type(full)(full.indices[:, :3], full.distances[:, :3], full.min_distance,
                          full.min_pair, full.max_distance, full.max_pair)
    rng = np.random.default_rng(2)
    ids = rng.integers(0, 80, 500)
    k = rng.integers(1, 40, 500)
    g = rng.uniform(-m.max_distance, m.max_distance, k.sum())
    short = m.apply(ids, (k, g))
    m._graph = full
    np.testing.assert_array_equal(short, m.apply(ids, (k, g)))


def _toy(factor):
    v = _vocab()
    eps = smallest_feasible_epsilon(6, vocabulary_graph(v).min_distance) * factor
    m = TruncatedGumbel(v, epsilon=eps)
    return v, m, np.array([_exact_law(v, w, m.scale, m.max_distance) for w in range(6)])


@pytest.fixture(scope="module")
def toy():
    return _toy(3.0)


@pytest.mark.parametrize("factor", [1.001, 1.5, 3.0, 10.0])
def test_exact_law_sums_to_one_and_meets_the_papers_bound(factor):
    """The paper's theorem, checked on the exact law: max_y ln p(y|w)/p(y|w′) ≤ ε·d(w, w′)."""
    v, m, law = _toy(factor)
    np.testing.assert_allclose(law.sum(axis=1), 1.0, atol=1e-9)
    d = _pairwise(v)
    logp = np.log(law)
    worst = 0.0
    for a in range(6):
        for b in range(6):
            if a != b:
                lr = (logp[a] - logp[b]).max()
                assert lr <= m.epsilon * d[a, b] + 1e-9
                worst = max(worst, lr / (m.epsilon * d[a, b]))
    assert worst > 0.01  # not vacuous: the ratios are a visible fraction of the bound


@pytest.mark.statistical
def test_sampler_matches_the_exact_law_with_power(toy):
    v, m, law = toy
    rng = np.random.default_rng(3)
    ids = np.repeat([0, 4], 100_000)
    out = m.privatize_ids(ids, rng)
    for w in (0, 4):
        counts = np.bincount(out[ids == w], minlength=6)
        assert _chi2_p(counts, law[w]) > ALPHA
    # Power: the law with a 30% smaller Gumbel scale is rejected by the same samples.
    counts = np.bincount(out[ids == 0], minlength=6)
    assert _chi2_p(counts, _exact_law(v, 0, m.scale * 0.7, m.max_distance)) < ALPHA


@pytest.mark.statistical
def test_power_clamped_candidate_count_is_rejected(toy, monkeypatch):
    """The same χ² test rejects the mechanism when its candidate count k is clamped to [1, |V|]
    instead of conditioned on it (SPEC: truncated Poisson): the wrong sampler runs through
    TruncatedGumbel itself."""
    v, m, law = toy

    def clamped_poisson(lam, low, high, size, rng):
        return np.clip(rng.poisson(lam, size=size), low, high).astype(np.int64)

    monkeypatch.setattr(gumbel_module, "truncated_poisson", clamped_poisson)
    out = m.privatize_ids(np.zeros(100_000, dtype=np.int64), np.random.default_rng(4))
    assert _chi2_p(np.bincount(out, minlength=6), law[0]) < ALPHA


def test_graph_cache_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    v = _vocab(n=25, d=3, seed=9)
    monkeypatch.setattr(gumbel_module, "_GRAPHS", {})
    first = vocabulary_graph(v)
    files = list((tmp_path / "neighbors").glob("graph-*.npz"))
    assert len(files) == 1
    monkeypatch.setattr(gumbel_module, "_GRAPHS", {})
    again = vocabulary_graph(v)
    np.testing.assert_array_equal(first.indices, again.indices)
    assert (first.min_distance, first.max_distance) == (again.min_distance, again.max_distance)
    files[0].write_bytes(b"not an npz")  # corrupt: recomputed, never trusted
    monkeypatch.setattr(gumbel_module, "_GRAPHS", {})
    np.testing.assert_array_equal(vocabulary_graph(v).indices, first.indices)


def test_pipeline_and_report():
    v = _vocab(n=30, d=5)
    eps = smallest_feasible_epsilon(30, vocabulary_graph(v).min_distance) * 1.1
    m = TruncatedGumbel(v, epsilon=eps)
    r = textdp.privatize(["w1 w2, W3!", "w4"], mechanism=m, seed=1)
    assert len(r.texts) == 2 and r.report["guarantee"]["verified"]
    assert any("Δ₀" in a for a in r.report["guarantee"]["assumptions"])
    assert "gumbel" in textdp.mechanisms.available()
    with pytest.raises(ValueError, match="smallest feasible epsilon"):
        textdp.privatize(["w1"], mechanism="gumbel", epsilon=1.0, vocabulary=v)
