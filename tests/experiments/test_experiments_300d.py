"""privemb300 and deepcandidate300: their building blocks on tiny vocabularies, and the pages from
saved results (the experiments themselves take tens of minutes; nothing here runs them whole)."""

import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def _vocab(n: int, dim: int, seed: int = 0):
    from experiments import _harness
    from textdp.vocab import Vocabulary

    vectors = _harness.rng(seed, 99).normal(size=(n, dim))
    return Vocabulary([_word(i) for i in range(n)], vectors, name="tiny")


def _word(i: int) -> str:
    """An alphabetic word per index (the tokeniser treats digits apart): 0 → "waa", 27 → "wbb"."""
    return "w" + chr(97 + i // 26) + chr(97 + i % 26)


# ------------------------------------------------------------------------------------------------
# deepcandidate300


def test_sentence_costs_are_the_summed_farthest_and_mean_distances():
    from experiments import deepcandidate300 as m
    from textdp.vocab import Vocabulary

    # Three words on a line at 0, 1 and 3: farthest distances 3, 2, 3; mean distances 4/3, 1, 5/3.
    vocab = Vocabulary(["a", "b", "c"], np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]]))
    costs = m.sentence_costs(vocab, ["a b", "c zzz c", "a"])
    assert costs["words"] == [2, 2, 1]            # the unknown word is not privatised
    np.testing.assert_allclose(costs["worst"], [5.0, 6.0, 3.0], rtol=1e-5)
    np.testing.assert_allclose(costs["typical"], [4 / 3 + 1, 10 / 3, 4 / 3], rtol=1e-5)


def test_matched_epsilon_reaches_the_target_fraction_of_changed_words():
    from experiments import deepcandidate300 as m

    vocab = _vocab(300, 20)
    ids = np.arange(300).repeat(4)
    low, high = m.changed_fraction(vocab, ids, 2.0, 0), m.changed_fraction(vocab, ids, 80.0, 0)
    assert low > 0.7 and high < 0.1               # the search interval brackets every target
    for target in (0.3, 0.7):
        eps = m.matched_epsilon(vocab, ids, target, 0)
        assert abs(m.changed_fraction(vocab, ids, eps, 0) - target) < 0.1
    # A planted error (the matched ε off by a factor of 2) misses the target: the check has power.
    eps = m.matched_epsilon(vocab, ids, 0.5, 0)
    assert abs(m.changed_fraction(vocab, ids, 2 * eps, 0) - 0.5) > 0.1


# ------------------------------------------------------------------------------------------------
# privemb300


def test_mean_matrix_averages_the_known_words_and_drops_empty_sentences():
    from experiments import privemb300 as m

    vocab = _vocab(10, 4)
    S, keep, used = m.mean_matrix(vocab, ["wab wac wac", "nothing here", "WAD unknown"])
    assert keep.tolist() == [0, 2] and used.tolist() == [1, 2, 3]
    got = np.asarray(S @ vocab.vectors[used].astype(np.float64))
    want = np.vstack([(vocab.vectors[1] + 2 * vocab.vectors[2]) / 3, vocab.vectors[3]])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_privemb300_runs_small_and_its_saved_results_give_back_the_page(tmp_path, monkeypatch):
    from experiments import _harness
    from experiments import privemb as pe
    from experiments import privemb300 as m

    monkeypatch.setattr(pe, "SVM_EPSILONS", (10.0, 100.0))     # fewer fits: the test is about
    monkeypatch.setattr(m, "SENT_EPSILONS", (10.0, 100.0))     # the stages, not the numbers
    vocab = _vocab(60, 300, seed=1)
    space = pe.Embeddings("GloVe 840B", 300, lambda ws: vocab.vectors[[vocab.index(w) for w in ws]]
                          .astype(np.float64))
    W = space.encode(vocab.words[:20])
    pairs = [pe.run_pairs(space, W[:10], W[10:], 1, 0)]
    y = np.array([0, 1] * 20)
    svms = [pe.run_svm(space, space.encode(vocab.words[:40]), y, 2, 0)]
    gen = _harness.rng(0, 7)
    # Class 1 sentences use words 0-29, class 0 words 30-59: the non-private model separates them.
    texts = [" ".join(_word(30 * (1 - c) + int(k)) for k in gen.integers(30, size=5))
             for c in [0, 1] * 30]
    res, norms = m.run_sentence_set(vocab, texts, np.array([0, 1] * 30), 2, 0, 0)
    assert res.mean(None, "non-private", "test") > 0.8
    assert norms["M1_mean"] == pytest.approx(30.0) and norms["m"] == m.m_of(0.9) == 54
    assert norms["M2_mean"] == pytest.approx(54 * 1.9 / 10)
    args = types.SimpleNamespace(seed=0, pair_runs=1, svm_runs=2, sentence_runs=2)
    settings = m._settings(args, vocab, 40, {name: norms for name in pe.SENTENCE_SETS})
    results = pe.Results(pairs, svms, {("GloVe 840B", n): res for n in pe.SENTENCE_SETS}, [],
                         settings, 60.0)
    saved = tmp_path / "results.json"
    pe.save_results(saved, results)
    out = tmp_path / "privemb300.md"
    assert m.main(["--from-results", str(saved), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == m.page(results)
    assert "`python -m experiments.privemb300 --pair-runs 1 --svm-runs 2 --sentence-runs 2`" in text
    assert "random table (m)" in text and "M2 noise m(1+β)/ε" in text
    assert sorted(p.name for p in (tmp_path / "privemb300").iterdir()) == [
        "distance.png", "inner_product.png", "sentences.png", "svm.png"]
