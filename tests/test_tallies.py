"""Tallies: one immutable, mergeable type for what a run counted (textdp.tallies)."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textdp
from textdp.allocation import Allocation
from textdp.mechanisms import create
from textdp.pipeline import Privatizer
from textdp.tallies import CLASS_COUNTS, POLICY_COUNTS, Tallies
from textdp.vocab import Vocabulary

_counts = st.integers(min_value=0, max_value=10**6)


@st.composite
def tallies(draw: st.DrawFn) -> Tallies:
    kinds = draw(st.lists(st.sampled_from(["email", "url", "person", "denied", "allowed"]),
                          unique=True))
    rows = draw(st.dictionaries(st.integers(0, 5000), st.integers(1, 1000), max_size=30))
    return Tallies(
        by_policy={k: draw(_counts) for k in POLICY_COUNTS},
        by_class={k: draw(_counts) for k in CLASS_COUNTS},
        by_kind={k: draw(_counts) for k in kinds},
        documents=draw(_counts), empty_documents=draw(_counts), max_privatized=draw(_counts),
        nanoseconds=draw(st.integers(0, 10**15)),
        word_ids=np.array(sorted(rows), dtype=np.int64),
        word_counts=np.array([rows[k] for k in sorted(rows)], dtype=np.int64),
        below_floor=draw(_counts), lengths=frozenset(draw(st.sets(st.integers(1, 500)))),
        levels_used=frozenset(draw(st.sets(st.sampled_from([0.5, 1.0, 2.0 ** 0.125, 4.0])))))


@settings(max_examples=200, deadline=None)
@given(tallies(), tallies())
def test_adding_then_subtracting_gives_back_the_counts(a, b):
    """(a + b) − b == a for every count; the maximum and the allocation's sets are not
    differences (a maximum of maxima, unions): they keep what a + b holds."""
    back = (a + b) - b
    expected = dataclasses.replace(a, max_privatized=max(a.max_privatized, b.max_privatized),
                                   lengths=a.lengths | b.lengths,
                                   levels_used=a.levels_used | b.levels_used)
    assert back == expected
    assert a + b == b + a
    assert sum([a, b]) == a + b == Tallies.zero() + a + b


@settings(max_examples=100, deadline=None)
@given(tallies())
def test_json_and_pickle_round_trips(t):
    assert Tallies.from_json(json.loads(json.dumps(t.to_json()))) == t
    assert pickle.loads(pickle.dumps(t)) == t


def test_tallies_are_immutable():
    t = Privatizer(create("mvc", epsilon=5), seed=1)
    t.run(["The food was great."])
    snap = t.tallies()
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.documents = 3
    with pytest.raises(TypeError):
        snap.by_policy["privatized"] = 0
    with pytest.raises(ValueError):
        snap.word_counts[0] = 0
    t.run(["More text here."])  # a snapshot does not move with its Privatizer
    assert snap.documents == 1


TEXTS = ["The food was great, write to ann@example.com.", "", "Ahmed Yilmaz moved to Berlin.",
         "Cold soup 42 times, qzxv wrong.", "good " * 30, "A quiet night at Acme Logistics.",
         "Call +1 415 555 0100 now.", "The waiter was rude but the wine was fine."]


def _without_time(t: Tallies) -> dict:
    out = t.to_json()
    out.pop("nanoseconds")
    return out


@pytest.mark.parametrize("allocated", [False, True])
@pytest.mark.parametrize("split_seed", [0, 1])
def test_sums_over_a_random_split_equal_the_whole_run(allocated, split_seed):
    """Privatizers that each run one part of the corpus (at its positions) add up to the one
    that ran it all, and so does their report."""
    rng = np.random.default_rng(split_seed)
    if allocated:  # a small vocabulary: CusText's groups are built per test
        words = sorted({w.strip(".,").lower() for t in TEXTS for w in t.split()} - {""})
        vocab = Vocabulary(words, np.random.default_rng(0).standard_normal((len(words), 5)),
                           name="tally-words")
        mech = create("custext", vocab, epsilon=4.0, k=4, cache=False)
        options = {"allocation": Allocation("uniform", 4.0, 0.5), "oov": "keep"}
    else:
        mech = create("mvc", epsilon=5)
        options = {"allow_list": ["Acme Logistics"], "deny_list": ["wine"], "oov": "random"}
    whole = Privatizer(mech, seed=3, **options)
    expected = whole.run(TEXTS)
    cuts = sorted(rng.choice(np.arange(1, len(TEXTS)), size=3, replace=False).tolist())
    parts, out = [], []
    for a, b in zip([0, *cuts], [*cuts, len(TEXTS)], strict=True):
        worker = Privatizer(mech, seed=3, **options)
        out += worker.run(TEXTS[a:b], start=a)
        parts.append(worker.tallies())
    assert out == expected
    total = sum(parts)
    assert _without_time(total) == _without_time(whole.tallies())
    merged, alone = whole.report(total).to_dict(), whole.report().to_dict()
    for r in (merged, alone):
        r.pop("created"), r.pop("performance")
    assert merged == alone


def test_a_report_of_summed_tallies_equals_textdp_privatize():
    result = textdp.privatize(TEXTS, mechanism="mvc", epsilon=5, seed=1)
    runner = Privatizer(create("mvc", epsilon=5), seed=1)
    halves = []
    for a, b in ((0, 3), (3, len(TEXTS))):
        before = runner.tallies()
        runner.run(TEXTS[a:b], start=a)
        halves.append(runner.tallies() - before)
    assert _without_time(halves[0] + halves[1]) == _without_time(runner.tallies())
    assert runner.report(halves[0] + halves[1])["tokens"] == result.report["tokens"]
