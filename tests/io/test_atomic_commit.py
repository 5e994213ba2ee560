"""The order of an AtomicFiles commit (issue 36): files flushed to the disk, then stream targets
written in full, then the renames, then the directories flushed — so that a stream that fails
leaves every file target as it was, and a power cut after the commit (and after the ledger's
complete line) cannot leave an empty file under the name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import textdp.io.atomic as atomic
from textdp.io import AtomicFiles, FileError
from textdp.io.paths import check_distinct, protecting_inputs


def _record(monkeypatch) -> list[tuple[str, str]]:
    """Every fsync (of what path) and every rename, in order."""
    calls: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def replace(a, b):
        calls.append(("replace", os.fspath(b)))
        return real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return calls


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/fd")
def test_files_and_directory_are_flushed_around_the_renames(tmp_path, monkeypatch):
    calls = _record(monkeypatch)
    with AtomicFiles() as files:
        files.write_bytes(tmp_path / "a.txt", b"a")
        files.write_bytes(tmp_path / "b.txt", b"b")
    kinds = [k for k, _ in calls]
    assert kinds == ["fsync", "fsync", "replace", "replace", "fsync"], calls
    assert all(".textdp-" in p for _, p in calls[:2])  # the temporaries, before their renames
    assert calls[-1] == ("fsync", str(tmp_path))  # the directory, after them


def test_a_failing_stream_leaves_the_files_as_they_were(tmp_path):
    (tmp_path / "keep.txt").write_text("precious")
    with pytest.raises(FileError, match="/dev/full"), AtomicFiles() as files:
        files.write_bytes(tmp_path / "keep.txt", b"new")  # reserved first: renamed first before
        files.write_bytes("/dev/full", b"x" * 10)
    assert (tmp_path / "keep.txt").read_text() == "precious"
    assert files.exposed is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_exposed_once_a_rename_began(tmp_path, monkeypatch):
    def fail(a, b):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(FileError), AtomicFiles() as files:
        files.write_bytes(tmp_path / "a.txt", b"a")
    assert files.exposed is True


def test_stdout_staging_of_a_dead_process_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".textdp-stdout.textdp-{dead}-abc.tmp"
    live = tmp_path / f".textdp-stdout.textdp-{os.getppid()}-abc.tmp"  # a running process
    stale.write_text("private")
    live.write_text("theirs")
    files = AtomicFiles()
    files.path_for("-")
    files.abort()
    assert not stale.exists() and live.exists()


def test_a_target_that_is_an_input_is_refused(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("data")
    link = tmp_path / "link.txt"
    link.symlink_to(src)
    with protecting_inputs():
        check_distinct({"input": src})
        for target in (src, link):
            with pytest.raises(FileError, match="would overwrite the input"), \
                    AtomicFiles() as files:
                files.write_bytes(target, b"x")
    assert src.read_text() == "data"
    # Outside the CLI's block a library caller's files are its own.
    atomic.atomic_write_bytes(src, b"new")
    assert src.read_text() == "new"


def test_staged_directory_commits_whole_or_not_at_all(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError), atomic.staged_directory(out) as stage:
        (stage / "a.txt").write_text("a")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []
    with atomic.staged_directory(out) as stage:
        (stage / "a.txt").write_text("a")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert (out / "a.txt").read_text() == "a"


def test_drain_reports_a_reader_that_left_with_bytes_unread():
    r, w = os.pipe()
    try:
        os.write(w, b"x" * 1000)
        os.read(r, 10)
        os.close(r)
        r = -1
        with pytest.raises(BrokenPipeError, match="990 bytes unread"):
            atomic._drain(w, "standard output")
    finally:
        os.close(w)
        if r >= 0:
            os.close(r)


def test_drain_returns_once_everything_was_read():
    r, w = os.pipe()
    try:
        os.write(w, b"x" * 1000)
        os.read(r, 1000)
        atomic._drain(w, "standard output")  # returns: nothing left
    finally:
        os.close(w)
        os.close(r)


def test_ray_stdout_redirect_keeps_the_real_stdout(tmp_path):
    """stdout_descriptor: a standard output target goes to the descriptor kept aside."""
    path = tmp_path / "o.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    previous = atomic.stdout_descriptor(fd)
    try:
        with AtomicFiles() as files:
            files.write_bytes("-", b"data\n")
    finally:
        atomic.stdout_descriptor(previous)
        os.close(fd)
    assert Path(path).read_bytes() == b"data\n"
