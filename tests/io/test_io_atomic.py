"""AtomicFiles: outputs appear together and complete, or not at all."""

from __future__ import annotations

import json
import os
import stat

import pytest

from textdp.io import AtomicFiles, atomic_write_json


def test_commit_writes_all_targets(tmp_path):
    with AtomicFiles() as files:
        files.write_bytes(tmp_path / "a.bin", b"abc")
        files.write_json(tmp_path / "r.json", {"ε": 1})
        assert not (tmp_path / "a.bin").exists()  # nothing visible before the commit
    assert (tmp_path / "a.bin").read_bytes() == b"abc"
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8")) == {"ε": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "r.json"]


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_abort_removes_temporaries_and_keeps_old_targets(tmp_path, exc):
    (tmp_path / "old.txt").write_text("previous")
    with pytest.raises(exc), AtomicFiles() as files:
        files.write_bytes(tmp_path / "old.txt", b"new")
        files.write_bytes(tmp_path / "fresh.txt", b"new")
        raise exc
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]
    assert (tmp_path / "old.txt").read_text() == "previous"


def test_permissions_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "r.json", {})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644


def test_missing_directory_and_duplicate_target(tmp_path):
    with pytest.raises(FileNotFoundError), AtomicFiles() as files:
        files.path_for(tmp_path / "nope" / "x.txt")
    with pytest.raises(ValueError, match="written twice"), AtomicFiles() as files:
        files.path_for(tmp_path / "x.txt")
        files.path_for(tmp_path / "x.txt")
    assert list(tmp_path.iterdir()) == []


def test_json_is_strict(tmp_path):
    with pytest.raises(ValueError):
        atomic_write_json(tmp_path / "r.json", {"x": float("nan")})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_during_the_commit_waits_for_every_rename(tmp_path, monkeypatch, signame):
    """Ctrl-C or SIGTERM between two renames of a commit: the group still appears whole (a
    directory of outputs is never cut in two, issue 25), then the interrupt is raised."""
    import signal

    from textdp.io.atomic import sigterm_as_interrupt

    real, sent = os.replace, []

    def replace(a, b):
        real(a, b)
        if not sent:
            sent.append(a)
            os.kill(os.getpid(), getattr(signal, signame))

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt), sigterm_as_interrupt(), AtomicFiles() as files:
        for name in ("a.txt", "b.txt", "c.txt"):
            files.write_bytes(tmp_path / name, name.encode())
    assert sent and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt", "c.txt"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
