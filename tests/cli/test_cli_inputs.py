"""`textdp privatize` with the inputs people have (issue 12, items 6 and 7): standard input and
output, compressed files, TSV, several and nested fields, --on-error skip, --null pass; and
interruption (SIGTERM, SIGINT, kill -9) leaving no temporary file behind. Real subprocesses."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from textdp.cli import main
from textdp.io.atomic import AtomicFiles, remove_stale_temporaries

ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
BASE = ["-m", "diffractor", "--epsilon", "1", "--seed", "3"]


def cli(*args, stdin=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "textdp.cli", *map(str, args)], input=stdin,
                          capture_output=True, env=ENV, cwd=cwd, timeout=300)


def records(n: int) -> bytes:
    return b"".join(json.dumps({"id": i, "text": f"the movie was great {i}", "score": 2.5}
                               ).replace("2.5", "2.50").encode() + b"\n" for i in range(n))


def test_stdin_to_stdout_equals_file_to_file(tmp_path):
    data = records(20)
    (tmp_path / "in.jsonl").write_bytes(data)
    assert main(["privatize", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"),
                 *BASE]) == 0
    piped = cli("privatize", "-", "-o", "-", "--format", "jsonl", *BASE, stdin=data)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == (tmp_path / "out.jsonl").read_bytes()
    assert b"2.50" in piped.stdout and b"standard output" in piped.stderr


def test_stdin_needs_a_format(tmp_path):
    r = cli("privatize", "-", "-o", tmp_path / "o.jsonl", *BASE, stdin=b'{"text": "a"}\n')
    assert r.returncode == 2 and b"--format" in r.stderr and r.stderr.count(b"\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_failed_run_writes_nothing_to_stdout():
    r = cli("privatize", "-", "-o", "-", "--format", "jsonl", *BASE,
            stdin=records(5) + b'{"text": 1}\n')
    assert r.returncode == 2 and r.stdout == b"" and b"<stdin>:6:" in r.stderr


def test_gzip_in_tsv_and_fields(tmp_path, capsys):
    src = tmp_path / "in.jsonl.gz"
    src.write_bytes(gzip.compress(records(10)))
    assert main(["privatize", str(src), "-o", str(tmp_path / "out.jsonl.gz"), *BASE]) == 0
    assert main(["privatize", str(src), "-o", str(tmp_path / "out.jsonl"), *BASE]) == 0
    assert gzip.decompress((tmp_path / "out.jsonl.gz").read_bytes()) == \
        (tmp_path / "out.jsonl").read_bytes()
    tsv = tmp_path / "in.tsv"
    tsv.write_text("id\ttitle\tbody\n1\tgreat movie\tthe food was great\n")
    assert main(["privatize", str(tsv), "-o", str(tmp_path / "out.tsv"), *BASE,
                 "--text-field", "title", "--text-field", "body", "--oov", "keep"]) == 0
    row = (tmp_path / "out.tsv").read_text().splitlines()[1].split("\t")
    assert len(row) == 3 and row[0] == "1" and row[1:] != ["great movie", "the food was great"]
    capsys.readouterr()


def test_on_error_skip_and_null_pass_in_the_report(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_bytes(records(3) + b'{"text": [1]}\n' + records(2) + b'{"text": null}\n')
    rep = tmp_path / "r.json"
    assert main(["privatize", str(src), "-o", str(tmp_path / "o.jsonl"), *BASE]) == 2
    assert not (tmp_path / "o.jsonl").exists()
    assert main(["privatize", str(src), "-o", str(tmp_path / "o.jsonl"), *BASE, "--on-error",
                 "skip", "--null", "pass", "--report", str(rep)]) == 0
    io = json.loads(rep.read_text())["io"]
    assert io["records_in"] == 7 and io["records_out"] == 6 and io["records_skipped"] == 1
    assert io["skipped"] == [{"line": 4, "problem": "field 'text' is an array, expected a string"}]
    assert io["null_texts"] == 1
    assert (tmp_path / "o.jsonl").read_text().splitlines()[-1] == '{"text": null}'
    assert "1 malformed record skipped (the first at line 4;" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--on-error", "ignore"], "--on-error"),
    (["--null", "drop"], "--null"),
    (["--delimiter", "ab"], "delimiter"),
    (["--text-field", "a", "--text-field", "a"], "given twice"),
    (["--format", "xml"], "unknown format"),
])
def test_bad_io_options_are_one_line(tmp_path, capsys, args, message):
    src = tmp_path / "in.jsonl"
    src.write_bytes(records(2))
    code = main(["privatize", str(src), "-o", str(tmp_path / "o.jsonl"), *BASE, *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


# --- interruption -------------------------------------------------------------------------

def _temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def _start_blocked(tmp_path: Path) -> subprocess.Popen:
    """A run reading standard input that stays open: it holds its temporary output file."""
    proc = subprocess.Popen([sys.executable, "-m", "textdp.cli", "privatize", "-", "-o",
                             str(tmp_path / "out.txt"), "--format", "txt", *BASE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=ENV)
    proc.stdin.write(b"the first line\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 120
    while not _temporaries(tmp_path):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "no temporary file appeared"
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_removes_the_temporary_file(tmp_path, signum):
    proc = _start_blocked(tmp_path)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_kill_9_leftover_is_removed_by_the_next_run(tmp_path):
    proc = _start_blocked(tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    stale = _temporaries(tmp_path)
    assert len(stale) == 1 and stale[0].startswith(f".out.txt.textdp-{proc.pid}-")
    # A temporary file of a process that still runs (this one) is not touched.
    with AtomicFiles() as mine:
        live = mine.path_for(tmp_path / "out.txt")
        (tmp_path / "in.txt").write_text("a line\n")
        r = cli("privatize", tmp_path / "in.txt", "-o", tmp_path / "out.txt", *BASE)
        assert r.returncode == 0, r.stderr
        assert _temporaries(tmp_path) == [live.name]
        live.write_text("x")
    assert _temporaries(tmp_path) == []
    assert (tmp_path / "out.txt").read_text() == "x"


def test_only_stale_temporaries_of_the_same_output_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    names = [f".out.txt.textdp-{dead}-abc.tmp",       # the same output, process gone: removed
             f".other.txt.textdp-{dead}-abc.tmp",     # another output: kept
             f".out.txt.textdp-{os.getpid()}-abc.tmp",  # a running process: kept
             ".out.txt.abc.tmp"]                       # not ours: kept
    for n in names:
        (tmp_path / n).write_text("")
    removed = remove_stale_temporaries(tmp_path / "out.txt")
    assert [p.name for p in removed] == [names[0]]
    assert _temporaries(tmp_path) == sorted(names[1:])


def test_parquet_through_pipes(tmp_path):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"id": [1, 2], "text": ["the food was great", "a fine day"]}), buf)
    r = cli("privatize", "-", "-o", "-", "--format", "parquet", *BASE, stdin=buf.getvalue())
    assert r.returncode == 0, r.stderr
    table = pq.read_table(io.BytesIO(r.stdout))
    assert table.column("id").to_pylist() == [1, 2] and table.num_rows == 2
