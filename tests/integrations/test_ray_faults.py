"""The CLI's Ray engine over files under failure (issue 25): a worker killed in the middle of a
file, a file that kills every worker, a malformed record in one file of many, the driver
interrupted (SIGINT, SIGTERM) or killed outright (SIGKILL) at each stage of a job.

What each must leave: the output complete and exactly the local engine's, or nothing (no output
directory, no hidden staging directory, no report); one line on stderr with the documented exit
status; no Ray process of the job still running; with ``--ledger``, the release voided or
pending as docs/accounting.md says. The faults are injected by test-only subclasses of the
production actor (:class:`textdp.engines.ray.text_files.FileWorker`, which carries no test hook), defined
inside the tests so that they reach the workers by value, as in tests/integrations/test_ray.py,
whose data this module reuses (the shared runtime: tests/integrations/conftest.py). Small
data; every wait is bounded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from textdp.cli import main

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from textdp.engines.ray import text_files as _ray  # noqa: E402


def _load_test_ray():
    spec = importlib.util.spec_from_file_location(
        "_textdp_test_ray", Path(__file__).with_name("test_ray.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_base = _load_test_ray()
_texts = _base._texts

#: The parts of a report that count what was released (the engine's own parts aside).
COUNTED = ("counts", "documents", "tokens", "entities", "identifiers", "unprotected")
# A ledger is its file and, since per-document accounting, the key of its document tags beside it.
BOOK = ["ledger.jsonl", "ledger.jsonl.key"]


def _corpus(d: Path, files: int, per_file: int) -> list[bytes]:
    """``files`` JSONL files of ``per_file`` records in ``d`` (names in order); their bytes."""
    d.mkdir()
    texts = _texts(files * per_file)
    parts = []
    for k in range(files):
        data = "".join(json.dumps({"id": k * per_file + i, "text": t}) + "\n"
                       for i, t in enumerate(texts[k * per_file:(k + 1) * per_file])).encode()
        (d / f"{k}.jsonl").write_bytes(data)
        parts.append(data)
    return parts


def _cli(*args: object) -> int:
    return main(["privatize", *map(str, args), "--epsilon", "10"])


def _job_processes(name: str) -> list[Any]:
    """The live processes of actors of class ``name`` (Ray titles them ``ray::NAME...``) on
    the shared runtime (its processes descend from this one; other runtimes on the machine
    are not looked at)."""
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if " ".join(p.cmdline()).startswith(f"ray::{name}") and _running(p):
                found.append(p)
        except psutil.Error:
            pass
    return found


def _gone(processes, seconds: float = 60) -> list[Any]:
    """Those of ``processes`` still running after at most ``seconds`` (a bounded wait: a killed
    process takes a moment to exit)."""
    deadline = time.monotonic() + seconds
    alive = list(processes)
    while True:
        alive = [p for p in alive if _running(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def _running(process: Any) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _ledger(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


# 1. An actor killed in the middle of a file ------------------------------------------------------

def test_actor_killed_mid_file_redoes_it_and_counts_it_once(runtime, tmp_path, monkeypatch,
                                                            capsys):
    """The actor writing file 2 is SIGKILLed once, after part of its staged output is on disk:
    Ray restarts it and the file is written again from its first record. The output is the local
    engine's seeded output byte for byte (no record lost or doubled), and the report's counts are
    the local run's: nothing of the killed attempt is counted, in the report or in the ledger's
    check at commit (the records released, fingerprinted by the workers)."""
    parts = _corpus(tmp_path / "in", 4, 300)
    (tmp_path / "all.jsonl").write_bytes(b"".join(parts))  # the same corpus as one file
    marker, attempts, partial = tmp_path / "kill", tmp_path / "attempts", tmp_path / "partial"
    marker.touch()

    class KilledMidFile(_ray.FileWorker):
        def rewrite(self, index, src, dst, staged, first, fingerprint=False):
            if Path(src).name == "2.jsonl":
                with open(attempts, "a", encoding="utf-8") as f:
                    f.write(f"{os.getpid()}\n")
                if marker.exists():
                    real, stage = self.privatizer.run, Path(staged).parent

                    def run(texts, start=None):
                        written = [p.stat().st_size for p in stage.iterdir()
                                   if p.name.startswith(f".{Path(staged).name}.")]
                        if written and written[0] > 0:  # part of this file is on disk
                            partial.write_text(str(written[0]), encoding="utf-8")
                            marker.unlink()
                            os.kill(os.getpid(), signal.SIGKILL)
                        return real(texts, start=start)

                    self.privatizer.run = run
            return super().rewrite(index, src, dst, staged, first, fingerprint)

    monkeypatch.setattr(_ray, "FileWorker", KilledMidFile)
    assert _cli(tmp_path / "all.jsonl", "-o", tmp_path / "local.jsonl", "--seed", "5",
                "--batch-size", "20", "--report", tmp_path / "local.json") == 0
    assert _cli(tmp_path / "in", "-o", tmp_path / "out", "--seed", "5", "--batch-size", "20",
                "--engine", "ray", "--workers", "2", "--report", tmp_path / "ray.json",
                "--ledger", tmp_path / "ledger.jsonl") == 0
    assert not marker.exists() and int(partial.read_text()) > 0  # killed, mid-file
    pids = attempts.read_text().split()
    assert len(pids) == 2 and pids[0] != pids[1]  # written again, by the restarted actor
    out = b"".join((tmp_path / "out" / f"{k}.jsonl").read_bytes() for k in range(4))
    assert out == (tmp_path / "local.jsonl").read_bytes()
    local, distributed = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("local", "ray"))
    for key in COUNTED:
        assert distributed[key] == local[key], key
    assert distributed["io"]["records_in"] == distributed["io"]["records_out"] == 1200
    entries = _ledger(tmp_path / "ledger.jsonl")
    assert [e["type"] for e in entries] == ["pending", "complete"]
    assert entries[1]["records"] == 1200
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["all.jsonl", "attempts", "in", *BOOK, "local.json", "local.jsonl", "out",
         "partial", "ray.json"]
    assert not _gone(_job_processes("KilledMidFile"))


# 2. A file that kills every actor that takes it --------------------------------------------------

@pytest.mark.parametrize("method", ["count", "rewrite"])
def test_a_file_that_kills_every_actor_fails_the_job_after_the_retries(runtime, tmp_path,
                                                                       monkeypatch, capsys,
                                                                       method):
    """File 1 kills each actor that takes it (while counting its documents, or while writing
    it): it is tried 1 + ACTOR_RETRIES times, then the job fails with one line naming the file
    (exit 2: docs/cli.md), leaves no output, no staging directory, no report and no actor
    process, and the ledger's pending line is voided (docs/accounting.md: a release that fails
    before its output appears does not count)."""
    _corpus(tmp_path / "in", 3, 40)
    attempts = tmp_path / "attempts"

    def killing(real):
        def call(self, *args):
            src = args[0] if method == "count" else args[1]
            if Path(src).name == "1.jsonl":
                with open(attempts, "a", encoding="utf-8") as f:
                    f.write(f"{os.getpid()}\n")
                os.kill(os.getpid(), signal.SIGKILL)
            return real(self, *args)
        return call

    KillsEvery = type("KillsEvery", (_ray.FileWorker,),
                      {method: killing(getattr(_ray.FileWorker, method))})
    monkeypatch.setattr(_ray, "FileWorker", KillsEvery)
    book = tmp_path / "ledger.jsonl"
    capsys.readouterr()
    assert _cli(tmp_path / "in", "-o", tmp_path / "out", "--seed", "3", "--engine", "ray",
                "--workers", "2", "--ledger", book, "--report", tmp_path / "r.json") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"textdp: error: {tmp_path / 'in' / '1.jsonl'}: the Ray worker"), err
    assert len(attempts.read_text().split()) == 1 + _ray.ACTOR_RETRIES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attempts", "in", *BOOK]
    entries = _ledger(book)
    assert [e["type"] for e in entries] == ["pending", "void"]
    assert entries[1]["release"] == entries[0]["id"]
    assert not _gone(_job_processes("KillsEvery"))


# 3. A malformed record in one file of many -------------------------------------------------------

@pytest.mark.parametrize("seed", [None, "4"], ids=["unseeded", "seeded"])
def test_a_malformed_record_in_the_seventh_of_ten_files(runtime, tmp_path, capsys, seed):
    """The 7th of 10 files has a malformed 3rd record: one line naming the file and the record,
    the local engine's own line for that file (seeded: found by the counting pass; unseeded: by
    the worker writing it), exit 2, and no output, staging directory or report at all."""
    parts = _corpus(tmp_path / "in", 10, 20)
    lines = parts[6].decode().splitlines(keepends=True)
    lines[2] = '{"id": 122, "text": ["not", "a", "string"]}\n'
    bad = tmp_path / "in" / "6.jsonl"
    bad.write_text("".join(lines), encoding="utf-8")
    seeded = ["--seed", seed] if seed else []
    capsys.readouterr()
    assert _cli(bad, "-o", tmp_path / "local.jsonl", *seeded) == 2
    local = capsys.readouterr().err
    assert local.startswith(f"textdp: error: {bad}:3: ")  # the file and the record
    assert _cli(tmp_path / "in", "-o", tmp_path / "out", *seeded, "--engine", "ray",
                "--workers", "2", "--report", tmp_path / "r.json") == 2
    assert capsys.readouterr().err == local
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


# 4. The driver interrupted -----------------------------------------------------------------------

#: The driver's script: the CLI with a test-only FileWorker subclass (``Sub``, pickled by value
#: from ``__main__``) and an optional hook on the driver's side, then the command line.
DRIVER = """
import os, signal, sys, time
from pathlib import Path
from textdp.cli import main
from textdp.engines.ray import text_files as _ray
{setup}
sys.exit(main(sys.argv[1:]))
"""


def _driver(setup: str, *args: object) -> list[str]:
    return [sys.executable, "-c", DRIVER.format(setup=textwrap.dedent(setup)), "privatize",
            *map(str, args)]


def _interrupt_on(cmd: list[str], ready: Path, sig: int) -> tuple[int, str, list[Any]]:
    """Run ``cmd``; when the file ``ready`` appears, send ``sig``. Its exit status, stderr and
    the processes it had started by then (its own Ray runtime and actors), each with the title
    it had then (``title``)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    children: list[Any] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None and not ready.exists():
            time.sleep(0.02)
        if proc.poll() is None and ready.exists():
            children = psutil.Process(proc.pid).children(recursive=True)
            for p in children:
                try:
                    p.title = " ".join(p.cmdline())
                except psutil.Error:
                    p.title = ""
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert ready.exists(), err[-3000:]
    return proc.returncode, err, children


def test_sigterm_during_the_counting_pass(tmp_path):
    """A seeded job is stopped (SIGTERM) while its actors count the files' documents, before
    anything is written: exit 130, no output, no staging directory, the job's own local Ray
    runtime and actors all gone, and the ledger's pending line voided."""
    _corpus(tmp_path / "in", 4, 20)
    ready, book = tmp_path / "counting", tmp_path / "ledger.jsonl"
    setup = f"""
    class Sub(_ray.FileWorker):
        def count(self, src):
            Path({str(ready)!r}).touch()
            time.sleep(600)
    _ray.FileWorker = Sub
    """
    cmd = _driver(setup, tmp_path / "in", "-o", tmp_path / "out", "--epsilon", "10", "--seed",
                  "1", "--engine", "ray", "--workers", "2", "--ledger", book)
    code, err, children = _interrupt_on(cmd, ready, signal.SIGTERM)
    assert code == 130, err[-3000:]
    assert err.splitlines()[-1] == "textdp: interrupted" and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counting", "in", *BOOK]
    assert any(p.title.startswith("ray::Sub") for p in children)  # (what the check sees)
    assert not _gone(children)  # the runtime it started and its actors
    assert [e["type"] for e in _ledger(book)] == ["pending", "void"]


def test_sigint_during_the_moves_out_of_staging(tmp_path):
    """Ctrl-C after the workers wrote every file, while the driver moves the staged files into
    the command's output group (before it commits): exit 130, no output directory, no staging
    directory, no temporary file, nothing of the runtime left, and the ledger's pending line
    voided (no output appeared)."""
    _corpus(tmp_path / "in", 3, 20)
    ready, book = tmp_path / "moving", tmp_path / "ledger.jsonl"
    # The driver's hook: the first move out of the staging directory signals "ready" and then
    # waits for the signal (os.replace is the driver's move; the workers' processes are others).
    setup = f"""
    real = os.replace
    def replace(a, b, **kw):
        real(a, b, **kw)
        if ".textdp-ray-" in str(a) and not Path({str(ready)!r}).exists():
            Path({str(ready)!r}).touch()
            time.sleep(600)
    os.replace = replace
    """
    cmd = _driver(setup, tmp_path / "in", "-o", tmp_path / "out", "--epsilon", "10", "--seed",
                  "1", "--engine", "ray", "--workers", "2", "--ledger", book)
    code, err, children = _interrupt_on(cmd, ready, signal.SIGINT)
    assert code == 130, err[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", *BOOK, "moving"]
    assert not _gone(children)
    assert [e["type"] for e in _ledger(book)] == ["pending", "void"]


def test_sigterm_during_the_commit_is_all_or_nothing(tmp_path):
    """SIGTERM while the command's output group renames its files into place (the files of the
    output directory, then the report): the renames are not cut short, so the output directory
    is whole (never a part of it); exit 130; the release stays pending, counted, with a warning
    (docs/accounting.md: interrupted during or after the commit)."""
    _corpus(tmp_path / "in", 3, 20)
    sent, book = tmp_path / "sent", tmp_path / "ledger.jsonl"
    # The driver's hook: SIGTERM to itself right after the commit's first rename (a temporary
    # file of the group, not a file of the staging directory, renamed onto its target).
    setup = f"""
    real = os.replace
    def replace(a, b, **kw):
        real(a, b, **kw)
        if ".textdp-" in Path(a).name and "/.textdp-ray-" not in str(a) and \\
                not Path({str(sent)!r}).exists():
            Path({str(sent)!r}).touch()
            os.kill(os.getpid(), signal.SIGTERM)
    os.replace = replace
    """
    cmd = _driver(setup, tmp_path / "in", "-o", tmp_path / "out", "--epsilon", "10", "--seed",
                  "1", "--engine", "ray", "--workers", "2", "--ledger", book, "--report",
                  tmp_path / "r.json")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert sent.exists() and proc.returncode == 130, proc.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["in", *BOOK, "out", "r.json", "sent"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{k}.jsonl" for k in range(3)]
    assert [e["type"] for e in _ledger(book)] == ["pending"]
    assert "pending" in proc.stderr and "Traceback" not in proc.stderr


def test_sigterm_while_writing_with_a_ledger_voids_the_release(runtime, tmp_path, interrupt):
    """The case tests/integrations/test_ray.py interrupts without a ledger (SIGTERM while the
    actors write), with one: the pending line is voided, and no actor of the job is left on the
    cluster it joined."""
    _corpus(tmp_path / "in", 6, 2500)
    book = tmp_path / "ledger.jsonl"
    cmd = [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
           "privatize", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--epsilon", "10",
           "--seed", "1", "--engine", "ray", "--workers", "2", "--ledger", str(book),
           "--ray-address", ray.get_runtime_context().gcs_address]
    code, err, _ = interrupt(cmd, tmp_path, signal.SIGTERM)
    assert code == 130, err[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", *BOOK]
    assert [e["type"] for e in _ledger(book)] == ["pending", "void"]
    assert not _gone(_job_processes("FileWorker"))


# 5. The driver killed outright -------------------------------------------------------------------

def test_killed_driver_with_its_own_runtime_and_a_ledger(tmp_path):
    """SIGKILL to a driver that started its own Ray runtime, while its actors write: no output
    directory, its hidden staging directory stays, no Ray process of it survives (Ray's reaper
    stops the runtime of a dead driver), and the release stays pending — counted, as
    docs/accounting.md says of a run killed outright. The next run into the same place removes
    the staging directory and succeeds."""
    _corpus(tmp_path / "in", 4, 40)
    ready, book = tmp_path / "writing", tmp_path / "ledger.jsonl"
    setup = f"""
    class Sub(_ray.FileWorker):
        def rewrite(self, index, src, dst, staged, first, fingerprint=False):
            Path({str(ready)!r}).touch()
            time.sleep(600)
    _ray.FileWorker = Sub
    """
    cmd = _driver(setup, tmp_path / "in", "-o", tmp_path / "out", "--epsilon", "10",
                  "--engine", "ray", "--workers", "2", "--ledger", book)
    code, err, children = _interrupt_on(cmd, ready, signal.SIGKILL)
    assert code == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left[0].startswith(".textdp-ray-") and left[1:] == ["in", *BOOK, "writing"]
    assert any(p.title.startswith("ray::Sub") for p in children)
    # Its node's agents notice the dead raylet later (about a minute): waited for at the end.
    agents = [p for p in children if p.title.startswith(("ray::DashboardAgent",
                                                         "ray::RuntimeEnvAgent"))]
    assert not _gone([p for p in children if p not in agents])  # actors, raylet, GCS, workers
    assert [e["type"] for e in _ledger(book)] == ["pending"]
    assert _cli(tmp_path / "in", "-o", tmp_path / "out", "--engine", "ray", "--workers",
                "2") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", *BOOK, "out", "writing"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{k}.jsonl" for k in range(4)]
    assert not _gone(agents, 180)
