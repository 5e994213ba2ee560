"""Vocabularies: the default GloVe restriction, user formats, fingerprint, cache."""

import numpy as np
import pytest

from textdp import vocab as V
from textdp.vocab import Vocabulary, load_default, load_npy, load_text


def test_default_vocabulary():
    v = load_default()
    assert len(v) == 47_883 and v.dim == 50
    assert v.vectors.dtype == np.float32 and v.vectors.shape == (len(v), 50)
    assert all(w.isalpha() and w.islower() for w in v.words[:2000])
    assert v.index("House") == v.index("house") and "HOUSE" in v and "zzyzxq" not in v
    assert len(v.fingerprint) == 64
    assert load_default() is v  # cached in memory
    with pytest.raises(KeyError, match="zzyzxq"):
        v.index("zzyzxq")
    assert not v.vectors.flags.writeable


def test_default_restriction_parameters():
    small = load_default(1000)
    assert 800 < len(small) < 1000
    assert small.words == [w for w in load_default().words if w in set(small.words)][: len(small)]
    assert load_default(1000, alphabetic_only=False).words != small.words
    with pytest.raises(ValueError, match="size"):
        load_default(1)


def test_corrupt_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    monkeypatch.setattr(V.base, "_DEFAULT_CACHE", {})  # where load_default keeps it
    first = load_default(500)
    files = list(tmp_path.glob("vocab-*.npz"))
    assert len(files) == 1
    files[0].write_bytes(b"not an npz file")
    monkeypatch.setattr(V.base, "_DEFAULT_CACHE", {})  # where load_default keeps it
    again = load_default(500)
    assert again.fingerprint == first.fingerprint


def test_fingerprint_depends_on_words_and_vectors():
    vec = np.arange(6, dtype=np.float32).reshape(3, 2)
    a = Vocabulary(["a", "b", "c"], vec)
    assert a.fingerprint == Vocabulary(["a", "b", "c"], vec.copy()).fingerprint
    assert a.fingerprint != Vocabulary(["a", "b", "d"], vec).fingerprint
    vec2 = vec.copy()
    vec2[0, 0] = 0.5
    assert a.fingerprint != Vocabulary(["a", "b", "c"], vec2).fingerprint


def test_text_formats(tmp_path):
    w2v = tmp_path / "w2v.txt"
    w2v.write_text("3 2\nthe 0.1 0.2\nCat 1 2\ndog -1 0.5\n")
    glove = tmp_path / "glove.txt"
    glove.write_text("the 0.1 0.2\ncat 1 2\ndog -1 0.5\n")
    a, b = load_text(w2v), load_text(glove)
    assert a.words == b.words == ["the", "cat", "dog"]
    np.testing.assert_array_equal(a.vectors, b.vectors)
    assert load_text(glove, limit=2).words == ["the", "cat"]
    bad = tmp_path / "bad.txt"
    bad.write_text("the 0.1 0.2\ncat 1\n")
    with pytest.raises(ValueError, match=r"bad.txt:2"):
        load_text(bad)


def test_npy_format(tmp_path):
    np.save(tmp_path / "v.npy", np.eye(3, dtype=np.float32))
    (tmp_path / "w.txt").write_text("a\nb\nc\n")
    v = load_npy(tmp_path / "v.npy", tmp_path / "w.txt")
    assert v.words == ["a", "b", "c"] and v.dim == 3
    (tmp_path / "w2.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="2 words but 3"):
        load_npy(tmp_path / "v.npy", tmp_path / "w2.txt")


def test_bad_vectors():
    with pytest.raises(ValueError, match="NaN"):
        Vocabulary(["a", "b"], np.array([[0.0], [np.nan]]))
    with pytest.raises(ValueError, match="2-D"):
        Vocabulary(["a", "b"], np.zeros(2))
    dup = Vocabulary(["a", "A", "b"], np.eye(3))
    assert dup.words == ["a", "b"] and dup.index("A") == 0
