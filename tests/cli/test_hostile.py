"""The hostile-input suite (issue 21): paths spelled every way, special files, permissions,
links, placeholders with line breaks, malformed reports, streamed and empty inputs, full disks.

Every case runs through the real command line — in process through :func:`textdp.cli.main` (what
the ``textdp`` script runs), or as a real subprocess where a second process, a signal or a
redirected standard stream is part of the case — and asserts the exit status, the first line of
stderr, which files exist afterwards, and that every file that was there before (the input above
all) is byte-identical afterwards.

Layout of each case: a fresh directory ``root`` holding ``DIR/in.txt`` (two documents), the
current directory being ``root/DIR``; ``$R`` in an argument stands for ``root``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from textdp.cli import main

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC}
TEXT = b"the food was great\nbad service\n"
BASE = ["--epsilon", "1", "-m", "diffractor", "--seed", "3"]


def _snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: a regular file's sha256, else its kind (and a link's target)."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = f"link -> {os.readlink(p)}"
            elif stat.S_ISREG(st.st_mode):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest().encode()
            else:
                out[rel] = f"kind {stat.S_IFMT(st.st_mode):o}"
    return out


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    (tmp_path / "DIR").mkdir()
    (tmp_path / "DIR" / "in.txt").write_bytes(TEXT)
    monkeypatch.chdir(tmp_path / "DIR")
    return tmp_path


def _run(argv: list[str], root: Path, capsys) -> tuple[int, str]:
    code = main([a.replace("$R", str(root)) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err


def _first(err: str) -> str:
    return err.splitlines()[0] if err else ""


@dataclass
class Case:
    """One refusal: ``argv`` must exit ``code`` with ``message`` in stderr's first line, leave
    every earlier file as it was, and create nothing (but ``creates``)."""

    id: str
    argv: list[str]
    message: str
    code: int = 2
    setup: Callable[[Path], None] | None = None
    creates: list[str] = field(default_factory=list)


def _hard_link(name: str) -> Callable[[Path], None]:
    return lambda r: os.link(r / "DIR" / "in.txt", r / "DIR" / name)


def _symlink(name: str, target: str = "in.txt") -> Callable[[Path], None]:
    return lambda r: os.symlink(target, r / "DIR" / name)


def _alias_dir(r: Path) -> None:
    os.symlink(r / "DIR", r / "alias")


P = ["privatize", "in.txt", "-o", "out.txt", *BASE]
SAME = "would overwrite the input"
CASES = [
    # The input, named another way, as the report, the output or the ledger.
    Case("report-dotdot", [*P, "--report", "../DIR/in.txt"], "the report " + SAME),
    Case("report-dot", [*P, "--report", "./in.txt"], "the report " + SAME),
    Case("report-double-slash", [*P, "--report", ".//in.txt"], "the report " + SAME),
    Case("report-absolute", [*P, "--report", "$R/DIR/in.txt"], "the report " + SAME),
    Case("report-absolute-dotdot", [*P, "--report", "$R/DIR/../DIR/./in.txt"], "the report " + SAME),
    Case("report-trailing-slash", [*P, "--report", "in.txt/"], "the report " + SAME),
    Case("report-hard-link", [*P, "--report", "hard.txt"], "the report " + SAME,
         setup=_hard_link("hard.txt")),
    Case("report-symlink", [*P, "--report", "link.json"], "the report " + SAME,
         setup=_symlink("link.json")),
    Case("report-is-output", [*P, "--report", "./out.txt"], "the report would overwrite the output"),
    Case("report-is-output-absolute", [*P, "--report", "$R/DIR/out.txt"],
         "the report would overwrite the output"),
    Case("report-is-output-via-link", [*P, "--report", "r.json"],
         "the report would overwrite the output", setup=_symlink("r.json", "out.txt")),
    Case("output-same-name", ["privatize", "in.txt", "-o", "in.txt", *BASE], "the output " + SAME),
    Case("output-dotdot", ["privatize", "in.txt", "-o", "../DIR/in.txt", *BASE],
         "the output " + SAME),
    Case("output-hard-link", ["privatize", "in.txt", "-o", "hard.txt", *BASE],
         "the output " + SAME, setup=_hard_link("hard.txt")),
    Case("output-symlink", ["privatize", "in.txt", "-o", "link.txt", *BASE],
         "the output " + SAME, setup=_symlink("link.txt")),
    Case("output-through-symlinked-directory",
         ["privatize", "in.txt", "-o", "$R/alias/in.txt", *BASE], "the output " + SAME,
         setup=_alias_dir),
    Case("output-symlink-chain", ["privatize", "in.txt", "-o", "b.txt", *BASE], "the output " + SAME,
         setup=lambda r: (_symlink("a.txt")(r), _symlink("b.txt", "a.txt")(r))),
    Case("ledger-dotdot", [*P, "--ledger", "../DIR/in.txt"], "the ledger would write into the input"),
    Case("ledger-hard-link", [*P, "--ledger", "hard.txt"], "the ledger would write into the input",
         setup=_hard_link("hard.txt")),
    Case("ledger-symlink", [*P, "--ledger", "l.jsonl"], "the ledger would write into the input",
         setup=_symlink("l.jsonl")),
    Case("ledger-is-report", [*P, "--ledger", "r.json", "--report", "./r.json"],
         "the ledger would write into the report"),
    Case("ledger-is-output", [*P, "--ledger", "./out.txt"], "the ledger would write into the output"),
    Case("deny-list-is-input", [*P, "--deny-list", "../DIR/in.txt"],
         "the deny-list is the input"),
    Case("stdout-twice", ["privatize", "in.txt", "-o", "-", "--report", "-", *BASE],
         "standard output is given as both the output and the report"),
    # Output places that cannot be written.
    Case("output-directory-missing", ["privatize", "in.txt", "-o", "nodir/out.txt", *BASE],
         "does not exist"),
    Case("output-is-directory", ["privatize", "in.txt", "-o", "sub.txt", *BASE], "is a directory",
         setup=lambda r: (r / "DIR" / "sub.txt").mkdir()),
    Case("report-directory-missing", [*P, "--report", "nodir/r.json"], "does not exist"),
    Case("ledger-device", [*P, "--ledger", "null"],
         "null: is a character device; the ledger must be a regular file",
         setup=lambda r: _device(r / "DIR" / "null", 3)),
    Case("ledger-fifo", [*P, "--ledger", "l.jsonl"], "is a FIFO (named pipe); the ledger must be",
         setup=lambda r: os.mkfifo(r / "DIR" / "l.jsonl")),
    Case("output-socket", ["privatize", "in.txt", "-o", "s.txt", *BASE],
         "s.txt: is a socket; the output cannot be written to", setup=lambda r: _socket(r / "DIR"
                                                                                        / "s.txt")),
    Case("report-socket", [*P, "--report", "s.json"], "s.json: is a socket; the report cannot",
         setup=lambda r: _socket(r / "DIR" / "s.json")),
    # Placeholders that would cut a .txt document in two.
    Case("mask-token-newline", [*P, "--mask-token", "[A\nB]"],
         "--mask-token '[A\\nB]' contains a line break"),
    Case("identifier-label-newline", [*P, "--identifier-label", "email=<E\nM>"],
         "--identifier-label email '<E\\nM>' contains a line break"),
    # Inputs.
    Case("empty-input-file", ["privatize", "e.txt", "-o", "out.txt", *BASE],
         "e.txt: empty file (0 bytes)", setup=lambda r: (r / "DIR" / "e.txt").write_bytes(b"")),
    Case("input-socket", ["privatize", "s.txt", "-o", "out.txt", *BASE], "is a socket",
         setup=lambda r: _socket(r / "DIR" / "s.txt")),
    # embed: the same rules through its own path checks.
    Case("embed-report-is-input", ["embed", "v.npy", "-o", "w.npy", "--epsilon", "1",
                                   "-m", "laplace-vector", "--report", "../DIR/v.npy"],
         "the report would overwrite the input", setup=lambda r: _vectors(r / "DIR" / "v.npy")),
    Case("embed-output-hard-link", ["embed", "v.npy", "-o", "w.npy", "--epsilon", "1",
                                    "-m", "laplace-vector"],
         "the output would overwrite the input",
         setup=lambda r: (_vectors(r / "DIR" / "v.npy"), os.link(r / "DIR" / "v.npy",
                                                                 r / "DIR" / "w.npy"))),
    Case("embed-ledger-symlink", ["embed", "v.npy", "-o", "w.npy", "--epsilon", "1",
                                  "-m", "laplace-vector", "--ledger", "l.jsonl"],
         "the ledger would write into the input",
         setup=lambda r: (_vectors(r / "DIR" / "v.npy"), _symlink("l.jsonl", "v.npy")(r))),
    Case("embed-fifo-input", ["embed", "v.npy", "-o", "w.npy", "--epsilon", "1",
                              "-m", "laplace-vector"], "v.npy: is a pipe or device; embed reads",
         setup=lambda r: os.mkfifo(r / "DIR" / "v.npy")),
    # docembed and candidates build: their other inputs (candidates, recoder) too.
    Case("docembed-report-is-input", ["docembed", "in.txt", "-o", "o.npy", "--epsilon", "1",
                                      "--candidates", "c.npz", "--report", "../DIR/in.txt"],
         "the report would overwrite the input", setup=lambda r: _touch(r / "DIR" / "c.npz")),
    Case("docembed-output-is-candidates", ["docembed", "in.txt", "-o", "o.npy", "--epsilon", "1",
                                           "--candidates", "c.npz"],
         "the output would overwrite the candidate file",
         setup=lambda r: (_touch(r / "DIR" / "c.npz"), _hard_link_of("c.npz", "o.npy")(r))),
    Case("candidates-output-is-recoder", ["candidates", "build", "in.txt", "-o", "c.npz",
                                          "--recoder", "./c.npz"],
         "the output would overwrite the recoder", setup=lambda r: _touch(r / "DIR" / "c.npz")),
]


def _touch(path: Path) -> None:
    path.write_bytes(b"not really an npz")


def _hard_link_of(name: str, link: str) -> Callable[[Path], None]:
    return lambda r: os.link(r / "DIR" / name, r / "DIR" / link)


def _socket(path: Path) -> None:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()


def _vectors(path: Path) -> None:
    import numpy as np

    np.save(path, np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_refused_before_anything_is_written(case, root, capsys):
    if case.setup is not None:
        case.setup(root)
    before = _snapshot(root)
    code, err = _run(case.argv, root, capsys)
    assert code == case.code, err
    assert case.message in _first(err), err
    assert err.count("\n") == 1, err  # one line
    after = _snapshot(root)
    assert after == {**before, **{k: after[k] for k in case.creates}}, (before, after)


def test_output_with_another_case_is_another_file(root, capsys):
    """On a case-sensitive file system IN.txt is not in.txt: no false refusal."""
    code, err = _run(["privatize", "in.txt", "-o", "IN.txt", *BASE], root, capsys)
    assert code == 0, err
    assert (root / "DIR" / "in.txt").read_bytes() == TEXT and (root / "DIR" / "IN.txt").exists()


# ------------------------------------------------------------------------- special outputs
def _device(path: Path, minor: int) -> Path:
    """A character device node like /dev/null (1, 3) or /dev/full (1, 7), made in the test's own
    directory: a test must never risk the real ones (the code before issue 21 replaced them)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except OSError:
        pytest.skip("cannot create a device node here (not root)")
    return path


def test_character_device_is_written_not_replaced(root, capsys):
    null = _device(root / "null", 3)
    before = _snapshot(root)
    code, err = _run(["privatize", "in.txt", "-o", str(null), "--format", "txt", *BASE,
                      "--report", str(null)], root, capsys)
    assert code == 2 and "the report would overwrite the output" in err  # one file, two roles
    code, err = _run(["privatize", "in.txt", "-o", str(null), "--format", "txt", *BASE],
                     root, capsys)
    assert code == 0, err
    assert _snapshot(root) == before  # still a device; nothing else written


def test_full_device_names_the_file_and_stays_a_device(root, capsys):
    full = _device(root / "full", 7)
    before = _snapshot(root)
    code, err = _run(["privatize", "in.txt", "-o", str(full), "--format", "txt", *BASE],
                     root, capsys)
    assert code == 2 and _first(err) == (f"textdp: error: {full}: cannot write: No space left "
                                         "on device")
    assert _snapshot(root) == before


def _fifo_reader(path: Path) -> tuple[threading.Thread, dict[str, bytes]]:
    got: dict[str, bytes] = {}

    def read() -> None:
        with open(path, "rb") as f:  # blocks until a writer opens the FIFO
            got["data"] = f.read()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, got


def test_fifo_output_is_written_into_not_replaced(root, capsys):
    fifo = root / "DIR" / "out.txt"
    os.mkfifo(fifo)
    thread, got = _fifo_reader(fifo)
    code, err = _run(["privatize", "in.txt", "-o", "out.txt", *BASE, "--report", "r.json"],
                     root, capsys)
    thread.join(timeout=60)
    assert code == 0, err
    assert got["data"].count(b"\n") == 2
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (root / "DIR" / "in.txt").read_bytes() == TEXT
    assert json.loads((root / "DIR" / "r.json").read_text())["io"]["records_out"] == 2


@pytest.mark.parametrize("bad", [["--epsilon", "-1"], ["--report", "nodir/r.json"],
                                 ["--text-field", "x", "--mask-token", "a\nb"]])
def test_failed_run_ends_a_fifo_reader_instead_of_leaving_it_waiting(root, capsys, bad):
    fifo = root / "DIR" / "out.txt"
    os.mkfifo(fifo)
    thread, got = _fifo_reader(fifo)
    time.sleep(0.2)  # let the reader block on open
    before = _snapshot(root)
    argv = ["privatize", "in.txt", "-o", "out.txt", "-m", "diffractor", "--seed", "3"]
    code, err = _run([*argv, *(bad if "--epsilon" in bad else ["--epsilon", "1", *bad])],
                     root, capsys)
    thread.join(timeout=30)
    assert code == 2 and not thread.is_alive(), err
    assert got["data"] == b""
    assert _snapshot(root) == before


def test_block_device_output_is_refused(root, capsys):
    dev = root / "DIR" / "blk.txt"
    try:
        os.mknod(dev, 0o600 | stat.S_IFBLK, os.makedev(7, 200))
    except (PermissionError, OSError):
        pytest.skip("cannot create a block device node here (not root)")
    before = _snapshot(root)
    code, err = _run(["privatize", "in.txt", "-o", "blk.txt", *BASE], root, capsys)
    assert code == 2 and "blk.txt: is a block device; the output cannot be written to" in err
    assert _snapshot(root) == before


# ------------------------------------------------------------------ permissions and links
def test_replaced_output_and_report_keep_their_mode(root, capsys):
    out, rep = root / "DIR" / "out.txt", root / "DIR" / "r.json"
    out.write_bytes(b"old\n")
    rep.write_bytes(b"{}\n")
    os.chmod(out, 0o600)
    os.chmod(rep, 0o640)
    code, err = _run([*P, "--report", "r.json"], root, capsys)
    assert code == 0, err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(rep).st_mode) == 0o640
    assert out.read_bytes() != b"old\n" and json.loads(rep.read_text())["io"]["records_out"] == 2


def test_new_files_get_the_umask(root, capsys):
    old = os.umask(0o027)
    try:
        code, err = _run([*P, "--report", "r.json"], root, capsys)
    finally:
        os.umask(old)
    assert code == 0, err
    for name in ("out.txt", "r.json"):
        assert stat.S_IMODE(os.stat(root / "DIR" / name).st_mode) == 0o640, name


def test_symlink_output_is_followed_and_the_link_kept(root, capsys):
    (root / "DIR" / "t").mkdir()
    os.symlink("t/real.txt", root / "DIR" / "out.txt")    # dangling: the target is created
    os.symlink("t/real.json", root / "DIR" / "r.json")
    (root / "DIR" / "t" / "real.json").write_text("{}")
    os.chmod(root / "DIR" / "t" / "real.json", 0o600)
    code, err = _run([*P, "--report", "r.json"], root, capsys)
    assert code == 0, err
    assert os.readlink(root / "DIR" / "out.txt") == "t/real.txt"
    assert os.readlink(root / "DIR" / "r.json") == "t/real.json"
    assert (root / "DIR" / "t" / "real.txt").read_bytes().count(b"\n") == 2
    assert stat.S_IMODE(os.stat(root / "DIR" / "t" / "real.json").st_mode) == 0o600
    assert sorted(p.name for p in (root / "DIR" / "t").iterdir()) == ["real.json", "real.txt"]


# -------------------------------------------------------------------------- failed writes
def test_disk_full_names_the_output_and_leaves_nothing(root, capsys, monkeypatch):
    from textdp.io import txt

    def full(self, batch, texts):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(txt.TextLinesWriter, "_write", full)
    before = _snapshot(root)
    code, err = _run(P, root, capsys)
    assert code == 2 and _first(err) == ("textdp: error: out.txt: cannot write: "
                                         "No space left on device")
    assert _snapshot(root) == before


def test_disk_full_on_a_real_tiny_file_system(root, tmp_path):
    """A 64 KiB tmpfs (needs root and mount): the output does not fit."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        big = root / "DIR" / "big.txt"
        big.write_bytes(TEXT * 4000)
        r = subprocess.run([sys.executable, "-m", "textdp.cli", "privatize", str(big), "-o",
                            str(mnt / "out.txt"), *BASE], capture_output=True, env=ENV,
                           timeout=300)
        assert r.returncode == 2, r.stderr
        assert r.stderr.decode().splitlines()[0] == (f"textdp: error: {mnt / 'out.txt'}: cannot "
                                                     "write: No space left on device")
        assert list(mnt.iterdir()) == []
        assert big.read_bytes() == TEXT * 4000
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_directory_without_write_permission(root, capsys, monkeypatch):
    """A read-only output directory (simulated: root may write anywhere) is one line naming it."""
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), kwargs.get("dir"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    before = _snapshot(root)
    code, err = _run(P, root, capsys)
    assert code == 2 and "out.txt: cannot create a file in" in _first(err)
    assert "Permission denied" in _first(err)
    assert _snapshot(root) == before


# ------------------------------------------------------------------------ streamed inputs
def cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
        shell: bool = False) -> subprocess.CompletedProcess:
    if shell:
        return subprocess.run(["bash", "-c", args[0]], input=stdin, capture_output=True,
                              env=ENV, cwd=cwd, timeout=300)
    return subprocess.run([sys.executable, "-m", "textdp.cli", *args], input=stdin,
                          capture_output=True, env=ENV, cwd=cwd, timeout=300)


def test_process_substitution_is_read_not_called_empty(root):
    cmd = (f"{sys.executable} -m textdp.cli privatize <(cat in.txt) -o out.txt --format txt "
           + " ".join(BASE))
    r = cli(cmd, cwd=root / "DIR", shell=True)
    assert r.returncode == 0, r.stderr
    assert (root / "DIR" / "out.txt").read_bytes().count(b"\n") == 2
    assert (root / "DIR" / "in.txt").read_bytes() == TEXT


def test_empty_stream_is_refused_like_an_empty_file(root):
    before = _snapshot(root)
    r = cli(f"{sys.executable} -m textdp.cli privatize <(true) -o out.txt --format txt "
            + " ".join(BASE), cwd=root / "DIR", shell=True)
    assert r.returncode == 2 and r.stderr.decode().splitlines()[0].endswith(
        ": empty input (0 bytes)"), r.stderr
    r = cli("privatize", "-", "-o", "out.txt", "--format", "txt", *BASE, stdin=b"",
            cwd=root / "DIR")
    assert r.returncode == 2 and r.stderr.decode() == ("textdp: error: <stdin>: empty input "
                                                       "(0 bytes)\n")
    r = cli("privatize", "-", "-o", "-", "--format", "jsonl", *BASE, stdin=b"", cwd=root / "DIR")
    assert r.returncode == 2 and r.stdout == b""
    assert _snapshot(root) == before


def test_parquet_from_a_fifo_is_read(root, capsys):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"id": [1, 2], "text": ["the food was great", "bad service"]}), buf)
    fifo = root / "DIR" / "in.parquet"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(buf.getvalue())

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    code, err = _run(["privatize", "in.parquet", "-o", "out.parquet", *BASE], root, capsys)
    thread.join(timeout=30)
    assert code == 0, err
    assert pq.read_table(root / "DIR" / "out.parquet").column("id").to_pylist() == [1, 2]


def test_a_fifo_input_with_a_ledger_is_refused(root):
    os.mkfifo(root / "DIR" / "p.txt")
    before = _snapshot(root)
    r = cli("privatize", "p.txt", "-o", "out.txt", *BASE, "--ledger", "l.jsonl",
            cwd=root / "DIR")
    assert r.returncode == 2 and b"not standard input or a pipe" in r.stderr
    assert _snapshot(root) == before


def test_stdin_redirected_from_the_input_file_is_the_input(root):
    """``textdp privatize - -o in.txt < in.txt`` would replace what it reads."""
    before = _snapshot(root)
    with open(root / "DIR" / "in.txt", "rb") as f:
        r = subprocess.run([sys.executable, "-m", "textdp.cli", "privatize", "-", "-o", "in.txt",
                            "--format", "txt", *BASE], stdin=f, capture_output=True, env=ENV,
                           cwd=root / "DIR", timeout=300)
    assert r.returncode == 2 and b"the output would overwrite the input" in r.stderr, r.stderr
    assert _snapshot(root) == before


# ----------------------------------------------------------------------------- textdp report
def _report(root: Path, capsys) -> Path:
    code, err = _run([*P, "--report", "run.json"], root, capsys)
    assert code == 0, err
    return root / "DIR" / "run.json"


@pytest.mark.parametrize("section,value", [
    ("guarantee", {"epsilon": "abc"}), ("counts", [1, 2]), ("mechanism", {"name": 3}),
    ("warnings", 5), ("unprotected", "x"), ("deniability", "y"),
])
def test_report_of_wrong_types_is_one_line_and_leaves_no_directory(root, capsys, section, value):
    run = _report(root, capsys)
    data = json.loads(run.read_text())
    data[section] = value if not isinstance(value, dict) or section != "guarantee" \
        else {**data["guarantee"], **value}
    run.write_text(json.dumps(data))
    before = _snapshot(root)
    code, err = _run(["report", "run.json"], root, capsys)
    if code == 0:  # a section the renderer can do without: rendered, nothing else left
        assert {"report.html", "report.md"} <= {p.name for p in (root / "DIR" /
                                                                 "run-report").iterdir()}
        assert sorted(_snapshot(root)) == sorted([*before, "DIR/run-report", *(
            f"DIR/run-report/{p.name}" for p in (root / "DIR" / "run-report").iterdir())])
        return
    assert code == 2 and "run.json: not a valid textdp privacy report" in _first(err), err
    assert err.count("\n") == 1
    assert _snapshot(root) == before  # no run-report/, no staging directory


def test_report_into_an_existing_directory_replaces_its_files_only(root, capsys):
    run = _report(root, capsys)
    out = root / "DIR" / "run-report"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    code, err = _run(["report", str(run)], root, capsys)
    assert code == 0, err
    assert {"mine.txt", "report.md", "report.html"} <= {p.name for p in out.iterdir()}
    assert not [p for p in (root / "DIR").iterdir() if p.name.startswith(".")]
