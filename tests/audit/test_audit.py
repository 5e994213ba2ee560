"""textdp.audit: certified lower bounds on a word mechanism's ε (issue 15, TESTING.md §4).

The audit must be able to fail: each broken variant below (noise drawn for 4ε while claiming ε,
a shrunk noise radius, Vickrey excluding the input word while claiming ε·d, a user's mechanism
claiming half its ε) is certified as a violation, and every correct mechanism stays below its
claim. α = 1e-6 for the whole audit, seeded: a correct mechanism is flagged with probability
≤ 1e-6 whatever the seed, and the broken ones exceed their claims by margins the draws resolve.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from textdp import mechanisms
from textdp.audit import NO_EVIDENCE, VIOLATION, audit
from textdp.audit._stats import cp_lower, cp_upper, prefix_sizes
from textdp.mechanisms.base import WordMechanism
from textdp.mechanisms.word.mvc import MVC
from textdp.mechanisms.word.vickrey import Vickrey
from textdp.noise import metric_laplace
from textdp.privacy import Notion
from textdp.vocab import Vocabulary

pytestmark = pytest.mark.statistical
ALPHA = 1e-6
DRAWS = 60_000


def _vocab(n=30, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


VOCAB = _vocab()


class FourEpsilonMVC(MVC):
    """Broken: noise for 4ε, while the privacy map (inherited) claims ε."""

    def draw(self, ids, rng):
        return metric_laplace(ids.size, self.vocabulary.dim, 4 * self.epsilon, rng,
                              dtype=np.float32)


class ShrunkRadiusMVC(MVC):
    """Broken: the noise vector's radius shrunk to a third after drawing."""

    def draw(self, ids, rng):
        return super().draw(ids, rng) / 3


class ClaimingVickrey(Vickrey):
    """Broken: excludes the input word (SPEC's variant) but claims Vickrey's ε·d."""

    @property
    def notion(self):
        return Notion.METRIC_DP


class RandomisedResponse(WordMechanism):
    """A user's mechanism: keep the word with probability e^ε/(e^ε + |V| − 1), else a uniform
    other word. ε-DP for every pair of distinct words: distance 1, claim ε·1."""

    name = "user_rr"
    claim_factor = 1.0

    def distance(self, a, b):
        return (np.asarray(a) != np.asarray(b)).astype(np.float64)

    def privacy_loss(self, a, b):
        return super().privacy_loss(a, b) * self.claim_factor

    def draw(self, ids, rng):
        return rng.random(ids.size), rng.integers(0, len(self.vocabulary) - 1, ids.size)

    def apply(self, ids, noise):
        u, other = noise
        n = len(self.vocabulary)
        keep = u < math.exp(self.epsilon) / (math.exp(self.epsilon) + n - 1)
        return np.where(keep, ids, other + (other >= ids))


def _run(mech, **kw):
    kw.setdefault("draws", DRAWS)
    kw.setdefault("n_pairs", 3)
    return audit(mech, alpha=ALPHA, **kw)


# --- power: the broken variants are certified --------------------------------------------------
@pytest.mark.parametrize("broken", [FourEpsilonMVC, ShrunkRadiusMVC])
def test_broken_mvc_noise_is_certified_as_a_violation(broken):
    result = _run(broken(VOCAB, epsilon=1.0), seed=1)
    assert result.verdict == VIOLATION
    assert len(result.violations) >= 2, result.markdown()
    # The same pairs, the correct mechanism: no evidence.
    right = _run(MVC(VOCAB, epsilon=1.0), seed=2)
    assert right.verdict == NO_EVIDENCE, right.markdown()
    assert [(p.a, p.b) for p in right.pairs] == [(p.a, p.b) for p in result.pairs]


def test_vickrey_excluding_the_input_word_claims_nothing_and_a_finite_claim_is_refuted():
    spec = _run(Vickrey(VOCAB, epsilon=1.5), seed=3)
    assert all(math.isinf(p.claim) for p in spec.pairs)
    assert spec.verdict == NO_EVIDENCE  # nothing claimed, nothing to violate …
    assert all(p.lower_bound > 2 * p.distance * 1.5 for p in spec.pairs)  # … yet far apart
    claiming = _run(ClaimingVickrey(VOCAB, epsilon=1.5), seed=3)
    assert all(math.isfinite(p.claim) for p in claiming.pairs)
    assert len(claiming.violations) == len(claiming.pairs), claiming.markdown()
    right = _run(Vickrey(VOCAB, epsilon=1.5, exclude_input=False), seed=4)
    assert right.verdict == NO_EVIDENCE, right.markdown()


def test_a_users_subclass_is_audited_and_an_understated_claim_is_certified():
    vocab = _vocab(10)
    right = RandomisedResponse(vocab, epsilon=2.0)
    result = _run(right, draws=40_000, seed=5, pairs="random")
    assert result.mechanism == "user_rr" and result.verdict == NO_EVIDENCE
    # The law's log-ratio is exactly ε on the event {a}: the bound comes close to the claim.
    assert max(p.lower_bound for p in result.pairs) > 0.85 * 2.0
    cheat = RandomisedResponse(vocab, epsilon=2.0)
    cheat.claim_factor = 0.5
    assert _run(cheat, draws=40_000, seed=5).verdict == VIOLATION


# --- the correct mechanisms stay below their claims --------------------------------------------
@pytest.mark.parametrize("name, params", [
    ("mvc", {"epsilon": 1.0}),
    ("mahalanobis", {"epsilon": 1.5, "lam": 0.5}),
    ("vickrey", {"epsilon": 1.5, "exclude_input": False}),
    ("tem", {"epsilon": 2.0}),
    ("santext", {"epsilon": 2.0}),
    ("santext_plus", {"epsilon": 2.0, "frequencies": np.arange(30, 0, -1.0)}),
    ("diffractor", {"epsilon": 0.5, "cache": False}),
    ("diffractor", {"epsilon": 0.5, "method": "tem", "n_lists": 2, "cache": False}),
])
def test_correct_mechanisms_show_no_evidence(name, params):
    mech = mechanisms.create(name, VOCAB, **params)
    result = _run(mech, draws=40_000, seed=6, n_pairs=2)
    assert result.verdict == NO_EVIDENCE, result.markdown()
    assert all(math.isfinite(p.claim) for p in result.pairs)


# --- pairs, checks, output ---------------------------------------------------------------------
def test_closest_pairs_are_the_smallest_claims():
    mech = MVC(VOCAB, epsilon=1.0)
    result = audit(mech, draws=10, n_pairs=4, seed=0)
    x = VOCAB.vectors.astype(np.float64)
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    iu = np.triu_indices(len(VOCAB), 1)
    want = sorted(d[iu])[:4]
    assert [p.distance for p in result.pairs] == pytest.approx(want, rel=1e-12)
    assert [p.claim for p in result.pairs] == pytest.approx(want, rel=1e-12)


def test_closest_pairs_on_a_large_vocabulary_come_from_the_neighbour_graph(monkeypatch):
    from textdp.audit import _pairs

    vocab = _vocab(80, seed=9)
    exact = _pairs.closest_pairs(MVC(vocab, epsilon=1.0), 6)
    monkeypatch.setattr(_pairs, "ALL_PAIRS_UP_TO", 10)
    assert _pairs.closest_pairs(MVC(vocab, epsilon=1.0), 6).tolist() == exact.tolist()


def test_pairs_by_word_or_id_random_pairs_and_errors():
    mech = MVC(VOCAB, epsilon=1.0)
    r = audit(mech, [("w1", "w2"), (3, 4)], draws=10, seed=0)
    assert [(p.word_a, p.word_b) for p in r.pairs] == [("w1", "w2"), ("w3", "w4")]
    assert r.pairs_method == "given"
    r = audit(mech, np.array([[1, 2]]), draws=10, seed=0)
    assert (r.pairs[0].a, r.pairs[0].b) == (1, 2)
    r = audit(mech, "random", n_pairs=7, draws=10, seed=0)
    keys = {(p.a, p.b) for p in r.pairs}
    assert len(keys) == 7 and all(a < b for a, b in keys)
    for bad, err in [([("w1", "w1")], ValueError), ([("w1", "nosuch")], ValueError),
                     ([(0, 99)], ValueError), ([], ValueError), ("nearest", ValueError),
                     ([(1.5, 2)], TypeError), ([(1, 2, 3)], ValueError)]:
        with pytest.raises(err):
            audit(mech, bad, draws=10)
    for kw in ({"draws": 1}, {"draws": 2.5}, {"alpha": 0}, {"alpha": 1.0}, {"n_pairs": 0}):
        with pytest.raises((ValueError, TypeError)):
            audit(mech, **kw)
    with pytest.raises(TypeError):
        audit("mvc")


def test_a_mechanism_returning_bad_ids_is_an_error():
    class Bad(RandomisedResponse):
        def apply(self, ids, noise):
            return ids + len(self.vocabulary)

    with pytest.raises(ValueError, match="outside the vocabulary"):
        audit(Bad(VOCAB, epsilon=1.0), draws=10)


def test_seeded_audits_repeat_and_chunking_does_not_change_the_counts():
    mech = MVC(VOCAB, epsilon=1.0)
    a = audit(mech, draws=2_000, seed=11, n_pairs=2)
    b = audit(mech, draws=2_000, seed=11, n_pairs=2)
    assert a.pairs == b.pairs
    calls = []
    audit(mech, draws=2_000, seed=11, n_pairs=2, chunk=97, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1][0] == calls[-1][1] == 4 * 2_000 and len(calls) > 10


def test_json_markdown_and_plot(tmp_path):
    r = _run(Vickrey(VOCAB, epsilon=1.5), draws=2_000, seed=3)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["schema"] == "textdp.audit/1" and d["pairs"][0]["claim"] == "inf"
    assert "sampling cannot show" in d["note"]
    md = r.markdown()
    assert md.count("\n| w") == 3 and "∞" in md and "infinite claim" in md
    path = r.plot(tmp_path / "audit.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- the statistics ----------------------------------------------------------------------------
def test_clopper_pearson_matches_the_beta_quantiles_and_covers():
    from scipy import stats

    k = np.array([0, 1, 5, 99, 100])
    assert cp_lower(k, 100, 0.01) == pytest.approx(
        [0.0, *stats.beta.ppf(0.01, k[1:], 100 - k[1:] + 1)], rel=1e-10)
    assert cp_upper(k, 100, 0.01) == pytest.approx(
        [*stats.beta.ppf(0.99, k[:-1] + 1, 100 - k[:-1]), 1.0], rel=1e-10)
    # Coverage: the one-sided bounds are wrong at most α of the time (exactly ≤ α).
    rng = np.random.default_rng(0)
    p, n, a = 0.03, 400, 0.05
    ks, freq = np.unique(rng.binomial(n, p, 200_000), return_counts=True)
    freq = freq / freq.sum()
    assert freq[cp_lower(ks, n, a) > p].sum() <= a + 0.003
    assert freq[cp_upper(ks, n, a) < p].sum() <= a + 0.003
    # A bound at 4α misses more often than α: the check can fail.
    assert freq[cp_lower(ks, n, 4 * a) > p].sum() > a + 0.003


def test_prefix_sizes_cover_every_scale():
    s = prefix_sizes(50_000)
    assert s[0] == 1 and s[-1] == 50_000 and len(s) < 250
    big = s[s >= 64]
    assert np.all(big[1:] / big[:-1] <= 1.09)
    assert prefix_sizes(5).tolist() == [1, 2, 3, 4, 5]
