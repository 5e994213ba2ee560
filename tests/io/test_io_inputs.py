"""The inputs people have (issue 12, item 6), at the level of textdp.io: compression, TSV and
delimiters, nested and several fields, skipping malformed records, null texts, and JSON Lines
whose other bytes come out exactly as they came in — on the fast path and on the exact one."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from textdp.io import FileError, ReadOptions, map_text_file, open_records
from textdp.io import jsonl as jsonl_module


def upper(texts, _start):
    return [t.upper() for t in texts]


def same(texts, _start):
    return list(texts)


# Lines whose other fields a re-serialising writer would change: numbers as written, key order,
# escapes, spacing, CRLF, a BOM-less UTF-8 mix. And lines that could fool a byte-search fast path.
TRICKY = (
    '{"id": 1, "score": 2.50, "big": 1E400, "neg": -0.0, "text": "caf\\u00e9 ok", "z": "\\/"}\n'
    '{"b":1,"text":"plain words","a":[1, 2.0,{"text":"not me"}]}\r\n'
    '{"type": "text", "text": "the \\"text\\": value", "x": "say \\"text\\": no"}\n'
    '{"meta": {"text": "inner"}, "text": "outer"}\n'
    '  {  "text"  :  "spaced"  ,  "n" : 1e5 }  \n'
    '{"a": "back\\\\", "text": "slash\\\\"}\n'
    '{"text": "emoji 😀 and \\ud83d\\ude00"}\n'
)


def write_bytes(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("fast", [True, False])
def test_jsonl_other_bytes_exactly_as_they_came(tmp_path, monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(jsonl_module, "_validate", None)
    src = write_bytes(tmp_path / "in.jsonl", TRICKY.encode())
    map_text_file(src, tmp_path / "same.jsonl", same)
    # Unchanged texts come back byte for byte, but for escapes inside the text values themselves
    # (a new string is written there, with only the escapes JSON requires).
    canonical = TRICKY.replace("caf\\u00e9", "café").replace("\\ud83d\\ude00", "😀")
    assert (tmp_path / "same.jsonl").read_bytes() == canonical.encode()
    map_text_file(src, tmp_path / "up.jsonl", upper)
    out = (tmp_path / "up.jsonl").read_bytes().decode()
    # Only the top-level text values changed; everything else byte for byte.
    expected = (TRICKY.replace('"text": "caf\\u00e9 ok"', '"text": "CAFÉ OK"')
                .replace('"text":"plain words"', '"text":"PLAIN WORDS"')
                .replace('"text": "the \\"text\\": value"', '"text": "THE \\"TEXT\\": VALUE"')
                .replace('"text": "outer"', '"text": "OUTER"')
                .replace('"text"  :  "spaced"', '"text"  :  "SPACED"')
                .replace('"text": "slash\\\\"', '"text": "SLASH\\\\"')
                .replace('"text": "emoji 😀 and \\ud83d\\ude00"', '"text": "EMOJI 😀 AND 😀"'))
    assert out == expected
    assert "2.50" in out and "1E400" in out and "NaN" not in out and "Infinity" not in out


def test_fast_path_is_taken_on_ordinary_lines(tmp_path, monkeypatch):
    calls = []
    exact = jsonl_module.JsonLinesReader._exact

    def spy(self, raw, texts):
        calls.append(raw)
        return exact(self, raw, texts)

    monkeypatch.setattr(jsonl_module.JsonLinesReader, "_exact", spy)
    src = write_bytes(tmp_path / "in.jsonl",
                      b"".join(json.dumps({"id": i, "text": f"doc {i}", "x": 2.5}).encode() + b"\n"
                               for i in range(50)))
    map_text_file(src, tmp_path / "out.jsonl", upper)
    assert calls == []
    assert b'"text": "DOC 7"' in (tmp_path / "out.jsonl").read_bytes()


@pytest.mark.parametrize("line, problem", [
    ('{"text": "a", "te\\u0078t": "secret"}', "appears twice"),
    ('{"text": "a", "text": "secret"}', "appears twice"),
    ('{"text": "a", "v": NaN}', "NaN is not valid JSON"),
    ('{"text": "a", "v": -Infinity}', "Infinity is not valid JSON"),
    ('{"text": "a"} x', "Extra data"),
    ('["text"]', "expected a JSON object, found an array"),
])
def test_jsonl_refuses_what_it_cannot_pass_through(tmp_path, line, problem):
    # A duplicate text key would leave one copy unprivatised; NaN must never be written.
    src = write_bytes(tmp_path / "in.jsonl", f'{{"text": "ok"}}\n{line}\n'.encode())
    with pytest.raises(FileError, match=problem) as info:
        map_text_file(src, tmp_path / "out.jsonl", upper)
    assert info.value.line == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_nested_and_several_fields(tmp_path):
    src = write_bytes(tmp_path / "in.jsonl", (
        b'{"title": "a title", "meta": {"lang": "en", "body": "the body"}, "n": 2.50}\n'
        b'{"title": "second", "meta": {"body": null}, "n": 1E400}\n'))
    seen = []

    def record(texts, start):
        seen.append((list(texts), start))
        return upper(texts, start)

    options = ReadOptions(text_fields=("title", "meta.body"), null="pass")
    summary = map_text_file(src, tmp_path / "out.jsonl", record, options=options)
    assert seen == [(["a title", "the body", "second"], 0)]  # record by record, field order
    assert (tmp_path / "out.jsonl").read_text() == (
        '{"title": "A TITLE", "meta": {"lang": "en", "body": "THE BODY"}, "n": 2.50}\n'
        '{"title": "SECOND", "meta": {"body": null}, "n": 1E400}\n')
    assert summary["records_in"] == summary["records_out"] == 2
    assert summary["null_texts"] == 1 and summary["documents"] == 3


def test_dotted_key_escape_and_bad_parent(tmp_path):
    src = write_bytes(tmp_path / "in.jsonl", b'{"a.b": "dotted", "a": {"b": "nested"}}\n')
    map_text_file(src, tmp_path / "o.jsonl", upper, options=ReadOptions(text_fields=("a\\.b",)))
    assert (tmp_path / "o.jsonl").read_text() == '{"a.b": "DOTTED", "a": {"b": "nested"}}\n'
    bad = write_bytes(tmp_path / "bad.jsonl", b'{"a": "flat"}\n')
    with pytest.raises(FileError, match="'a' is a string, expected an object"):
        map_text_file(bad, tmp_path / "o2.jsonl", upper, options=ReadOptions(text_fields=("a.b",)))


def test_null_is_an_error_by_default(tmp_path):
    src = write_bytes(tmp_path / "in.jsonl", b'{"text": "a"}\n{"text": null}\n')
    with pytest.raises(FileError, match=r"in.jsonl:2: field 'text' is null, expected a string"):
        map_text_file(src, tmp_path / "o.jsonl", upper)
    summary = map_text_file(src, tmp_path / "o.jsonl", upper, options=ReadOptions(null="pass"))
    assert (tmp_path / "o.jsonl").read_text() == '{"text": "A"}\n{"text": null}\n'
    assert summary["null_texts"] == 1 and summary["records_out"] == 2


@pytest.mark.parametrize("suffix", [".txt", ".jsonl", ".csv"])
def test_skip_lists_the_malformed_records_by_line(tmp_path, suffix):
    good = {".txt": b"one\n", ".jsonl": b'{"text": "one"}\n', ".csv": b"one\n"}[suffix]
    bad = {".txt": b"bad \xff byte\n", ".jsonl": b'{"text": 1}\n', ".csv": b"x,y\n"}[suffix]
    header = b"text\n" if suffix == ".csv" else b""
    src = write_bytes(tmp_path / f"in{suffix}", header + good + bad + good + bad + good)
    with pytest.raises(FileError):
        map_text_file(src, tmp_path / f"out{suffix}", upper)
    assert not (tmp_path / f"out{suffix}").exists()
    summary = map_text_file(src, tmp_path / f"out{suffix}", upper,
                            options=ReadOptions(on_error="skip"))
    lines = [2, 4] if suffix != ".csv" else [3, 5]
    assert summary["records_in"] == 5 and summary["records_out"] == 3
    assert summary["records_skipped"] == 2
    assert [s["line"] for s in summary["skipped"]] == lines
    assert (tmp_path / f"out{suffix}").read_bytes().count(b"ONE") == 3


@pytest.mark.parametrize("ext", [".gz", ".zst"])
def test_compressed_in_and_out(tmp_path, ext):
    data = "".join(json.dumps({"id": i, "text": f"doc {i} é", "x": 2.5}, ensure_ascii=False) + "\n"
                   for i in range(3000)).encode()
    src = tmp_path / f"in.jsonl{ext}"
    src.write_bytes(gzip.compress(data) if ext == ".gz" else zstandard.ZstdCompressor().compress(data))
    summary = map_text_file(src, tmp_path / f"out.jsonl{ext}", same)
    out = (tmp_path / f"out.jsonl{ext}").read_bytes()
    plain = (gzip.decompress(out) if ext == ".gz"
             else zstandard.ZstdDecompressor().stream_reader(out).read())
    assert plain == data
    assert summary["input_compression"] == summary["output_compression"]
    # Compression may differ between the two sides; the format may not.
    map_text_file(src, tmp_path / "out.jsonl", same)
    assert (tmp_path / "out.jsonl").read_bytes() == data


@pytest.mark.parametrize("ext", [".gz", ".zst"])
def test_corrupt_compressed_input_is_one_line(tmp_path, ext):
    good = gzip.compress(b'{"text": "a"}\n' * 1000) if ext == ".gz" else \
        zstandard.ZstdCompressor().compress(b'{"text": "a"}\n' * 1000)
    src = write_bytes(tmp_path / f"in.jsonl{ext}", good[: len(good) // 2])
    with pytest.raises(FileError, match="corrupt or truncated") as info:
        map_text_file(src, tmp_path / "out.jsonl", same)
    assert "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"in.jsonl{ext}"]


def test_tsv_and_delimiter(tmp_path):
    src = write_bytes(tmp_path / "in.tsv", b'id\ttext\tlang\n1\thello world\ten\n2\t"a\tb"\tfr\n')
    with open_records(src) as reader:
        assert reader.header == ["id", "text", "lang"]
    map_text_file(src, tmp_path / "out.tsv", upper)
    assert (tmp_path / "out.tsv").read_bytes() == (
        b'id\ttext\tlang\n1\tHELLO WORLD\ten\n2\t"A\tB"\tfr\n')
    semi = write_bytes(tmp_path / "in.csv", b"id;text\n1;hello, world\n")
    map_text_file(semi, tmp_path / "out.csv", upper, options=ReadOptions(delimiter=";"))
    assert (tmp_path / "out.csv").read_bytes() == b"id;text\n1;HELLO, WORLD\n"


def test_csv_several_columns(tmp_path):
    src = write_bytes(tmp_path / "in.csv", b"a,id,b\nfirst,1,second\n")
    map_text_file(src, tmp_path / "out.csv", upper, options=ReadOptions(text_fields=("b", "a")))
    assert (tmp_path / "out.csv").read_bytes() == b"a,id,b\nFIRST,1,SECOND\n"


def test_parquet_several_columns_and_nulls(tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"a": ["x one", None, "x three"], "id": [1, 2, 3],
                             "b": ["y one", "y two", None]}), src)
    with pytest.raises(FileError, match="row 2: column 'a' is null"):
        map_text_file(src, tmp_path / "o.parquet", upper, options=ReadOptions(text_fields=("a", "b")))
    summary = map_text_file(src, tmp_path / "o.parquet", upper,
                            options=ReadOptions(text_fields=("a", "b"), null="pass"))
    t = pq.read_table(tmp_path / "o.parquet")
    assert t.column("a").to_pylist() == ["X ONE", None, "X THREE"]
    assert t.column("b").to_pylist() == ["Y ONE", "Y TWO", None]
    assert summary["null_texts"] == 2
    summary = map_text_file(src, tmp_path / "s.parquet", upper,
                            options=ReadOptions(text_fields=("a", "b"), on_error="skip"))
    assert pq.read_table(tmp_path / "s.parquet").column("id").to_pylist() == [1]
    assert [s["row"] for s in summary["skipped"]] == [2, 3]


def test_parquet_cannot_be_gzipped(tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": ["a"]}), src)
    with pytest.raises(FileError, match="compressed inside"):
        map_text_file(src, tmp_path / "o.parquet.gz", upper)


@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_fast_and_exact_paths_write_the_same_bytes(tmp_path, monkeypatch, batch_size):
    # Fast-path lines, exact-path lines (escapes, nesting, spacing) and blank lines mixed in one
    # batch, and a new text with a lone surrogate (must stay a \u escape: not UTF-8).
    lines = TRICKY + "\n  \n" + "".join(
        json.dumps({"id": i, "text": f"doc {i}", "t": "text"}) + "\n" for i in range(7))
    src = write_bytes(tmp_path / "in.jsonl", lines.encode())

    def odd(texts, start):
        return [t.upper() + ("\ud800" if (start + i) % 4 == 0 else "") for i, t in enumerate(texts)]

    map_text_file(src, tmp_path / "fast.jsonl", odd, batch_size=batch_size)
    monkeypatch.setattr(jsonl_module, "_validate", None)
    map_text_file(src, tmp_path / "exact.jsonl", odd, batch_size=batch_size)
    fast = (tmp_path / "fast.jsonl").read_bytes()
    assert fast == (tmp_path / "exact.jsonl").read_bytes()
    assert fast.count(b"\\ud800") == 4 and fast.decode("utf-8").count("\n") == lines.count("\n")
    assert [json.loads(x)["text"] for x in fast.decode().splitlines()[-7:]] == \
        [f"DOC {i}" + ("\ud800" if (i + 7) % 4 == 0 else "") for i in range(7)]


def test_truncated_line_message_ignores_the_line_ending(tmp_path):
    src = write_bytes(tmp_path / "in.jsonl", b'{"text": "a"}\n{"text": "b\n{"text": "c"}\n')
    with pytest.raises(FileError, match=r"in.jsonl:2: malformed JSON: Unterminated string"):
        map_text_file(src, tmp_path / "o.jsonl", upper)


def test_csv_malformed_quoting_skipped(tmp_path):
    src = write_bytes(tmp_path / "in.csv", b'text,n\none,1\n"bad"x,2\ntwo,3\n')
    summary = map_text_file(src, tmp_path / "o.csv", upper, options=ReadOptions(on_error="skip"))
    assert (tmp_path / "o.csv").read_bytes() == b"text,n\nONE,1\nTWO,3\n"
    assert [s["line"] for s in summary["skipped"]] == [3]


@pytest.mark.parametrize("fast", [True, False])
def test_keys_spelled_with_escapes(tmp_path, monkeypatch, fast):
    # "my/text" may be written "my\/text"; "text" may be written "te\u0078t". Each spelling is
    # the same key: found, and a second spelling in one object is a duplicate (never left raw).
    if not fast:
        monkeypatch.setattr(jsonl_module, "_validate", None)
    one = write_bytes(tmp_path / "one.jsonl", b'{"my\\/text": "one", "x": "caf\\u00e9"}\n')
    map_text_file(one, tmp_path / "o1.jsonl", upper, options=ReadOptions(text_fields=("my/text",)))
    assert (tmp_path / "o1.jsonl").read_bytes() == b'{"my\\/text": "ONE", "x": "caf\\u00e9"}\n'
    two = write_bytes(tmp_path / "two.jsonl", b'{"te\\u0078t": "two", "y": "\\u00e9"}\n')
    map_text_file(two, tmp_path / "o2.jsonl", upper)
    assert (tmp_path / "o2.jsonl").read_bytes() == b'{"te\\u0078t": "TWO", "y": "\\u00e9"}\n'
    dup = write_bytes(tmp_path / "dup.jsonl", b'{"my/text": "a", "my\\/text": "a"}\n')
    with pytest.raises(FileError, match="appears twice"):
        map_text_file(dup, tmp_path / "o3.jsonl", upper, options=ReadOptions(text_fields=("my/text",)))


@pytest.mark.parametrize("fast", [True, False])
def test_escapes_in_other_keys_and_values(tmp_path, monkeypatch, fast):
    # \u escapes elsewhere in the line keep the fast path exact: in another key, in a value, in a
    # nested key that spells "text" (not the top-level field: left alone).
    if not fast:
        monkeypatch.setattr(jsonl_module, "_validate", None)
    data = (b'{"caf\\u00e9": 1, "text": "x \\u00e9"}\n'
            b'{"a": {"te\\u0078t": "inner"}, "text": "outer \\\\u"}\n'
            b'{"v": "\\u00e9\\"", "text": "q", "w": "\\\\\\u00e9"}\n'
            b'{"te\\u0078t": "outer", "m": {"text": "inner"}}\n')
    src = write_bytes(tmp_path / "in.jsonl", data)
    map_text_file(src, tmp_path / "o.jsonl", upper)
    assert (tmp_path / "o.jsonl").read_bytes() == (
        '{"caf\\u00e9": 1, "text": "X É"}\n'
        '{"a": {"te\\u0078t": "inner"}, "text": "OUTER \\\\U"}\n'
        '{"v": "\\u00e9\\"", "text": "Q", "w": "\\\\\\u00e9"}\n'
        '{"te\\u0078t": "OUTER", "m": {"text": "inner"}}\n').encode()
