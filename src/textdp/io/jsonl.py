"""JSON Lines: one JSON object per line, the document in one string field.

Guarantees: every object line in gives one object line out with the same keys in the same order
and every value but the text field equal (as JSON values) to the input's; each line keeps its
ending; blank lines are passed through where they were (they are not documents). Errors name the
line: invalid UTF-8, malformed or truncated JSON, a value that is not an object, a missing text
field, a text field that is not a string.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from textdp.io._lines import LineFileReader, LineFileWriter, split_ending
from textdp.io.errors import FileError
from textdp.io.records import Batch

__all__ = ["JsonLinesReader", "JsonLinesWriter"]


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class JsonLinesReader(LineFileReader):
    """Documents are the ``text_field`` strings of the objects of a JSON Lines file."""

    format = "jsonl"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        super().__init__(path, text_field=text_field)
        self.blank_lines = 0

    def _records(self) -> Iterator[tuple[str | None, tuple[dict[str, Any] | None, str, str]]]:
        # Entries: (object or None for a blank line, the blank line's text, line ending).
        path, field = str(self.path), self.text_field
        for line in self._lines:
            content, ending = split_ending(line)
            if not content.strip():
                self.blank_lines += 1
                yield None, (None, content, ending)
                continue
            try:
                obj = json.loads(content)
            except json.JSONDecodeError as exc:
                raise FileError(path, self._lines.line,
                                f"malformed JSON: {exc.msg} (column {exc.colno})") from None
            except RecursionError:
                raise FileError(path, self._lines.line, "JSON nested too deeply") from None
            if not isinstance(obj, dict):
                raise FileError(path, self._lines.line,
                                f"expected a JSON object, found {json_type(obj)}")
            if field not in obj:
                raise FileError(path, self._lines.line, f"no field {field!r} in this object")
            text = obj[field]
            if not isinstance(text, str):
                raise FileError(path, self._lines.line,
                                f"field {field!r} is {json_type(text)}, expected a string")
            yield text, (obj, "", ending)

    def writer(self, path: str | os.PathLike) -> JsonLinesWriter:
        return JsonLinesWriter(path, text_field=self.text_field)

    def stats(self) -> dict[str, Any]:
        return {"records": self.records_read, "blank_lines": self.blank_lines}


class JsonLinesWriter(LineFileWriter):
    """Writes each object with its text field replaced, as UTF-8 JSON, one object per line."""

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text") -> None:
        super().__init__(path)
        self.text_field = text_field

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        entries, bom = batch.payload
        parts = [self._start(bom)]
        it = iter(texts)
        for obj, blank, ending in entries:
            if obj is None:
                parts.append((blank + ending).encode("utf-8"))
                continue
            obj[self.text_field] = next(it)  # assigning an existing key keeps the key order
            line = json.dumps(obj, ensure_ascii=False)
            try:
                data = line.encode("utf-8")
            except UnicodeEncodeError:
                # A lone surrogate (legal as a JSON \\u escape, not in UTF-8) must stay escaped.
                data = json.dumps(obj, ensure_ascii=True).encode("ascii")
            parts.append(data + ending.encode("ascii"))
        self._fh.write(b"".join(parts))
