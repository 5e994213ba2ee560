"""JSON Lines: one JSON object per line, the documents in string fields.

Guarantees: every object line in gives one line out in which only the text fields' string values
are replaced — every other byte of the line (other fields, numbers as written such as ``2.50``,
``1E400`` or an integer of 5000 digits, key order, escapes, whitespace, other duplicate keys, the
line ending) is copied from the input, so nothing is re-serialised; blank lines are passed
through where they were (they are not documents). A text field is a key of the object or a dotted
path into nested objects (``meta.text``; write ``\\.`` for a dot inside a key). Errors name the
line: invalid UTF-8, malformed or truncated JSON (``NaN`` and ``Infinity`` included: they are not
JSON), a value that is not an object, a missing text field, a text field that is not a string
(null: see ``ReadOptions.null``), a text field (or an object on a dotted text field's path) that
appears twice in one object — whatever the copies hold, since a parser keeps one copy and the
other would be released verbatim. Other duplicate keys are legal JSON and pass through as written.

Speed: a line is validated by a C JSON parser (orjson when installed, else the standard
library's), and for a single top-level text field the value's byte span is found with byte
searches whose correctness rests on the line being valid JSON (see :func:`_fast_span`); any other
line takes the exact path, which walks the object with the standard library's C scanner and
records the spans of the text fields.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from json.decoder import scanstring
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from textdp._guide import names_listing
from textdp.io._lines import LineFileReader, LineFileWriter, split_ending
from textdp.io.records import Batch, ReadOptions

try:
    import orjson as _orjson

    _validate: Any = _orjson.loads
    _INVALID: tuple[type[BaseException], ...] = (_orjson.JSONDecodeError,)
except ImportError:  # pragma: no cover - orjson is a dependency; the standard library is the fallback
    _orjson = None
    _validate = None
    _INVALID = ()

__all__ = ["JsonLinesReader", "JsonLinesWriter", "parse_field_path"]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_COLON_QUOTE = re.compile(rb'[ \t\n\r]*:[ \t\n\r]*"')
_COLON = re.compile(rb"[ \t\n\r]*:")
_BACKSLASH = 92
# Keys the fast path handles: their only other spelling in JSON is with \u escapes.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_\- ]+\Z")


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


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# The standard library's decoder, refusing NaN / Infinity (they are not JSON and must never be
# written); its scan_once is the C scanner: (value, end) for the value starting at an index.
# Integers are not converted to int: int() refuses more than sys.get_int_max_str_digits() digits
# (4300), yet a 5000-digit integer is valid JSON; outside the text fields only a value's type
# matters (its bytes are copied), and float() takes any number of digits (a big one is inf).
_DECODER = json.JSONDecoder(parse_constant=_no_constants, parse_int=float)
_scan_value = _DECODER.scan_once
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


def parse_field_path(field: str) -> tuple[str, ...]:
    """``"meta.text"`` → ``("meta", "text")``; ``"a\\.b"`` → ``("a.b",)``.

    Raises:
        ValueError: an empty part (``"a..b"``, ``".a"``).
    """
    parts = [p.replace("\0", ".") for p in field.replace("\\.", "\0").split(".")]
    if not all(parts):
        raise ValueError(f"text field {field!r} has an empty part")
    return tuple(parts)


class _Malformed(Exception):
    """The exact walk found the line not to be valid JSON (the message is made separately)."""


def _fields_near(content: str, name: str) -> str:
    """`` (fields: 'text', …)``: the fields of the object (or of the deepest object on a dotted
    path) that a missing text field ``name`` was looked up in, nearest first; only on an error."""
    try:
        obj = json.loads(content)
    except ValueError:
        return ""
    prefix: list[str] = []
    for part in name.split(".")[:-1]:
        if not isinstance(obj, dict) or not isinstance(obj.get(part), dict):
            break
        obj, prefix = obj[part], [*prefix, part]
    if not isinstance(obj, dict):
        return ""
    return f" ({names_listing(name, ['.'.join((*prefix, k)) for k in obj], 'fields')})"


class _Problem(Exception):
    """A valid JSON line that is not a usable record: the message."""


def _skip(s: str, idx: int) -> int:
    return _WHITESPACE.match(s, idx).end()  # type: ignore[union-attr]


class _FieldTree:
    """The text fields as a tree of keys: a leaf is the field's position on the command line."""

    def __init__(self, fields: Sequence[str]) -> None:
        self.fields = list(fields)
        self.paths = [parse_field_path(f) for f in fields]
        self.root: dict[str, Any] = {}
        for index, path in enumerate(self.paths):
            node = self.root
            for key in path[:-1]:
                child = node.setdefault(key, {})
                if not isinstance(child, dict):
                    raise ValueError(f"text field {fields[index]!r} lies inside text field "
                                     f"{key!r}")
                node = child
            if path[-1] in node:
                raise ValueError(f"text field {fields[index]!r} contains another text field")
            node[path[-1]] = index

    def leaves(self, node: dict[str, Any]) -> Iterator[int]:
        for child in node.values():
            if isinstance(child, dict):
                yield from self.leaves(child)
            else:
                yield child

    def walk(self, s: str) -> dict[int, tuple[int, int, Any] | tuple[None, str, Any]]:
        """For each text field found: (start, end, value) of its value in ``s``, or
        (None, parent name, parent value) when a parent on its path is not an object.

        Raises:
            _Malformed: ``s`` is not one valid JSON object (with nothing after it).
            _Problem: a text field (or a parent of one) appears twice in one object.
        """
        found: dict[int, Any] = {}
        try:
            idx = _skip(s, 0)
            if s[idx:idx + 1] != "{":
                raise _Malformed
            end = self._object(s, idx, self.root, (), found)
            if _skip(s, end) != len(s):
                raise _Malformed
        except (json.JSONDecodeError, StopIteration, IndexError, ValueError, RecursionError):
            raise _Malformed from None
        return found

    def _object(self, s: str, idx: int, node: dict[str, Any], prefix: tuple[str, ...],
                found: dict[int, Any]) -> int:
        idx = _skip(s, idx + 1)
        if s[idx:idx + 1] == "}":
            return idx + 1
        seen: set[str] = set()
        while True:
            if s[idx:idx + 1] != '"':
                raise _Malformed
            key, idx = scanstring(s, idx + 1, True)
            idx = _skip(s, idx)
            if s[idx:idx + 1] != ":":
                raise _Malformed
            idx = _skip(s, idx + 1)
            child = node.get(key)
            if child is not None:
                if key in seen:
                    raise _Problem(f"field {'.'.join((*prefix, key))!r} appears twice in this "
                                   "object")
                seen.add(key)
            if isinstance(child, dict) and s[idx:idx + 1] == "{":
                idx = self._object(s, idx, child, (*prefix, key), found)
            else:
                value, end = _scan_value(s, idx)
                if isinstance(child, dict):  # a parent of text fields that is not an object
                    for leaf in self.leaves(child):
                        found[leaf] = (None, ".".join((*prefix, key)), value)
                elif child is not None:
                    found[child] = (idx, end, value)
                idx = end
            idx = _skip(s, idx)
            c = s[idx:idx + 1]
            if c == "}":
                return idx + 1
            if c != ",":
                raise _Malformed
            idx = _skip(s, idx + 1)


def _malformed_message(content: str) -> str:
    """Why ``content`` is not a JSON object, in the words of the standard library's parser."""
    try:
        value = _DECODER.decode(content)
    except json.JSONDecodeError as exc:
        return f"malformed JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return "JSON nested too deeply"
    except ValueError as exc:  # NaN, Infinity
        return f"malformed JSON: {exc}"
    if not isinstance(value, dict):
        return f"expected a JSON object, found {json_type(value)}"
    return "malformed JSON"  # pragma: no cover - the walk and the parser disagree


def _closing_quote(raw: bytes, start: int) -> int:
    """The index of the quote closing the JSON string whose opening quote is at ``start``."""
    q = raw.find(b'"', start + 1)
    while raw[q - 1] == _BACKSLASH:
        b = q - 1
        while raw[b] == _BACKSLASH:
            b -= 1
        if (q - 1 - b) % 2 == 0:  # an even run of backslashes: they escape each other
            return q
        q = raw.find(b'"', q + 1)
    return q


# A JSON string token, and (group 2) the ':' after it when it is a key. On a valid JSON line,
# finditer from the start meets every string token in order: outside strings there are no quotes.
_STRING_TOKEN = re.compile(rb'"((?:[^"\\]++|\\.)*+)"([ \t\n\r]*+:[ \t\n\r]*+)?')


def _span_by_tokens(raw: bytes, key: str) -> int:
    """:func:`_fast_span` for any line and key: every key token of ``raw`` is decoded and compared
    with ``key`` (escapes such as ``\\u0074`` included); exactly one may match, and its value must
    be a string."""
    plain = key.encode("utf-8")
    at = -1
    for m in _STRING_TOKEN.finditer(raw):
        if m.group(2) is None:
            continue  # a value
        body = m.group(1)
        if body == plain or (b"\\" in body and scanstring(body.decode("utf-8") + '"', 0)[0] == key):
            if at != -1:
                return -1  # a nested key of that name, or a duplicate: the exact path decides
            at = m.end() if raw[m.end():m.end() + 1] == b'"' else -2
    return max(at, -1)


def _escaped_key(raw: bytes) -> bool:
    """Whether a key of ``raw`` (valid JSON) holds a ``\\u`` escape: for each string holding
    one, its closing quote is found and the string is a key if a ``:`` follows."""
    p = raw.find(b"\\u")
    while p >= 0:
        q = _closing_quote(raw, p - 1)
        if _COLON.match(raw, q + 1) is not None:
            return True
        p = raw.find(b"\\u", q + 1)
    return False


def _fast_span(raw: bytes, quoted_key: bytes, key: str | None = None) -> int:
    """The index of the opening quote of the value of the one key spelled ``quoted_key`` in
    ``raw``, a line already validated as a JSON object whose top-level key has a string value;
    -1 when that cannot be settled (the exact path then decides). ``key`` given: a key that is
    not plain (see below), always compared token by token (:func:`_span_by_tokens`), as are lines
    with a ``\\u`` escape in a key.

    Why this is exact on valid JSON without ``\\u`` escapes in keys: inside a JSON string every
    ``"`` is preceded by a backslash, so an occurrence of ``"key"`` not preceded by one starts a
    string token, and one followed by ``:`` is a key. Without ``\\u`` escapes in keys, a key
    equal to ``key`` can only be spelled ``"key"`` (the fast path takes only keys of letters,
    digits, ``_``, ``-`` and spaces). So if exactly one such key token exists, it is the top-level
    one (nested keys and duplicates would be further tokens). Key tokens are counted whatever
    their value: ``{"text": ["secret"], "text": "hi"}`` is decoded by the validating parser as
    ``{"text": "hi"}`` (the last copy wins), and releasing the first copy verbatim would leak it;
    such a line goes to the exact path, which refuses a duplicate on the text path.
    """
    if key is not None or (b"\\" in raw and b"\\u" in raw and _escaped_key(raw)):
        return _span_by_tokens(raw, key if key is not None else quoted_key[1:-1].decode())
    n = len(quoted_key)
    i = raw.find(quoted_key)
    if i > 0 and raw.find(quoted_key, i + n) < 0 and raw[i - 1] != _BACKSLASH:  # the usual line
        j = i + n
        if raw.startswith(b': "', j):  # as json.dumps writes it
            return j + 2
        m = _COLON_QUOTE.match(raw, j)
        return -1 if m is None else m.end() - 1
    at = -1
    while i >= 0:
        if (i == 0 or raw[i - 1] != _BACKSLASH) and _COLON.match(raw, i + n) is not None:
            if at != -1:  # a second key token of that name
                return -1
            m = _COLON_QUOTE.match(raw, i + n)
            at = -2 if m is None else m.end() - 1  # -2: a key whose value is not a string
        i = raw.find(quoted_key, i + n)
    return max(at, -1)


def _encode(text: str) -> bytes:
    """``text`` as a JSON string, UTF-8; a lone surrogate (legal as a ``\\u`` escape, not in
    UTF-8) keeps it escaped."""
    try:
        return encode_basestring(text).encode("utf-8")
    except UnicodeEncodeError:
        return encode_basestring_ascii(text).encode("ascii")


class JsonLinesReader(LineFileReader):
    """Documents are the text-field strings of the objects of a JSON Lines file."""

    format = "jsonl"

    def __init__(self, path: str | os.PathLike, *, text_field: str = "text",
                 options: ReadOptions | None = None, compression: str | None = None) -> None:
        super().__init__(path, text_field=text_field, options=options, compression=compression)
        self.blank_lines = 0
        self._exact_entries = 0  # in the batch being read
        try:
            self._tree = _FieldTree(self.text_fields)
        except ValueError:
            self.close()
            raise
        path0 = self._tree.paths[0]
        self._fast_key: str | None = None
        if _validate is not None and len(self.text_fields) == 1 and len(path0) == 1:
            self._fast_key = path0[0]

    def batches(self, batch_size: int) -> Iterator[Batch]:
        lines, key = self._lines, self._fast_key
        quoted = f'"{key}"'.encode() if key is not None else b""
        # A key with other spellings than "key" (\/, escapes) is compared token by token.
        other = key if key is not None and not _PLAIN_KEY.match(key) else None
        entries: list[Any] = []
        texts: list[str] = []
        records = 0
        mark = lines.bytes_read
        for raw in lines.raw():
            if key is not None:  # the fast path; every doubt goes to _exact
                try:
                    obj = _validate(raw)
                except _INVALID:
                    obj = None
                text = obj.get(key) if type(obj) is dict else None
                if type(text) is str:
                    start = _fast_span(raw, quoted, other)
                    if start >= 0:
                        end = raw.find(b'"', start + 1)
                        if raw[end - 1] == _BACKSLASH:
                            end = _closing_quote(raw, start)
                        entries.append((raw, start, end + 1))
                        texts.append(text)
                        records += 1
                        if len(texts) >= batch_size:
                            yield self._batch(texts, entries, records, mark)
                            mark, entries, texts, records = lines.bytes_read, [], [], 0
                        continue
            entry = self._exact(raw, texts)
            if entry is None:
                continue
            self._exact_entries += 1
            entries.append(entry)
            if type(entry) is not bytes:
                records += 1
                if len(texts) >= batch_size:
                    yield self._batch(texts, entries, records, mark)
                    mark, entries, texts, records = lines.bytes_read, [], [], 0
        if entries:
            yield self._batch(texts, entries, records, mark)

    def _payload(self, entries: list[Any]) -> Any:
        # (entries, BOM, whether every entry is the fast path's (raw, start, end))
        all_fast, self._exact_entries = self._exact_entries == 0, 0
        return entries, self._lines.bom, all_fast

    def _records(self) -> Iterator[tuple[list[str] | None, Any]]:  # pragma: no cover
        raise NotImplementedError("JsonLinesReader.batches reads the lines itself")

    def _exact(self, raw: bytes, texts: list[str]) -> Any:
        """The entry of one line by the exact path, its documents appended to ``texts``: the
        line's bytes for a blank line, ``(line, spans, n)`` for a record, None for a line
        rejected under ``on_error="skip"``."""
        line = self._lines.decode(raw)
        if line is None:
            return None
        if not line.strip():
            self.blank_lines += 1
            return raw
        content = split_ending(line)[0]  # spans in it are spans in line
        try:
            found = self._tree.walk(content)
        except _Malformed:
            self.reject(self._lines.line, _malformed_message(content))
            return None
        except _Problem as exc:
            self.reject(self._lines.line, str(exc))
            return None
        spans, docs = [], []
        for j, name in enumerate(self.text_fields):
            where = found.get(j)
            if where is None:
                self.reject(self._lines.line,
                            f"no field {name!r} in this object{_fields_near(content, name)}")
                return None
            start, end, value = where
            if isinstance(value, str) and start is not None:
                spans.append((start, end, len(docs)))
                docs.append(value)
            elif (start is not None and name in self.options.scalar_fields
                  and (type(value) is bool or _INTEGER.fullmatch(content, start, end))):
                # An integer or boolean label, as written ("3", "true"): integers are decoded
                # as floats (parse_int), so the literal tells them from 3.0. No span: the
                # record keeps it when written back.
                docs.append(content[start:end])
            elif value is None and self.options.null == "pass":
                self.null_texts += 1
            elif start is None:
                self.reject(self._lines.line, f"field {end!r} is {json_type(value)}, "
                                              f"expected an object (it holds {name!r})")
                return None
            else:
                expected = ("a string, an integer or a boolean"
                            if name in self.options.scalar_fields else "a string")
                self.reject(self._lines.line,
                            f"field {name!r} is {json_type(value)}, expected {expected}")
                return None
        texts += docs
        spans.sort()
        return line, spans, len(docs)

    def writer(self, path: str | os.PathLike, *, compression: str | None = None
               ) -> JsonLinesWriter:
        return JsonLinesWriter(path, compression=compression)

    def stats(self) -> dict[str, Any]:
        return {"records": self.records_read, "blank_lines": self.blank_lines,
                **self.error_stats()}


class JsonLinesWriter(LineFileWriter):
    """Writes each line with the text fields' string values replaced, every other byte as read."""

    def _write(self, batch: Batch, texts: Sequence[str]) -> None:
        entries, bom, all_fast = batch.payload
        out = [self._start(bom)]
        k = 0
        if all_fast:
            encode = encode_basestring
            try:  # the usual batch: no lone surrogate in the new texts
                for raw, start, end in entries:
                    out += (raw[:start], encode(texts[k]).encode("utf-8"), raw[end:])
                    k += 1
            except UnicodeEncodeError:
                out, k = [out[0]], 0
            else:
                self._fh.write(b"".join(out))
                return
        for entry in entries:
            if type(entry) is bytes:  # a blank line
                out.append(entry)
            elif len(entry) == 3 and type(entry[0]) is bytes:  # the fast path's (raw, start, end)
                raw, start, end = entry
                out += (raw[:start], _encode(texts[k]), raw[end:])
                k += 1
            else:  # the exact path's (line, spans, n)
                line, spans, n = entry
                pos = 0
                for start, end, j in spans:
                    out += (line[pos:start].encode("utf-8"), _encode(texts[k + j]))
                    pos = end
                out.append(line[pos:].encode("utf-8"))
                k += n
        self._fh.write(b"".join(out))
