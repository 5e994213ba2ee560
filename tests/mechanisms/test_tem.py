"""TEM (Carvalho et al. 2023): exact law against the paper's construction, exact privacy bound,
sampler against the exact law (with power checks), batch independence, pipeline and report."""

import math

import numpy as np
import pytest
from scipy import stats

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.word.tem import TEM, distances_from
from textdp.noise import choose_from_weights, gumbel_max
from textdp.vocab import Vocabulary, load_default

ALPHA = 1e-6


def _vocab(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


def _chi2_p(counts, probs):
    """χ² p-value with cells (sorted by expected count) merged until each expects ≥ 5."""
    order = np.argsort(probs)
    expected = probs[order] * counts.sum()
    obs = counts[order]
    obs_m, exp_m, o, e = [], [], 0.0, 0.0
    for c, x in zip(obs, expected, strict=True):
        o, e = o + c, e + x
        if e >= 5:
            obs_m.append(o)
            exp_m.append(e)
            o = e = 0.0
    if e > 0:
        obs_m[-1] += o
        exp_m[-1] += e
    return stats.chisquare(obs_m, exp_m).pvalue


def _paper_law(mech, w):
    """Pr[M(w)=v] built literally: softmax over L_w ∪ {⊥} with f(⊥) = −γ + (2Δ/ε)ln|V∖L_w|, ⊥'s
    mass spread uniformly over V ∖ L_w."""
    d = distances_from(mech.vocabulary.vectors, w)
    inside = d <= mech.gamma
    scale = 2.0 / mech.epsilon
    scores = -d[inside]
    rest = int((~inside).sum())
    bottom = -mech.gamma + scale * math.log(rest) if rest else -np.inf
    logits = np.append(scores, bottom) / scale
    p = np.exp(logits - logits.max())
    p /= p.sum()
    law = np.zeros(d.size)
    law[inside] = p[:-1]
    if rest:
        law[~inside] = p[-1] / rest
    return law


def _literal_tem(mech, w, n, rng):
    """The paper's procedure token by token: Gumbel-max over L_w ∪ {⊥}, then uniform on V ∖ L_w."""
    d = distances_from(mech.vocabulary.vectors, w)
    members = np.flatnonzero(d <= mech.gamma)
    outside = np.flatnonzero(d > mech.gamma)
    scale = 2.0 / mech.epsilon
    bottom = -mech.gamma + scale * math.log(outside.size) if outside.size else -np.inf
    scores = np.append(-d[members], bottom)
    pick = gumbel_max(np.tile(scores, (n, 1)), scale, rng)
    out = np.where(pick < members.size, members[np.minimum(pick, members.size - 1)], -1)
    fell = out < 0
    out[fell] = outside[rng.integers(0, max(outside.size, 1), int(fell.sum()))]
    return out


def test_gamma_and_truncation_set():
    v = _vocab()
    m = TEM(v, epsilon=2.0, beta=0.01)
    assert m.gamma == pytest.approx((2 / 2.0) * math.log(0.99 * 39 / 0.01), rel=1e-15)
    d = distances_from(v.vectors, 3)
    np.testing.assert_array_equal(m.truncation_set(3), np.flatnonzero(d <= m.gamma))
    assert m.truncation_set("w3").size == m.truncation_set(3).size


@pytest.mark.parametrize("eps,beta", [(1.0, 0.001), (4.0, 0.2), (9.0, 0.5), (30.0, 0.9)])
def test_closed_form_equals_paper_construction(eps, beta):
    m = TEM(_vocab(), epsilon=eps, beta=beta)
    for w in range(0, 40, 7):
        law = m.output_distribution(w)
        assert law.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(law, _paper_law(m, w), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("eps,beta", [(0.5, 0.001), (3.0, 0.05), (12.0, 0.3)])
def test_exact_log_ratio_bound_all_pairs(eps, beta):
    v = _vocab(n=30)
    m = TEM(v, epsilon=eps, beta=beta)
    logp = np.array([m.output_distribution(w, log=True) for w in range(30)])
    x = v.vectors.astype(np.float64)
    dist = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    worst = np.abs(logp[:, None, :] - logp[None, :, :]).max(axis=-1)
    assert (worst <= eps * dist + 1e-9).all()
    # The bound is nearly attained somewhere (the check has teeth).
    off = ~np.eye(30, dtype=bool)
    assert (worst[off] / (eps * dist[off])).max() > 0.4


def test_exact_log_ratio_bound_default_vocabulary_sampled_pairs():
    vocab = load_default()
    m = TEM(vocab, epsilon=3.0)
    rng = np.random.default_rng(11)
    words = rng.integers(0, len(vocab), 24)
    pairs = [(words[i], words[i + 1]) for i in range(0, 24, 2)]
    pairs.append((vocab.index("monday"), vocab.index("tuesday")))  # the closest pair
    x = vocab.vectors.astype(np.float64)
    for a, b in pairs:
        lr = np.abs(m.output_distribution(a, log=True) - m.output_distribution(b, log=True)).max()
        assert lr <= 3.0 * np.linalg.norm(x[a] - x[b]) + 1e-9


def test_reference_code_bottom_weight_is_a_different_law():
    """ln(|V|/|L_w|) in place of ln|V∖L_w| (the public reference code) changes the law."""
    m = TEM(_vocab(), epsilon=4.0, beta=0.2)
    w = 5
    d = distances_from(m.vocabulary.vectors, w)
    inside = d <= m.gamma
    bad_bottom = -m.gamma + (2 / 4.0) * math.log(d.size / inside.sum())
    logits = np.append(-d[inside], bad_bottom) * (4.0 / 2)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    assert abs(p[-1] - m.output_distribution(w)[~inside].sum()) > 0.01


@pytest.mark.statistical
@pytest.mark.parametrize("eps,beta", [(4.0, 0.2), (1.0, 0.001)])
def test_sampler_matches_exact_law_with_power(eps, beta):
    v = _vocab()
    m = TEM(v, epsilon=eps, beta=beta)
    rng = np.random.default_rng(12)
    words = np.array([3, 17, 29])
    ids = np.repeat(words, 60_000)
    rng.shuffle(ids)  # tokens of several words interleaved in one batch
    out = m.privatize_ids(ids, rng)
    wrong = TEM(v, epsilon=eps * 1.15, beta=beta)
    for w in words:
        counts = np.bincount(out[ids == w], minlength=len(v))
        assert _chi2_p(counts, m.output_distribution(w)) > ALPHA
        # Power: the same samples are rejected against the law of a 15% larger ε.
        assert _chi2_p(counts, wrong.output_distribution(w)) < ALPHA


@pytest.mark.statistical
def test_paper_procedure_samples_the_closed_form():
    m = TEM(_vocab(), epsilon=4.0, beta=0.2)
    w = 8
    assert 0 < m.truncation_set(w).size < 40  # both branches (L_w and ⊥) are exercised
    out = _literal_tem(m, w, 100_000, np.random.default_rng(13))
    assert _chi2_p(np.bincount(out, minlength=40), m.output_distribution(w)) > ALPHA


def test_batch_composition_does_not_change_outputs():
    m = TEM(_vocab(n=300, d=8), epsilon=2.0)
    rng = np.random.default_rng(14)
    ids = rng.integers(0, 300, 2000)
    u = m.draw(ids, rng)
    whole = m.apply(ids, u)
    parts = np.concatenate([m.apply(ids[s:s + 333], u[s:s + 333]) for s in range(0, 2000, 333)])
    np.testing.assert_array_equal(whole, parts)


def test_pipeline_report_and_registry():
    texts = ["the cat sat on the mat", "A dog, and ANOTHER dog!"]
    a = textdp.privatize(texts, mechanism="tem", epsilon=2.0, seed=3, beta=0.01)
    b = textdp.privatize(texts, mechanism="tem", epsilon=2.0, seed=3, beta=0.01, batch_size=1)
    assert a.texts == b.texts and len(a.texts) == 2
    g = a.report["guarantee"]
    assert g["notion"].startswith("metric DP") and g["epsilon"] == 2.0 and g["verified"]
    assert a.report["mechanism"]["parameters"] == {"epsilon": 2.0, "beta": 0.01}
    assert "tem" in textdp.mechanisms.available()
    big = create("tem", epsilon=1e4)
    assert big.privatize_words(["house", "tree"], np.random.default_rng(0)) == ["house", "tree"]


def test_bad_parameters():
    v = _vocab()
    for beta in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="beta"):
            TEM(v, epsilon=1.0, beta=beta)
    with pytest.raises(TypeError, match="beta"):
        TEM(v, epsilon=1.0, beta="0.1")
    with pytest.raises(ValueError, match="epsilon"):
        TEM(v, epsilon=0.0)
    with pytest.raises(KeyError):
        TEM(v, epsilon=1.0).output_distribution("nope")


def test_uncertain_choices_are_redone_exactly(monkeypatch):
    """With the error bound inflated every token takes the exact path: same outputs."""
    from textdp.neighbors import NearestNeighbors

    m = TEM(_vocab(n=200, d=6), epsilon=3.0, beta=0.05)
    rng = np.random.default_rng(15)
    ids = rng.integers(0, 200, 3000)
    u = m.draw(ids, rng)
    fast = m.apply(ids, u)
    original = NearestNeighbors.map_squared_distances

    def inflated(self, queries, fn, **kw):
        return original(self, queries, lambda a, b, sq, err: fn(a, b, sq, err * 1e12), **kw)

    monkeypatch.setattr(NearestNeighbors, "map_squared_distances", inflated)
    np.testing.assert_array_equal(m.apply(ids, u), fast)
    # Both equal sequential halving over the exact law at the same uniforms.
    for i in range(0, 3000, 97):
        law = m.output_distribution(ids[i])[None, :]
        assert fast[i] == choose_from_weights(law, np.zeros(1, dtype=int), u[i:i + 1])[0]


def test_default_vocabulary_outputs_do_not_depend_on_the_batch():
    """Real rows: float32 decisions certified, the uncertain ones redone in float64 — the same
    outputs whichever other words share the GEMM blocks."""
    vocab = load_default()
    m = TEM(vocab, epsilon=3.0)
    rng = np.random.default_rng(16)
    ids = np.minimum(rng.zipf(1.3, 2500), len(vocab)) - 1  # frequent words repeat, as in text
    u = m.draw(ids, rng)
    whole = m.apply(ids, u)
    order = rng.permutation(ids.size)
    shuffled = np.empty_like(whole)
    shuffled[order] = m.apply(ids[order], u[order])
    np.testing.assert_array_equal(whole, shuffled)
    parts = np.concatenate([m.apply(ids[s:s + 700], u[s:s + 700]) for s in range(0, 2500, 700)])
    np.testing.assert_array_equal(whole, parts)
