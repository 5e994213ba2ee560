"""The command line's crashes, hangs, echoed secrets and papercuts from issue 36's hostile trial
(items 3 and 5–8): each case runs ``textdp`` in process and asserts the exit status and the one
line it prints, and that no secret of the input appears on stderr or in the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from textdp.cli import main

FAST = ["--epsilon", "1", "-m", "mvc", "--seed", "3", "--entities", "none"]
#: A header or a key holding data: an e-mail address and a number.
SECRET = "maria.garcia@example.com 4155550100"


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("the food was great\n")
    return tmp_path


# -- an endless line --------------------------------------------------------------------------


def test_dev_zero_refused_in_one_line():
    """/dev/zero used to be read into memory until it ran out (5.8 GB in 40 s)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "textdp.cli", "privatize", "/dev/zero", "-o",
                           os.devnull + ".never", "--format", "txt", *FAST], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("textdp: error: /dev/zero:1: the line is longer than 64 MiB, the "
                           "bound on a line's length; raise it with --max-line-bytes N")


@pytest.mark.parametrize("suffix,body", [
    ("txt", "x" * 300 + "\n"),
    ("jsonl", json.dumps({"text": "x" * 300}) + "\n"),
    ("csv", "text\n" + "x" * 300 + "\n"),
])
def test_line_bound_is_settable(here, capsys, suffix, body):
    src = here / f"long.{suffix}"
    src.write_text(body)
    code, err = _run(["privatize", str(src), "-o", f"out.{suffix}", *FAST,
                      "--max-line-bytes", "100"], capsys)
    assert code == 2 and not (here / f"out.{suffix}").exists()
    line = 2 if suffix == "csv" else 1
    assert err.splitlines()[0].endswith(f"long.{suffix}:{line}: the line is longer than 100 "
                                        "bytes, the bound on a line's length; raise it with "
                                        "--max-line-bytes N or TEXTDP_MAX_LINE_BYTES=N (Python: "
                                        "ReadOptions(max_line_bytes=N)) if the file really "
                                        "holds such lines")
    code, err = _run(["privatize", str(src), "-o", f"out.{suffix}", *FAST,
                      "--max-line-bytes", "400"], capsys)
    assert code == 0, err


def test_line_bound_from_the_environment(here, capsys, monkeypatch):
    (here / "long.txt").write_text("word " * 100 + "\n")
    monkeypatch.setenv("TEXTDP_MAX_LINE_BYTES", "64")
    code, err = _run(["privatize", "long.txt", "-o", "out.txt", *FAST], capsys)
    assert code == 2 and "longer than 64 bytes" in err
    monkeypatch.setenv("TEXTDP_MAX_LINE_BYTES", "lots")
    code, err = _run(["privatize", "long.txt", "-o", "out.txt", *FAST], capsys)
    assert code == 2 and "TEXTDP_MAX_LINE_BYTES must be a whole number of bytes" in err


# -- secrets in keys and headers ----------------------------------------------------------------


def test_csv_header_secret_not_echoed(here, capsys):
    (here / "in.csv").write_text(f"id,{SECRET},body\n1,x,the food\n")
    code, err = _run(["privatize", "in.csv", "-o", "out.csv", *FAST], capsys)
    assert code == 2
    assert "maria" not in err and "4155550100" not in err
    assert "no column 'text' in the header (columns: 'id', 'body', #2 (#N: the N-th name, " \
           "not shown" in err


def test_json_key_secret_not_echoed_nor_in_report(here, capsys):
    lines = [{"text": "the food was great"}, {SECRET: "x", "body": "y"}]
    (here / "in.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, err = _run(["privatize", "in.jsonl", "-o", "out.jsonl", *FAST], capsys)
    assert code == 2 and "maria" not in err and "4155550100" not in err
    code, err = _run(["privatize", "in.jsonl", "-o", "out.jsonl", *FAST, "--on-error", "skip",
                      "--report", "r.json"], capsys)
    assert code == 0, err
    report = (here / "r.json").read_text()
    assert "maria" not in report and "4155550100" not in report and "maria" not in err
    (skipped,) = json.loads(report)["io"]["skipped"]
    assert skipped["line"] == 2 and "#1" in skipped["problem"] and "'body'" in skipped["problem"]


# -- validation and messages -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", " ", ","])
def test_empty_entities_option_refused(here, capsys, value):
    code, err = _run(["privatize", "in.txt", "-o", "out.txt", "--epsilon", "1", "--seed", "1",
                      "--entities", value], capsys)
    assert code == 2 and not (here / "out.txt").exists()
    (line,) = err.splitlines()
    assert "entities is empty" in line and "give 'none' to turn entity recognition off" in line


@pytest.mark.parametrize("argv,message", [
    (["privatize", "", "-o", "out.txt"], "INPUT is an empty string"),
    (["privatize", "in.txt", "-o", ""], "OUTPUT (-o) is an empty string"),
])
def test_empty_paths_are_not_dot(here, capsys, argv, message):
    code, err = _run([*argv, *FAST], capsys)
    (line,) = err.splitlines()
    assert code == 2 and message in line and "'.'" not in line and ". " not in line[:20]


def test_wrote_one_record(here, capsys):
    code, err = _run(["privatize", "in.txt", "-o", "out.txt", *FAST], capsys)
    assert code == 0 and "textdp: wrote 1 record to out.txt" in err.splitlines()


def test_parquet_skip_says_row(here, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"text": ["good food", None, "bad service"]}), here / "in.parquet")
    code, err = _run(["privatize", "in.parquet", "-o", "out.parquet", *FAST, "--on-error",
                      "skip"], capsys)
    assert code == 0, err
    assert "textdp: warning: 1 malformed record skipped (the first at row 2;" in err, err


def test_assess_min_utility_refused(here, capsys):
    code, err = _run(["assess", "in.txt", "--min-utility", "2"], capsys)
    (line,) = err.splitlines()
    assert code == 2 and "'--min-utility'" in line and "less than or equal to 1" in line


# -- report ------------------------------------------------------------------------------------


def test_report_deeply_nested_json(here, capsys):
    (here / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    code, err = _run(["report", "deep.json"], capsys)
    (line,) = err.splitlines()
    assert code == 2 and line.endswith("deep.json: not a textdp privacy report (JSON nested too "
                                       "deeply)")


@pytest.mark.parametrize("name,directory", [
    ("run.json", "run-report"), ("run.report.json", "run-report"),
    ("run-report.json", "run-report"), ("report.json", "report"), ("X.report", "X-report"),
])
def test_report_directory_says_report_once(here, capsys, name, directory):
    code, err = _run(["privatize", "in.txt", "-o", "out.txt", *FAST, "--report", name], capsys)
    assert code == 0, err
    code, err = _run(["report", name], capsys)
    assert code == 0, err
    assert (here / directory / "report.md").is_file()
    assert not list(here.glob("*report-report*"))


# -- the ledger ----------------------------------------------------------------------------------


def test_ledger_show_fifo_does_not_hang(here, capsys):
    os.mkfifo(here / "ledger.jsonl")
    result: list[tuple[int, str]] = []
    t = threading.Thread(target=lambda: result.append(_run(["ledger", "show", "ledger.jsonl"],
                                                           capsys)), daemon=True)
    t.start()
    t.join(30)
    if t.is_alive():
        os.close(os.open(here / "ledger.jsonl", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("`textdp ledger show` on a FIFO hangs")
    code, err = result[0]
    assert code == 2 and "is not a regular file" in err


def test_ledger_show_epsilon_beyond_floats(here, capsys):
    from tests.test_papercuts_api import _set_epsilon

    code, err = _run(["privatize", "in.txt", "-o", "out.txt", *FAST, "--ledger", "l.jsonl"],
                     capsys)
    assert code == 0, err
    _set_epsilon(here / "l.jsonl", 10**400)
    assert main(["ledger", "show", "l.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "ε = inf" in out or "ε inf" in out or " inf" in out


def test_input_rewritten_with_the_same_count_is_noticed(here, capsys, monkeypatch):
    """The pre-commit check compares the content released with the content fingerprinted, not
    only the number of records: an input rewritten between the ledger's check and the commit,
    with as many records, must not be released under the old fingerprint."""
    from textdp.cli import _local

    original = _local.fingerprint_file

    def fingerprint_then_rewrite(*args, **kwargs):
        value = original(*args, **kwargs)
        (here / "in.txt").write_text("a different review\n")  # one record, as before
        return value

    monkeypatch.setattr(_local, "fingerprint_file", fingerprint_then_rewrite)
    code, err = _run(["privatize", "in.txt", "-o", "out.txt", *FAST, "--ledger", "l.jsonl"],
                     capsys)
    assert code == 2 and "INPUT changed while it was read" in err
    assert not (here / "out.txt").exists()
    lines = [json.loads(x) for x in (here / "l.jsonl").read_text().splitlines()]
    assert [x.get("type") for x in lines] == ["pending", "void"]
