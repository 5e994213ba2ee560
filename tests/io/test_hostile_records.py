"""Hostile records at the level of textdp.io (issue 21, item 4): a text field given twice in one
JSON object (never released with a copy verbatim), JSON integers of any size (passed through byte
for byte), invalid UTF-8 inside a Parquet string column (one line naming file, row and column)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp.io import FileError, ReadOptions, map_text_file
from textdp.io import jsonl as jsonl_module


def upper(texts, _start):
    return [t.upper() for t in texts]


def write_bytes(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.fixture(params=[True, False], ids=["fast", "exact"])
def fast(request, monkeypatch):
    """Both JSONL paths: the fast one (orjson validates) and the exact one alone."""
    if not request.param:
        monkeypatch.setattr(jsonl_module, "_validate", None)
    return request.param


# ------------------------------------------------------------------- JSONL: duplicate text keys
# The validating parser keeps the last copy of a key; a writer that replaced only that copy would
# release the first one verbatim ("secret" below). Each is refused, naming the line.
DUPLICATES = [
    ('{"text": ["john smith secret"], "text": "hello"}', ("text",)),
    ('{"text": {"a": "secret"}, "text": "hello"}', ("text",)),
    ('{"text": 1, "n": 2, "text": "hello", "secret": 0}', ("text",)),
    ('{"text": null, "text": "hello", "k": "secret"}', ("text",)),
    ('{"te\\u0078t": ["secret"], "text": "hello"}', ("text",)),
    ('{"text": "secret", "text": "hello"}', ("text",)),
    ('{"meta": ["secret"], "meta": {"text": "hello"}}', ("meta.text",)),
    ('{"meta": {"text": ["secret"], "text": "hello"}}', ("meta.text",)),
    ('{"meta": {"text": "secret"}, "meta": {"text": "hello"}}', ("meta.text",)),
]


@pytest.mark.parametrize(("line", "fields"), DUPLICATES)
def test_a_text_field_given_twice_is_an_error_naming_the_line(tmp_path, fast, line, fields):
    src = write_bytes(tmp_path / "in.jsonl", f'{{"text": "ok", "meta": {{"text": "ok"}}}}\n'
                                             f'{line}\n'.encode())
    options = ReadOptions(text_fields=fields)
    with pytest.raises(FileError, match="appears twice in this object") as info:
        map_text_file(src, tmp_path / "out.jsonl", upper, options=options)
    assert info.value.line == 2 and str(info.value).startswith(f"{src}:2: field ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize(("line", "fields"), DUPLICATES)
def test_a_text_field_given_twice_is_skipped_and_listed_never_released(tmp_path, fast, line,
                                                                      fields):
    src = write_bytes(tmp_path / "in.jsonl",
                      f'{{"text": "ok", "meta": {{"text": "ok"}}}}\n{line}\n'.encode())
    options = ReadOptions(text_fields=fields, on_error="skip")
    summary = map_text_file(src, tmp_path / "out.jsonl", upper, options=options)
    assert summary["records_in"] == 2 and summary["records_out"] == 1
    assert summary["skipped"] == [{"line": 2, "problem": summary["skipped"][0]["problem"]}]
    assert "appears twice" in summary["skipped"][0]["problem"]
    assert b"secret" not in (tmp_path / "out.jsonl").read_bytes()


def test_other_duplicate_keys_pass_through_byte_for_byte(tmp_path, fast):
    # Not on the text path: JSON allows them (RFC 8259 says names SHOULD be unique), the writer
    # copies every byte but the text values.
    data = (b'{"a": 1, "a": [2], "text": "one"}\n'
            b'{"m": {"text": 1, "text": "x"}, "text": "two", "m": 3}\n'
            b'{"meta": {"id": 1, "id": 2, "text": "three"}, "text": 0, "text": 1}\n')
    src = write_bytes(tmp_path / "in.jsonl", data)
    summary = map_text_file(src, tmp_path / "o.jsonl", upper, options=ReadOptions(on_error="skip"))
    assert (tmp_path / "o.jsonl").read_bytes() == (
        b'{"a": 1, "a": [2], "text": "ONE"}\n'
        b'{"m": {"text": 1, "text": "x"}, "text": "TWO", "m": 3}\n')
    assert [s["line"] for s in summary["skipped"]] == [3]  # "text" twice at the top level
    nested = write_bytes(tmp_path / "nested.jsonl", data.splitlines(keepends=True)[2])
    map_text_file(nested, tmp_path / "n.jsonl", upper,
                  options=ReadOptions(text_fields=("meta.text",)))
    assert (tmp_path / "n.jsonl").read_bytes() == \
        b'{"meta": {"id": 1, "id": 2, "text": "THREE"}, "text": 0, "text": 1}\n'


# ---------------------------------------------------------------- JSONL: integers of any size
BIG = "9" * 5000  # above Python's int-digit limit (sys.get_int_max_str_digits(), 4300)


def test_integers_of_any_size_pass_through_byte_for_byte(tmp_path, fast):
    data = (f'{{"id": {BIG}, "text": "the food"}}\n'
            f'{{"text": "the room", "n": -{BIG}}}\n'
            f'{{"meta": {{"n": [1, {{"m": {BIG}}}, -{BIG}]}}, "text": "the bill", "x": {BIG}e5}}\n'
            ).encode()
    src = write_bytes(tmp_path / "in.jsonl", data)
    summary = map_text_file(src, tmp_path / "o.jsonl", upper, options=ReadOptions(on_error="skip"))
    assert summary["records_out"] == 3 and summary["records_skipped"] == 0
    assert (tmp_path / "o.jsonl").read_bytes() == data.replace(b'"the ', b'"THE ') \
        .replace(b"food", b"FOOD").replace(b"room", b"ROOM").replace(b"bill", b"BILL")
    nested = write_bytes(tmp_path / "nested.jsonl",
                         f'{{"meta": {{"big": {BIG}, "text": "inner"}}, "z": {BIG}}}\n'.encode())
    map_text_file(nested, tmp_path / "n.jsonl", upper,
                  options=ReadOptions(text_fields=("meta.text",)))
    assert (tmp_path / "n.jsonl").read_bytes() == \
        f'{{"meta": {{"big": {BIG}, "text": "INNER"}}, "z": {BIG}}}\n'.encode()


def test_a_big_integer_text_field_is_a_number_not_malformed(tmp_path, fast):
    src = write_bytes(tmp_path / "in.jsonl", f'{{"text": {BIG}}}\n'.encode())
    with pytest.raises(FileError, match=r"in.jsonl:1: field 'text' is a number, expected a string"):
        map_text_file(src, tmp_path / "o.jsonl", upper)


# ------------------------------------------------------------ Parquet: invalid UTF-8 in a column
def _bad_utf8_parquet(path, rows=5, bad=(2,), column="text"):
    """A Parquet file whose string column ``column`` holds invalid UTF-8 in rows ``bad``
    (0-based): written as binary, then relabelled string (what a careless writer produces)."""
    values = [b"\xff\xfe bad" if r in bad else f"row {r}".encode() for r in range(rows)]
    other = [f"row {r}".encode() for r in range(rows)]
    table = pa.table({"id": list(range(rows)), "text": pa.array(values if column == "text"
                                                                  else other, pa.binary()),
                      "title": pa.array(values if column == "title" else other, pa.binary())})
    pq.write_table(table, path)
    schema = pa.schema([("id", pa.int64()), ("text", pa.string()), ("title", pa.string())])
    # Relabelled without validation: the bytes stay as they were.
    relabelled = pa.Table.from_arrays(
        [table.column("id"), *(pa.chunked_array([c.view(pa.string()) for c in table.column(n).chunks],
                                                 pa.string()) for n in ("text", "title"))],
        schema=schema)
    pq.write_table(relabelled, path)
    return path


@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_parquet_invalid_utf8_names_file_row_and_column(tmp_path, batch_size):
    src = _bad_utf8_parquet(tmp_path / "in.parquet", bad=(3,))
    with pytest.raises(FileError) as info:
        map_text_file(src, tmp_path / "o.parquet", upper, batch_size=batch_size)
    assert str(info.value).startswith(f"{src}: row 4: column 'text': invalid UTF-8")
    assert "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_parquet_invalid_utf8_in_a_second_text_column(tmp_path):
    src = _bad_utf8_parquet(tmp_path / "in.parquet", bad=(1,), column="title")
    with pytest.raises(FileError, match=r"row 2: column 'title': invalid UTF-8"):
        map_text_file(src, tmp_path / "o.parquet", upper,
                      options=ReadOptions(text_fields=("text", "title")))


def test_parquet_invalid_utf8_rows_are_skipped_and_listed(tmp_path):
    src = _bad_utf8_parquet(tmp_path / "in.parquet", rows=6, bad=(1, 4))
    summary = map_text_file(src, tmp_path / "o.parquet", upper, batch_size=4,
                            options=ReadOptions(on_error="skip"))
    assert summary["records_in"] == 6 and summary["records_out"] == 4
    assert [s["row"] for s in summary["skipped"]] == [2, 5]
    out = pq.read_table(tmp_path / "o.parquet")
    assert out.column("id").to_pylist() == [0, 2, 3, 5]
    assert out.column("text").to_pylist() == ["ROW 0", "ROW 2", "ROW 3", "ROW 5"]


# ------------------------------------------------------------------ directories: one file set
def test_directory_inputs_are_the_files_the_local_engine_reads(tmp_path):
    from textdp.io import check_input, directory_inputs

    names = ["a.jsonl", "b.ndjson", "c.JSONL", "d.pq", "e.Parquet", "f.txt.gz", "g.csv.zst",
             "h.TSV", "i.NDJSON.GZ"]
    for name in names:
        (tmp_path / name).write_bytes(b"x\n")
    (tmp_path / ".hidden").write_bytes(b"not an input\n")
    files = directory_inputs(tmp_path)
    assert [f.name for f in files] == sorted(names)
    for f in files:  # each one a file the local engine accepts
        check_input(f)


@pytest.mark.parametrize(("name", "problem"), [
    ("README.md", "unsupported file type"),
    ("data.jsonl.bz2", "unsupported file type"),
    ("sub.jsonl/", "is a directory"),
    ("empty.jsonl", "empty file"),
    ("x.parquet.gz", "compressed inside"),
])
def test_directory_inputs_refuse_naming_what_they_cannot_read(tmp_path, name, problem):
    from textdp.io import directory_inputs

    (tmp_path / "a.jsonl").write_bytes(b'{"text": "a"}\n')
    if name.endswith("/"):
        (tmp_path / name).mkdir()
    else:
        (tmp_path / name).write_bytes(b"" if name.startswith("empty") else b"x\n")
    with pytest.raises(FileError, match=problem) as info:
        directory_inputs(tmp_path)
    assert info.value.path == str(tmp_path / name.rstrip("/"))
    assert "input directory must hold input files only" in str(info.value)


def test_a_directory_without_inputs_is_refused(tmp_path):
    from textdp.io import directory_inputs

    (tmp_path / ".hidden.jsonl").write_bytes(b'{"text": "a"}\n')
    with pytest.raises(FileError, match="has no file to read"):
        directory_inputs(tmp_path)
