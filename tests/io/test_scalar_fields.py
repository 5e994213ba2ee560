"""Integer and boolean labels read as text (``ReadOptions.scalar_fields``, issue 37): JSON numbers
and booleans, Parquet integer and boolean columns, as most labelled sets store their classes;
a float, or an integer in a field not named, is still refused in one line."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp.io import FileError, ReadOptions, map_text_file, open_records

LABELLED = ReadOptions(text_fields=("text", "issue"), scalar_fields=("issue",))


def _read(path, options):
    with open_records(path, options=options) as reader:
        return [t for batch in reader.batches(3) for t in batch.texts]


def test_jsonl_integers_and_booleans_are_read_as_written(tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text('{"text": "a b", "issue": 3}\n{"text": "c", "issue": -12}\n'
                   '{"text": "d", "issue": true}\n{"text": "e", "issue": "refund"}\n'
                   '{"text": "f", "issue": 123456789012345678901234567890}\n', encoding="utf-8")
    assert _read(src, LABELLED) == ["a b", "3", "c", "-12", "d", "true", "e", "refund",
                                    "f", "123456789012345678901234567890"]


@pytest.mark.parametrize("value, kind", [("3.0", "a number"), ("1e2", "a number"),
                                         ("null", "null"), ("[1]", "an array")])
def test_jsonl_other_values_are_still_refused(tmp_path, value, kind):
    src = tmp_path / "a.jsonl"
    src.write_text(f'{{"text": "a", "issue": {value}}}\n', encoding="utf-8")
    with pytest.raises(FileError, match=f"field 'issue' is {kind}, expected a string, an "
                                        "integer or a boolean"):
        _read(src, LABELLED)


def test_jsonl_integer_in_a_field_not_named_is_refused(tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text('{"text": "a", "issue": 3}\n', encoding="utf-8")
    with pytest.raises(FileError, match="'issue' is a number, expected a string$"):
        _read(src, ReadOptions(text_fields=("text", "issue")))


def test_jsonl_written_back_keeps_the_label_as_it_was(tmp_path):
    src, out = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    src.write_text('{"text": "a b", "issue": 3}\n', encoding="utf-8")
    map_text_file(src, out, lambda texts, _start: [t.upper() for t in texts], options=LABELLED)
    assert out.read_text(encoding="utf-8") == '{"text": "A B", "issue": 3}\n'


def test_parquet_integer_and_boolean_columns(tmp_path):
    src = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": ["a", "b"], "issue": pa.array([1, 2], pa.int8()),
                             "flag": [True, False], "score": [0.5, 1.0]}), src)
    assert _read(src, LABELLED) == ["a", "1", "b", "2"]
    assert _read(src, ReadOptions(text_fields=("text", "flag"), scalar_fields=("flag",))) \
        == ["a", "true", "b", "false"]
    with pytest.raises(FileError, match="column 'score' has type double, expected string, "
                                        "integer or boolean"):
        _read(src, ReadOptions(text_fields=("text", "score"), scalar_fields=("score",)))
    with pytest.raises(FileError, match="column 'issue' has type int8, expected string$"):
        _read(src, ReadOptions(text_fields=("text", "issue")))


def test_scalar_fields_must_be_text_fields():
    with pytest.raises(ValueError, match="must be among the text fields"):
        ReadOptions(text_fields=("text",), scalar_fields=("issue",))
