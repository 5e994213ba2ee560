"""The experiments' later stages (figures → page) redo a page from saved results alone.

The experiments take minutes to hours, so nothing here runs them: the committed results of
deepcandidate and word_mechanisms must give back the committed pages, and privemb's saved-results
file must round-trip to the same page.
"""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def _tiny_privemb_results(privemb):
    g = np.random.default_rng(0)
    pairs = []
    for space, dim in (("GloVe", 50), ("SBERT", 384)):
        p = privemb.PairResult(space, dim)
        for metric in ("distance", "inner product"):
            for eps in privemb.PAIR_EPSILONS:
                for m in privemb.METHOD_ORDER:
                    p.errors[(metric, eps, m)] = privemb.box(g.gamma(2.0, 1.0, 50))
            for b in privemb.BETAS:
                p.projection_only[(metric, b)] = privemb.box(g.gamma(1.0, 0.1, 50))
                p.audit[b] = list(1 + b * g.random(2))
        pairs.append(p)
    svms, sentences = [], {}
    for space, dim in (("GloVe", 50), ("SBERT", 384)):
        s = privemb.ScoreResult(space, dim, n_items=100)
        for _ in range(3):
            s.add(None, "non-private", accuracy=0.8 + 0.1 * g.random(), auc=0.9)
            for eps in privemb.SVM_EPSILONS:
                for m in privemb.METHOD_ORDER:
                    s.add(eps, m, accuracy=0.5 + 0.3 * g.random(), auc=0.5 + 0.3 * g.random())
        svms.append(s)
        t = privemb.ScoreResult(space, dim, n_items=60)
        for _ in range(3):
            t.add(None, "non-private", train=0.9, test=0.7 + 0.1 * g.random())
            for eps in privemb.SENTENCE_EPSILONS:
                for m in (privemb.M1, privemb.m2(privemb.SENTENCE_BETA)):
                    t.add(eps, m, train=0.7, test=0.5 + 0.2 * g.random())
        sentences[(space, "tweets")] = t
    settings = {"command_args": " --quick", "summary": "seed 0; tiny", "pair_runs": 2,
                "svm_runs": 3, "sentence_runs": 3, "machine": "test, 1 cores", "version": "0",
                "sklearn": "0", "numpy": "0", "python": "3"}
    return privemb.Results(pairs, svms, sentences, ["a note"], settings, 61.0)


def test_privemb_saved_results_give_back_the_same_page_and_figures(tmp_path):
    from experiments import privemb

    results = _tiny_privemb_results(privemb)
    saved = tmp_path / "results.json"
    privemb.save_results(saved, results)
    loaded = privemb.load_results(saved)
    assert privemb.page(loaded, "privemb") == privemb.page(results, "privemb")

    out = tmp_path / "privemb.md"
    assert privemb.main(["--from-results", str(saved), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == privemb.page(results, "privemb")
    assert "python -m experiments.privemb --quick" in text and "> a note" in text
    assert sorted(p.name for p in (tmp_path / "privemb").iterdir()) == [
        "distance.png", "inner_product.png", "sentences.png", "svm.png"]


def _bag_of_words(sentences):
    """A cheap stand-in for SBERT: the mean of a fixed random 16-d vector per word."""
    import zlib

    out = np.zeros((len(sentences), 16))
    for i, s in enumerate(sentences):
        ws = s.lower().split()
        for w in ws:
            out[i] += np.random.default_rng(zlib.crc32(w.encode())).normal(size=16) / len(ws)
    return out


_bag_of_words.name = "bag-of-words-16"


def test_deepcandidate_run_stage_feeds_the_page(monkeypatch, tmp_path):
    # Every method of the run on a tiny made-up document set, then figures and page from its
    # JSON: the stages fit together (the real run needs SBERT and takes about half an hour).
    from experiments import _harness, deepcandidate
    from textdp.datasets import documents

    g = np.random.default_rng(1)
    words = {"positive": ["good", "great", "happy", "fine", "the", "day", "film"],
             "negative": ["bad", "awful", "sad", "poor", "the", "day", "film"]}

    def sentences(label):
        return tuple(" ".join(g.choice(words[label], 5)) for _ in range(g.integers(2, 9)))

    docs = [documents.Document(f"d{i}", label, sentences(label))
            for i, label in enumerate(["positive", "negative"] * 20)]
    monkeypatch.setattr(documents, "load_documents", lambda name: docs)
    monkeypatch.setattr(_harness, "cache_root", lambda name: tmp_path / "cache" / name)
    res = deepcandidate.evaluate_dataset("tiny", _bag_of_words, epsilons=[10.0], mvc_epsilons=[10.0],
                                         trials=2, seed=0, n_candidates=30, mvc_sentences=20,
                                         recoder_epochs=1, log=lambda msg: None)
    assert res["documents"] == 40 and res["train"] + res["validation"] + res["test"] == 40
    assert len(res["deepcandidate"]["10.0"]["f1"]) == 2 and len(res["mvc"]["10.0"]["f1"]) == 2
    config = {"command": _harness.command("deepcandidate", ["--datasets", "tiny"]), "date": "today",
              "machine": _harness.machine(), "minutes": 0.1, "trials": 2, "seed": 0,
              "epsilons": [10.0], "mvc_epsilons": [10.0], "n_candidates": 30, "mvc_sentences": 20,
              "recoder_epochs": 1, "encoder": _bag_of_words.name}
    saved = tmp_path / "results.json"
    _harness.save_json(saved, {"config": config, "results": [res]})
    out = tmp_path / "deepcandidate.md"
    assert deepcandidate.main(["--from-results", str(saved), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "`python -m experiments.deepcandidate --datasets tiny`" in text
    assert "| tiny |" in text and "![tiny](deepcandidate/tiny.png)" in text
    assert (tmp_path / "deepcandidate" / "tiny.png").is_file()
