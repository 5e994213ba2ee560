"""The files of a synthetic release (``textdp synthesize``): the private records read into a
:class:`~textdp.synthesis.TextSource` (:func:`read_source`), and the synthetic documents encoded
in the output's format (:func:`encode_documents`)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

__all__ = ["encode_documents", "read_source"]


def read_source(path: Path, text_field: str, label_field: str | None, unit_field: str | None,
                format: str | None) -> Any:
    """The :class:`~textdp.synthesis.TextSource` of the records of ``path``: the text of each,
    with its label and its unit (person) where those fields are given (three distinct fields)."""
    from textdp.io import ReadOptions, open_records
    from textdp.synthesis.api import TextSource

    fields = [text_field] + [f for f in (label_field, unit_field) if f is not None]
    values: list[str] = []
    # Labels and persons may be integers or booleans (as most sets store them): read as text.
    options = ReadOptions(text_fields=tuple(fields), scalar_fields=tuple(fields[1:]))
    with open_records(path, format=format, options=options) as r:
        for batch in r.batches(4096):
            values += batch.texts
    k = len(fields)
    columns = [values[i::k] for i in range(k)]  # each record yields its fields in order
    labels = columns[1] if label_field is not None else None
    units = columns[-1] if unit_field is not None else None
    return TextSource.build(columns[0], labels, units, name=str(path))


def encode_documents(path: Path, texts: list[str], labels: list[str] | None, text_field: str,
                     label_field: str | None) -> bytes:
    """The synthetic documents (and their labels) as the bytes of ``path``'s format, by its
    extension: JSON lines, CSV/TSV with a header, Parquet, or text (one document a line, its
    white space folded)."""
    from textdp.io import format_of

    fmt = format_of(path)
    rows = [{text_field: t, **({label_field: lab} if labels is not None else {})}
            for t, lab in zip(texts, labels if labels is not None else [None] * len(texts),
                              strict=True)]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if fmt in ("csv", "tsv"):
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else [text_field],
                                delimiter="," if fmt == "csv" else "\t")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().encode("utf-8")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        sink = io.BytesIO()
        columns = {text_field: texts, **({label_field: labels} if labels is not None else {})}
        pq.write_table(pa.table(columns), sink)
        return sink.getvalue()
    return "".join(" ".join(t.split()) + "\n" for t in texts).encode("utf-8")
