"""--ledger on the releasing commands and `textdp ledger show`: the report's ledger section, the
refuse policy (exit 2, no output, no ledger line), torn lines reported, and one fingerprint
across fronts (CLI and Python API)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textdp.cli import main
from textdp.ledger import Ledger
from textdp.privacy.fingerprint import fingerprint_texts

TEXTS = ["The food was great, but the waiter was rude.", "", "Bad service here."]


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


def test_privatize_records_warns_refuses_and_shows(capsys, tmp_path, corpus):
    L = tmp_path / "ledger.jsonl"
    P = ["privatize", corpus, "--epsilon", 8, "--ledger", L]
    code, _, err = run(capsys, *P, "-o", tmp_path / "o1.txt")
    assert code == 0, err
    [first] = Ledger(L).read().entries
    assert first["input"]["fingerprint"] == fingerprint_texts(TEXTS)[0]   # what is released
    assert first["input"]["records"] == 3 and first["mechanism"]["name"] == "mvc"

    code, _, err = run(capsys, *P, "-o", tmp_path / "o2.txt", "--report", tmp_path / "r2.json")
    assert code == 0, err
    report = json.loads((tmp_path / "r2.json").read_text(encoding="utf-8"))
    section = report["ledger"]
    assert section["earlier_releases"] == 1 and section["earlier"][0]["id"] == first["id"]
    assert section["cumulative"]["groups"][0]["epsilon"] == 16.0
    assert section["path"] == str(L) and section["policy"] == "warn"
    assert any(first["id"] in w for w in report["warnings"]) and first["id"] in err

    # refuse: exit 2 before any output; no output file, no report, no ledger line.
    before = L.read_bytes()
    code, _, err = run(capsys, *P, "-o", tmp_path / "o3.txt", "--report", tmp_path / "r3.json",
                       "--ledger-policy", "refuse", "--budget", 20)
    assert code == 2 and "refused" in err and "cumulative ε = 24 > budget 20" in err
    assert len([x for x in err.splitlines() if x.startswith("textdp: error:")]) == 1
    assert not (tmp_path / "o3.txt").exists() and not (tmp_path / "r3.json").exists()
    assert L.read_bytes() == before

    code, out, err = run(capsys, "ledger", "show", L)
    assert code == 0 and "2 release(s) of 1 input(s)" in out and "ε = 16" in out and err == ""
    code, out, _ = run(capsys, "ledger", "show", L, "--json")
    doc = json.loads(out)
    assert [r["id"] for r in doc["releases"]] == doc["inputs"][0]["releases"]
    assert doc["inputs"][0]["cumulative"]["groups"][0]["epsilon"] == 16.0


def test_a_torn_line_is_reported_by_show_and_the_next_release(capsys, tmp_path, corpus):
    L = tmp_path / "ledger.jsonl"
    assert run(capsys, "privatize", corpus, "-o", tmp_path / "o1.txt", "--epsilon", 8,
               "--ledger", L)[0] == 0
    L.write_bytes(L.read_bytes() + b'{"schema": "textdp.led')   # an interrupted append
    code, out, err = run(capsys, "ledger", "show", L)
    assert code == 0 and "1 release(s)" in out and "invalid line 3" in out
    assert "line 3 cannot be validated (torn" in err
    code, _, err = run(capsys, "privatize", corpus, "-o", tmp_path / "o2.txt", "--epsilon", 8,
                       "--ledger", L, "--report", tmp_path / "r.json")
    assert code == 0 and "torn" in err
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["ledger"]["torn_last_line"]["line"] == 3
    assert any("torn" in w for w in report["warnings"])
    contents = Ledger(L).read()
    assert len(contents.entries) == 2 and contents.torn is None
    assert [c["line"] for c in contents.invalid] == [3]
    code, _, err = run(capsys, "privatize", corpus, "-o", tmp_path / "o3.txt", "--epsilon", 1,
                       "--ledger", L, "--ledger-policy", "refuse", "--budget", 100)
    assert code == 2 and f"ledger {L}: line 3 cannot be validated" in err   # fail closed
    assert not (tmp_path / "o3.txt").exists()


def test_cli_and_python_api_share_the_fingerprint(capsys, tmp_path, corpus):
    import textdp

    L = tmp_path / "ledger.jsonl"
    assert run(capsys, "privatize", corpus, "-o", tmp_path / "o.txt", "--epsilon", 8,
               "--ledger", L)[0] == 0
    result = textdp.privatize(TEXTS, epsilon=2, ledger=L)
    assert result.report["ledger"]["earlier_releases"] == 1
    assert result.report["ledger"]["cumulative"]["groups"][0]["epsilon"] == 10.0


def test_standard_input_and_lone_options_are_refused(capsys, tmp_path, corpus):
    L = tmp_path / "l.jsonl"
    base = ["privatize", corpus, "-o", tmp_path / "o.txt", "--epsilon", 1]
    for args, message in [
        (["privatize", "-", "-o", tmp_path / "o.txt", "--format", "txt", "--epsilon", 1,
          "--ledger", L], "not standard input"),
        ([*base, "--budget", 3], "--budget needs --ledger"),
        ([*base, "--ledger-policy", "refuse"], "needs --ledger"),
        ([*base, "--ledger", L, "--ledger-policy", "refuse"], "needs a budget"),
        ([*base, "--ledger", corpus], "its own file"),
    ]:
        code, _, err = run(capsys, *args)
        assert code == 2 and message in err, (args, err)
    assert not L.exists() and not (tmp_path / "o.txt").exists()


def test_embed_and_release_vectors_compose_on_the_same_vectors(capsys, tmp_path):
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.mechanisms.embedding.release import release_vectors

    X = np.random.default_rng(0).normal(size=(20, 6))
    np.save(tmp_path / "v.npy", X)
    L = tmp_path / "l.jsonl"
    E = ["embed", tmp_path / "v.npy", "-m", "laplace-vector", "--epsilon", 2, "--ledger", L]
    assert run(capsys, *E, "-o", tmp_path / "w1.npy")[0] == 0
    release_vectors(LaplaceVector(epsilon=1.0), X, ledger=Ledger(L))
    code, _, err = run(capsys, *E, "-o", tmp_path / "w2.npy", "--report", tmp_path / "r.json")
    assert code == 0, err
    section = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["ledger"]
    assert section["earlier_releases"] == 2 and section["input_encoding"].endswith("vectors")
    assert section["cumulative"]["groups"][0]["epsilon"] == 5.0
    code, _, err = run(capsys, *E, "-o", tmp_path / "w3.npy", "--ledger-policy", "refuse",
                       "--budget", 6)
    assert code == 2 and "refused" in err and not (tmp_path / "w3.npy").exists()


def test_docembed_records_sentdp(capsys, tmp_path):
    public = tmp_path / "public.txt"
    public.write_text("\n".join(["The soup was hot. We ate bread.", "It rained all day.",
                                 "My phone battery died.", "The wind was cold. Snow fell.",
                                 "Dinner was delicious.", "The software update failed."]) + "\n",
                      encoding="utf-8")
    private = tmp_path / "private.txt"
    private.write_text("The pasta was great. The wine was cheap.\nMy tablet froze.\n",
                       encoding="utf-8")
    assert run(capsys, "candidates", "build", public, "-o", tmp_path / "f.npz", "--encoder",
               "glove-mean")[0] == 0
    L = tmp_path / "l.jsonl"
    D = ["docembed", private, "--candidates", tmp_path / "f.npz", "--encoder", "glove-mean",
         "--ledger", L, "--epsilon"]
    assert run(capsys, *D, 3, "-o", tmp_path / "e1.npy")[0] == 0
    code, _, err = run(capsys, *D, 4, "-o", tmp_path / "e2.npy", "--report", tmp_path / "r.json")
    assert code == 0, err
    group = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["ledger"][
        "cumulative"]["groups"][0]
    assert group["family"] == "ε-SentDP" and group["epsilon"] == 7.0
    assert group["space"].startswith("sentence splitter")
