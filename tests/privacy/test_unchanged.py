"""The report's deniability section: the expected fraction of privatised words returned unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.base import WordMechanism
from textdp.mechanisms.word.diffractor import Diffractor
from textdp.pipeline import Privatizer
from textdp.privacy.unchanged import (
    EXACT_WORDS,
    MC_DRAWS,
    expected_unchanged,
    percent,
    wilson_interval,
)
from textdp.vocab import Vocabulary, load_default

TEXTS = ["The food was great but the waiter was rude and the wine was cold",
         "good good good movie", "bad acting, great music"] * 4


@pytest.fixture(scope="module")
def small():
    glove = load_default()
    return Vocabulary(glove.words[:2500], glove.vectors[:2500], name="glove-top2500")


class KeepWithProbability(WordMechanism):
    """M(w) = w with probability q_w = (w mod 4 + 1)/5, else the next row: known N_w, no law."""

    name = "keep-test"

    def draw(self, ids, rng):
        return rng.random(ids.size)

    def apply(self, ids, noise):
        keep = noise < (ids % 4 + 1) / 5
        return np.where(keep, ids, (ids + 1) % len(self.vocabulary))


def test_exact_is_the_count_weighted_mean_of_probability_unchanged(small):
    m = Diffractor(small, epsilon=1.0, cache=False)
    counts = np.zeros(len(small), dtype=np.int64)
    ends = [int(m.lists[0][0]), int(m.lists[0][-1])]
    interior = int(m.lists[0][1000])
    counts[ends] = [5, 1]
    counts[interior] = 10
    got = expected_unchanged(m, counts)
    n_w = m.probability_unchanged([*ends, interior])
    want = float((5 * n_w[0] + n_w[1] + 10 * n_w[2]) / 16)
    assert got["method"] == "exact" and got["interval"] == [got["expected_unchanged_fraction"]] * 2
    assert got["expected_unchanged_fraction"] == pytest.approx(want, rel=1e-12)
    # Weighted by counts, not a plain mean over distinct words (which would differ here).
    assert abs(want - float(n_w.mean())) > 1e-3
    assert got["distinct_words"] == 3 and got["privatized_words"] == 16


def test_exact_through_output_distribution_then_monte_carlo(small):
    m = create("tem", small, epsilon=3.0)
    counts = np.zeros(len(small), dtype=np.int64)
    few = np.arange(5)
    counts[few] = [1, 2, 3, 4, 5]
    got = expected_unchanged(m, counts)
    want = sum(c * m.output_distribution(int(w))[int(w)] for w, c in zip(few, counts[few],
                                                                         strict=True)) / 15
    assert got["method"] == "exact" and got["expected_unchanged_fraction"] == pytest.approx(want)
    many = np.zeros(len(small), dtype=np.int64)
    many[: EXACT_WORDS + 40] = 1
    est = expected_unchanged(m, many, seed=3)
    exact = np.mean([m.output_distribution(w)[w] for w in range(EXACT_WORDS + 40)])
    assert est["method"] == "monte_carlo" and est["draws"] == MC_DRAWS
    low, high = est["interval"]
    assert low <= exact <= high
    assert expected_unchanged(m, many, seed=3) == est  # a seeded run's report is reproducible


@pytest.mark.parametrize("weights", [[1, 1, 1, 1], [50, 1, 1, 1], [1, 1, 1, 50]])
def test_monte_carlo_interval_covers_the_known_value(small, weights):
    m = KeepWithProbability(small, epsilon=1.0)
    counts = np.zeros(len(small), dtype=np.int64)
    counts[[8, 9, 10, 11]] = weights
    truth = float(np.dot(weights, [0.2, 0.4, 0.6, 0.8]) / sum(weights))
    got = expected_unchanged(m, counts, seed=11)
    assert got["method"] == "monte_carlo" and got["draws"] == MC_DRAWS
    low, high = got["interval"]
    assert low <= truth <= high and high - low < 0.07


def test_wilson_interval_and_percent():
    assert wilson_interval(0, 100)[0] == 0.0 and 0 < wilson_interval(0, 100)[1] < 0.04
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(1 - high) and high - 0.5 == pytest.approx(0.0963, abs=1e-3)
    assert percent(0.99991) == "99.991%" and percent(0.63) == "63.0%" and percent(1.0) == "100.0%"


def test_report_section_warning_and_threshold():
    r = textdp.privatize(TEXTS, epsilon=40, seed=1).report
    d = r["deniability"]
    assert d["expected_unchanged_fraction"] > 0.9 and d["method"] == "monte_carlo"
    assert d["privatized_words"] == r["tokens"]["by_policy"]["privatized"]
    assert any(w.startswith("most privatised words come back unchanged") for w in r["warnings"])
    assert "expected unchanged" in textdp.privacy.report.summary_line(r)
    json.dumps(r)
    quiet = textdp.privatize(TEXTS, epsilon=40, seed=1, unchanged_warning=1.0).report
    assert not any("unchanged" in w for w in quiet["warnings"])
    private = textdp.privatize(TEXTS, epsilon=1, seed=1).report
    assert private["deniability"]["expected_unchanged_fraction"] < 0.05
    assert not any("unchanged" in w for w in private["warnings"])
    with pytest.raises(ValueError, match="unchanged_warning"):
        textdp.privatize(TEXTS, epsilon=1, unchanged_warning=1.5)


def test_nothing_privatised_gives_none():
    r = textdp.privatize(["123 456", ""], epsilon=1, seed=1).report
    assert r["deniability"]["expected_unchanged_fraction"] is None
    assert "expected unchanged" not in textdp.privacy.report.summary_line(r)


def test_estimate_does_not_touch_the_run_stream():
    mech = create("mvc", epsilon=5)
    runner = Privatizer(mech, seed=4)
    first = runner.run(TEXTS)
    runner.report()
    assert runner.run(TEXTS, start=0) == first == textdp.privatize(TEXTS, mech, seed=4).texts


def test_cli_prints_and_warns(tmp_path):
    from typer.testing import CliRunner

    from textdp.cli import app

    src = tmp_path / "in.txt"
    src.write_text("\n".join(TEXTS) + "\n")
    out = CliRunner().invoke(app, ["privatize", str(src), "-o", str(tmp_path / "o.txt"),
                                   "--epsilon", "40", "--seed", "1"])
    assert out.exit_code == 0, out.output
    assert "expected unchanged:" in out.output
    assert "most privatised words come back unchanged at ε = 40" in out.output
    out = CliRunner().invoke(app, ["privatize", str(src), "-o", str(tmp_path / "p.txt"),
                                   "--epsilon", "40", "--seed", "1", "--unchanged-warning", "1"])
    assert out.exit_code == 0 and "come back unchanged" not in out.output
