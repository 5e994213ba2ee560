"""Budget allocation (textdp.allocation): the arithmetic (Σ ≤ ε_doc after rounding down, floor,
ceiling), seeded reproducibility, the report's statement, the per-level draws against the exact
law (with power), and the data-dependent rule's worst case against a brute force."""

import numpy as np
import pytest
from scipy import stats

import textdp
from textdp.allocation import Allocation, Allocator, frequency_weights, grid_down
from textdp.mechanisms import create
from textdp.mechanisms.word import custext
from textdp.pipeline import Privatizer
from textdp.vocab import Vocabulary

WORDS = ("the of and food good bad rude waiter pizza service cold great table dinner menu chef "
         "salad soup bread wine kitchen cheese tomato onion garlic pepper spoon fork plate "
         "napkin sommelier quinoa").split()


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    custext._CACHE.clear()


def _vocab(seed=3):
    rng = np.random.default_rng(seed)
    return Vocabulary(WORDS, rng.standard_normal((len(WORDS), 5)), name="toy-words")


def _allocator(rule, doc=12.0, floor=None, ceiling=None, name="custext", **params):
    mech = create(name, _vocab(), epsilon=1.0, cache=False, **({"k": 8} | params))
    return Allocator(Allocation(rule, doc, floor, ceiling), mech)


def _docs(lengths):
    return np.repeat(np.arange(len(lengths)), lengths)


@pytest.mark.parametrize("rule", ["uniform", "position", "frequency"])
@pytest.mark.parametrize("floor,ceiling", [(None, None), (0.5, None), (None, 3.0), (0.7, 2.5)])
def test_levels_sum_to_at_most_the_document_budget(rule, floor, ceiling):
    al = _allocator(rule, 12.0, floor, ceiling)
    lengths = [1, 2, 3, 7, 16, 40]
    docs = _docs(lengths)
    ids = np.random.default_rng(0).integers(0, len(WORDS), docs.size)
    raw = al.epsilons(ids, docs, len(lengths))
    levels = al.round_down(raw)
    total = np.bincount(docs, levels)
    assert (total <= 12.0 * (1 + 1e-12)).all()
    assert (levels <= raw).all() and (levels > 0).all()
    # Every level is on the grid 2^(j/8), or is the floor or the ceiling.
    on_grid = np.isclose(np.log2(levels) * 8, np.round(np.log2(levels) * 8), atol=1e-9)
    assert (on_grid | (levels == floor) | (levels == ceiling)).all()
    if ceiling is not None:
        assert (levels <= ceiling).all()
    if floor is not None:
        fits = np.array(lengths) * floor <= 12.0
        assert (levels[fits[docs]] >= floor).all()
        assert al.below_floor == int((~fits).sum())
        np.testing.assert_allclose(raw[~fits[docs]], (12.0 / np.array(lengths))[docs][~fits[docs]])
    if rule == "uniform" and ceiling is None and floor is None:
        np.testing.assert_allclose(raw, 12.0 / np.array(lengths)[docs])


def test_position_rule_spends_the_budget_and_decreases():
    al = _allocator("position", 10.0)
    docs = _docs([5])
    raw = al.epsilons(np.zeros(5, dtype=np.int64), docs, 1)
    assert raw.sum() == pytest.approx(10.0, rel=1e-9) and (np.diff(raw) < 0).all()
    assert raw[0] == pytest.approx(2 * raw[-1])
    capped = _allocator("position", 10.0, ceiling=2.2).epsilons(np.zeros(5, np.int64), docs, 1)
    assert capped.max() <= 2.2 and capped.sum() == pytest.approx(10.0, rel=1e-9)


def test_grid_down_rounds_down_by_less_than_one_step():
    x = np.exp(np.random.default_rng(1).uniform(-20, 5, 10_000))
    g = grid_down(x)
    assert (g <= x).all() and (g > x * 2 ** (-1 / 8) * (1 - 1e-12)).all()
    assert grid_down(np.array([2.0, 1.0]))[0] == 2.0


def test_frequency_weights_are_public_word_properties():
    w = frequency_weights(["the", "food", "sommelier", "quinoa", "zzzqx"])
    assert w[0] == 1.0 and w[1] > w[2] and w.min() >= 0.25 and w.max() <= 1.0


def test_frequency_rule_needs_a_grouped_exact_law():
    with pytest.raises(ValueError, match="function of the private word"):
        Allocator(Allocation("frequency", 5.0), create("mvc", _vocab(), epsilon=1.0))
    with pytest.raises(ValueError, match="unknown allocation rule"):
        Allocation("tagger", 5.0)
    with pytest.raises(ValueError, match="exceeds the ceiling"):
        Allocation("uniform", 5.0, floor=2.0, ceiling=1.0)


def _brute_worst(al, levels):
    groups = al.mechanism.groups
    logp = np.stack([al.level_mechanism(float(levels[w])).output_distribution(w, log=True)
                     for w in range(len(WORDS))])
    best = 0.0
    for a in range(len(WORDS)):
        for b in np.flatnonzero(groups.group_of == groups.group_of[a]):
            both = np.isfinite(logp[a]) & np.isfinite(logp[b])
            best = max(best, float(np.abs(logp[a, both] - logp[b, both]).max()))
    return best


@pytest.mark.parametrize("n", [1, 3, 9])
def test_frequency_worst_case_is_the_exact_maximum_over_its_levels(n):
    al = _allocator("frequency", 12.0, floor=0.3)
    worst = al.worst_case_per_word(n)
    # Brute force: every pair in one group, each word at the level the rule gives it at length n.
    share = 12.0 / n
    levels = al.round_down(np.minimum(share, np.maximum(0.3, share * al._omega)))
    assert len(np.unique(levels)) > 1  # the rule does mix levels here
    best = _brute_worst(al, levels)
    assert worst >= best and worst == pytest.approx(best, rel=1e-9)
    # Power: the worst case at one level for every word (the realised reading of a uniform
    # allocation) is a different number, so the check above sees the levels.
    assert _brute_worst(al, np.full(len(WORDS), levels.max())) != pytest.approx(best, rel=1e-6)


def test_seeded_runs_are_reproducible_and_the_report_states_the_rule():
    v = _vocab()
    texts = ["The food was good but the waiter was rude", "cold pizza", "", "wine and cheese"]
    kw = dict(mechanism="custext", vocabulary=v, k=8, cache=False, epsilon_document=6.0,
              epsilon_floor=0.5, epsilon_ceiling=3.0, seed=11)
    for rule in ("uniform", "position", "frequency"):
        a = textdp.privatize(texts, allocation=rule, **kw)
        b = textdp.privatize(texts, allocation=rule, batch_size=1, **kw)
        assert a.texts == b.texts
        al = a.report["allocation"]
        assert al["rule"] == rule and al["public"] == (rule != "frequency")
        assert al["epsilon_document"] == 6.0 and al["epsilon_floor"] == 0.5
        assert al["epsilon_ceiling"] == 3.0
        assert a.report["guarantee"]["per_document"] == al["per_document"]
        assert a.report["guarantee"]["epsilon"] == 3.0
        if rule == "frequency":
            assert al["worst_case_per_word"] > 0 and "worst case" in al["depends_on"]
            assert "worst case" in a.report["guarantee"]["per_word"]
        else:
            assert "ε_doc = 6" in al["per_document"] and max(al["levels_used"]) <= 3.0
        line = textdp.privacy.report.summary_line(a.report)
        assert f"allocation {rule}" in line
    with pytest.raises(ValueError, match="epsilon_document instead"):
        textdp.privatize(texts, mechanism="mvc", vocabulary=v, epsilon=1.0, allocation="uniform")


def test_split_runs_add_up_to_one_allocation_section():
    """A run split over processes (Ray, datasets) sends per-batch tallies home: their sum
    must state what one run states (below-floor count, lengths, levels used)."""

    texts = ["The food was good but the waiter was rude", "cold pizza", "",
             "wine and cheese and bread and soup and salad", "good " * 40]
    kw = dict(mechanism="custext", vocabulary=_vocab(), k=8, cache=False, seed=2)
    whole = textdp.privatize(texts, allocation="frequency", epsilon_document=6.0,
                             epsilon_floor=0.5, **kw).report
    mech = create("custext", _vocab(), epsilon=6.0, k=8, cache=False)
    alloc = Allocation("frequency", 6.0, 0.5)
    home = Privatizer(mech, allocation=alloc, seed=2)
    worker = Privatizer(mech, allocation=alloc, seed=2)
    parts = []
    for a in range(0, len(texts), 2):
        before = worker.tallies()
        worker.run(texts[a:a + 2], start=a)
        parts.append(worker.tallies() - before)
    assert home.report(sum(parts))["allocation"] == whole["allocation"]
    assert whole["allocation"]["documents_below_floor"] == 1


def test_long_documents_are_refused_with_allocation():
    mech = create("custext", _vocab(), epsilon=1.0, k=8, cache=False)
    run = Privatizer(mech, allocation=Allocation("uniform", 5.0), seed=1)
    with pytest.raises(ValueError, match="whole documents"):
        run.run(["food " * 20_000])


@pytest.mark.statistical
def test_allocated_draws_follow_the_level_law_with_power():
    v = _vocab()
    mech = create("custext", v, epsilon=1.0, k=8, cache=False)
    run = Privatizer(mech, allocation=Allocation("uniform", 8.0), oov="drop")
    texts = ["salad salad salad salad"] * 20_000  # four words: ε_i = 2, on the grid
    out = " ".join(run.run(texts)).lower().split()
    counts = np.bincount([v.index(w) for w in out], minlength=len(v))
    w = v.index("salad")
    right = create("custext", v, epsilon=2.0, k=8, cache=False).output_distribution(w)
    wrong = create("custext", v, epsilon=2.6, k=8, cache=False).output_distribution(w)
    keep = right > 0
    assert counts[~keep].sum() == 0
    assert stats.chisquare(counts[keep], right[keep] * counts.sum()).pvalue > 1e-6
    assert stats.chisquare(counts[keep], wrong[keep] * counts.sum()).pvalue < 1e-6
