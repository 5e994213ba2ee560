"""The Private Evolution loop with a stub model and encoder: selection follows the noisy votes,
parents are kept once, the output has the asked size and label quotas."""

from __future__ import annotations

import re

import numpy as np
import pytest

from textdp.synthesis.evolution import Evolution, quotas, signal_check
from textdp.synthesis.prompts import Prompts


def _embed(texts):
    """1-d embedding: the number at the end of the text."""
    return np.array([[float(t.rsplit(" ", 1)[-1])] for t in texts])


def _parent(prompt):
    """The number of the document a variation prompt holds (the stub's "rewrite" keeps it)."""
    return re.search(r"(?:first|variation) (\d+)", prompt).group(1)


def _evolution(generate, **kw):
    options = dict(labels=("a", "b"), generate=generate, embed=_embed,
                   prompts=Prompts("note"), noise_multiplier=1e-6, rounds=2, population=4,
                   threshold=0.0, label_mix="noisy", noise_rng=np.random.default_rng(0),
                   select_rng=np.random.default_rng(1))
    options.update(kw)
    return Evolution(**options)


def test_selection_follows_the_votes_and_keeps_each_parent_once():
    calls = []

    def generate(prompts, stage):
        calls.append((stage, len(prompts)))
        if stage == 0:  # candidates at 0, 10, 20, 30 in each label
            return [f"first {10 * (i % 4)}" for i in range(len(prompts))]
        return [f"variation {_parent(p)}" for p in prompts]

    evo = _evolution(generate, threshold=5.0)  # θσ above any noise-only count
    private = np.array([[19.0]] * 30 + [[31.0]] * 30)  # label a near 20, label b near 30
    labels = np.array([0] * 30 + [1] * 30)
    out = evo.run(private, labels, None, n=6)
    assert len(out) == 6 and list(out.labels) == [0, 0, 0, 1, 1, 1]
    values = _embed(list(out.texts)).ravel()
    assert set(values[:3]) == {20.0} and set(values[3:]) == {30.0}
    # Each round: one distinct parent per label kept, the other draws varied.
    assert calls == [(0, 8), (1, 6), (2, 4)]
    assert [r.above_threshold for r in evo.records] == [2, 2]


def test_the_output_quotas_follow_the_noisy_totals_or_are_equal():
    assert quotas(8, [30, 10]) == [6, 2]
    assert quotas(10, [30, 10]) == [8, 2]  # 7.5 / 2.5: the tie goes to the first label
    assert sum(quotas(7, [1.0, 1.0, 1.0])) == 7
    assert quotas(6, [-5.0, -1.0]) == [3, 3]  # no positive total: equal
    assert quotas(5, [0.0, 2.0]) == [0, 5]


def test_equal_mix_ignores_the_votes():
    def generate(prompts, stage):
        return [f"t {i}" for i in range(len(prompts))]

    evo = _evolution(generate, label_mix="equal")
    private = np.zeros((40, 1))
    out = evo.run(private, np.array([0] * 39 + [1]), None, n=8)
    assert list(out.labels).count(0) == 4 and list(out.labels).count(1) == 4


def test_the_signal_check_states_the_bound():
    assert signal_check([100, 100], ["a", "b"], 2.0, 25, 1.0) is None  # 2·5 = 10 ≤ 100
    message = signal_check([100, 9], ["a", "b"], 2.0, 25, 1.0)
    assert "label 'b' has 9 unit(s)" in message and "at least 10 units" in message
    assert signal_check([1], [""], 100.0, 100, 0.0) is None  # min_signal 0: never refuses


@pytest.mark.parametrize("rounds", [1, 3])
def test_the_number_of_noisy_histograms_is_the_number_of_rounds(rounds):
    draws = []

    class CountingRng:
        def standard_normal(self, shape):
            draws.append(shape)
            return np.zeros(shape)

    evo = _evolution(lambda p, s: [f"x {i}" for i in range(len(p))], rounds=rounds,
                     noise_rng=CountingRng())
    evo.run(np.zeros((10, 1)), np.array([0, 1] * 5), None, n=4)
    assert len(draws) == rounds  # T Gaussian mechanisms: what the accountant composes


def test_each_variation_prompt_names_its_parents_label():
    seen: list[str] = []

    def generate(prompts, stage):
        if stage == 0:
            return [f"first {10 * (i % 4)}" for i in range(len(prompts))]
        seen.extend(prompts)
        return [f"variation {_parent(p)}" for p in prompts]

    evo = _evolution(generate, labels=("alpha", "beta"), threshold=5.0)
    private = np.array([[19.0]] * 30 + [[31.0]] * 30)
    evo.run(private, np.array([0] * 30 + [1] * 30), None, n=6)
    assert seen
    for prompt in seen:  # a parent of label alpha sits at 20, of beta at 30 (the votes)
        assert ('"alpha"' in prompt) == (_parent(prompt) == "20")
        assert ('"beta"' in prompt) == (_parent(prompt) == "30")
