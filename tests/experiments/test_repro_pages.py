"""mvc300's helpers: the matched-N_w interpolation on a hand-made grid, and the exact critical-ε
calibration of Table 1 against textdp's own MVC (the pages themselves: test_rerender_all.py)."""

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def test_matched_point_interpolates_in_log_epsilon_and_refuses_to_extrapolate():
    from experiments.mvc300 import matched_point

    rows = [{"epsilon": e, "n_w": {"mean": n}, "distinct": {"mean": s}}
            for e, n, s in ((1, 0.0, 900), (4, 0.4, 500), (16, 0.8, 100))]
    eps, s_w = matched_point(rows, 0.6)
    assert eps == pytest.approx(8.0) and s_w == pytest.approx(300.0)
    assert matched_point(rows, 0.9) is None


def test_critical_epsilons_give_the_n_w_that_textdp_mvc_draws():
    # One pass per draw gives N_w at every ε: Pr[t ≤ ε] must equal the fraction of textdp MVC
    # draws that return the input, at several ε, within 5 standard errors (α ≈ 6e-7 each).
    import numpy as np
    from experiments.mvc300 import _mvc, critical_epsilons

    from experiments import _harness
    from textdp.vocab import Vocabulary

    g = _harness.rng(3, 1)
    vocab = Vocabulary([f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(40)],
                       g.normal(size=(40, 6)), name="tiny")
    ids = np.array([0, 7, 19])
    n = 6000
    t = critical_epsilons(vocab, ids, n, _harness.rng(3, 2), chunk=500)
    assert t.shape == (3, n) and (t >= 0).all()
    for eps in (1.0, 3.0, 6.0):
        predicted = (t <= eps).mean(axis=1)
        drawn = np.array([(_mvc(vocab, eps).privatize_ids(np.full(n, i), _harness.rng(3, 3, k))
                           == i).mean() for k, i in enumerate(ids)])
        se = np.sqrt((predicted * (1 - predicted) + drawn * (1 - drawn)) / n) + 1e-12
        assert (np.abs(predicted - drawn) < 5 * se + 1e-9).all(), (eps, predicted, drawn)
    # Power: a calibration off by 30% in ε misses at the middle ε.
    wrong = (t <= 3.0 * 1.3).mean(axis=1)
    drawn = np.array([(_mvc(vocab, 3.0).privatize_ids(np.full(n, i), _harness.rng(3, 4, k))
                       == i).mean() for k, i in enumerate(ids)])
    se = np.sqrt((wrong * (1 - wrong) + drawn * (1 - drawn)) / n)
    assert (np.abs(wrong - drawn) > 5 * se).any()


def test_the_provenance_model_ranks_successors_by_count_then_backs_off_to_unigrams():
    from experiments.provenance import BINS, BigramModel, features

    m = BigramModel(["the cat sat", "the cat ran", "the dog sat", "a dog"])
    assert m.rank("the", "cat") == 1 and m.rank("the", "dog") == 2   # 2 against 1 after "the"
    # "sat" never follows "the": after its 2 observed successors comes the unigram rank of "sat"
    # (count 2: only "the", count 3, is strictly more frequent, so unigram rank 2).
    assert m.rank("the", "sat") == 2 + 2
    assert m.rank("the", "zebra") is None
    h = features(m, ["the cat sat", "the zebra"])
    assert h.shape == (len(BINS) + 2,) and abs(h.sum() - 1) < 1e-12
    assert h[-1] == 1 / 5                                  # one unseen word of five bigrams
