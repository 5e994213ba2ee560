"""The privacy ledger (textdp.ledger): the fingerprint's encoding, appends that survive SIGKILL and
concurrency, torn lines reported and never glued onto, the policies, and ledger= in the API."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from textdp.ledger import Ledger, LedgerError, LedgerRefused, as_ledger, parse
from textdp.privacy import Guarantee, Notion
from textdp.privacy.fingerprint import (
    fingerprint_documents,
    fingerprint_texts,
    fingerprint_vectors,
)

SRC = str(Path(__file__).resolve().parent.parent / "src")


class Fake:
    """A mechanism as the ledger sees it: name, parameters, guarantee."""

    def __init__(self, epsilon: float = 1.0, notion: Notion = Notion.METRIC_DP,
                 name: str = "fake", pad: str = "") -> None:
        self.name = name
        self.parameters = {"epsilon": epsilon, "pad": pad}
        self.guarantee = Guarantee(notion=notion, epsilon=epsilon, metric="m", per_word="")


def _release(ledger: Ledger, fp: str = "f" * 64, eps: float = 1.0, **kw):
    return ledger.release(mechanism=Fake(eps, **kw), input_fingerprint=fp, records=3, seed=None)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


# --- the fingerprint ---------------------------------------------------------------------------

def test_text_fingerprint_is_the_documented_encoding():
    texts = ["The food", "", "naïve ☕"]
    h = hashlib.sha256(b"textdp.input/1 texts\n")
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "big") + b)
    assert fingerprint_texts(texts) == (h.hexdigest(), 3)


@pytest.mark.parametrize("a, b", [(["ab", "c"], ["a", "bc"]), ([], [""]), ([""], ["", ""]),
                                  (["a\x00b"], ["a", "b"]), (["x"], ["X"])])
def test_text_fingerprint_is_unambiguous(a, b):
    assert fingerprint_texts(a)[0] != fingerprint_texts(b)[0]


def test_vector_fingerprint_is_of_values_and_shape():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert fingerprint_vectors(x) == fingerprint_vectors(x.astype(np.float64))
    assert fingerprint_vectors(x)[0] != fingerprint_vectors(x.reshape(4, 3))[0]
    assert fingerprint_vectors(x)[0] != fingerprint_texts([])[0]
    docs = [x, x[:1]]
    assert fingerprint_documents(docs)[0] != fingerprint_documents([x[:1], x])[0]


# --- reading -------------------------------------------------------------------------------------

def _line(i: str) -> bytes:
    return json.dumps({"schema": "textdp.ledger/1", "id": i, "input": {"fingerprint": "f"},
                       "guarantee": {"notion": "metric DP (d_χ-privacy)", "epsilon": 1.0}},
                      ensure_ascii=False).encode()


def test_parse_reports_a_torn_last_line_and_corrupt_lines():
    clean = parse(_line("a") + b"\n" + _line("b") + b"\n")
    assert [e["id"] for e in clean.entries] == ["a", "b"] and clean.torn is None
    torn = parse(_line("a") + b"\n" + _line("b")[:20])
    assert [e["id"] for e in torn.entries] == ["a"]
    assert torn.torn["line"] == 2 and not torn.torn["counted"]
    assert "torn" in torn.problems("L")[0]
    whole = parse(_line("a") + b"\n" + _line("b"))  # a whole entry without its newline: counted
    assert [e["id"] for e in whole.entries] == ["a", "b"] and whole.torn["counted"]
    middle = parse(_line("a") + b"\n{oops\n" + _line("c") + b"\n")
    assert [e["id"] for e in middle.entries] == ["a", "c"] and middle.corrupt[0]["line"] == 2
    assert parse(b"").entries == [] and parse(b"").torn is None


def test_an_append_after_a_torn_line_starts_on_its_own_line(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_bytes(_line("a") + b"\n" + _line("b")[:25])
    ledger = Ledger(path)
    with _release(ledger) as rel:
        assert any("torn" in w for w in rel.warnings)
        assert rel.section["torn_last_line"]["line"] == 2
    lines = _lines(path)
    assert lines[1] == _line("b")[:25] and lines[-1] == b""          # kept, never overwritten
    assert json.loads(lines[2])["id"] == rel.id                      # not glued onto it
    contents = ledger.read()
    assert [e["id"] for e in contents.entries] == ["a", rel.id] and contents.corrupt[0]["line"] == 2


# --- policies ------------------------------------------------------------------------------------

def test_earlier_releases_are_named_and_composed(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl")
    with _release(ledger, eps=8.0) as first:
        assert first.section["earlier_releases"] == 0 and first.warnings == []
    with _release(ledger, fp="e" * 64, eps=1.0):  # another input: not counted
        pass
    with _release(ledger, eps=4.0) as second:
        pass
    s = second.section
    assert s["earlier_releases"] == 1 and s["earlier"][0]["id"] == first.id
    assert s["cumulative"]["groups"][0]["epsilon"] == 12.0
    assert first.id in second.warnings[0] and "released 1 time(s) before" in second.warnings[0]
    report = second.attach({"warnings": ["x"]})
    assert report["ledger"] == s and report["warnings"][1:] == second.warnings


def test_refuse_raises_before_the_block_and_records_nothing(tmp_path):
    path = tmp_path / "l.jsonl"
    with _release(Ledger(path), eps=8.0):
        pass
    before = path.read_bytes()
    ran = []
    with pytest.raises(LedgerRefused, match="cumulative ε = 13 > budget 12"):
        with _release(Ledger(path, policy="refuse", budget=12), eps=5.0):
            ran.append(1)
    assert ran == [] and path.read_bytes() == before
    with _release(Ledger(path, policy="refuse", budget=13), eps=5.0):  # exactly at the budget
        pass
    assert len(Ledger(path).read().entries) == 2


def test_warn_policy_warns_over_budget_and_a_failed_release_records_nothing(tmp_path):
    path = tmp_path / "l.jsonl"
    with _release(Ledger(path, budget=2.0), eps=3.0) as rel:
        pass
    assert any("budget ε = 2 exceeded" in w for w in rel.warnings)
    with pytest.raises(RuntimeError):
        with _release(Ledger(path), eps=1.0):
            raise RuntimeError("the release failed")
    assert len(Ledger(path).read().entries) == 1


def test_a_non_composable_release_exceeds_any_budget(tmp_path):
    path = tmp_path / "l.jsonl"
    with pytest.raises(LedgerRefused, match="utility-optimised"):
        with _release(Ledger(path, policy="refuse", budget=1e6), eps=1.0,
                      notion=Notion.UTILITY_OPTIMISED_METRIC_DP):
            pass


@pytest.mark.parametrize("kwargs, message", [
    ({"policy": "refuse"}, "needs a budget"), ({"policy": "maybe"}, "warn or refuse"),
    ({"budget": -1.0}, "finite ε > 0"), ({"budget": float("nan")}, "finite ε > 0"),
    ({"budget": float("inf")}, "finite ε > 0"),
])
def test_bad_policy_or_budget(tmp_path, kwargs, message):
    with pytest.raises(LedgerError, match=message):
        Ledger(tmp_path / "l.jsonl", **kwargs)


def test_bad_paths_and_arguments(tmp_path):
    with pytest.raises(LedgerError, match="directory"):
        Ledger(tmp_path)
    with pytest.raises(LedgerError, match="does not exist"):
        Ledger(tmp_path / "no" / "l.jsonl")
    with pytest.raises(LedgerError, match="no such file"):
        Ledger(tmp_path / "l.jsonl").read()
    with pytest.raises(LedgerError, match="needs a ledger"):
        as_ledger(None, budget=3.0)
    with pytest.raises(LedgerError, match="to the Ledger object"):
        as_ledger(Ledger(tmp_path / "l.jsonl"), "refuse", 3.0)


def test_refuse_holds_the_lock_so_two_releases_cannot_both_pass(tmp_path):
    """Budget 10, two concurrent releases of ε = 6: the second waits for the first, then is
    refused (without the lock from check to append, both would pass)."""
    path = tmp_path / "l.jsonl"
    inside, outcome = threading.Event(), {}

    def first():
        with _release(Ledger(path, policy="refuse", budget=10), eps=6.0):
            inside.set()
            time.sleep(0.5)

    t = threading.Thread(target=first)
    t.start()
    inside.wait(10)
    try:
        with _release(Ledger(path, policy="refuse", budget=10), eps=6.0):
            outcome["second"] = "released"
    except LedgerRefused:
        outcome["second"] = "refused"
    t.join()
    assert outcome == {"second": "refused"} and len(Ledger(path).read().entries) == 1


# --- crash safety and concurrency (real processes) -----------------------------------------------

_CHILD = """
import sys
sys.path.insert(0, {src!r}); sys.path.insert(0, {tests!r})
from test_ledger import Fake, Ledger
ledger = Ledger({path!r})
for i in range({n}):
    with ledger.release(mechanism=Fake(1.0, pad={pad!r} * {size}), input_fingerprint="f" * 64,
                        records=1, seed=None):
        pass
"""


def _child(path: Path, n: int, size: int = 0) -> subprocess.Popen:
    code = _CHILD.format(src=SRC, tests=str(Path(__file__).parent), path=str(path), n=n, pad="x",
                         size=size)
    return subprocess.Popen([sys.executable, "-c", code])


def test_concurrent_appends_all_land_as_whole_lines(tmp_path):
    path = tmp_path / "l.jsonl"
    children = [_child(path, 50) for _ in range(4)]
    assert [c.wait(timeout=120) for c in children] == [0, 0, 0, 0]
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    contents = parse(raw)
    assert len(contents.entries) == 200 and contents.torn is None and contents.corrupt == []
    assert len({e["id"] for e in contents.entries}) == 200


def test_sigkill_during_appends_leaves_whole_lines_and_at_most_one_torn_line(tmp_path):
    """Lines of ~2 MB, killed mid-stream: whole lines and at most one torn last line. Whether a
    kill tears a line is up to the kernel (none in 5 tries on the dev machine: the single write
    completes); the torn path itself is pinned by the planted torn line above."""
    path = tmp_path / "l.jsonl"
    child = _child(path, 10_000, size=2_000_000)
    deadline = time.monotonic() + 60
    while (not path.exists() or path.stat().st_size < 6_000_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    contents = Ledger(path).read()
    assert contents.corrupt == [] and len(contents.entries) >= 2
    n_lines = path.read_bytes().count(b"\n")
    assert len(contents.entries) == n_lines + (1 if contents.torn and contents.torn["counted"]
                                               else 0)
    with _release(Ledger(path)) as rel:  # the next append: reported torn line, own line
        assert (contents.torn is None) == (not any("torn" in w for w in rel.warnings))
    after = Ledger(path).read()
    assert after.entries[-1]["id"] == rel.id and after.torn is None
    assert len(after.entries) == len(contents.entries) + 1


# --- ledger= in the Python API -----------------------------------------------------------------

def test_privatize_with_a_ledger(tmp_path):
    import textdp
    from textdp.mechanisms import create
    from textdp.vocab import Vocabulary

    rng = np.random.default_rng(0)
    vocab = Vocabulary(["good", "food", "great", "meal", "bad"],
                       rng.normal(size=(5, 4)).astype(np.float32))
    path = tmp_path / "l.jsonl"
    texts = ["good food", "bad meal"]
    r1 = textdp.privatize(texts, create("mvc", vocab, epsilon=2.0), ledger=path)
    assert r1.report["ledger"]["earlier_releases"] == 0
    r2 = textdp.privatize(texts, create("tem", vocab, epsilon=3.0), ledger=str(path))
    led = r2.report["ledger"]
    assert led["earlier_releases"] == 1 and led["input_fingerprint"] == fingerprint_texts(texts)[0]
    assert led["cumulative"]["groups"][0]["epsilon"] == 5.0
    assert any(led["earlier"][0]["id"] in w for w in r2.report["warnings"])
    entry = Ledger(path).read().entries[-1]
    assert entry["space"] == f"vocabulary sha256 {vocab.fingerprint}" and not entry["seeded"]
    assert entry["input"]["records"] == 2 and entry["mechanism"]["name"] == "tem"
    with pytest.raises(LedgerRefused):
        textdp.privatize(texts, create("mvc", vocab, epsilon=1.0), ledger=path,
                         ledger_policy="refuse", budget=5.5)
    assert len(Ledger(path).read().entries) == 2


def test_release_vectors_and_documents_with_a_ledger(tmp_path):
    from textdp.mechanisms.document import Truncation, release_documents
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.mechanisms.embedding.release import release_vectors

    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3))
    ledger = Ledger(tmp_path / "l.jsonl", policy="refuse", budget=3.0)
    assert release_vectors(LaplaceVector(epsilon=2.0), X, seed=1, ledger=ledger).shape == (5, 3)
    with pytest.raises(LedgerRefused):
        release_vectors(LaplaceVector(epsilon=2.0), X, seed=1, ledger=ledger)
    docs = [rng.normal(size=(2, 3)), rng.normal(size=(1, 3))]
    trunc = Truncation.from_public(epsilon=1.0, public_embeddings=rng.normal(size=(20, 3)))
    assert release_documents(trunc, docs, seed=1, ledger=ledger).shape == (2, 3)
    entries = Ledger(tmp_path / "l.jsonl").read().entries
    assert [e["input"]["encoding"] for e in entries] == ["textdp.input/1 vectors",
                                                        "textdp.input/1 documents"]
    assert entries[0]["input"]["fingerprint"] == fingerprint_vectors(X)[0]
    with pytest.raises(TypeError, match="textdp.ledger.Ledger"):
        release_vectors(LaplaceVector(epsilon=2.0), X, ledger=str(tmp_path / "l.jsonl"))


def test_the_ledger_file_is_private(tmp_path):
    path = tmp_path / "l.jsonl"
    with _release(Ledger(path)):
        pass
    assert os.stat(path).st_mode & 0o077 == 0


def test_a_failed_append_says_the_release_is_not_recorded(tmp_path, monkeypatch):
    import textdp.ledger as module

    def full(fd, line):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module, "_append", full)
    with pytest.raises(LedgerError, match="succeeded but its line could not be appended.*NOT"):
        with _release(Ledger(tmp_path / "l.jsonl")):
            pass


def test_a_file_that_is_not_a_ledger_gives_a_bounded_number_of_warnings():
    contents = parse(b"".join(b"line %d\n" % i for i in range(50)))
    problems = contents.problems("x.txt")
    assert contents.entries == [] and len(problems) == 12  # torn last line, 10 listed, 1 count
    assert "39 more invalid lines" in problems[-1]
