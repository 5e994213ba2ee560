"""assess's recommendation picks the MOST useful of the settings that meet the targets (issue 36,
deliver 5): every earlier test had at most one qualifying setting, so a recommender picking the
least useful one (or the first, or the last) survived the mutation harness. Here several
settings qualify, in every order, and some that do not qualify are more useful still."""

from __future__ import annotations

import itertools

import pytest

from textdp.assess.recommend import Targets, recommend


def _row(label: str, similarity: float, linkage: float, entities: int = 0,
         accuracy: float | None = None) -> dict:
    return {"label": label, "similarity": similarity,
            "similarity_interval": (similarity - 0.02, similarity + 0.02),
            "task_accuracy": accuracy, "linkage_top1": linkage,
            "linkage_top1_interval": (max(linkage - 0.01, 0.0), linkage + 0.01),
            "linkage_chance": 0.01, "entities_survived_count": entities}


ROWS = [
    _row("mvc ε=2", 0.41, 0.01),           # meets: the least useful
    _row("mvc ε=6", 0.63, 0.02),           # meets: the most useful of those that meet
    _row("tem ε=4", 0.55, 0.015),          # meets
    _row("mvc ε=10", 0.90, 0.30),          # more useful, but linkage 31 % ≫ 5 × chance
    _row("tem ε=10", 0.88, 0.02, entities=2),  # more useful, but names survive
]


@pytest.mark.parametrize("order", list(itertools.permutations(range(len(ROWS))))[::7])
def test_picks_the_most_useful_that_meets_the_targets(order):
    rows = [ROWS[i] for i in order]
    rec = recommend(rows, Targets())
    assert rec["met"] and rec["meeting"] == 3
    assert rows[rec["index"]]["label"] == "mvc ε=6"


def test_task_accuracy_decides_when_measured():
    rows = [_row("a", 0.70, 0.01, accuracy=0.61), _row("b", 0.50, 0.01, accuracy=0.74),
            _row("c", 0.60, 0.01, accuracy=0.66)]
    for order in itertools.permutations(range(3)):
        picked = recommend([rows[i] for i in order], Targets())
        assert [rows[i] for i in order][picked["index"]]["label"] == "b"


def test_ties_go_to_the_lower_linkage():
    rows = [_row("high", 0.60, 0.03), _row("low", 0.60, 0.01), _row("mid", 0.60, 0.02)]
    for order in itertools.permutations(range(3)):
        ordered = [rows[i] for i in order]
        assert ordered[recommend(ordered, Targets())["index"]]["label"] == "low"


def test_min_utility_target_filters_before_ranking():
    rec = recommend(ROWS, Targets(min_utility=0.6))
    assert rec["meeting"] == 1 and ROWS[rec["index"]]["label"] == "mvc ε=6"
