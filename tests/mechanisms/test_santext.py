"""SanText / SanText+ (Yue et al. 2021): exact laws, exact privacy bounds, sampler against the exact
law with power checks, sensitive-set selection, batch independence, pipeline and report."""

import math

import numpy as np
import pytest
from scipy import special, stats

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.word.santext import SanText, SanTextPlus, sensitive_words
from textdp.mechanisms.word.tem import distances_from
from textdp.noise import gumbel_max
from textdp.vocab import Vocabulary, load_default

ALPHA = 1e-6


def _vocab(n=40, d=5, seed=1):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


def _chi2_p(counts, probs):
    """χ² p-value with cells (sorted by expected count) merged until each expects ≥ 5."""
    keep = probs > 0
    assert counts[~keep].sum() == 0, "a zero-probability output was sampled"
    counts, probs = counts[keep], probs[keep]
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


def _dist(v):
    x = v.vectors.astype(np.float64)
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


def test_santext_law_is_the_exponential_mechanism():
    v = _vocab()
    m = SanText(v, epsilon=2.5)
    for w in (0, 13, 39):
        want = special.softmax(-2.5 / 2 * distances_from(v.vectors, w))
        np.testing.assert_allclose(m.output_distribution(w), want, rtol=1e-12)
        np.testing.assert_allclose(np.exp(m.output_distribution(w, log=True)), want, rtol=1e-12)


@pytest.mark.parametrize("eps", [0.3, 2.0, 15.0])
def test_santext_exact_log_ratio_bound_all_pairs(eps):
    v = _vocab(n=30)
    m = SanText(v, epsilon=eps)
    logp = np.array([m.output_distribution(w, log=True) for w in range(30)])
    worst = np.abs(logp[:, None, :] - logp[None, :, :]).max(axis=-1)
    dist = _dist(v)
    assert (worst <= eps * dist + 1e-9).all()
    off = ~np.eye(30, dtype=bool)
    assert (worst[off] / (eps * dist[off])).max() > 0.5  # the check has teeth


def test_santext_exact_bound_default_vocabulary_sampled_pairs():
    vocab = load_default()
    m = SanText(vocab, epsilon=2.0)
    rng = np.random.default_rng(21)
    x = vocab.vectors.astype(np.float64)
    for a, b in rng.integers(0, len(vocab), (10, 2)).tolist() + [[vocab.index("monday"),
                                                                  vocab.index("tuesday")]]:
        lr = np.abs(m.output_distribution(a, log=True) - m.output_distribution(b, log=True)).max()
        assert lr <= 2.0 * np.linalg.norm(x[a] - x[b]) + 1e-9


@pytest.mark.parametrize("p,w", [(0.3, 0.9), (0.05, 0.5), (1.0, 0.2)])
def test_santext_plus_exact_bound_all_pairs(p, w):
    v = _vocab(n=30)
    eps = 3.0
    m = SanTextPlus(v, epsilon=eps, p=p, w=w, frequencies=np.arange(30, 0, -1))
    sens = m.sensitive
    assert sens.sum() == math.ceil(w * 30) and sens[-1] and (not sens[0] or w == 1)
    logp = np.array([m.output_distribution(x, log=True) for x in range(30)])
    np.testing.assert_allclose(np.exp(logp).sum(axis=1), 1.0, atol=1e-12)
    dist = _dist(v)
    worst_ratio = 0.0
    for a in range(30):
        for b in range(30):
            if a == b:
                continue
            # Sensitive outputs: ε·d plus ln(1/p) when a is sensitive and b is not.
            extra = math.log(1 / p) if sens[a] and not sens[b] else 0.0
            lr = (logp[a, sens] - logp[b, sens]).max()
            assert lr <= eps * dist[a, b] + extra + 1e-9, (a, b)
            worst_ratio = max(worst_ratio, (lr - extra) / (eps * dist[a, b]))
            # A non-sensitive output is only ever the unchanged input.
            for y in np.flatnonzero(~sens):
                if y != a:
                    assert logp[a, y] == -np.inf
    assert worst_ratio > 0.3
    for x in np.flatnonzero(~sens):
        assert math.exp(logp[x, x]) == pytest.approx(1 - p, abs=1e-15)


def test_santext_plus_mixed_pair_bound_is_needed():
    """The ln(1/p) term is real: a sensitive/non-sensitive pair exceeds plain ε·d."""
    v = _vocab(n=30)
    m = SanTextPlus(v, epsilon=3.0, p=0.05, w=0.5, frequencies=np.arange(30, 0, -1))
    sens = m.sensitive
    dist = _dist(v)
    logp = np.array([m.output_distribution(x, log=True) for x in range(30)])
    excess = [(logp[a, sens] - logp[b, sens]).max() - 3.0 * dist[a, b]
              for a in np.flatnonzero(sens) for b in np.flatnonzero(~sens)]
    assert max(excess) > 0.5


def test_sensitive_words_by_frequency():
    v = _vocab(n=10)
    freq = np.array([5, 1, 9, 1, 7, 3, 3, 8, 2, 6], dtype=float)
    np.testing.assert_array_equal(sensitive_words(v, 0.3, freq), [1, 3, 8])
    # Ties: the later row counts as rarer.
    np.testing.assert_array_equal(sensitive_words(v, 0.1, freq), [3])
    assert sensitive_words(v, 0.01, freq).size == 1
    assert sensitive_words(v, 1.0, freq).size == 10
    vocab = load_default()
    rare = sensitive_words(vocab, 0.1)
    assert rare.size == math.ceil(0.1 * len(vocab)) and "the" not in {vocab.words[i] for i in rare}
    with pytest.raises(ValueError, match="frequencies"):
        sensitive_words(v, 0.5, [1.0, 2.0])


@pytest.mark.statistical
def test_santext_sampler_matches_exact_law_with_power():
    v = _vocab()
    m = SanText(v, epsilon=3.0)
    rng = np.random.default_rng(22)
    words = np.array([2, 19, 33])
    ids = np.repeat(words, 60_000)
    rng.shuffle(ids)
    out = m.privatize_ids(ids, rng)
    wrong = SanText(v, epsilon=3.3)
    for w in words:
        counts = np.bincount(out[ids == w], minlength=len(v))
        assert _chi2_p(counts, m.output_distribution(w)) > ALPHA
        assert _chi2_p(counts, wrong.output_distribution(w)) < ALPHA


@pytest.mark.statistical
def test_santext_plus_sampler_matches_exact_law_with_power():
    v = _vocab()
    m = SanTextPlus(v, epsilon=2.0, p=0.3, w=0.6, frequencies=np.arange(40, 0, -1))
    sens = m.sensitive
    words = np.array([np.flatnonzero(sens)[3], np.flatnonzero(~sens)[5]])
    rng = np.random.default_rng(23)
    ids = np.repeat(words, 80_000)
    rng.shuffle(ids)
    out = m.privatize_ids(ids, rng)
    wrong = SanTextPlus(v, epsilon=2.0, p=0.33, w=0.6, frequencies=np.arange(40, 0, -1))
    for w in words:
        counts = np.bincount(out[ids == w], minlength=len(v))
        assert _chi2_p(counts, m.output_distribution(w)) > ALPHA
    # Power: a 10% larger p is rejected on the non-sensitive word.
    counts = np.bincount(out[ids == words[1]], minlength=len(v))
    with pytest.raises(AssertionError):
        assert _chi2_p(counts, wrong.output_distribution(words[1])) > ALPHA


@pytest.mark.statistical
def test_gumbel_max_over_the_row_has_the_same_law():
    """SPEC's Gumbel-max formulation samples the law the inversion sampler uses."""
    v = _vocab()
    m = SanText(v, epsilon=3.0)
    w = 7
    scores = -distances_from(v.vectors, w)
    got = gumbel_max(np.tile(scores, (100_000, 1)), 2 / 3.0, np.random.default_rng(24))
    assert _chi2_p(np.bincount(got, minlength=40), m.output_distribution(w)) > ALPHA


def test_batch_composition_does_not_change_outputs():
    m = SanTextPlus(_vocab(n=300, d=8), epsilon=2.0, frequencies=np.arange(300.0))
    rng = np.random.default_rng(25)
    ids = rng.integers(0, 300, 3000)
    noise = m.draw(ids, rng)
    whole = m.apply(ids, noise)
    parts = [m.apply(ids[s:s + 217], noise[s:s + 217]) for s in range(0, 3000, 217)]
    np.testing.assert_array_equal(whole, np.concatenate(parts))


def test_pipeline_report_and_registry():
    texts = ["the cat sat on the mat", "Privacy is a RIGHT, not a privilege."]
    for name, params in [("santext", {}), ("santext_plus", {"p": 0.2, "w": 0.5})]:
        a = textdp.privatize(texts, mechanism=name, epsilon=3.0, seed=5, **params)
        b = textdp.privatize(texts, mechanism=name, epsilon=3.0, seed=5, batch_size=1, **params)
        assert a.texts == b.texts
        g = a.report["guarantee"]
        assert g["epsilon"] == 3.0 and g["verified"]
        assert name in textdp.mechanisms.available()
    g = create("santext_plus", epsilon=1.0, p=0.25).guarantee
    assert "ln(1/p)" in g.per_word and f"{math.log(4):.6g}" in g.per_word
    assert create("santext", epsilon=1e4).privatize_words(["house"], None) == ["house"]


def test_bad_parameters():
    v = _vocab()
    with pytest.raises(ValueError, match="p must"):
        SanTextPlus(v, epsilon=1.0, p=0.0)
    with pytest.raises(ValueError, match="w must"):
        SanTextPlus(v, epsilon=1.0, w=1.5)
    with pytest.raises(TypeError):
        SanTextPlus(v, epsilon=1.0, p="0.3")
    with pytest.raises(ValueError, match="santext"):
        create("santext", v, epsilon=1.0, p=0.3)
