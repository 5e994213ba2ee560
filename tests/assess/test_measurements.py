"""Each measurement on data where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from textdp.assess.leakage import Mention, find_mentions, survival
from textdp.assess.linkage import linkage, top_k
from textdp.assess.recommend import Targets, parse_linkage, recommend
from textdp.assess.utility import wilson


def test_top_k_counts_ties_fairly():
    # Row 0: its original ties with two others at the top: in the top-1 with probability 1/3.
    scores = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 0.5], [0.9, 0.0, 0.1]])
    assert top_k(scores, 1) == pytest.approx([1 / 3, 1.0, 0.0])
    assert top_k(scores, 2) == pytest.approx([2 / 3, 1.0, 1.0])
    assert top_k(np.ones((7, 7)), 5) == pytest.approx(np.full(7, 5 / 7))


def test_linkage_of_copies_is_total_and_of_a_constant_is_chance(word_documents):
    n = len(word_documents)
    same = linkage(word_documents, word_documents)
    assert same["top1"] == 1.0 and same["top5"] == 1.0
    flat = linkage(word_documents, ["the the the"] * n)
    assert flat["top1"] == pytest.approx(1 / n) and flat["chance_top1"] == pytest.approx(1 / n)
    assert flat["top5"] == pytest.approx(5 / n)


def test_survival_is_verbatim_and_whole_words():
    mentions = [[Mention("person", "Ann Lee"), Mention("email", "a@example.com")],
                [Mention("person", "Ann")]]
    out = survival(mentions, ["Ann Lee wrote from [EMAIL]", "Annual report by [PERSON]"])
    assert out["found"] == 3 and out["survived"] == 1
    assert out["by_kind"] == {"person": {"found": 2, "survived": 1},
                              "email": {"found": 1, "survived": 0}}


def test_placeholders_are_never_surviving_entities():
    """Issue 37: "IBAN" tagged as an organisation in the original was counted as surviving inside
    the release's own "[IBAN]"; the placeholders are removed before the count, and nothing is
    found across one either ("Ann[PERSON]Lee" is not "Ann Lee")."""
    mentions = [[Mention("org", "IBAN"), Mention("iban", "DE89370400440532013000")],
                [Mention("person", "Ann Lee"), Mention("person", "MASK")],
                [Mention("org", "IBAN")]]
    private = ["Refund to my [ORG] [IBAN] please", "Ann[PERSON]Lee and [MASK]",
               "the IBAN [IBAN]"]
    out = survival(mentions, private, placeholders=("[MASK]", "[IBAN]", "[ORG]", "[PERSON]"))
    assert out["found"] == 5 and out["survived"] == 1  # only the bare IBAN of the third
    assert out["by_kind"]["org"] == {"found": 2, "survived": 1}
    # A word-like mask token is a placeholder only as a whole word: "Max" still survives.
    out = survival([[Mention("person", "Max")]], ["Max wrote x"], placeholders=("x",))
    assert out["survived"] == 1


def test_find_mentions_finds_the_customers_of_the_tickets(tickets):
    found = find_mentions([t.text for t in tickets[:10]])
    emails = {m.text for doc in found for m in doc if m.kind == "email"}
    assert emails == {t.values["email"] for t in tickets[:10] if t.values["email"] in t.text}


def test_wilson_contains_the_estimate_and_rounds_fractional_counts_outward():
    lo, hi = wilson(5, 100)
    assert lo < 0.05 < hi
    lo2, hi2 = wilson(5.5, 100)
    assert lo2 == pytest.approx(lo) and hi2 == pytest.approx(wilson(6, 100)[1])


def test_parse_linkage():
    assert parse_linkage("5x") == (None, 5.0)
    assert parse_linkage("5%") == (0.05, None)
    assert parse_linkage(0.1) == (0.1, None)
    with pytest.raises(ValueError, match="multiple of chance"):
        parse_linkage("lots")


def _row(link, hi, entities, sim):
    return {"linkage_top1": link, "linkage_top1_interval": (0.0, hi), "linkage_chance": 0.01,
            "entities_survived_count": entities, "similarity": sim,
            "similarity_interval": (sim - 0.05, sim + 0.05), "task_accuracy": None}


def test_recommend_checks_the_upper_end_of_linkage_and_else_names_the_nearest():
    rows = [_row(0.01, 0.04, 0, 0.3), _row(0.01, 0.06, 0, 0.9), _row(0.5, 0.6, 3, 0.95)]
    rec = recommend(rows, Targets(max_linkage_times_chance=5.0, max_entities=0))
    assert rec["met"] and rec["index"] == 0  # row 1 is more useful, but may link 6× chance
    rec = recommend(rows, Targets(max_linkage_times_chance=5.0, max_entities=0, min_utility=0.5))
    assert not rec["met"] and rec["nearest"][0]["index"] == 1
    assert "chance" in rec["nearest"][0]["misses"][0]


def test_nearest_is_the_one_closest_to_the_targets():
    rows = [_row(0.9, 0.95, 0, 0.9), _row(0.05, 0.08, 0, 0.2)]
    rec = recommend(rows, Targets(max_linkage_times_chance=5.0, max_entities=0))
    assert not rec["met"] and rec["nearest"][0]["index"] == 1  # 8× chance, not 95×


def test_default_grid_is_four_mechanisms_at_six_epsilons_and_two_mvc_variants():
    from textdp.assess.grid import DEFAULT_MECHANISMS, default_grid
    from textdp.spec import release_spec

    grid = default_grid()
    plain = [s for s in grid if not s.variant]
    assert {s.name for s in plain} == set(DEFAULT_MECHANISMS) and len(plain) == 24
    variants = [s for s in grid if s.variant]
    assert {s.variant for s in variants} == {"keep stop words", "allocation uniform"}
    for s in variants:  # each variant is a valid release
        spec = release_spec(**s.release_options({}, seed=1))
        assert (spec.allocation is not None) == (s.variant == "allocation uniform")
        assert spec.policy.keep_stopwords == (s.variant == "keep stop words")
    assert default_grid(["tem"], [1, 2]) == [type(grid[0])("tem", 1.0), type(grid[0])("tem", 2.0)]


def test_release_keywords_and_command_line_carry_the_variant():
    from textdp.assess.grid import Setting, command_line, release_keywords

    s = Setting("mvc", 200.0, "allocation uniform",
                (("allocation", "uniform"), ("epsilon_ceiling", 12.0)))
    assert release_keywords(s) == {"mechanism": "mvc", "allocation": "uniform",
                                   "epsilon_ceiling": 12.0, "epsilon_document": 200.0}
    assert command_line({"mechanism": "mvc", "epsilon": 4.0, "keep_stopwords": True,
                         "identifiers": False, "oov": "keep"}) == (
        "-m mvc --epsilon 4 --keep-stopwords --no-identifiers --oov keep")


def test_a_callers_allocation_makes_the_release_a_document_budget():
    from textdp.assess.core import _add_options

    rows = [{"release": {"mechanism": "mvc", "epsilon": 200.0}, "epsilon_is_document_budget": False}]
    _add_options(rows, {"allocation": "uniform", "epsilon_ceiling": 12.0})
    assert rows[0]["release"] == {"mechanism": "mvc", "allocation": "uniform",
                                  "epsilon_ceiling": 12.0, "epsilon_document": 200.0}
    assert rows[0]["epsilon_is_document_budget"]
    assert "--epsilon-document 200" in rows[0]["privatize_options"]
