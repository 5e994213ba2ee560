"""ε calibration (MVC paper §3–4) and ``textdp calibrate``.

* 1-D_G, exact: max N_w ≤ 0.5 ⇔ tanh(ε/2) ≤ 0.5 on interior words (and 1/(1+e^{−ε}) at the list
  ends), so the returned ε lies just below the analytic boundary; re-measured independently (a
  fresh mechanism, exact and Monte Carlo) it meets the targets.
* MVC, Monte Carlo, through the CLI: the returned ε, re-measured with fresh random numbers (N_w
  with 10× the draws, S_w with the same number of draws), meets the targets.
* A law whose N_w is not monotone in ε gives two ε intervals.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from scipy import stats

from textdp import mechanisms as registry
from textdp.cli import main
from textdp.evaluation.calibration import calibrate, default_grid
from textdp.evaluation.deniability import plausible_deniability
from textdp.vocab import load_default

ALPHA = 1e-6


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_default_grid():
    g = default_grid(0.01, 100, 4)
    assert g[0] == 0.01 and g[-1] == 100 and len(g) == 17
    assert all(b > a for a, b in zip(g, g[1:], strict=False))


def test_diffractor_exact_boundary():
    if "diffractor" not in registry.available():
        pytest.skip("diffractor is not registered yet")
    vocab = load_default(1000)
    cal = calibrate(lambda e: registry.create("diffractor", vocab, epsilon=e), max_n_w=0.5,
                    min_s_w=None, words=50, grid=default_grid(0.1, 10, 4), refine_steps=8,
                    rng=np.random.default_rng(0))
    assert cal.method == "exact" and cal.margin == 0.0
    # Interior words: tanh(ε/2) ≤ 0.5 ⇔ ε ≤ 2·atanh(0.5) (list ends are stricter; sampled words
    # are rarely ends).
    bound = 2 * math.atanh(0.5)
    assert cal.epsilon is not None and cal.epsilon <= bound
    assert cal.epsilon > bound * 0.97
    assert cal.ranges[0][0] is None  # meets the targets down to the smallest ε searched
    assert cal.monotone["max_n_w_nondecreasing"]
    fresh = registry.create("diffractor", vocab, epsilon=cal.epsilon)
    again = plausible_deniability(fresh, list(cal.words), 1000, method="exact")
    assert again.n_w.max() <= 0.5
    text = cal.table() + cal.describe()
    assert "recommended" in text


def test_non_monotone_law_gives_two_ranges(known, toy_vocab):
    class Bump(known.Uniform):
        """N_w = 0.9 for ε in [1, 3), else 0.1: the targets hold on two separate intervals."""

        def output_distribution(self, word):
            top = 0.9 if 1 <= self.epsilon < 3 else 0.1
            p = np.full(len(self.vocabulary), (1 - top) / (len(self.vocabulary) - 1))
            p[int(word)] = top
            return p

    cal = calibrate(lambda e: Bump(toy_vocab, epsilon=e), max_n_w=0.5, min_s_w=None, words=5,
                    grid=[0.1, 0.5, 2, 5, 10], refine_steps=6)
    assert len(cal.ranges) == 2
    (lo1, hi1), (lo2, hi2) = cal.ranges
    assert lo1 is None and 0.5 <= hi1 < 1 and 3 <= lo2 < 5 and hi2 is None
    assert not cal.monotone["max_n_w_nondecreasing"]
    assert cal.epsilon == 10


def test_bad_targets(known, toy_vocab):
    f = lambda e: known.Uniform(toy_vocab, epsilon=e)  # noqa: E731
    with pytest.raises(ValueError, match="at least one target"):
        calibrate(f, max_n_w=None, min_s_w=None)
    with pytest.raises(ValueError, match="max_n_w"):
        calibrate(f, max_n_w=1.5)
    with pytest.raises(ValueError, match="grid"):
        calibrate(f, grid=[-1.0, 2.0])
    with pytest.raises(ValueError, match="exact output law"):
        calibrate(lambda e: known.UniformMC(toy_vocab, epsilon=e), support="mass", grid=[1.0])


def test_cli_calibrate_mvc_remeasured(capsys, tmp_path):
    plot = tmp_path / "cal.png"
    code, out, err = run(capsys, "calibrate", "--mechanism", "mvc", "--max-nw", "0.5",
                         "--min-sw", "20", "--words", "20", "--draws", "300", "--seed", "3",
                         "--vocabulary-size", "1000", "--grid-min", "1", "--grid-max", "30",
                         "--refine", "3", "--json", "--plot", plot)
    assert code == 0, err
    data = json.loads(out)
    eps = data["epsilon"]
    assert eps is not None and data["method"] == "monte_carlo" and data["margin_standard_errors"] == 3
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Independent re-measurement at the returned ε: fresh mechanism, fresh random numbers.
    vocab = load_default(1000)
    mech = registry.create("mvc", vocab, epsilon=eps)
    words = data["words"]
    n_big = 3000
    d = plausible_deniability(mech, words, n_big, np.random.default_rng(1001))
    # N_w ≤ 0.5 for every word, up to sampling error of the re-measurement (one-sided, α/k).
    k = len(words)
    counts = np.round(d.n_w * n_big).astype(int)
    p_values = [stats.binomtest(c, n_big, 0.5, alternative="greater").pvalue for c in counts]
    assert min(p_values) > ALPHA / k
    assert d.n_w.max() <= 0.5 + 0.02
    # S_w (distinct outputs in the same number of draws) at least the target.
    s = plausible_deniability(mech, words, 300, np.random.default_rng(1002))
    assert s.distinct.min() >= 20


def test_cli_calibrate_exact_text_output(capsys):
    if "diffractor" not in registry.available():
        pytest.skip("diffractor is not registered yet")
    code, out, err = run(capsys, "calibrate", "-m", "diffractor", "--max-nw", "0.3",
                         "--min-sw", "5", "--words", "30", "--vocabulary-size", "1000",
                         "--grid", "0.1,0.3,1,3", "--seed", "0")
    assert code == 0, err
    assert "recommended ε" in out and "exact" in out
    # tanh(ε/2) ≤ 0.3 ⇔ ε ≤ 0.619
    rec = float(out.split("recommended ε = ")[1].split()[0])
    assert rec <= 2 * math.atanh(0.3)


def test_cli_calibrate_nothing_meets(capsys):
    code, out, err = run(capsys, "calibrate", "-m", "mvc", "--max-nw", "0.01", "--min-sw", "900",
                         "--words", "5", "--draws", "50", "--vocabulary-size", "1000",
                         "--grid", "50,100", "--seed", "0")
    assert code == 3  # documented: 3 = no ε meets the targets (1 would be an internal error)
    assert "no ε in the searched grid" in err


@pytest.mark.parametrize("args, message", [
    (["--mechanism", "nope"], "unknown mechanism"),
    (["--max-nw", "2"], "--max-nw"),
    (["--min-sw", "0.5"], "--min-sw"),
    (["--grid", "1,x"], "not a number"),
    (["--grid", "1,-2"], "> 0"),
    (["--support", "other"], "--support"),
    (["--plot", "/nonexistent-dir/x.png"], "does not exist"),
    (["--plot", "x.svg"], ".png"),
    (["-m", "mvc", "--method", "tem"], "no parameter"),
])
def test_cli_calibrate_errors(capsys, args, message):
    code, out, err = run(capsys, "calibrate", *args)
    assert code == 2 and out == ""
    assert err.startswith("textdp: error:") and message in err and err.count("\n") == 1


def test_cli_calibrate_checks_the_plot_before_the_search(capsys, tmp_path, monkeypatch):
    # A plot that would fail after a long search must not lose the results (issue 12, item 1):
    # a missing matplotlib is refused before the search, not after it.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run(capsys, "calibrate", "-m", "diffractor", "--max-nw", "0.3",
                         "--min-sw", "5", "--words", "10", "--vocabulary-size", "1000",
                         "--grid", "0.3,1", "--seed", "0", "--json", "--plot", tmp_path / "c.png")
    assert code == 2 and "matplotlib" in err and "nothing was computed" in err
    assert err.count("\n") == 1 and out == ""
    assert list(tmp_path.iterdir()) == []


def test_cli_calibrate_writes_results_and_plot_together(capsys, tmp_path, monkeypatch):
    # Issue 36: the table (or JSON) and the plot are one group: a plot that fails at the end
    # leaves neither (no results on stdout without the plot asked for, no plot file).
    import textdp.evaluation.plots as plots

    def broken(*_args, **_kwargs):
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(plots, "calibration_plot", broken)
    code, out, err = run(capsys, "calibrate", "-m", "diffractor", "--max-nw", "0.3",
                         "--min-sw", "5", "--words", "10", "--vocabulary-size", "1000",
                         "--grid", "0.3,1", "--seed", "0", "--json", "--plot", tmp_path / "c.png")
    assert code == 2 and "matplotlib" in err and err.count("\n") == 1
    assert out == ""
    assert list(tmp_path.iterdir()) == []
