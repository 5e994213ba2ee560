"""Sequential composition per notion (textdp.privacy.composition): exact sums, the same metric
only, different metrics and notions side by side, and what does not compose."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from textdp.privacy import Guarantee, Notion
from textdp.privacy.composition import Spend, compose, family_of, sum_up

EUCLID = "Euclidean distance between word vectors of glove"
VOCAB = "vocabulary sha256 aaaa"


def metric(release, eps, metric=EUCLID, space=VOCAB):
    return Spend(release, str(Notion.METRIC_DP), eps, 0.0, metric, space)


# --- exact, rounded-up sums ---------------------------------------------------------------------

@pytest.mark.parametrize("values", [[0.1, 0.2], [0.1] * 10, [1e-300, 1.0], [1 / 3, 1 / 7, 1e-17],
                                    [8.0, 4.0], []])
def test_sum_is_the_smallest_float_at_least_the_exact_sum(values):
    exact = sum((Fraction(v) for v in values), Fraction(0))
    total = sum_up(values)
    assert Fraction(total) >= exact
    assert Fraction(math.nextafter(total, -math.inf)) < exact or total == exact == 0


def test_a_naive_float_sum_can_round_down_and_sum_up_does_not():
    # Power: 0.1 + 0.2 + 0.3 in floats is 0.6000000000000001 ≥ exact, but 0.1·10 summed naively
    # gives 0.9999999999999999 < the exact sum of the ten floats; sum_up never goes below.
    values = [0.1] * 10
    exact = sum((Fraction(v) for v in values), Fraction(0))
    assert Fraction(sum(values)) < exact
    assert Fraction(sum_up(values)) >= exact


def test_sum_with_infinity_or_nan():
    assert sum_up([1.0, math.inf]) == math.inf
    with pytest.raises(ValueError, match="NaN"):
        sum_up([1.0, math.nan])


# --- metric DP per word -------------------------------------------------------------------------

def test_metric_dp_same_metric_and_vocabulary_add():
    c = compose([metric("a", 8.0), metric("b", 3.0), metric("c", 0.5)])
    assert len(c.groups) == 1 and c.comparable and c.bounded
    g = c.groups[0]
    assert (g.epsilon, g.delta, g.releases) == (11.5, 0.0, ("a", "b", "c"))
    assert "ε = 11.5" in c.summary() and "per unit of" in c.summary()


@pytest.mark.parametrize("other", [
    {"metric": "regularised Mahalanobis norm"},           # another metric
    {"space": "vocabulary sha256 bbbb"},                   # the same words, another vocabulary
])
def test_metric_dp_different_metrics_are_side_by_side_never_summed(other):
    c = compose([metric("a", 8.0), metric("b", 3.0, **other)])
    assert len(c.groups) == 2 and not c.comparable and c.bounded
    assert sorted(g.epsilon for g in c.groups) == [3.0, 8.0]
    assert "not summed" in c.summary()
    # One budget is shared across metrics (issue 36): 8 + 3 = 11 of it is spent, though neither
    # group alone exceeds 10; the total bounds the whole-document guarantee (docs/accounting.md).
    assert c.total == 11.0
    assert c.over_budget(11.0) == []
    assert len(c.over_budget(10.0)) == 1 and "across 2 metrics" in c.over_budget(10.0)[0]
    assert len(c.over_budget(5.0)) == 1   # a group over the budget is named first


def test_budget_is_exceeded_only_strictly():
    c = compose([metric("a", 6.0), metric("b", 4.0)])
    assert c.over_budget(10.0) == []
    assert c.over_budget(math.nextafter(10.0, 0.0))


# --- Lipschitz privacy (PrivEmb, LaplaceVector) -------------------------------------------------

def test_lipschitz_epsilon_and_delta_add_pure_with_approximate():
    space, m = "encoder sbert x", "Euclidean distance ‖x − x′‖ between input vectors"
    c = compose([Spend("a", str(Notion.PURE_LIPSCHITZ), 2.0, 0.0, m, space),
                 Spend("b", str(Notion.APPROXIMATE_LIPSCHITZ), 1.5, 1e-6, m, space),
                 Spend("c", str(Notion.APPROXIMATE_LIPSCHITZ), 1.0, 2e-6, m, space)])
    assert len(c.groups) == 1
    g = c.groups[0]
    assert g.family == "Lipschitz privacy" and g.epsilon == 4.5
    assert Fraction(g.delta) >= Fraction(1e-6) + Fraction(2e-6) and g.delta < 3.0000001e-6
    # Printed rounded up (issue 36): the composed δ is just above 3e-06, so "3e-06" would be
    # below it.
    assert "δ = 3.00001e-06" in c.summary()


def test_lipschitz_on_another_encoder_is_another_group():
    m = "Euclidean distance ‖x − x′‖ between input vectors"
    c = compose([Spend("a", str(Notion.PURE_LIPSCHITZ), 2.0, 0.0, m, "encoder sbert"),
                 Spend("b", str(Notion.PURE_LIPSCHITZ), 2.0, 0.0, m, "encoder glove-mean")])
    assert len(c.groups) == 2


# --- SentDP ---------------------------------------------------------------------------------------

def test_sentdp_epsilons_add_and_stay_apart_from_metric_dp():
    sent = [Spend(r, str(Notion.SENTENCE_DP), e, 0.0, "", "sentence splitter pysbd")
            for r, e in (("a", 2.0), ("b", 5.0))]
    c = compose([*sent, metric("w", 8.0)])
    families = {g.family: g for g in c.groups}
    assert families["ε-SentDP"].epsilon == 7.0 and families["metric DP per word"].epsilon == 8.0
    assert not c.comparable and "not summed" in c.summary()


# --- no composable statement --------------------------------------------------------------------

@pytest.mark.parametrize("spend", [
    Spend("u", str(Notion.UTILITY_OPTIMISED_METRIC_DP), 3.0, 0.0, EUCLID, VOCAB),
    Spend("n", str(Notion.NONE), 3.0, 0.0, EUCLID, VOCAB, verified=False),
    Spend("i", str(Notion.METRIC_DP), math.inf, 0.0, EUCLID, VOCAB),
    Spend("x", "a notion from the future", 1.0),
])
def test_releases_without_a_composable_statement_are_stated_as_such(spend):
    c = compose([metric("a", 1.0), spend])
    assert family_of(spend) is None
    assert not c.bounded and not c.comparable
    assert [n["release"] for n in c.not_composable] == [spend.release]
    assert c.groups[0].releases == ("a",)         # not silently added to the metric-DP sum
    assert c.over_budget(1e300)                    # unbounded exceeds any budget
    assert "not composable" in c.summary()


def test_an_unverified_guarantee_composes_under_its_assumptions_and_says_so():
    c = compose([metric("a", 1.0), Spend("v", str(Notion.METRIC_DP), 3.0, 0.0, EUCLID, VOCAB,
                                         verified=False)])
    assert c.bounded and c.groups[0].epsilon == 4.0 and c.groups[0].unverified == ("v",)
    assert "unverified assumptions of v" in c.summary()


def test_spends_from_the_mechanisms_own_guarantees():
    import numpy as np

    from textdp import mechanisms
    from textdp.mechanisms.embedding import LaplaceVector, PrivEmb
    from textdp.vocab import Vocabulary

    vocab = Vocabulary([f"w{i}" for i in range(30)],
                       np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32))
    mvc = mechanisms.create("mvc", vocab, epsilon=2.0).guarantee.to_dict()
    tem = mechanisms.create("tem", vocab, epsilon=3.0).guarantee.to_dict()
    plus = mechanisms.create("santext_plus", vocab, epsilon=3.0).guarantee.to_dict()
    c = compose([Spend.from_guarantee(mvc, release="m", space="v"),
                 Spend.from_guarantee(tem, release="t", space="v"),
                 Spend.from_guarantee(plus, release="p", space="v")])
    assert [(g.releases, g.epsilon) for g in c.groups] == [(("m", "t"), 5.0)]
    assert [n["release"] for n in c.not_composable] == ["p"]
    pe = PrivEmb(epsilon=1.0, delta=1e-6, beta=0.9, dim=8).guarantee.to_dict()
    lv = LaplaceVector(epsilon=2.0).guarantee.to_dict()
    e = compose([Spend.from_guarantee(pe, release="p", space="s"),
                 Spend.from_guarantee(lv, release="l", space="s")])
    assert len(e.groups) == 1 and e.groups[0].epsilon == 3.0 and e.groups[0].delta == pe["delta"]
    sent = Guarantee(notion=Notion.SENTENCE_DP, epsilon=2.0, metric="", per_word="")
    assert family_of(Spend.from_guarantee(sent.to_dict())) == "ε-SentDP"
    # JSON writes ε = ∞ as the string "inf" (report.json_ready): read back as infinity.
    assert Spend.from_guarantee({**mvc, "epsilon": "inf"}).epsilon == math.inf
