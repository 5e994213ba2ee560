"""Distance to the k-th nearest word (MVC Fig. 1) against a float64 brute force."""

import numpy as np
import pytest

from textdp.vocab import Vocabulary
from textdp.vocab import geometry as G
from textdp.vocab.geometry import neighbor_distances, plot_neighbor_distances


def brute_kth(vectors, rows, ks):
    """d_k of each row in ``rows``: sorted float64 distances to every other row."""
    v = vectors.astype(np.float64)
    d = np.sqrt(((v[rows, None, :] - v[None, :, :]) ** 2).sum(axis=-1))
    d[np.arange(len(rows)), rows] = np.inf  # the word itself is not its own neighbour
    return np.sort(d, axis=1)[:, np.array(ks) - 1]


@pytest.fixture
def vocab():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(700, 8)).astype(np.float32)
    vectors[10] = vectors[20]  # two words with one vector: d_1 = 0 for both
    return Vocabulary([f"w{i}" for i in range(700)], vectors, name="random")


def test_percentiles_match_brute_force(vocab, monkeypatch):
    monkeypatch.setattr(G, "_CHUNK", 128)  # several engine calls, as on a real vocabulary
    ks = (1, 5, 10, 20, 50, 100, 200, 500)
    r = neighbor_distances(vocab, ks)
    kth = brute_kth(vocab.vectors, np.arange(700), ks)
    np.testing.assert_allclose(r.table, np.percentile(kth, G.PERCENTILES, axis=0).T, rtol=1e-12)
    np.testing.assert_allclose(r.mean, kth.mean(axis=0), rtol=1e-12)
    assert r.ks == ks and r.n_words == 700 and r.sample is None and not r.notes
    assert (np.diff(r.table, axis=0) >= 0).all() and (np.diff(r.table, axis=1) >= 0).all()


def test_identical_vectors_are_at_distance_zero(vocab):
    r = neighbor_distances(vocab, (1,), percentiles=(0.0, 100.0))
    assert r.table[0, 0] == 0.0 and r.table[0, 1] > 0


def test_sample_queries_some_words_against_all(vocab):
    r = neighbor_distances(vocab, (1, 7, 300), sample=50, rng=np.random.default_rng(1))
    rows = np.sort(np.random.default_rng(1).choice(700, size=50, replace=False))
    kth = brute_kth(vocab.vectors, rows, (1, 7, 300))
    np.testing.assert_allclose(r.table, np.percentile(kth, G.PERCENTILES, axis=0).T, rtol=1e-12)
    assert r.n_words == 50 and r.sample == 50
    assert neighbor_distances(vocab, (1,), sample=5000).sample is None  # ≥ |V|: every word


def test_ranks_beyond_the_vocabulary_are_dropped_with_a_note(vocab):
    r = neighbor_distances(vocab, G.KS)
    assert r.ks == (1, 5, 10, 20, 50, 100, 200, 500) and "1000" in r.notes[0]
    with pytest.raises(ValueError, match="every k exceeds"):
        neighbor_distances(vocab, (700, 1000))
    with pytest.raises(ValueError, match="positive"):
        neighbor_distances(vocab, (0, 5))
    with pytest.raises(ValueError, match="percentiles"):
        neighbor_distances(vocab, (1,), percentiles=(50, 101))
    with pytest.raises(ValueError, match="sample"):
        neighbor_distances(vocab, (1,), sample=0)


def test_outputs(vocab, tmp_path):
    r = neighbor_distances(vocab, (1, 5), percentiles=(50,))
    md = r.markdown().splitlines()
    assert md[0] == "| k | p50 | mean |" and len(md) == 4 and md[2].startswith("| 1 | ")
    d = r.to_dict()
    assert d["distances"]["5"]["p50"] == pytest.approx(r.table[1, 0]) and d["ks"] == [1, 5]
    plot_neighbor_distances(neighbor_distances(vocab, (1, 5, 50)), tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
