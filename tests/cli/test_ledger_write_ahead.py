"""The write-ahead ledger through the CLI (issue 21): a release is recorded before its output is
visible, so a fault or a signal at any step never leaves a visible output the ledger does not
count; a ledger line that cannot be validated makes a refuse run refuse (one line naming the file
and the line) and `ledger show` list it, never a traceback."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import textdp.cli._local as privatize_module  # the local engine: its map_text_file
import textdp.io.atomic as atomic_module
import textdp.ledger as ledger_module
from textdp.cli import main
from textdp.ledger import Ledger

SRC = str(Path(__file__).resolve().parents[2] / "src")
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


def _counted(ledger: Path) -> list[str]:
    """The states of the releases the ledger counts (pending or complete)."""
    return [e["_state"] for e in Ledger(ledger).read().entries] if ledger.exists() else []


def _errors(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("textdp: error:")]


# --- faults ----------------------------------------------------------------------------------------

def test_a_full_disk_for_the_pending_line_refuses_before_any_output(capsys, tmp_path, corpus,
                                                                    monkeypatch):
    """Before: the output was committed, then the append failed (exit 2, "not recorded", yet the
    output was there)."""
    L, out = tmp_path / "l.jsonl", tmp_path / "o.txt"

    def full(fd, line):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ledger_module, "_append", full)
    code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 8, "--ledger", L)
    assert code == 2 and len(_errors(err)) == 1 and f"ledger {L}" in err
    assert "No space left on device" in err and not out.exists() and _counted(L) == []


def test_a_full_disk_for_the_completion_keeps_the_release_counted(capsys, tmp_path, corpus,
                                                                 monkeypatch):
    L, out = tmp_path / "l.jsonl", tmp_path / "o.txt"
    real, calls = ledger_module._append, []

    def second_fails(fd, line):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(fd, line)

    monkeypatch.setattr(ledger_module, "_append", second_fails)
    code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 8, "--ledger", L)
    assert code == 0 and out.exists() and _counted(L) == ["pending"]
    [line] = [x for x in err.splitlines() if "complete line" in x]
    assert line.startswith("textdp: warning:") and "pending line stays and counts" in line


def test_an_input_that_grows_during_the_release_is_refused_and_voided(capsys, tmp_path, corpus,
                                                                      monkeypatch):
    """The records released must be the records fingerprinted. Before: exit 0, 4 records
    released and 3 recorded."""
    L, out = tmp_path / "l.jsonl", tmp_path / "o.txt"
    real = privatize_module.map_text_file

    def growing(input, *args, **kwargs):
        with open(input, "a", encoding="utf-8") as f:
            f.write("A fourth record was appended.\n")
        return real(input, *args, **kwargs)

    monkeypatch.setattr(privatize_module, "map_text_file", growing)
    code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 8, "--ledger", L,
                       "--report", tmp_path / "r.json")
    assert code == 2 and _errors(err) == [x for x in err.splitlines() if x.strip()]
    assert "INPUT changed while it was read" in err and len(_errors(err)) == 1
    assert not out.exists() and not (tmp_path / "r.json").exists()
    contents = Ledger(L).read()
    assert contents.entries == [] and len(contents.voided) == 1


def test_a_closed_pipe_keeps_the_release_counted(capsys, tmp_path, corpus, monkeypatch):
    """`-o - --ledger L | head -1`: data may have been delivered, so the release stays pending
    (counted); one line on stderr, exit 141. Before: exit 1, nothing on stderr, nothing
    recorded."""
    L = tmp_path / "l.jsonl"

    def closed(self, path):
        self.exposed = True  # some bytes went out before the reader left
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(atomic_module.AtomicFiles, "_copy_to_stdout", closed)
    monkeypatch.setattr(os, "dup2", lambda *a: None)   # keep pytest's stdout
    code, _, err = run(capsys, "privatize", corpus, "-o", "-", "--epsilon", 8, "--ledger", L)
    assert code == 141 and len(_errors(err)) == 1
    assert "closed" in err and "stays pending and counts" in err
    assert _counted(L) == ["pending"]


def test_a_really_closed_pipe(tmp_path, corpus):
    """The same through a real pipe whose reader is gone before the first byte: exit 141, one
    line, nothing else; nothing was delivered, so the release is voided (issue 36)."""
    L = tmp_path / "l.jsonl"
    read, write = os.pipe()
    os.close(read)
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
         "privatize", str(corpus), "-o", "-", "--epsilon", "8", "--ledger", str(L)],
        stdout=write, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": SRC})
    os.close(write)
    _, err = child.communicate(timeout=300)
    lines = err.decode().splitlines()
    assert child.returncode == 141 and "the reader of standard output" in lines[-1]
    assert "voided (nothing was delivered)" in lines[-1]
    assert len(_errors(err.decode())) == 1 and "Traceback" not in err.decode()
    assert _counted(L) == [] and len(Ledger(L).read().voided) == 1


# --- signals at every step -------------------------------------------------------------------------

@pytest.fixture(params=[signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def signum(request) -> int:
    return request.param


@pytest.mark.parametrize("step, output, counted", [
    ("lock", False, []),                  # waiting for the ledger's lock: nothing yet
    ("pending", False, []),               # the pending line is rolled back
    ("release", False, []),               # pending + void
    ("commit", True, ["pending"]),        # the output renamed into place, then the signal
    ("completion", True, ["pending"]),    # the completion is rolled back
])
def test_a_signal_at_every_step(capsys, tmp_path, corpus, monkeypatch, signum, step, output,
                                counted):
    """Exit 130 at every step, and a visible output is always counted. Before: a signal after
    the output's rename or during the append left the output with no ledger line."""

    def _sigterm() -> None:  # the signal, delivered to this process at this step
        signal.raise_signal(signum)

    L, out = tmp_path / "l.jsonl", tmp_path / "o.txt"
    real_flock, real_append, real_replace = fcntl.flock, ledger_module._append, os.replace
    appends = []
    if step == "lock":
        def flock(fd, op):
            if op == fcntl.LOCK_EX:
                _sigterm()
            real_flock(fd, op)
        monkeypatch.setattr(ledger_module.fcntl, "flock", flock)
    if step in ("pending", "completion"):
        def append(fd, line):
            appends.append(1)
            if len(appends) == (1 if step == "pending" else 2):
                _sigterm()
            real_append(fd, line)
        monkeypatch.setattr(ledger_module, "_append", append)
    if step == "release":
        real_map = privatize_module.map_text_file

        def interrupted(*args, **kwargs):
            _sigterm()
            return real_map(*args, **kwargs)
        monkeypatch.setattr(privatize_module, "map_text_file", interrupted)
    if step == "commit":
        def replace(src, dst):
            real_replace(src, dst)
            if Path(dst) == out:
                _sigterm()
        monkeypatch.setattr(atomic_module.os, "replace", replace)
    code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 8, "--ledger", L)
    assert code == 130 and "interrupted" in err
    assert out.exists() == output and _counted(L) == counted
    if L.exists():
        assert Ledger(L).read().invalid == []
    if counted and step == "commit":
        assert "stays and counts" in err


def test_sigterm_while_another_process_holds_the_ledger_lock(capsys, tmp_path, corpus):
    """The issue's case: SIGTERM while the lock is held elsewhere. Before: exit 130 with the
    output present and no ledger line; now nothing is written."""
    L, out = tmp_path / "l.jsonl", tmp_path / "o.txt"
    L.touch()
    holder = os.open(L, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 8, "--ledger", L)
    finally:
        timer.cancel()
        os.close(holder)
    assert code == 130 and not out.exists() and L.read_bytes() == b""


# --- fail closed --------------------------------------------------------------------------------

def _first_line(L: Path) -> dict:
    return json.loads(L.read_bytes().split(b"\n")[0])


@pytest.mark.parametrize("name, edit", [
    ("ε negative", lambda e: e["guarantee"].update(epsilon=-5.0)),
    ("ε a string", lambda e: e["guarantee"].update(epsilon="abc")),
    ("unknown schema", lambda e: e.update(schema="textdp.ledger/9")),
    ("missing fields", lambda e: e.pop("input")),
])
def test_a_line_that_cannot_be_validated_refuses_and_is_shown(capsys, tmp_path, corpus, name,
                                                              edit):
    """Budget 16, releases of ε 8: after one release and one bad line, a refuse run must refuse.
    Before: ε −5 subtracted (8 − 5 + 8 = 11 ≤ 16 passed), an unknown schema or a line without
    its input was skipped (8 + 8 ≤ 16 passed), and "epsilon": "abc" made every later command
    fail with "internal error"."""
    L, out = tmp_path / "l.jsonl", tmp_path / "o.txt"
    assert run(capsys, "privatize", corpus, "-o", tmp_path / "o1.txt", "--epsilon", 8,
               "--ledger", L)[0] == 0
    bad = _first_line(L)
    edit(bad)
    n = L.read_bytes().count(b"\n") + 1
    L.write_bytes(L.read_bytes() + json.dumps(bad).encode() + b"\n")
    before = L.read_bytes()
    code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 8, "--ledger", L,
                       "--ledger-policy", "refuse", "--budget", 16)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"ledger {L}: line {n} cannot be validated" in err
    assert not out.exists() and L.read_bytes() == before
    code, _, err = run(capsys, "privatize", corpus, "-o", out, "--epsilon", 1, "--ledger", L)
    assert code == 0 and f"line {n} cannot be validated" in err            # warn: warns
    code, text, err = run(capsys, "ledger", "show", L)
    assert code == 0 and f"invalid line {n} (not counted)" in text and "Traceback" not in err
    assert "ε = 9 over 2 release(s)" in text                         # the good ones: 8 + 1
    code, text, _ = run(capsys, "ledger", "show", L, "--json")
    doc = json.loads(text)
    assert code == 0 and [x["line"] for x in doc["invalid_lines"]] == [n]
