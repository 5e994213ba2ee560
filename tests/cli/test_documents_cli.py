"""Document embeddings from the command line alone: `recoder train`, `candidates build`,
`docembed`, then `textdp report` — tiny public and private corpora, the glove-mean sentence
encoder (no torch needed but for the recoder) and a fake encoder for the checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textdp.cli import main
from textdp.encoders import GloveMean, encode_documents
from textdp.mechanisms.document import CandidateSet, DeepCandidate, Recoder, build_candidates

TOPICS = {
    "food": ["The soup was hot and tasty.", "We ate bread with cheese.", "Dinner was delicious."],
    "tech": ["The computer crashed again.", "My phone battery died.", "The software update failed."],
    "weather": ["It rained all day.", "The wind was cold.", "Snow fell in the morning."],
}
PUBLIC = [" ".join(s[i:] + s[:i]) for s in TOPICS.values() for i in range(3)] + [
    "Lunch was good. The salad was fresh.", "The laptop screen broke. I lost my files.",
    "A storm came. The sky was dark."]
PRIVATE = ["The pasta was great. The wine was cheap.", "My tablet froze.",
           "It was sunny. Then it rained. The road flooded."]


def run(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.fixture
def corpora(tmp_path: Path) -> tuple[Path, Path]:
    public, private = tmp_path / "public.txt", tmp_path / "private.txt"
    public.write_text("\n".join(PUBLIC) + "\n", encoding="utf-8")
    private.write_text("\n".join(PRIVATE) + "\n", encoding="utf-8")
    return public, private


def test_candidates_build_without_recoder_equals_the_library(capsys, tmp_path, corpora):
    public, _ = corpora
    out = tmp_path / "f.npz"
    code, err = run(capsys, "candidates", "build", public, "-o", out, "--encoder", "glove-mean")
    assert code == 0, err
    cands = CandidateSet.load(out)
    expected = build_candidates(encode_documents(GloveMean(), PUBLIC), encoder="glove-mean")
    np.testing.assert_allclose(cands.embeddings, expected.embeddings)
    assert cands.encoder == "glove-mean" and cands.recoder_fingerprint is None
    assert len(cands) == len(PUBLIC) and f"wrote {len(PUBLIC)} candidates" in err


def test_recoder_train_then_candidates_then_docembed_then_report(capsys, tmp_path, corpora):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    public, private = corpora
    h1, h2, f, out, rep = (tmp_path / n for n in ("h1.npz", "h2.npz", "f.npz", "o.npy", "r.json"))
    train = ["recoder", "train", public, "--encoder", "glove-mean", "--n-clusters", 3,
             "--hidden-layers", "16", "--epochs", 20, "--seed", 5]
    assert run(capsys, *train, "-o", h1)[0] == 0
    assert run(capsys, *train, "-o", h2)[0] == 0
    h = Recoder.load(h1)
    assert h.fingerprint == Recoder.load(h2).fingerprint  # seeded: reproducible
    assert (h.input_dim, h.output_dim) == (50, 50) and h.metadata["encoder"] == "glove-mean"
    # The candidates take the recoder's encoder by default, and record H.
    code, err = run(capsys, "candidates", "build", public, "-o", f, "--recoder", h1)
    assert code == 0, err
    cands = CandidateSet.load(f)
    assert cands.recoder_fingerprint == h.fingerprint and cands.encoder == "glove-mean"
    expected = build_candidates(encode_documents(GloveMean(), PUBLIC), recoder=h)
    np.testing.assert_allclose(cands.embeddings, expected.embeddings)
    # docembed: the encoder comes from the candidates; seeded runs are reproducible.
    args = ["docembed", private, "--epsilon", 5, "--candidates", f, "--recoder", h1, "--seed", 2]
    code, err = run(capsys, *args, "-o", out, "--report", rep)
    assert code == 0, err
    released = np.load(out)
    assert released.shape == (len(PRIVATE), 50)
    assert all((cands.embeddings == row).all(axis=1).any() for row in released)
    assert run(capsys, *args, "-o", tmp_path / "again.npy")[0] == 0
    np.testing.assert_array_equal(np.load(tmp_path / "again.npy"), released)
    r = json.loads(rep.read_text())
    assert r["kind"] == "document" and r["mechanism"]["name"] == "deepcandidate"
    assert r["inputs"]["candidates"]["fingerprint"] == cands.fingerprint
    assert r["inputs"]["encoder"] == "glove-mean"
    assert r["counts"] == {"documents": 3, "sentences": {"total": 6, "min": 1, "max": 3}}
    assert r["io"]["records_out"] == 3 and r["randomness"]["seed"] == 2
    code, err = run(capsys, "report", rep, "--out", tmp_path / "page")
    assert code == 0, err
    page = (tmp_path / "page" / "report.md").read_text()
    assert "ε-SentDP" in page and cands.fingerprint[:16] in page and "sentence count" in page


def test_docembed_equals_the_library_release(capsys, tmp_path, corpora):
    public, private = corpora
    f, out = tmp_path / "f.npz", tmp_path / "o.npy"
    assert run(capsys, "candidates", "build", public, "-o", f, "--encoder", "glove-mean")[0] == 0
    code, err = run(capsys, "docembed", private, "-o", out, "--epsilon", 3, "--candidates", f,
                    "--seed", 11, "--n-projections", 7)
    assert code == 0, err
    from textdp import _random

    mech = DeepCandidate(epsilon=3.0, candidates=CandidateSet.load(f), n_projections=7)
    docs = encode_documents(GloveMean(), PRIVATE)
    expected = [mech.release(d, _random.document_generator(11, i)).embedding
                for i, d in enumerate(docs)]
    np.testing.assert_array_equal(np.load(out), np.vstack(expected))


@pytest.mark.parametrize("args,message", [
    (["candidates", "build", "{public}", "-o", "{tmp}/f.txt"], ".npz"),
    (["candidates", "build", "{public}", "-o", "{tmp}/f.npz", "--recoder", "{tmp}/none.npz"],
     "no such file"),
    (["candidates", "build", "{tmp}/none.txt", "-o", "{tmp}/f.npz"], "none.txt"),
    (["recoder", "train", "{public}", "-o", "{tmp}/h.npz", "--hidden-layers", "16,x"],
     "--hidden-layers"),
    (["recoder", "train", "{public}", "-o", "{public}"], ".npz"),
])
def test_user_errors_are_one_line(capsys, tmp_path, corpora, args, message):
    public, _ = corpora
    argv = [a.format(public=public, tmp=tmp_path) for a in args]
    code, err = run(capsys, *argv)
    assert code == 2 and err.startswith("textdp: error:") and err.count("\n") == 1
    assert message in err
    assert not (tmp_path / "f.npz").exists() and not (tmp_path / "h.npz").exists()


def test_a_document_without_sentences_is_named(capsys, tmp_path):
    src = tmp_path / "p.txt"
    src.write_text("One sentence here.\n\nTwo.\n", encoding="utf-8")
    code, err = run(capsys, "candidates", "build", src, "-o", tmp_path / "f.npz",
                    "--encoder", "glove-mean")
    assert code == 2 and "document 2 has no sentences" in err


def test_recoder_and_encoder_must_match(capsys, tmp_path, corpora):
    public, _ = corpora
    rng = np.random.default_rng(0)
    h = Recoder([(rng.normal(size=(8, 8)), np.zeros(8))], metadata={"encoder": "sbert"})
    hp = h.save(tmp_path / "h.npz")
    code, err = run(capsys, "candidates", "build", public, "-o", tmp_path / "f.npz", "--recoder",
                    hp, "--encoder", "glove-mean")
    assert code == 2 and "trained on 'sbert'" in err
    h2 = Recoder([(rng.normal(size=(8, 8)), np.zeros(8))])
    code, err = run(capsys, "candidates", "build", public, "-o", tmp_path / "f.npz", "--recoder",
                    h2.save(tmp_path / "h2.npz"), "--encoder", "glove-mean")
    assert code == 2 and "takes 8-d sentence embeddings" in err


def test_release_documents_seeded_unseeded_and_truncation():
    from textdp import _random
    from textdp.mechanisms.document import Truncation, release_documents

    rng = np.random.default_rng(3)
    docs = [rng.normal(size=(int(k), 4)) for k in (1, 3, 2)]
    public = [rng.normal(size=(2, 4)) for _ in range(9)]
    mech = DeepCandidate(epsilon=2.0, candidates=build_candidates(public), n_projections=5)
    seeded = release_documents(mech, docs, seed=8, start=10)
    expected = [mech.release(d, _random.document_generator(8, 10 + i)).embedding
                for i, d in enumerate(docs)]
    np.testing.assert_array_equal(seeded, np.vstack(expected))
    unseeded = release_documents(mech, docs, rng=np.random.default_rng(1))
    assert unseeded.shape == (3, 4)
    trunc = Truncation.from_public(epsilon=1.0, public_embeddings=rng.normal(size=(20, 4)))
    assert release_documents(trunc, docs, seed=1).shape == (3, 4)
    assert release_documents(trunc, [], seed=1).shape == (0, 4)
    with pytest.raises(ValueError, match="seed or rng"):
        release_documents(mech, docs, seed=1, rng=np.random.default_rng(0))
