"""The user's own data for ``textdp calibrate INPUT`` and ``textdp evaluate INPUT``.

* :func:`read_user_data` reads the documents (and, with ``label_field``, one label per document)
  of a JSONL, CSV/TSV, Parquet or text file with :mod:`textdp.io`'s readers, so every problem with
  the file is the readers' one-line :class:`~textdp.io.FileError`.
* :func:`data_words` counts the words of the documents as a release would privatise them: the
  documents go through the release's own :class:`~textdp.pipeline.Privatizer` (same tokeniser,
  vocabulary, stop-word policy, identifier and entity stage), and the counts are read from its
  accounting. Out-of-vocabulary words, numbers, identifiers and entities are counted apart —
  they never reach the mechanism, so N_w and S_w say nothing about them — and reported, never
  silently dropped.
* :meth:`DataWords.select` picks the words to measure N_w and S_w on, with weights such that a
  weighted mean over them estimates the mean over every privatised word occurrence of the data
  (a word that occurs 100 times counts 100 times).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp._checks import check_rng

__all__ = ["UserData", "DataWords", "measured_on_text", "words_of_file", "read_user_data",
           "read_batches", "data_words", "words_of_run"]

#: Documents per batch while reading and counting.
BATCH_SIZE = 2048


@dataclass(frozen=True)
class UserData:
    """Documents of one file, with their labels when a label field was given.

    Attributes:
        input: the file as messages name it.
        format: its format (:data:`textdp.io.FORMATS`).
        text_field: the field or column of the documents (``None`` for ``.txt``).
        label_field: the field or column of the labels, or None.
        texts: the documents, in file order.
        labels: one label per document (as strings), or None.
    """

    input: str
    format: str
    text_field: str | None
    label_field: str | None
    texts: tuple[str, ...]
    labels: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def describe(self) -> dict[str, Any]:
        """What was read, for a report (no text)."""
        out: dict[str, Any] = {"input": self.input, "format": self.format,
                               "text_field": self.text_field, "documents": len(self.texts)}
        if self.labels is not None:
            out["label_field"] = self.label_field
            out["label_counts"] = dict(sorted(Counter(self.labels).items()))
        return out

    def sample(self, n: int, rng: np.random.Generator | None = None) -> UserData:
        """At most ``n`` documents drawn uniformly without replacement, in file order (all of
        them when there are at most ``n``)."""
        if len(self.texts) <= n:
            return self
        keep = np.sort(check_rng(rng).choice(len(self.texts), size=n, replace=False)).tolist()
        return UserData(input=self.input, format=self.format, text_field=self.text_field,
                        label_field=self.label_field, texts=tuple(self.texts[i] for i in keep),
                        labels=None if self.labels is None else tuple(self.labels[i] for i in keep))

    def task(self) -> Any:
        """The labelled documents as a :class:`textdp.evaluation.utility.Task`.

        Raises:
            ValueError: no labels, fewer than two classes, or a class with fewer than two
                documents (the stratified split needs one to train on and one to test on).
        """
        from textdp.evaluation.utility import Task

        if self.labels is None:
            raise ValueError("the data has no labels (give a label field)")
        counts = Counter(self.labels)
        if len(counts) < 2:
            raise ValueError(f"{self.input}: label field {self.label_field!r} holds one class "
                             f"only ({next(iter(counts))!r}); a classification needs two or more")
        rare = sorted(k for k, n in counts.items() if n < 2)
        if rare:
            shown = ", ".join(repr(k) for k in rare[:5])
            raise ValueError(f"{self.input}: {len(rare)} label(s) with a single document "
                             f"({shown}); every class needs at least two (one to train, one "
                             "to test): merge or drop them")
        names = tuple(sorted(counts))
        index = {n: i for i, n in enumerate(names)}
        return Task(name=os.path.basename(self.input) or self.input, texts=self.texts,
                    labels=np.fromiter((index[x] for x in self.labels), dtype=np.int64,
                                       count=len(self.labels)),
                    label_names=names,
                    description=f"{self.label_field!r} of {self.input} "
                                f"({len(names)} classes)")


def read_batches(path: str | os.PathLike, *, text_field: str = "text",
                 format: str | None = None) -> Iterator[list[str]]:
    """The documents of ``path``, batch by batch (the readers of :mod:`textdp.io`).

    Raises:
        FileError: anything wrong with the file or a record, as one line.
    """
    from textdp.io import open_records

    with open_records(path, text_field=text_field, format=format) as reader:
        for batch in reader.batches(BATCH_SIZE):
            yield batch.texts


def read_user_data(path: str | os.PathLike, *, text_field: str = "text",
                   label_field: str | None = None, format: str | None = None) -> UserData:
    """Read the documents of ``path`` (and their labels) into memory.

    A label may be a string, a number or a boolean (JSON), any CSV value, or a Parquet value of
    any scalar type; it is compared as text. The label field is read from the same records as
    the documents, in one pass.

    Raises:
        FileError: anything wrong with the file, a missing text or label field, a null or
            non-scalar label, ``--label-field`` on a ``.txt`` file, or a file without documents.
    """
    from textdp.io import FileError, open_records
    from textdp.io.streams import display_name

    name = display_name(path)
    texts: list[str] = []
    labels: list[str] | None = None if label_field is None else []
    with open_records(path, text_field=text_field, format=format) as reader:
        fmt = reader.format
        if label_field is not None and fmt == "txt":
            raise FileError(name, None, "a .txt file has no fields: a label field needs a "
                                        "JSONL, CSV/TSV or Parquet file")
        if label_field is not None and label_field == text_field:
            raise FileError(name, None, f"the label field {label_field!r} is the text field")
        labels_of = None if label_field is None else _label_reader(reader, label_field, name)
        for batch in reader.batches(BATCH_SIZE):
            texts += batch.texts
            if labels_of is not None and labels is not None:
                labels += labels_of(batch.payload)
    if not texts:
        raise FileError(name, None, "holds no documents")
    if labels is not None and len(labels) != len(texts):  # pragma: no cover - a reader bug
        raise RuntimeError(f"{len(labels)} labels for {len(texts)} documents")
    return UserData(input=name, format=fmt, text_field=None if fmt == "txt" else text_field,
                    label_field=label_field, texts=tuple(texts),
                    labels=None if labels is None else tuple(labels))


def _label(value: Any, field: str) -> str:
    """A label value as text; ValueError for null and for objects or lists."""
    if value is None:
        raise ValueError(f"label field {field!r} is null")
    if isinstance(value, (dict, list)):
        raise ValueError(f"label field {field!r} is {'an object' if isinstance(value, dict) else 'a list'}, "
                         "expected a string, number or boolean")
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _label_reader(reader: Any, label_field: str, name: str) -> Any:
    """A function from a batch's payload to the labels of its records, for ``reader``'s format.

    It reads the records the reader has already parsed and checked (the batch payload), so the
    labels line up with the documents one for one.
    """
    from textdp._guide import names_listing
    from textdp.io import FileError

    fmt = reader.format
    if fmt in ("csv", "tsv"):
        header = list(reader.header)
        if label_field not in header:
            raise FileError(name, None, f"no column {label_field!r} in the header "
                                        f"({names_listing(label_field, header)})")
        column = header.index(label_field)
        return lambda rows: [row[column] for row in rows if row]
    if fmt == "parquet":
        names = list(reader.schema.names)
        if label_field not in names:
            raise FileError(name, None, f"no column {label_field!r} "
                                        f"({names_listing(label_field, names)})")
        done = [0]

        def parquet_labels(payload: Any) -> list[str]:
            record_batch = payload[0]
            out = []
            for value in record_batch.column(record_batch.schema.get_field_index(label_field)
                                             ).to_pylist():
                done[0] += 1
                try:
                    out.append(_label(value, label_field))
                except ValueError as exc:
                    raise FileError(name, done[0], str(exc), unit="row") from None
            return out

        return parquet_labels
    # JSON Lines: a payload entry is one physical line — bytes for a blank line, else a tuple
    # whose first item is the line (bytes or str).
    from textdp.io.jsonl import parse_field_path

    path = parse_field_path(label_field)
    line = [0]

    def jsonl_labels(payload: Any) -> list[str]:
        out = []
        for entry in payload[0]:
            line[0] += 1
            if isinstance(entry, bytes):
                continue
            value: Any = json.loads(entry[0])
            for key in path:
                if not isinstance(value, dict) or key not in value:
                    fields = list(value) if isinstance(value, dict) else []
                    raise FileError(name, line[0], f"no field {label_field!r} in this object "
                                                   f"({names_listing(key, fields, 'fields')})")
                value = value[key]
            try:
                out.append(_label(value, label_field))
            except ValueError as exc:
                raise FileError(name, line[0], str(exc)) from None
        return out

    return jsonl_labels


@dataclass(frozen=True)
class DataWords:
    """The words of a data set that a release would privatise, with their counts.

    Attributes:
        ids: vocabulary rows of the distinct privatised words, most frequent first.
        counts: how often each occurs (aligned with ``ids``).
        words: the words themselves.
        documents: documents read.
        tokens: tokens by class (word, number, identifier, whitespace, …).
        by_policy: the release's accounting: ``privatized``, ``oov_words_masked``,
            ``numbers_masked``, ``identifiers_masked``, ``entities_masked``, ``stopwords_kept``, …
        spans: identifier and entity spans found, by kind.
    """

    ids: np.ndarray
    counts: np.ndarray
    words: tuple[str, ...]
    documents: int
    tokens: dict[str, int]
    by_policy: dict[str, int]
    spans: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Privatised word occurrences."""
        return int(self.counts.sum())

    def select(self, n: int, rng: np.random.Generator | None = None
               ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """At most ``n`` words to measure, their weights, and how they were chosen.

        All the distinct words when there are at most ``n``; each then weighs its count. Else the
        ``n // 2`` most frequent words (weight: their count) and ``n − n // 2`` drawn uniformly
        from the others (weight: count × others / drawn, so that the weighted mean over the
        selection is an unbiased-ratio estimate of the mean over every occurrence). The worst
        case over the selection is the worst case over measured words only: rare words are
        sampled, not all measured.
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"the number of words must be a positive integer, got {n!r}")
        k = self.ids.size
        if k == 0:
            raise ValueError("the data has no word the mechanism would privatise")
        info: dict[str, Any] = {"distinct_words": k, "occurrences": self.total}
        if k <= n:
            info.update(measured=k, most_frequent=k, sampled=0,
                        measured_occurrences=self.total)
            return self.ids.copy(), self.counts.astype(np.float64), info
        top = n // 2
        rest = k - top
        m = n - top
        pick = top + np.sort(check_rng(rng).choice(rest, size=m, replace=False))
        chosen = np.concatenate([np.arange(top), pick])
        weights = self.counts[chosen].astype(np.float64)
        weights[top:] *= rest / m
        info.update(measured=n, most_frequent=top, sampled=m, sampled_from=rest,
                    measured_occurrences=int(self.counts[chosen].sum()))
        return self.ids[chosen], weights, info

    def describe(self) -> dict[str, Any]:
        """Counts for a report (no text beyond the ten most frequent privatised words)."""
        return {"documents": self.documents, "privatized_words": self.total,
                "distinct_privatized_words": int(self.ids.size),
                "most_frequent": [[w, int(c)] for w, c in
                                  zip(self.words[:10], self.counts[:10].tolist(), strict=True)],
                "not_privatized": {k: v for k, v in self.by_policy.items()
                                   if k not in ("privatized", "privatized_unchanged") and v},
                "spans_by_kind": {k: v for k, v in self.spans.items() if v},
                "tokens_by_class": dict(self.tokens)}


def words_of_file(path: str | os.PathLike, spec: Any, *, text_field: str, format: str | None,
                  words: int, rng: Any) -> tuple[Any, Any, dict[str, Any]]:
    """The vocabulary rows to measure (at most ``words``: :meth:`DataWords.select`), their
    weights (counts), and what was measured (``measured_on``), from the words ``spec`` privatises
    in the documents of ``path``; a FileError naming ``path`` when it has none to measure."""
    from textdp.io import FileError
    from textdp.io.streams import display_name

    counted = data_words(read_batches(path, text_field=text_field, format=format), spec)
    try:
        ids, weights, selection = counted.select(words, rng)
    except ValueError as exc:
        raise FileError(display_name(path), None, str(exc)) from None  # FileError folds lines
    measured_on = {"source": "data", "input": display_name(path),
                   "text_field": text_field, **counted.describe(), "selection": selection,
                   "weighted_by": "count in the data"}
    return ids, weights, measured_on


def measured_on_text(m: dict[str, Any]) -> str:
    """What the data gave (``measured_on`` of ``textdp calibrate INPUT``: documents, privatised
    words, the selection, what was not measured), one line each."""
    sel = m["selection"]
    how = ("all of them" if not sel["sampled"] else
           f"the {sel['most_frequent']:,} most frequent and {sel['sampled']:,} drawn uniformly "
           f"from the other {sel['sampled_from']:,}")
    cover = sel["measured_occurrences"] / max(sel["occurrences"], 1)
    lines = [f"measured on {m['input']}: {m['documents']:,} documents, "
             f"{m['privatized_words']:,} privatised words ({m['distinct_privatized_words']:,} "
             f"distinct); {sel['measured']:,} measured ({how}), {cover:.1%} of the "
             "occurrences; means weighted by count"]
    apart = {k: v for k, v in m["not_privatized"].items()}
    if apart:
        lines.append("not privatised, so not measured: "
                     + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in apart.items()))
    if m["spans_by_kind"]:
        lines.append("identifier and entity spans by kind: "
                     + ", ".join(f"{k} {v:,}" for k, v in m["spans_by_kind"].items()))
    return "".join(line + "\n" for line in lines)


def data_words(batches: Iterable[list[str]], spec: Any) -> DataWords:
    """Count the words of ``batches`` that the release ``spec`` would privatise.

    The documents go through ``spec.privatizer()`` — the release's own tokeniser, vocabulary,
    stop-word, identifier and entity policy — and the counts are its accounting, so what is
    counted is exactly what reaches the mechanism. The private texts are discarded.
    """
    runner = spec.privatizer()
    for texts in batches:
        runner.run(texts)
    return words_of_run(runner)


def words_of_run(runner: Any) -> DataWords:
    """The :class:`DataWords` of everything a :class:`textdp.pipeline.Privatizer` has run."""
    c = runner.tallies()
    ids = np.asarray(c.word_ids, dtype=np.int64)
    counts = np.asarray(c.word_counts, dtype=np.int64)
    order = np.lexsort((ids, -counts))  # most frequent first, ties in vocabulary order
    ids, counts = ids[order], counts[order]
    words = runner.mechanism.vocabulary.words_array[ids].tolist()
    return DataWords(ids=ids, counts=counts, words=tuple(words), documents=int(c.documents),
                     tokens={k: int(v) for k, v in c.by_class.items()},
                     by_policy={k: int(v) for k, v in c.by_policy.items()},
                     spans={k: int(v) for k, v in c.by_kind.items()})
