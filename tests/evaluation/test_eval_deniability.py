"""Plausible deniability: known answers, exact vs Monte Carlo for every mechanism with both.

* Identity: N_w = 1 and S_w = 1, exactly and by Monte Carlo. Uniform: N_w = 1/|V|,
  S_w = ⌈(1 − η)|V|⌉ exactly.
* For every registered mechanism with ``output_distribution``: the Monte-Carlo N_w of each word is
  a Binomial(n, p(w|w)) count (two-sided binomial test) and the distinct count is within
  z·√(Σ q(1 − q)) of its exact expectation, at α = 1e-6 (Bonferroni over words); power check: the
  same test against the exact law at 1.3·ε rejects.
* 1-D_G at ε = 1 on an interior word: N_w = tanh(1/2) exactly.
* All draws of all words go through one ``privatize_ids`` call.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from textdp import mechanisms as registry
from textdp.evaluation.deniability import (
    expected_distinct,
    has_exact_law,
    mass_support,
    plausible_deniability,
    resolve_words,
    sample_words,
)
from textdp.vocab import load_default

ALPHA = 1e-6
# Every registered mechanism (those without an exact law are skipped), plus the ones with an
# exact law that may not have landed yet (skipped until they are registered).
# Every registered mechanism with an exact law; the known ones must be among them, so the
# agreement test below can never pass by having nothing to check.
CANDIDATES = sorted(n for n in registry.available("word")
                    if callable(getattr(registry.get(n), "output_distribution", None)))


def test_mechanisms_with_exact_laws_are_all_checked():
    assert {"diffractor", "tem", "santext", "santext_plus"} <= set(CANDIDATES)


def test_identity_gives_one_and_one(known, toy_vocab):
    for cls in (known.Identity, known.IdentityMC):
        d = plausible_deniability(cls(toy_vocab, epsilon=1.0), 10, 50, np.random.default_rng(0))
        assert d.method == ("exact" if cls is known.Identity else "monte_carlo")
        assert np.all(d.n_w == 1.0) and np.all(d.s_w == 1) and np.all(d.distinct == 1)
        w = d.worst()
        assert w["max_n_w"] == 1.0 and w["min_s_w"] == 1.0


def test_uniform_exact_values(known, toy_vocab):
    d = plausible_deniability(known.Uniform(toy_vocab, epsilon=1.0), ["bano", "reli"], 100,
                              eta=0.1)
    v = len(toy_vocab)
    assert np.allclose(d.n_w, 1 / v)
    assert np.all(d.s_w == math.ceil(0.9 * v))
    assert np.allclose(d.distinct, v * (1 - (1 - 1 / v) ** 100))
    assert d.words == ("bano", "reli")


def test_mass_support_and_expected_distinct():
    p = np.array([0.5, 0.25, 0.125, 0.125])
    assert mass_support(p, 0.5) == 1
    assert mass_support(p, 0.25) == 2
    assert mass_support(p, 0.01) == 4
    assert mass_support(np.array([1.0, 0.0]), 0.01) == 1
    assert expected_distinct(np.array([1.0, 0.0]), 10) == 1.0
    assert expected_distinct(np.full(4, 0.25), 1) == pytest.approx(1.0)


def test_all_draws_in_one_call(known, toy_vocab):
    calls = []

    class Spy(known.UniformMC):
        def privatize_ids(self, ids, rng=None):
            calls.append(len(ids))
            return super().privatize_ids(ids, rng)

    plausible_deniability(Spy(toy_vocab, epsilon=1.0), 7, 30, np.random.default_rng(1))
    assert calls == [7 * 30]


def test_monte_carlo_statistics_and_bounds(known, toy_vocab):
    d = plausible_deniability(known.UniformMC(toy_vocab, epsilon=1.0), 5, 400,
                              np.random.default_rng(2))
    assert d.singletons is not None and np.all(d.singletons <= d.distinct)
    assert np.all(d.n_w_upper(3.0) >= d.n_w) and np.all(d.distinct_lower(3.0) <= d.distinct)
    s = d.summary()
    assert s["n_words"] == 5 and s["method"] == "monte_carlo" and 0 <= s["n_w"]["mean"] <= 1


def test_word_arguments(toy_vocab):
    assert resolve_words(toy_vocab, ["Bano", "reli"]).tolist() == [0, toy_vocab.index("reli")]
    assert resolve_words(toy_vocab, np.array([3, 1])).tolist() == [3, 1]
    ids = sample_words(toy_vocab, 5, np.random.default_rng(0))
    assert ids.size == 5 and np.unique(ids).size == 5
    assert sample_words(toy_vocab, 1000).size == len(toy_vocab)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        resolve_words(toy_vocab, ["bano", "zzzz"])
    with pytest.raises(ValueError, match="out of range"):
        resolve_words(toy_vocab, [0, 99])
    with pytest.raises(TypeError):
        resolve_words(toy_vocab, "bano")


def test_bad_arguments(known, toy_vocab):
    m = known.UniformMC(toy_vocab, epsilon=1.0)
    with pytest.raises(ValueError, match="n_draws"):
        plausible_deniability(m, 3, 0)
    with pytest.raises(ValueError, match="no exact output law"):
        plausible_deniability(m, 3, 10, method="exact")
    with pytest.raises(ValueError, match="method"):
        plausible_deniability(m, 3, 10, method="fast")
    with pytest.raises(TypeError):
        plausible_deniability("mvc", 3, 10)


@pytest.fixture(scope="module")
def small_vocab():
    return load_default(1000)


def _agreement_pvalues(mech, ids, n_draws, rng, law_mech=None):
    """Per word: binomial p-value of the MC N_w count, and the z-score of the distinct count."""
    law_mech = law_mech or mech
    mc = plausible_deniability(mech, ids, n_draws, rng, method="monte_carlo")
    p_n, z_d = [], []
    for i, w in enumerate(ids.tolist()):
        p = np.asarray(law_mech.output_distribution(w), dtype=np.float64)
        k = int(round(mc.n_w[i] * n_draws))
        p_n.append(stats.binomtest(k, n_draws, min(max(p[w], 0.0), 1.0)).pvalue)
        q = -np.expm1(n_draws * np.log1p(-np.clip(p, 0, 1 - 1e-16)))
        sd = math.sqrt(max(float((q * (1 - q)).sum()), 1e-12))
        z_d.append(abs(mc.distinct[i] - q.sum()) / sd)
    return np.array(p_n), np.array(z_d)


@pytest.mark.statistical
@pytest.mark.parametrize("name", CANDIDATES)
def test_exact_and_monte_carlo_agree(name, small_vocab):
    eps = 2.0
    mech = registry.create(name, small_vocab, epsilon=eps)
    if not has_exact_law(mech):
        pytest.skip(f"{name} has no output_distribution")
    ids = sample_words(small_vocab, 8, np.random.default_rng(10))
    if name == "diffractor":  # include both ends of the list, where clamping piles up mass
        ids = np.concatenate([ids, mech.lists[0, [0, len(small_vocab) - 1]]])
    exact = plausible_deniability(mech, ids, 4000, method="exact")
    n_draws = 4000
    p_n, z_d = _agreement_pvalues(mech, ids, n_draws, np.random.default_rng(11))
    k = ids.size
    z_crit = stats.norm.isf(ALPHA / (2 * k))
    assert p_n.min() > ALPHA / k, (name, p_n)
    assert z_d.max() < z_crit, (name, z_d)
    assert np.all((exact.n_w > 0) & (exact.n_w <= 1))
    # Power: the same test against the law at 1.3·ε must reject.
    wrong = registry.create(name, small_vocab, epsilon=1.3 * eps)
    p_w, z_w = _agreement_pvalues(mech, ids, n_draws, np.random.default_rng(12), law_mech=wrong)
    assert p_w.min() < ALPHA / k or z_w.max() > z_crit, (name, p_w, z_w)


def test_diffractor_interior_word_is_tanh_half():
    if "diffractor" not in registry.available():
        pytest.skip("diffractor is not registered yet")
    vocab = load_default()
    mech = registry.create("diffractor", vocab, epsilon=1.0)
    interior = int(mech.lists[0, len(vocab) // 2])
    d = plausible_deniability(mech, [interior], 1000, method="exact")
    assert d.n_w[0] == pytest.approx(math.tanh(0.5), rel=1e-12)
    edge = int(mech.lists[0, 0])  # clamped end: 1 / (1 + e^{-1})
    d = plausible_deniability(mech, [edge], 1000, method="exact")
    assert d.n_w[0] == pytest.approx(1 / (1 + math.exp(-1.0)), rel=1e-12)
