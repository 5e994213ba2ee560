"""Hostile records through the command line (issue 21, item 4): a JSON text field given twice,
a 5000-digit JSON integer, invalid UTF-8 in a Parquet text column. Each case asserts the exit
status, stderr's first line, which files exist, and that the input is byte-identical afterwards.
(The Ray engine's cases — a directory, a lone surrogate, stderr — are in
tests/integrations/test_ray.py.)"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp.cli import main

BIG = "7" * 5000


def _parquet_with_bad_utf8(path):
    """Row 2 of the string column "text" holds the bytes ff fe (relabelled from binary without
    validation, as a careless writer produces)."""
    binary = pa.array([b"the food", b"\xff\xfe room", b"the bill"], pa.binary())
    pq.write_table(pa.table({"id": [1, 2, 3], "text": binary.view(pa.string())}), path)


CASES = {
    "duplicate text field": ('{"text": ["john smith secret"], "text": "hello"}\n', ".jsonl",
                             "in.jsonl:1: field 'text' appears twice in this object"),
    "duplicate parent": ('{"m": {"text": "ok"}}\n{"m": {"x": 1}, "m": {"text": "hi"}}\n', ".jsonl",
                         "in.jsonl:2: field 'm' appears twice in this object"),
    "parquet invalid utf-8": (None, ".parquet",
                              "in.parquet: row 2: column 'text': invalid UTF-8 (byte 0xff"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_with_one_line_and_nothing_written(tmp_path, capsys, case):
    content, suffix, first_line = CASES[case]
    src = tmp_path / f"in{suffix}"
    if content is None:
        _parquet_with_bad_utf8(src)
    else:
        src.write_text(content, encoding="utf-8")
    before = src.read_bytes()
    fields = ["--text-field", "m.text"] if case == "duplicate parent" else []
    capsys.readouterr()
    code = main(["privatize", str(src), "-o", str(tmp_path / f"out{suffix}"), "--epsilon", "10",
                 "--report", str(tmp_path / "r.json"), *fields])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[0].startswith(f"textdp: error: {tmp_path}/{first_line}")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]
    assert src.read_bytes() == before
    # Under --on-error skip the record is left out and listed in the report, never released.
    code = main(["privatize", str(src), "-o", str(tmp_path / f"out{suffix}"), "--epsilon", "10",
                 "--report", str(tmp_path / "r.json"), "--on-error", "skip", *fields])
    assert code == 0 and src.read_bytes() == before
    io = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["io"]
    assert io["records_skipped"] == 1 and len(io["skipped"]) == 1
    assert io["records_out"] == io["records_in"] - 1
    if suffix == ".parquet":
        assert pq.read_table(tmp_path / "out.parquet").column("id").to_pylist() == [1, 3]
    else:
        assert b"secret" not in (tmp_path / "out.jsonl").read_bytes()


def test_a_5000_digit_integer_passes_through(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(f'{{"id": {BIG}, "text": "the food", "m": {{"n": [-{BIG}]}}}}\n',
                   encoding="utf-8")
    before = src.read_bytes()
    for on_error in ("fail", "skip"):
        out = tmp_path / f"out-{on_error}.jsonl"
        assert main(["privatize", str(src), "-o", str(out), "--epsilon", "10", "--seed", "1",
                     "--on-error", on_error]) == 0
        line = out.read_text(encoding="utf-8")
        assert line.startswith(f'{{"id": {BIG}, "text": "')
        assert line.endswith(f'", "m": {{"n": [-{BIG}]}}}}\n')
    assert src.read_bytes() == before
