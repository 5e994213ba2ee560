"""`textdp privatize`: formats, N in = N out, seeds, atomic output, one-line errors (exit 2)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp.cli import main

DOCS = ["The food was great, but the waiter charged 42 dollars!", "", "I LOVED it.",
        "naïve café Zzyzxq 😀", "  ", "Short one"]


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def files_in(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def write(path: Path, docs=DOCS) -> Path:
    """Write ``docs`` (plus an id column / field) in ``path``'s format."""
    fmt = path.suffix
    if fmt == ".txt":
        path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
    elif fmt == ".jsonl":
        path.write_text("".join(json.dumps({"id": i, "text": d, "lang": "en"}) + "\n"
                                for i, d in enumerate(docs)), encoding="utf-8")
    elif fmt == ".csv":
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "text", "lang"])
            w.writerows([i, d, "en"] for i, d in enumerate(docs))
    else:
        pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs,
                                 "lang": ["en"] * len(docs)}), path)
    return path


def read(path: Path) -> tuple[list[str], list]:
    """(texts, everything else per record) of a file written by :func:`write`."""
    fmt = path.suffix
    if fmt == ".txt":
        data = path.read_bytes().decode("utf-8")
        lines = data.split("\n")
        assert lines[-1] == ""
        return lines[:-1], [None] * (len(lines) - 1)
    if fmt == ".jsonl":
        objs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        return [o.pop("text") for o in objs], objs
    if fmt == ".csv":
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ["id", "text", "lang"]
        return [r[1] for r in rows[1:]], [(r[0], r[2]) for r in rows[1:]]
    t = pq.read_table(path)
    return t.column("text").to_pylist(), t.drop_columns(["text"]).to_pylist()


FORMATS = [".txt", ".jsonl", ".csv", ".parquet"]


# --------------------------------------------------------------------------------- happy paths
@pytest.mark.parametrize("fmt", FORMATS)
def test_n_in_n_out_and_passthrough(tmp_path, capsys, fmt):
    src = write(tmp_path / f"in{fmt}")
    dst = tmp_path / f"out{fmt}"
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", 10, "--seed", 3)
    assert code == 0, err
    texts, rest = read(dst)
    assert len(texts) == len(DOCS)
    assert texts[1] == "" and texts[4] == "  "           # empty documents stay empty
    if fmt == ".jsonl":
        assert rest == [{"id": i, "lang": "en"} for i in range(len(DOCS))]
        assert list(json.loads(dst.read_text().splitlines()[0])) == ["id", "text", "lang"]
    elif fmt == ".csv":
        assert rest == [(str(i), "en") for i in range(len(DOCS))]
    elif fmt == ".parquet":
        assert rest == [{"id": i, "lang": "en"} for i in range(len(DOCS))]
    assert f"wrote {len(DOCS)} records to {dst}" in err
    assert out == ""                                     # stdout stays clean


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_seed_same_output_for_any_batch_size(tmp_path, capsys, fmt):
    docs = [f"Document {i}: the cat sat on the mat and the dog barked at it." for i in range(23)]
    src = write(tmp_path / f"in{fmt}", docs)
    outputs = []
    for bs in (1, 7, 1000):
        dst = tmp_path / f"out{bs}{fmt}"
        code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", 5, "--seed", 11,
                           "--batch-size", bs)
        assert code == 0, err
        outputs.append(read(dst))
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0][0] != docs                         # ε = 5 does change words


def test_huge_epsilon_keep_is_byte_for_byte(tmp_path, capsys):
    data = ("The Food was GREAT!\r\n\nI loved it, 42 times; Zzyzxq said so.\n"
            "  naïve café 😀 McDonald's\r\n\n\nlast line without newline").encode()
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_bytes(data)
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6", "--oov", "keep",
                       "--entities", "none")  # byte for byte: names pass only with entities off
    assert code == 0, err
    assert dst.read_bytes() == data


def test_example_corpus_is_byte_for_byte_at_huge_epsilon(tmp_path, capsys):
    src = Path(__file__).resolve().parents[2] / "examples" / "reviews.txt"
    dst = tmp_path / "out.txt"
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6", "--oov", "keep",
                       "--seed", 0, "--entities", "none")  # byte for byte: entities off
    assert code == 0, err
    assert dst.read_bytes() == src.read_bytes()


def test_report_file_and_stderr_summary(tmp_path, capsys):
    src = write(tmp_path / "in.jsonl")
    dst, rep = tmp_path / "out.jsonl", tmp_path / "report.json"
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", 10, "--seed", 1,
                       "--oov", "keep", "--report", rep)
    assert code == 0, err
    report = json.loads(rep.read_text(encoding="utf-8"))
    for key in ("schema", "textdp_version", "mechanism", "guarantee", "vocabulary", "policy",
                "documents", "tokens", "unprotected", "warnings", "randomness", "performance",
                "io"):
        assert key in report
    assert report["io"] == {"input": str(src), "output": str(dst), "format": "jsonl",
                            "records_in": len(DOCS), "records_out": len(DOCS), "blank_lines": 0}
    assert report["mechanism"] == {"name": "mvc", "parameters": {"epsilon": 10.0}}
    assert report["policy"]["oov"] == "keep"
    assert report["randomness"]["seeded"] is True
    assert report["documents"]["count"] == len(DOCS)
    assert f"privacy report: {rep}" in err
    lines = err.splitlines()
    assert any("ε = 10 per unit of" in x and "tokens privatised" in x and "unprotected:" in x
               for x in lines)
    assert any(x.startswith("textdp: warning:") and "oov=keep" in x for x in lines)
    assert any(x.startswith("textdp: warning: seeded run") for x in lines)
    assert "\r" not in err and "it/s" not in err         # no progress bar when not a TTY


def test_without_report_the_user_is_told_where_output_went(tmp_path, capsys):
    src = write(tmp_path / "in.txt")
    dst = tmp_path / "out.txt"
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", 10)
    assert code == 0
    assert f"wrote {len(DOCS)} records to {dst}" in err
    assert "no report file" in err
    assert "seeded run" not in err
    assert files_in(tmp_path) == ["in.txt", "out.txt"]


def test_options_reach_the_privatizer(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("the cat has 42 Zzyzxq toys\n")
    dst, rep = tmp_path / "out.txt", tmp_path / "r.json"
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6",
                       "--mask-token", "<X>", "--keep-stopwords", "--report", rep,
                       "--entities", "none")  # Zzyzxq would be a [PERSON]
    assert code == 0, err
    assert dst.read_text() == "the cat has <X> <X> toys\n"
    policy = json.loads(rep.read_text())["policy"]
    assert policy == {"oov": "mask", "mask_token": "<X>", "keep_stopwords": True}
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6", "--oov", "drop",
                       "--entities", "none")
    assert code == 0 and dst.read_text() == "the cat has   toys\n"


def test_custom_text_field(tmp_path, capsys):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text('{"body": "the Zzyzxq", "text": 7}\n')
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6",
                       "--text-field", "body")
    assert code == 0, err
    assert json.loads(dst.read_text()) == {"body": "the [MASK]", "text": 7}


def test_existing_output_is_replaced(tmp_path, capsys):
    src = write(tmp_path / "in.txt")
    dst = tmp_path / "out.txt"
    dst.write_text("stale")
    assert run(capsys, "privatize", src, "-o", dst, "--epsilon", 10)[0] == 0
    assert len(dst.read_text().splitlines()) == len(DOCS)
    assert files_in(tmp_path) == ["in.txt", "out.txt"]


# ------------------------------------------------------------------------------------- errors
def _bytes(content):
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _parquet(table):
    def make(path):
        pq.write_table(table, path)
    return make


GOOD = "hello world\n"

# (input file name, its content (bytes/str/callable/None = absent), extra args, message, line)
ERRORS = [
    ("in.txt", GOOD, ["--epsilon", "0"], "epsilon must be a finite number > 0", None),
    ("in.txt", GOOD, ["--epsilon", "-1"], "epsilon must be a finite number > 0", None),
    ("in.txt", GOOD, ["--epsilon", "nan"], "epsilon must be a finite number > 0", None),
    ("in.txt", GOOD, ["--epsilon", "inf"], "epsilon must be a finite number > 0", None),
    ("in.txt", GOOD, ["--epsilon", "ten"], "'--epsilon'", None),
    ("in.txt", GOOD, [], "Missing option '--epsilon'", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--seed", "-1"], "seed must be a non-negative", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--seed", "x"], "'--seed'", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--mechanism", "nope"], "unknown mechanism 'nope'",
     None),
    ("in.txt", GOOD, ["--epsilon", "1", "--oov", "hide"], "'hide' is not one of", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--batch-size", "0"], "'--batch-size'", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--beta", "0.5"],
     "mechanism 'mvc' takes no parameter 'beta'", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--n-lists", "4"], "takes no parameter 'n_lists'", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--param", "gamma=2"], "takes no parameter 'gamma'",
     None),
    ("in.txt", GOOD, ["--epsilon", "1", "--param", "gamma"], "--param expects NAME=VALUE", None),
    ("in.txt", GOOD, ["--epsilon", "1", "--param", "epsilon=3"], "--epsilon, not --param", None),
    ("in.txt", None, ["--epsilon", "1"], "in.txt: no such file", None),
    ("in.txt", b"", ["--epsilon", "1"], "in.txt: empty file (0 bytes)", None),
    ("in.jsonl", b"", ["--epsilon", "1"], "in.jsonl: empty file (0 bytes)", None),
    ("in.csv", b"", ["--epsilon", "1"], "in.csv: empty file (0 bytes)", None),
    ("in.parquet", b"", ["--epsilon", "1"], "in.parquet: empty file (0 bytes)", None),
    ("in.xlsx", GOOD, ["--epsilon", "1"], "unsupported file type", None),
    ("in.txt", b"ok\nok\n\xff\xfe\n", ["--epsilon", "1"], "invalid UTF-8", 3),
    ("in.jsonl", '{"text": "a"}\n{"text": "b', ["--epsilon", "1"], "malformed JSON", 2),
    ("in.jsonl", '{"text": "a"}\n{"text": "b", \n', ["--epsilon", "1"], "malformed JSON", 2),
    ("in.jsonl", '{"text": "a"}\n\n[1]\n', ["--epsilon", "1"], "expected a JSON object", 3),
    ("in.jsonl", '{"text": "a"}\n{"body": "b"}\n', ["--epsilon", "1"], "no field 'text'", 2),
    ("in.jsonl", '{"text": "a"}\n{"text": 1}\n', ["--epsilon", "1"],
     "field 'text' is a number, expected a string", 2),
    ("in.jsonl", b'{"text": "a"}\n{"text": "\xc3"}\n', ["--epsilon", "1"], "invalid UTF-8", 2),
    ("in.csv", 'id,text\n1,a\n2,"b\n', ["--epsilon", "1"], "malformed CSV", 3),
    ("in.csv", 'id,text\n1,a\n2,b,c\n', ["--epsilon", "1"], "3 fields where the header has 2", 3),
    ("in.csv", 'id,body\n1,a\n', ["--epsilon", "1"], "no column 'text'", 1),
    ("in.csv", b'id,text\n1,\xff\n', ["--epsilon", "1"], "invalid UTF-8", 2),
    ("in.parquet", b"PAR1 not really parquet", ["--epsilon", "1"], "not a readable Parquet", None),
    ("in.parquet", _parquet(pa.table({"body": ["a"]})), ["--epsilon", "1"], "no column 'text'",
     None),
    ("in.parquet", _parquet(pa.table({"text": ["a", None]})), ["--epsilon", "1"],
     "row 2: column 'text' is null", None),
    ("in.parquet", _parquet(pa.table({"text": [1.5]})), ["--epsilon", "1"], "has type double",
     None),
]


@pytest.mark.parametrize(("name", "content", "args", "message", "line"), ERRORS,
                         ids=[f"{e[0]}:{e[3][:30]}" for e in ERRORS])
def test_bad_input_is_one_line_exit_2_no_output(tmp_path, capsys, name, content, args,
                                                message, line):
    src = tmp_path / name
    if callable(content):
        content(src)
    elif content is not None:
        src.write_bytes(_bytes(content))
    before = files_in(tmp_path)
    dst = tmp_path / ("out" + src.suffix)
    code, out, err = run(capsys, "privatize", src, "-o", dst, "--report", tmp_path / "r.json",
                         "--batch-size", "1", *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("textdp: error: "), err
    assert message in err
    if line is not None:
        assert f"{src}:{line}: " in err
    assert "Traceback" not in err and out == ""
    assert files_in(tmp_path) == before                  # no output, no report, no temp file


def test_output_errors(tmp_path, capsys):
    src = write(tmp_path / "in.txt")
    cases = [(tmp_path / "out.csv", "differs from the input's (txt)"),
             (src, "overwrite the input"),
             (tmp_path / "missing" / "out.txt", "does not exist")]
    for dst, message in cases:
        code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", 1)
        assert code == 2 and message in err and err.count("\n") == 1
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "out.txt", "--epsilon", 1,
                       "--report", tmp_path / "missing" / "r.json")
    assert code == 2 and "does not exist" in err
    assert files_in(tmp_path) == ["in.txt"]


def test_parameters_are_checked_before_the_input_is_read(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text("not json\n")
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "o.jsonl", "--epsilon", "-2")
    assert code == 2 and "epsilon" in err


def test_error_after_many_batches_leaves_nothing(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    good = "".join(json.dumps({"text": f"the cat {i}"}) + "\n" for i in range(50))
    src.write_text(good + '{"text": "truncated\n')
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "o.jsonl", "--epsilon", 1,
                       "--batch-size", 4, "--report", tmp_path / "r.json")
    assert code == 2 and f"{src}:51: malformed JSON" in err
    assert files_in(tmp_path) == ["in.jsonl"]


# ------------------------------------------------------------------------- help, version, list
def test_help_documents_every_option(capsys):
    code, out, _ = run(capsys, "privatize", "--help")
    assert code == 0
    for option in ("--output", "--mechanism", "--epsilon", "--seed", "--text-field", "--oov",
                   "--mask-token", "--keep-stopwords", "--report", "--batch-size", "--method",
                   "--n-lists", "--beta", "--param", ".txt", ".jsonl", ".csv", ".parquet"):
        assert option in out, option
    for policy in ("mask", "keep", "drop", "random", "UNPROTECTED"):
        assert policy in out
    assert "report" in out and "io" in out


def test_version_and_mechanisms(capsys):
    from textdp import __version__

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith(f"textdp {__version__} (extras: ")
    code, out, _ = run(capsys, "mechanisms")
    assert code == 0
    from textdp.mechanisms import available

    lines = out.splitlines()
    from textdp.mechanisms import prompt

    # Word mechanisms, then the language-model ones (issue 16).
    assert [x.split("\t")[0] for x in lines] == available("word") + prompt.available()
    assert any(x.startswith("mvc\t") and "epsilon" in x for x in lines)
    # Each parameter with its range and default, from the declarations.
    assert any(x.startswith("tem\t") and "beta (0, 1), default 0.001" in x for x in lines)
    assert any(x.startswith("vickrey\t") and "t [0, 1], default 0.75" in x for x in lines)


def test_no_arguments_and_unknown_command(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "privatize" in err
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and err.count("\n") == 1 and "frobnicate" in err


def test_console_script_runs_as_a_process(tmp_path):
    src = write(tmp_path / "in.txt")
    exe = Path(sys.executable).with_name("textdp")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "textdp.cli"]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    ok = subprocess.run([*cmd, "privatize", src, "-o", tmp_path / "out.txt", "--epsilon", "10"],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([*cmd, "privatize", src, "-o", tmp_path / "o2.txt", "--epsilon", "0"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert not (tmp_path / "o2.txt").exists()


def test_phone_regions_and_deny_list_keys(tmp_path, capsys):
    """--phone-regions picks the national formats; --deny-list matches on the lookup key."""
    src = tmp_path / "in.txt"
    src.write_text("call 030 1234567 or jo\u00adhn\u00a0smith\n")
    terms = tmp_path / "deny.txt"
    terms.write_text("# people\nJohn Smith\n")
    dst, rep = tmp_path / "out.txt", tmp_path / "r.json"
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6", "-m", "diffractor",
                       "--seed", "1", "--deny-list", terms, "--report", rep)
    assert code == 0, err
    assert dst.read_text() == "call [PHONE] or [REDACTED]\n"
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6", "-m", "diffractor",
                       "--seed", "1", "--phone-regions", "US,GB", "--report", rep)
    assert code == 0, err
    assert "[PHONE]" not in dst.read_text()
    assert json.loads(rep.read_text())["identifiers"]["phone_regions"] == ["US", "GB"]
    code, _, err = run(capsys, "privatize", src, "-o", dst, "--epsilon", "1e6",
                       "--phone-regions", "US,XX")
    assert code == 2 and "unknown phone region(s) XX" in err and len(err.strip().splitlines()) == 1
