"""textdp.io readers and writers: N records in → N out, passthrough, line numbers in errors."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textdp.io import FileError, check_input, check_output, format_of, map_text_file, open_records


def upper(texts, start):
    return [t.upper() for t in texts]


def identity(texts, start):
    return list(texts)


# ---------------------------------------------------------------------------------------- .txt
@pytest.mark.parametrize("data", [
    b"a\nb\nc\n",
    b"a\nb\nc",                       # no final newline
    b"a\r\nb\r\n\r\nc",               # CRLF, an empty line
    b"\n\n\n",                        # three empty documents
    b"\n",
    b"x",
    b"\xef\xbb\xbfwith bom\nsecond\n",  # UTF-8 BOM kept
    "naïve 😀\rinside\n".encode(),  # a lone CR stays inside its line
])
@pytest.mark.parametrize("batch_size", [1, 2, 1000])
def test_txt_identity_is_byte_for_byte(tmp_path, data, batch_size):
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_bytes(data)
    info = map_text_file(src, dst, identity, batch_size=batch_size)
    assert dst.read_bytes() == data
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    assert info["records_in"] == info["records_out"] == lines
    assert info["format"] == "txt"


def test_txt_documents_exclude_line_endings_and_bom(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"\xef\xbb\xbfone\r\n\ntwo")
    with open_records(src) as reader:
        texts = [t for b in reader.batches(2) for t in b.texts]
    assert texts == ["one", "", "two"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.characters(exclude_characters="\n",
                                                          exclude_categories=("Cs",))),
                          st.sampled_from(["\n", "\r\n"])), max_size=12),
       st.booleans(), st.integers(1, 5))
def test_txt_roundtrip_property(tmp_path_factory, lines, final_newline, batch_size):
    d = tmp_path_factory.mktemp("prop")
    data = "".join(t + e for t, e in lines)
    if lines and not final_newline:
        data = data[: -len(lines[-1][1])]
    if not data:
        data = "\n"
    src, dst = d / "in.txt", d / "out.txt"
    src.write_bytes(data.encode("utf-8"))
    map_text_file(src, dst, identity, batch_size=batch_size)
    assert dst.read_bytes() == data.encode("utf-8")


def test_txt_invalid_utf8_names_the_line(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"fine\nalso fine\nbad \xc3\x28 here\n")
    with pytest.raises(FileError) as err:
        map_text_file(src, tmp_path / "out.txt", identity)
    assert err.value.line == 3
    assert str(err.value).startswith(f"{src}:3: invalid UTF-8")
    assert not (tmp_path / "out.txt").exists()


def test_txt_writer_refuses_a_line_break_in_a_document(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a\nb\n")
    with pytest.raises(ValueError, match="line break"):
        map_text_file(src, tmp_path / "out.txt", lambda t, s: [x + "\n" for x in t])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


# -------------------------------------------------------------------------------------- .jsonl
def test_jsonl_passthrough_order_and_blank_lines(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    objs = [{"id": 1, "text": "hello", "meta": {"a": [1, 2.5, None, True]}, "z": "é"},
            {"text": "", "id": 2},
            {"b": False, "text": "x y", "a": 1e-300}]
    lines = [json.dumps(objs[0]), "", json.dumps(objs[1]), "   ", json.dumps(objs[2])]
    src.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    info = map_text_file(src, dst, upper, batch_size=1)
    out = dst.read_bytes().decode("utf-8").split("\r\n")
    assert out[1] == "" and out[3] == "   " and out[-1] == ""
    decoded = [json.loads(x) for x in (out[0], out[2], out[4])]
    for a, b in zip(objs, decoded, strict=True):
        assert list(a) == list(b)                       # keys in the same order
        assert {k: v for k, v in a.items() if k != "text"} == \
               {k: v for k, v in b.items() if k != "text"}
        assert b["text"] == a["text"].upper()
    assert info["records_in"] == info["records_out"] == 3
    assert info["blank_lines"] == 2


def test_jsonl_custom_text_field(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text('{"body": "abc", "text": 5}\n')
    map_text_file(src, dst, upper, text_field="body")
    assert json.loads(dst.read_text()) == {"body": "ABC", "text": 5}


def test_jsonl_lone_surrogate_stays_escaped(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text('{"text": "a", "k": "\\ud800"}\n')
    map_text_file(src, dst, identity)
    assert json.loads(dst.read_text()) == {"text": "a", "k": "\ud800"}


@pytest.mark.parametrize(("content", "line", "problem"), [
    ('{"text": "a"}\n{"text": "b"\n', 2, "malformed JSON"),            # truncated object
    ('{"text": "a"}\n{"text": "abc', 2, "malformed JSON"),             # truncated string
    ('{"text": "a"}\n[1, 2]\n', 2, "expected a JSON object, found an array"),
    ('"just a string"\n', 1, "found a string"),
    ('{"text": "a"}\n{"text": "b"}\n{"body": "c"}\n', 3, "no field 'text'"),
    ('{"text": 3}\n', 1, "field 'text' is a number, expected a string"),
    ('{"text": "a"}\n{"text": null}\n', 2, "field 'text' is null"),
    ('{"text": "a"}\n{"text": ["a"]}\n', 2, "is an array"),
    (b'{"text": "a"}\n{"text": "\xff"}\n', 2, "invalid UTF-8"),
])
def test_jsonl_errors_name_the_line(tmp_path, content, line, problem):
    src = tmp_path / "in.jsonl"
    if isinstance(content, bytes):
        src.write_bytes(content)
    else:
        src.write_text(content)
    with pytest.raises(FileError) as err:
        map_text_file(src, tmp_path / "out.jsonl", identity, batch_size=1)
    assert err.value.line == line
    assert problem in str(err.value)
    assert "\n" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


# ---------------------------------------------------------------------------------------- .csv
def test_csv_passthrough_multiline_and_blank_lines(tmp_path):
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_bytes(b'id,text,note\r\n1,"two\r\nlines, and a ""quote""",x\r\n\r\n'
                    b'2,,"y,z"\r\n3,plain,\r\n')
    info = map_text_file(src, dst, upper, batch_size=2)
    assert dst.read_bytes() == (b'id,text,note\r\n1,"TWO\r\nLINES, AND A ""QUOTE""",x\r\n\r\n'
                                b'2,,"y,z"\r\n3,PLAIN,\r\n')
    assert info["records_in"] == info["records_out"] == 3
    assert info["blank_lines"] == 1


def test_csv_keeps_lf_endings_bom_and_single_empty_column(tmp_path):
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_bytes(b'\xef\xbb\xbftext\nhello\n""\nworld\n')
    info = map_text_file(src, dst, identity)
    assert dst.read_bytes() == b'\xef\xbb\xbftext\nhello\n""\nworld\n'
    assert info["records_in"] == 3


@pytest.mark.parametrize(("content", "line", "problem"), [
    ('id,text\n1,a\n2,"unterminated\n3,c\n', 3, "malformed CSV"),
    ('id,text\n1,a\n2,"x"y\n', 3, "malformed CSV"),
    ('id,text\n1,a\n2,b,extra\n', 3, "3 fields where the header has 2"),
    ('id,text\n1,a\n2\n', 3, "1 fields where the header has 2"),
    ('id,body\n1,a\n', 1, "no column 'text'"),
    ('text,text\na,b\n', 1, "appears 2 times"),
    (b'id,text\n1,a\n2,\xe9\n', 3, "invalid UTF-8"),
])
def test_csv_errors_name_the_line(tmp_path, content, line, problem):
    src = tmp_path / "in.csv"
    if isinstance(content, bytes):
        src.write_bytes(content)
    else:
        src.write_text(content)
    with pytest.raises(FileError) as err:
        map_text_file(src, tmp_path / "out.csv", identity, batch_size=1)
    assert err.value.line == line, str(err.value)
    assert problem in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.characters(exclude_categories=("Cs",),
                                                          exclude_characters="\x00")),
                          st.text(alphabet=st.characters(exclude_categories=("Cs",),
                                                         exclude_characters="\x00"))),
                max_size=8),
       st.integers(1, 4))
def test_csv_values_roundtrip_property(tmp_path_factory, rows, batch_size):
    import csv

    d = tmp_path_factory.mktemp("csv")
    src, dst = d / "in.csv", d / "out.csv"
    with open(src, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "other"])
        # A row of one empty field is a blank line in CSV; quote everything so none is blank.
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)
    map_text_file(src, dst, upper, batch_size=batch_size)
    with open(dst, newline="", encoding="utf-8") as fh:
        back = list(csv.reader(fh))
    assert back[0] == ["text", "other"]
    assert back[1:] == [[t.upper(), o] for t, o in rows]


# ------------------------------------------------------------------------------------ .parquet
def _table():
    return pa.table({
        "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "text": ["alpha", "", "gamma delta", "é", "last"],
        "score": [0.5, None, 1.5, 2.0, -1.0],
        "tags": [["a"], [], None, ["b", "c"], ["d"]],
    }).replace_schema_metadata({"origin": "test"})


@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_parquet_passthrough_schema_and_codec(tmp_path, batch_size):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    table = _table()
    pq.write_table(table, src, compression="zstd", row_group_size=2)
    info = map_text_file(src, dst, upper, batch_size=batch_size)
    out = pq.read_table(dst)
    table = pq.read_table(src)  # as Parquet stores it (list children are named "element")
    assert out.schema.equals(table.schema, check_metadata=True)
    assert out.drop_columns(["text"]).equals(table.drop_columns(["text"]))
    assert out.column("text").to_pylist() == [t.upper() for t in table.column("text").to_pylist()]
    assert info["records_in"] == info["records_out"] == 5
    assert pq.ParquetFile(dst).metadata.row_group(0).column(0).compression == "ZSTD"


def test_parquet_large_string_and_empty_table(tmp_path):
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"text": pa.array([], pa.large_string())}), src)
    info = map_text_file(src, dst, upper)
    assert info["records_out"] == 0
    assert pq.read_table(dst).schema.field("text").type == pa.large_string()


@pytest.mark.parametrize(("make", "problem", "row"), [
    (lambda p: p.write_bytes(b"this is not parquet"), "not a readable Parquet file", None),
    (lambda p: pq.write_table(pa.table({"body": ["a"]}), p), "no column 'text'", None),
    (lambda p: pq.write_table(pa.table({"text": [1, 2]}), p), "has type int64", None),
    (lambda p: pq.write_table(pa.table({"text": ["a", "b", None]}), p), "is null", 3),
])
def test_parquet_errors(tmp_path, make, problem, row):
    src = tmp_path / "in.parquet"
    make(src)
    with pytest.raises(FileError) as err:
        map_text_file(src, tmp_path / "out.parquet", identity, batch_size=2)
    assert problem in str(err.value)
    assert err.value.line == row
    if row is not None:
        assert f": row {row}: " in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


# ------------------------------------------------------------------------------- paths & formats
def test_format_of_and_checks(tmp_path):
    assert format_of("a.TXT") == "txt" and format_of("x.ndjson") == "jsonl"
    assert format_of("d/x.pq") == "parquet"
    with pytest.raises(FileError, match="unsupported file type"):
        format_of("a.xlsx")
    with pytest.raises(FileError, match="no such file"):
        check_input(tmp_path / "missing.txt")
    (tmp_path / "empty.csv").write_bytes(b"")
    with pytest.raises(FileError, match=r"empty file \(0 bytes\)"):
        check_input(tmp_path / "empty.csv")
    with pytest.raises(FileError, match="differs from the input"):
        check_output(tmp_path / "o.csv", tmp_path / "i.txt")
    with pytest.raises(FileError, match="overwrite the input"):
        check_output(tmp_path / "i.txt", tmp_path / "i.txt")
    with pytest.raises(FileError, match="does not exist"):
        check_output(tmp_path / "nope" / "o.txt", tmp_path / "i.txt")


def test_file_error_is_one_line():
    e = FileError("f.txt", 3, "bad\nthing")
    assert str(e) == "f.txt:3: bad thing"
    assert str(FileError("f.txt", None, "x")) == "f.txt: x"
    assert str(FileError("f.parquet", 2, "x", unit="row")) == "f.parquet: row 2: x"
    assert isinstance(e, ValueError)


# ------------------------------------------------------------------------------ map_text_file
@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_transform_sees_consecutive_positions(tmp_path, batch_size):
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{i}\n" for i in range(10)))
    seen = []

    def record(texts, start):
        seen.append((start, list(texts)))
        return texts

    map_text_file(src, tmp_path / "out.txt", record, batch_size=batch_size)
    assert all(len(t) <= batch_size for _, t in seen)
    flat = [(s + i, t) for s, ts in seen for i, t in enumerate(ts)]
    assert flat == [(i, str(i)) for i in range(10)]


def test_transform_failure_mid_stream_leaves_no_output(tmp_path):
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("a\nb\nc\nd\n")

    def boom(texts, start):
        if start >= 2:
            raise RuntimeError("boom")
        return texts

    with pytest.raises(RuntimeError):
        map_text_file(src, dst, boom, batch_size=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_wrong_number_of_outputs_is_refused(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a\nb\n")
    with pytest.raises(ValueError, match="1 texts for a batch of 2"):
        map_text_file(src, tmp_path / "out.txt", lambda t, s: t[:1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_bad_batch_size(tmp_path):
    with pytest.raises(ValueError, match="batch_size"):
        map_text_file(tmp_path / "a.txt", tmp_path / "b.txt", identity, batch_size=0)


def test_progress_receives_total_and_all_units(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"one\ntwo\nthree\n")
    calls = {}

    class Bar:
        def __init__(self, total, unit):
            calls.update(total=total, unit=unit, n=0, closed=False)

        def update(self, n):
            calls["n"] += n

        def close(self):
            calls["closed"] = True

    map_text_file(src, tmp_path / "out.txt", identity, batch_size=1, progress=Bar)
    assert calls == {"total": 14, "unit": "B", "n": 14, "closed": True}
