"""The privacy ledger (textdp.ledger): the fingerprint's encoding, appends that survive SIGKILL and
concurrency, torn lines reported and never glued onto, the policies, and ledger= in the API."""

from __future__ import annotations

import fcntl
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

import textdp.ledger as ledger_module
from textdp.io.atomic import sigterm_as_interrupt
from textdp.ledger import (
    Ledger,
    LedgerError,
    LedgerRefused,
    LedgerWarning,
    as_ledger,
    iter_inputs,
    parse,
)
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


# --- reading: every line validated, /1 still read ---------------------------------------------

def _line(fp: str = "f" * 64, eps: float = 1.0, **changes) -> bytes:
    """A valid pending line (its id recomputed after ``changes``)."""
    entry = ledger_module._entry(Fake(eps), fp, 3, None, "texts", "", "warn", None)
    entry.update(changes)
    entry["id"] = ledger_module._digest(entry)
    return json.dumps(entry, ensure_ascii=False).encode()


def _closing(line: bytes, kind: str = "complete", **changes) -> bytes:
    entry = json.loads(line)
    closing = {"schema": "textdp.ledger/2", "type": kind, "release": entry["id"], "time": "t",
               **({"records": entry["input"]["records"], "fingerprint":
                   entry["input"]["fingerprint"]} if kind == "complete" else {"why": "failed"}),
               **changes}
    return json.dumps(closing).encode()


def test_parse_counts_pending_and_complete_lines_and_lists_void_ones():
    a, b, c = _line(eps=1.0), _line(eps=2.0), _line(eps=4.0)
    contents = parse(b"\n".join([a, b, _closing(a), c, _closing(c, "void"), b""]))
    assert [(e["_line"], e["_state"]) for e in contents.entries] == [(1, "complete"),
                                                                   (2, "pending")]
    assert [e["_line"] for e in contents.voided] == [4] and contents.invalid == []
    [(_, _, composition)] = list(iter_inputs(contents))
    assert composition.groups[0].epsilon == 3.0                       # void not counted


def test_parse_reports_a_torn_last_line_and_invalid_lines():
    a, b = _line(eps=1.0), _line(eps=2.0)
    torn = parse(a + b"\n" + b[:20])
    assert [e["_line"] for e in torn.entries] == [1] and torn.torn["line"] == 2
    assert torn.invalid[0]["line"] == 2 and "torn" in torn.invalid[0]["why"]
    assert not torn.torn["counted"] and "line 2 cannot be validated" in torn.problems("L")[0]
    whole = parse(a + b"\n" + b)  # a whole entry without its newline: counted, not invalid
    assert len(whole.entries) == 2 and whole.torn["counted"] and whole.invalid == []
    middle = parse(a + b"\n{oops\n" + b + b"\n")
    assert len(middle.entries) == 2 and [c["line"] for c in middle.invalid] == [2]
    assert parse(b"").entries == [] and parse(b"").torn is None


def test_a_schema_1_ledger_is_read_with_the_same_totals():
    """tests/data/ledger_v1.jsonl was written by the textdp before the write-ahead protocol
    (main at 90243dc): every /1 line is a complete release and the totals are unchanged."""
    contents = parse((Path(__file__).parent / "data" / "ledger_v1.jsonl").read_bytes())
    assert contents.invalid == [] and len(contents.entries) == 5
    assert {e["_state"] for e in contents.entries} == {"complete"}
    totals = {fp[:4]: c for fp, _, c in iter_inputs(contents)}
    assert [(g.epsilon, g.delta) for g in totals["aaaa"].groups] == [(12.0, 0.0)]
    assert [(g.epsilon, g.delta) for g in totals["bbbb"].groups] == [(3.5, 2e-06)]
    assert not totals["cccc"].bounded                                   # ε = inf: unbounded


_BAD = {
    "negative ε": lambda: _line(eps=-5.0),
    "zero ε": lambda: _line(eps=0.0),
    "ε a string": lambda: _line(guarantee={"notion": "metric DP (d_χ-privacy)", "epsilon": "abc",
                                           "delta": 0.0}),
    "ε NaN": lambda: _line(eps=1.0).replace(b'"epsilon": 1.0', b'"epsilon": NaN'),
    "ε -Infinity": lambda: _line(eps=1.0).replace(b'"epsilon": 1.0', b'"epsilon": -Infinity'),
    "δ negative": lambda: _line(guarantee={"notion": "(ε, δ)-Lipschitz privacy", "epsilon": 1.0,
                                           "delta": -1e-6}),
    "δ above 1": lambda: _line(guarantee={"notion": "(ε, δ)-Lipschitz privacy", "epsilon": 1.0,
                                          "delta": 2}),
    "missing guarantee": lambda: _line(guarantee=None),
    "records a string": lambda: _line(input={"fingerprint": "f" * 64, "encoding": "x",
                                             "records": "3"}),
    "unknown schema": lambda: _line(schema="textdp.ledger/3"),
    "unknown type": lambda: _line(type="maybe"),
    "id does not match": lambda: _line(eps=1.0).replace(b'"epsilon": 1.0', b'"epsilon": 0.5'),
    "not an object": lambda: b"[1, 2]",
    "not UTF-8": lambda: b"\xff\xfe{}",
    "nested too deeply": lambda: b"[" * 100_000,
    "a 5000-digit ε": lambda: _line(eps=1.0).replace(b'"epsilon": 1.0', b'"epsilon": 1' + b"0" * 5000),
}


@pytest.mark.parametrize("name", sorted(_BAD))
def test_a_line_that_cannot_be_validated_is_reported_and_refused(tmp_path, name):
    """Fail closed: the bad line (line 2) is named; warn warns and does not count it (a negative
    ε subtracts nothing); refuse refuses, naming the file and the line."""
    path = tmp_path / "l.jsonl"
    path.write_bytes(_line(eps=1.0) + b"\n" + _BAD[name]() + b"\n")
    contents = Ledger(path).read()
    assert [c["line"] for c in contents.invalid] == [2] and len(contents.entries) == 1
    with _release(Ledger(path), eps=1.0) as rel:
        assert any("line 2 cannot be validated" in w for w in rel.warnings)
    assert rel.composition.groups[0].epsilon == 2.0                    # 1 + 1, the bad line not
    before = path.read_bytes()
    with pytest.raises(LedgerRefused) as refused:
        with _release(Ledger(path, policy="refuse", budget=100.0)):
            pytest.fail("released")
    message = str(refused.value)
    assert f"ledger {path}: line 2 cannot be validated" in message and "\n" not in message
    assert "textdp ledger show" in message and path.read_bytes() == before


@pytest.mark.parametrize("name, lines, bad", [
    ("completion of no release", lambda a: [_closing(a)], 1),
    ("completed twice", lambda a: [a, _closing(a), _closing(a)], 3),
    ("void after complete", lambda a: [a, _closing(a), _closing(a, "void")], 3),
    ("other record count", lambda a: [a, _closing(a, records=2)], 2),
    ("release twice", lambda a: [a, a], 2),
])
def test_closing_lines_must_match_their_pending_line(name, lines, bad):
    contents = parse(b"\n".join([*lines(_line()), b""]))
    assert [c["line"] for c in contents.invalid] == [bad], contents.invalid


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


def test_a_release_is_written_ahead_and_completed(tmp_path):
    """The pending line is in the file (and counted by any reader) while the block runs; the
    complete line follows it. (Before: nothing was in the file until the block had ended.)"""
    path = tmp_path / "l.jsonl"
    with _release(Ledger(path), eps=2.0) as rel:
        inside = Ledger(path).read()
        assert [(e["id"], e["_state"]) for e in inside.entries] == [(rel.id, "pending")]
        assert rel.section["release_id"] == rel.id
    after = Ledger(path).read()
    assert [(e["id"], e["_state"]) for e in after.entries] == [(rel.id, "complete")]
    kinds = [json.loads(x)["type"] for x in _lines(path) if x]
    assert kinds == ["pending", "complete"] and rel.state == "complete"


def test_a_failed_block_is_voided_and_not_counted(tmp_path):
    path = tmp_path / "l.jsonl"
    with pytest.raises(RuntimeError):
        with _release(Ledger(path), eps=1.0) as rel:
            raise RuntimeError("the release failed")
    contents = Ledger(path).read()
    assert contents.entries == [] and [e["id"] for e in contents.voided] == [rel.id]
    assert "RuntimeError: the release failed" in json.loads(_lines(path)[1])["why"]


def test_an_exposed_release_that_fails_stays_pending(tmp_path):
    path = tmp_path / "l.jsonl"
    with pytest.warns(LedgerWarning, match="stays and counts"):
        with pytest.raises(BrokenPipeError):
            with _release(Ledger(path), eps=1.0) as rel:
                rel.exposed()            # e.g. bytes went to a pipe
                raise BrokenPipeError
    assert [e["_state"] for e in Ledger(path).read().entries] == ["pending"]


def test_a_running_warn_release_counts_for_a_refuse_release(tmp_path):
    """Budget 1.5: a warn release of ε 1 still running makes a refuse release of ε 1 refuse (the
    warn run took the same lock and wrote its pending line first). Before: the warn run's line
    was appended after its release, so the refuse run passed (cumulative 2 > 1.5)."""
    path = tmp_path / "l.jsonl"
    with _release(Ledger(path), eps=1.0):
        with pytest.raises(LedgerRefused, match="cumulative ε = 2 > budget 1.5"):
            with _release(Ledger(path, policy="refuse", budget=1.5), eps=1.0):
                pytest.fail("released")
    assert len(Ledger(path).read().entries) == 1


def test_refuse_counts_a_concurrent_release_without_waiting_for_it(tmp_path):
    """Budget 10, two concurrent releases of ε = 6: the second sees the first's pending line and
    is refused while the first is still running (the lock is not held during the release)."""
    path = tmp_path / "l.jsonl"
    inside, done, outcome = threading.Event(), threading.Event(), {}

    def first():
        with _release(Ledger(path, policy="refuse", budget=10), eps=6.0):
            inside.set()
            done.wait(30)

    t = threading.Thread(target=first)
    t.start()
    inside.wait(30)
    try:
        with _release(Ledger(path, policy="refuse", budget=10), eps=6.0):
            outcome["second"] = "released"
    except LedgerRefused:
        outcome["second"] = "refused"
    done.set()
    t.join()
    assert outcome == {"second": "refused"} and len(Ledger(path).read().entries) == 1


def test_an_append_after_a_torn_line_starts_on_its_own_line(tmp_path):
    path = tmp_path / "l.jsonl"
    torn = _line(eps=2.0)[:25]
    path.write_bytes(_line() + b"\n" + torn)
    with _release(Ledger(path)) as rel:
        assert any("line 2 cannot be validated (torn" in w for w in rel.warnings)
        assert rel.section["torn_last_line"]["line"] == 2
    lines = _lines(path)
    assert lines[1] == torn and lines[-1] == b""                      # kept, never overwritten
    assert json.loads(lines[2])["id"] == rel.id                       # not glued onto it
    contents = Ledger(path).read()
    assert len(contents.entries) == 2 and [c["line"] for c in contents.invalid] == [2]


# --- faults and signals at every step -----------------------------------------------------------

def _enospc_after(monkeypatch, calls: int, half: bool = True) -> None:
    """The ``calls``-th ledger write (0-based) writes half its bytes, then the disk is full."""
    real, seen = ledger_module._write_all, []

    def write(fd, data):
        seen.append(1)
        if len(seen) - 1 == calls:
            if half:
                os.write(fd, data[:len(data) // 2])
            raise OSError(28, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(ledger_module, "_write_all", write)


def test_a_pending_line_that_cannot_be_written_refuses_before_the_block(tmp_path, monkeypatch):
    path = tmp_path / "l.jsonl"
    with _release(Ledger(path)):
        pass
    before = path.read_bytes()
    _enospc_after(monkeypatch, 0)
    with pytest.raises(LedgerError, match="could not be recorded before it happens.*No space"):
        with _release(Ledger(path)):
            pytest.fail("released")
    assert path.read_bytes() == before                                 # the half line rolled back


def test_a_completion_that_cannot_be_written_leaves_the_pending_line(tmp_path, monkeypatch):
    path = tmp_path / "l.jsonl"
    _enospc_after(monkeypatch, 1)
    with pytest.warns(LedgerWarning, match="complete line of release .* could not be written.*"
                                           "pending line stays and counts"):
        with _release(Ledger(path), eps=3.0):
            pass
    contents = Ledger(path).read()
    assert [e["_state"] for e in contents.entries] == ["pending"] and contents.invalid == []


def test_a_void_that_cannot_be_written_leaves_the_pending_line(tmp_path, monkeypatch):
    path = tmp_path / "l.jsonl"
    _enospc_after(monkeypatch, 1)
    with pytest.warns(LedgerWarning, match="void line .* pending line stays"):
        with pytest.raises(RuntimeError):
            with _release(Ledger(path)):
                raise RuntimeError
    assert [e["_state"] for e in Ledger(path).read().entries] == ["pending"]


def _sigterm(*_: object) -> None:
    signal.raise_signal(signal.SIGTERM)


@pytest.mark.parametrize("step, counted, lines", [
    ("lock", 0, 0),            # waiting for the lock: nothing written
    ("pending write", 0, 0),   # the pending line is rolled back
    ("block", 0, 2),           # pending + void
    ("completion write", 1, 1),  # the completion is rolled back; the pending line counts
])
def test_sigterm_at_every_step(tmp_path, monkeypatch, step, counted, lines):
    """A real SIGTERM (raised in this process, turned into KeyboardInterrupt as the CLI does) at
    each step leaves the ledger counting the release exactly when its block may have finished."""
    path = tmp_path / "l.jsonl"
    real_flock, real_write, writes = fcntl.flock, ledger_module._write_all, []
    if step == "lock":
        def flock(fd, op):
            if op == fcntl.LOCK_EX:
                _sigterm()
            real_flock(fd, op)
        monkeypatch.setattr(ledger_module.fcntl, "flock", flock)
    if step in ("pending write", "completion write"):
        def write(fd, data):
            writes.append(1)
            real_write(fd, data)
            if len(writes) == (1 if step == "pending write" else 2):
                _sigterm()              # after the bytes landed: the rollback must remove them
        monkeypatch.setattr(ledger_module, "_write_all", write)
    ran = []
    with sigterm_as_interrupt(), pytest.raises(KeyboardInterrupt):
        with _release(Ledger(path)):
            ran.append(1)
            if step == "block":
                _sigterm()
    contents = Ledger(path).read() if path.exists() else parse(b"")
    assert len(contents.entries) == counted and contents.invalid == []
    assert len([x for x in _lines(path) if x] if path.exists() else []) == lines
    assert ran == ([1] if step in ("block", "completion write") else [])


def test_sigterm_while_another_process_holds_the_lock(tmp_path):
    """The release waits for the lock before anything else; SIGTERM during the wait ends it with
    nothing written (before: the output was committed first, then the wait, then nothing)."""
    path = tmp_path / "l.jsonl"
    path.touch()
    holder = os.open(path, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
    ran = []
    try:
        with sigterm_as_interrupt(), pytest.raises(KeyboardInterrupt):
            timer.start()
            with _release(Ledger(path)):
                ran.append(1)
    finally:
        timer.cancel()
        os.close(holder)
    assert ran == [] and path.read_bytes() == b""


# --- races of warn and refuse runs (real processes) ----------------------------------------------

_RACER = """
import os, sys, time
sys.path.insert(0, {src!r}); sys.path.insert(0, {tests!r})
from test_ledger import Fake
from textdp.ledger import Ledger, LedgerRefused
ledger = Ledger({path!r}, policy={policy!r}, budget=1.5 if {policy!r} == "refuse" else None)
while not os.path.exists({go!r}):
    time.sleep(0.005)
try:
    with ledger.release(mechanism=Fake(1.0), input_fingerprint="f" * 64, records=1, seed=None):
        time.sleep(0.2)
except LedgerRefused:
    sys.exit(3)
"""


@pytest.mark.parametrize("policies", [("warn", "refuse"), ("refuse", "refuse"),
                                      ("warn", "refuse", "refuse", "warn"),
                                      ("refuse", "refuse", "refuse", "refuse")])
def test_races_of_warn_and_refuse_runs_never_exceed_the_budget(tmp_path, policies):
    """Budget 1.5, releases of ε 1: a refuse run passes only when no other release (warn or
    refuse, pending or complete) is in the ledger before it, so at most one refuse run passes,
    exactly one when the first release recorded is a refuse run's; warn runs always pass."""
    path, go = tmp_path / "l.jsonl", tmp_path / "go"
    children = [subprocess.Popen([sys.executable, "-c", _RACER.format(
        src=SRC, tests=str(Path(__file__).parent), path=str(path), policy=p, go=str(go))])
        for p in policies]
    time.sleep(0.5)  # let them import; correctness does not depend on it
    go.touch()
    codes = [c.wait(timeout=120) for c in children]
    assert set(codes) <= {0, 3}
    assert all(code == 0 for code, p in zip(codes, policies, strict=True) if p == "warn")
    entries = Ledger(path).read().entries
    assert len(entries) == codes.count(0) and {e["_state"] for e in entries} == {"complete"}
    passed_refuse = [e for e in entries if e["policy"] == "refuse"]
    assert len(passed_refuse) == (1 if entries[0]["policy"] == "refuse" else 0)
    for e in passed_refuse:                 # what the refuse run saw: ε 1 each before it
        assert sum(1 for x in entries if x["_line"] < e["_line"]) + 1 <= 1.5


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
    assert len(contents.entries) == 200 and contents.torn is None and contents.invalid == []
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
    assert len(contents.entries) >= 2
    last = path.read_bytes().count(b"\n") + (0 if path.read_bytes().endswith(b"\n") else 1)
    assert all(c["line"] == last and "torn" in c["why"] for c in contents.invalid)
    assert [e["_state"] for e in contents.entries[:-1]] == ["complete"] * (len(contents.entries) - 1)
    with _release(Ledger(path)) as rel:  # the next append: reported torn line, own line
        assert bool(contents.invalid) == any("torn" in w for w in rel.warnings)
    after = Ledger(path).read()
    assert after.entries[-1]["id"] == rel.id and after.entries[-1]["_state"] == "complete"
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


def test_a_file_that_is_not_a_ledger_gives_a_bounded_number_of_warnings():
    contents = parse(b"".join(b"line %d\n" % i for i in range(50)))
    problems = contents.problems("x.txt")
    assert contents.entries == [] and len(problems) == 11  # 10 listed, 1 count
    assert "40 more lines cannot be validated" in problems[-1]


# --- a resumed job continues its pending release (issue 38: dp_prompt --resume) ---------------
def test_a_resumed_release_completes_its_pending_line_and_adds_none(tmp_path):
    path = tmp_path / "ledger.jsonl"
    book = Ledger(path, policy="refuse", budget=2.5)
    first = _release(book, eps=1.0)
    first.__enter__()
    first.exposed()
    assert first.void("KeyboardInterrupt")  # stopped once something was staged: it stays
    with _release(book, eps=1.0) as other:  # another release of the input counts it
        assert len(other.earlier) == 1
    resumed = book.release(mechanism=Fake(1.0), input_fingerprint="f" * 64, records=3,
                           seed=None, resumes=first.id)
    with resumed:
        assert resumed.id == first.id
        assert [e["id"] for e in resumed.earlier] == [other.id]  # not itself
        assert resumed.composition.summary() == other.composition.summary()
    kinds = [json.loads(x)["type"] for x in _lines(path) if x]
    assert kinds == ["pending", "pending", "complete", "complete"]
    assert json.loads(_lines(path)[3])["release"] == first.id
    # Only a pending release of the same input, mechanism and guarantee can be continued.
    stopped = _release(book, eps=0.5)
    stopped.__enter__()
    stopped.exposed()
    stopped.void("stopped")
    for fp, eps, rid, why in (("f" * 64, 1.0, first.id, "is complete, not pending"),
                              ("f" * 64, 0.5, "0" * 16, "is not recorded, not pending"),
                              ("e" * 64, 0.5, stopped.id, "another input"),
                              ("f" * 64, 2.0, stopped.id, "another input")):
        with pytest.raises(LedgerError, match=why):
            book.release(mechanism=Fake(eps), input_fingerprint=fp, records=3, seed=None,
                         resumes=rid).__enter__()
    assert len([x for x in _lines(path) if x]) == 5  # nothing appended by the refusals
