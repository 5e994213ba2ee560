"""Every write of a command is committed together or not at all (issue 36, "Deliver" 2), through
real processes: a pipe its reader closes early, /dev/full, SIGKILL, and commands given one of
their inputs inside their output directory.

* Stream targets (standard output, a FIFO, a device) are written before any file is renamed: a
  stream that fails leaves every file target as it was.
* A reader that goes away before reading everything is exit 141, a write that fails exit 2; "wrote
  N records" is never said, and the ledger never completes the release (it is voided when nothing
  was delivered, and stays pending — counted — when part of it was).
* A run killed outright while staging standard output leaves a temporary file that the next run
  removes.
* No command writes over one of its inputs (report, audit: one line, exit 2, the input intact).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from textdp.ledger import Ledger

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC}
BASE = ["-m", "diffractor", "--epsilon", "1", "--seed", "3", "--entities", "none"]
LINE = "the food was great but the waiter was rude and the place was cold"


def cli(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "textdp.cli", *map(str, args)],
                          env=env or ENV, timeout=300, **kwargs)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """About 70 KB of text out: more than a pipe holds, not much more."""
    path = tmp_path / "in.txt"
    path.write_text((LINE + "\n") * 1000, encoding="utf-8")
    return path


def _states(ledger: Path) -> list[str]:
    return [e["_state"] for e in Ledger(ledger).read().entries] if ledger.exists() else []


def _types(ledger: Path) -> list[str]:
    return [json.loads(line).get("type", "release") for line in ledger.read_text().splitlines()]


# --- a stream target that fails: no file target is touched -----------------------------------

def test_a_report_on_dev_full_leaves_the_output_as_it_was(tmp_path, corpus):
    """`privatize -o keep.txt --report /dev/full` replaced keep.txt, then failed (exit 2)."""
    keep, ledger = tmp_path / "keep.txt", tmp_path / "ledger.jsonl"
    keep.write_text("precious\n")
    r = cli("privatize", corpus, "-o", keep, "--report", "/dev/full", "--ledger", ledger, *BASE)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "/dev/full" in err and "Traceback" not in err and "wrote" not in err
    assert keep.read_text() == "precious\n"
    assert _types(ledger) == ["pending", "void"]  # nothing was delivered: voided


def test_standard_output_on_dev_full(tmp_path, corpus):
    report, ledger = tmp_path / "r.json", tmp_path / "ledger.jsonl"
    with open("/dev/full", "wb") as full:
        r = cli("privatize", corpus, "-o", "-", "--report", report, "--ledger", ledger, *BASE,
                stdout=full)
    err = r.stderr.decode()
    assert r.returncode == 2 and "<stdout>" in err and "wrote" not in err, err
    assert not report.exists()
    assert _types(ledger) == ["pending", "void"]


def test_a_pipe_closed_early_is_141_and_never_completes_the_release(tmp_path, corpus):
    """`privatize -o - … | head -c 100`: the output fits in the pipe, so every write succeeds;
    the reader then leaves with most of it unread. That was exit 0, "wrote 1000 records" and a
    complete ledger line; now it is 141, no report, and the release stays pending (counted:
    100 bytes of it were read)."""
    report, ledger = tmp_path / "r.json", tmp_path / "ledger.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "textdp.cli", "privatize", str(corpus), "-o",
                             "-", "--report", str(report), "--ledger", str(ledger), *BASE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    first = proc.stdout.read(100)
    time.sleep(0.5)  # the writer has had time to fill the pipe and finish writing
    proc.stdout.close()  # head -c 100 exits
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert len(first) == 100
    assert "wrote" not in err and "Traceback" not in err
    assert err.count("\n") == 1 and "pending" in err, err
    assert not report.exists()
    assert _states(ledger) == ["pending"] and "complete" not in _types(ledger)


def test_a_reader_that_reads_everything_gets_everything(tmp_path, corpus):
    """The same run with a reader that reads to the end: exit 0, completed (the drain check
    does not refuse a slow but complete reader)."""
    ledger = tmp_path / "ledger.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "textdp.cli", "privatize", str(corpus), "-o",
                             "-", "--ledger", str(ledger), *BASE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    time.sleep(0.5)
    out = proc.stdout.read()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert out.count(b"\n") == 1000 and "wrote 1,000 records" in err
    assert _types(ledger) == ["pending", "complete"]


def test_a_fifo_whose_reader_leaves_early(tmp_path, corpus):
    fifo, report = tmp_path / "out.txt", tmp_path / "r.json"  # a FIFO named as a .txt
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "textdp.cli", "privatize", str(corpus), "-o",
                             str(fifo), "--report", str(report), *BASE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    with open(fifo, "rb") as reader:
        assert len(reader.read(100)) == 100
        time.sleep(0.5)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert str(fifo) in err and "wrote" not in err and not report.exists()


# --- a run killed outright leaves a temporary file the next run removes ----------------------

def _stdout_stages(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".textdp-stdout."))


def test_a_killed_stdout_run_leaves_a_temporary_file_the_next_run_removes(tmp_path, corpus):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**ENV, "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "textdp.cli", "privatize", "-", "-o", "-",
                             "--format", "txt", *BASE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(b"the first line\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 120
    while not _stdout_stages(temp):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "no staged standard output appeared"
        time.sleep(0.05)
    proc.kill()
    proc.communicate(timeout=60)
    stale = _stdout_stages(temp)
    assert len(stale) == 1 and f".textdp-{proc.pid}-" in stale[0]
    r = cli("privatize", corpus, "-o", "-", *BASE, env=env)
    assert r.returncode == 0, r.stderr
    assert _stdout_stages(temp) == []


# --- no command writes over one of its inputs -------------------------------------------------

@pytest.fixture
def run_report(tmp_path: Path, corpus: Path) -> Path:
    path = tmp_path / "run.json"
    r = cli("privatize", corpus, "-o", tmp_path / "out.txt", "--report", path, *BASE)
    assert r.returncode == 0, r.stderr
    return path


@pytest.mark.parametrize("name", ["report.md", "report.html", "tokens.png"])
def test_report_never_writes_over_its_input(tmp_path, run_report, name):
    """`textdp report d/report.md -o d` replaced its input with the Markdown."""
    d = tmp_path / "d"
    d.mkdir()
    given = d / name
    given.write_bytes(run_report.read_bytes())
    r = cli("report", given, "-o", d)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1 and "same file" in err, err
    assert given.read_bytes() == run_report.read_bytes()
    assert sorted(p.name for p in d.iterdir()) == [name]


@pytest.mark.parametrize("name", ["audit.md", "audit.json", "audit.png"])
def test_audit_never_writes_over_its_pairs_file(tmp_path, name):
    """`textdp audit --pairs aud/audit.md -o aud` replaced its pairs file."""
    aud = tmp_path / "aud"
    aud.mkdir()
    pairs = aud / name
    pairs.write_text("good bad\n")
    r = cli("audit", "--epsilon", "1", "--pairs", pairs, "--draws", "20", "-o", aud)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1 and "same file" in err, err
    assert pairs.read_text() == "good bad\n"
    assert sorted(p.name for p in aud.iterdir()) == [name]


def test_the_chokepoint_refuses_an_input_a_command_forgot(tmp_path, run_report, monkeypatch,
                                                          capsys):
    """The rule as one chokepoint: inside the CLI, AtomicFiles refuses a target that a command
    named as an input to check_distinct, even where that command's own check is missing (here:
    report's per-file check switched off)."""
    import textdp.cli.report as report_module
    from textdp.cli import main

    monkeypatch.setattr(report_module, "directory_outputs", lambda *a, **k: {})
    d = tmp_path / "d"
    d.mkdir()
    given = d / "report.md"
    given.write_bytes(run_report.read_bytes())
    before = given.read_bytes()
    code = main(["report", str(given), "-o", str(d)])
    err = capsys.readouterr().err
    assert code == 2 and "would overwrite the report" in err, err
    assert given.read_bytes() == before


def test_a_kill_9_report_stage_is_removed_by_the_next_run(tmp_path, run_report):
    """`textdp report` renders into a hidden directory beside OUT; one left by a killed run
    (its process gone) is removed by the next run into the same place."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".out.textdp-{dead}-abc.tmp"
    stale.mkdir()
    (stale / "report.md").write_text("half")
    r = cli("report", run_report, "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and (tmp_path / "out" / "report.md").exists()


def test_signals_are_not_lost(tmp_path, corpus):
    """A SIGTERM while standard output waits for its reader: exit 130, nothing completed."""
    ledger = tmp_path / "ledger.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "textdp.cli", "privatize", str(corpus), "-o",
                             "-", "--ledger", str(ledger), *BASE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    assert len(proc.stdout.read(100)) == 100  # writing: blocked on the full pipe, or draining
    proc.send_signal(signal.SIGTERM)
    proc.stdout.read()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 130, err
    assert "complete" not in _types(ledger)
