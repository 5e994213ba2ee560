"""Hugging Face ``datasets``: privatise text columns with ``Dataset.map(batched=True)``.

``privatize(ds, column="text", mechanism="mvc", epsilon=8)`` returns ``(new_dataset, report)``.
``ds`` may be a ``Dataset`` or a ``DatasetDict`` (every split), and ``columns=[...]`` privatises
several columns at once; the options are those of :func:`textdp.spec.release_spec` (the same
names in every front), built into one release spec that every map worker runs.

* **Which generator.** Documents are numbered in row order, skipping missing values (None is not
  a document and stays None) — with no missing value, the global row index that
  ``map(with_indices=True)`` passes. With a seed, document i draws from (seed, i)
  (:meth:`textdp.Privatizer.run` with ``start=``), so the output is the same for any
  ``num_proc`` and ``batch_size``, and byte-identical to ``textdp privatize --seed`` on a file of
  the same texts (``--null pass``) and to :func:`textdp.privatize`.
* **Workers.** With ``num_proc > 1`` the map function is pickled to worker processes. It carries
  the release spec (a recipe), never a generator: each process builds its mechanism once and its
  own secure generator (and :mod:`textdp._random` re-keys a secure generator that is pickled or
  forked, so no two processes can share a stream).
* **The cache.** ``datasets`` caches a map's result under a fingerprint and replays it when the
  fingerprint comes again (datasets #2775, #3297): replaying private noise would release the same
  noisy text as if it were new. An unseeded run therefore always gets a fresh random fingerprint
  (and ``load_from_cache_file=False``); a seeded run gets one derived from the input's
  fingerprint, the column, the seed, the mechanism and its parameters, the run's options, the
  vocabulary's fingerprint and the textdp version — so re-running it may replay the cache, which
  for a seeded run gives the same output anyway.
* **The report.** Each batch's counters travel back in a temporary column (removed before
  returning) and are summed into one report per column: counts over all processes, one
  guarantee, ``engine: "datasets"``, ``workers`` (``num_proc``), wall time of the whole call.
  Several columns, or the splits of a ``DatasetDict``, give one report each and a ``budget``:
  the columns of a row compose sequentially (ε's add), the splits (disjoint rows) in parallel.
* **dp_prompt** is refused here: a language model per map worker, and its report has no counters
  to merge; run it with :func:`textdp.privatize` on the column's texts.

``datasets`` is an extra: ``pip install -e '.[datasets]'`` from the repository root.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from typing import Any

import numpy as np

from textdp._guide import MissingExtra, install_hint, names_listing
from textdp.engines.worker import ProcessRelease
from textdp.spec import ReleaseSpec, release_spec
from textdp.tallies import Tallies

__all__ = ["privatize", "assess", "synthesize", "COUNTERS_COLUMN"]

#: The temporary column that carries each batch's counters (removed from the result).
COUNTERS_COLUMN = "__textdp_counters__"


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise MissingExtra(install_hint("datasets", "textdp.integrations.datasets")) from exc
    return datasets


class _Mapper:
    """The function given to ``Dataset.map``: picklable, holding the release spec, not the state
    (:class:`textdp.engines.worker.ProcessRelease`: each worker builds its own Privatizer)."""

    def __init__(self, spec: ReleaseSpec, column: str, null_rows: np.ndarray) -> None:
        self.release, self.column, self.null_rows = ProcessRelease(spec), column, null_rows

    def __call__(self, batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        values = batch[self.column]
        rows = [i for i, v in enumerate(values) if v is not None]
        out = list(values)
        if rows:
            first = int(indices[rows[0]])
            start = first - int(np.searchsorted(self.null_rows, first))
            texts = self.release.run([values[i] for i in rows], start=start)
            for i, t in zip(rows, texts, strict=True):
                out[i] = t
        counters = [None] * len(values)
        if values:
            counters[0] = json.dumps(self.release.delta().to_json())
        return {self.column: out, COUNTERS_COLUMN: counters}


def _null_rows(ds: Any, column: str) -> np.ndarray:
    """Sorted positions of the rows whose ``column`` is null (in the dataset's own row order)."""
    if getattr(ds, "_indices", None) is None:
        array = ds.data.column(column)
    else:  # a selected or shuffled view: its rows, in its order
        array = ds.select_columns([column]).with_format("arrow")[column]
    if array.null_count == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow.compute as pc

    return np.flatnonzero(pc.is_null(array).to_numpy(zero_copy_only=False)).astype(np.int64)


def _fingerprint(ds: Any, column: str, spec: ReleaseSpec, mech: Any) -> str:
    """Fresh random bytes for an unseeded run; else a digest of everything the output depends on."""
    if spec.seed is None:
        return os.urandom(20).hex()
    from textdp._version import __version__

    recipe = {"textdp": __version__, "input": ds._fingerprint, "column": column,
              "seed": spec.seed, "mechanism": mech.name, "parameters": mech.parameters,
              "vocabulary": mech.vocabulary.fingerprint, "policy": repr(spec.policy),
              "allocation": repr(spec.allocation), "batch_chars": spec.batch_chars,
              "unchanged_warning": spec.unchanged_warning}
    blob = json.dumps(recipe, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()[:40]


def _check_column(ds: Any, column: str) -> None:
    if column not in ds.column_names:
        raise KeyError(f"no column {column!r}; {names_listing(column, ds.column_names)}")
    feature = ds.features[column]
    if getattr(feature, "dtype", None) not in ("string", "large_string", "null"):
        raise TypeError(f"column {column!r} holds {feature}, expected strings")
    if COUNTERS_COLUMN in ds.column_names:
        raise ValueError(f"the column name {COUNTERS_COLUMN!r} is reserved")


def _columns(column: str | list[str], columns: list[str] | None) -> tuple[list[str], bool]:
    """(the columns to privatise, whether one was named as ``column=``: a single report)."""
    if columns is not None:
        if column != "text":
            raise ValueError("give column= or columns=, not both")
        if isinstance(columns, str):
            columns = [columns]
        single = False
    elif isinstance(column, str):
        columns, single = [column], True
    else:
        columns, single = column, False
    columns = list(columns)
    if not columns or not all(isinstance(c, str) for c in columns):
        raise ValueError(f"columns must be a non-empty list of column names, got {columns!r}")
    if len(set(columns)) != len(columns):
        raise ValueError(f"a column is named twice in {columns!r}")
    return columns, single


def privatize(ds: Any, column: str | list[str] = "text", mechanism: Any = "mvc",
              epsilon: float | None = None, *, columns: list[str] | None = None,
              seed: int | None = None, num_proc: int | None = None, batch_size: int = 1000,
              ledger: Any = None, ledger_policy: str = "warn", budget: float | None = None,
              **options: Any) -> tuple[Any, dict[str, Any]]:
    """Privatise text columns of ``ds`` (see the module docstring); returns ``(dataset, report)``.

    Args:
        ds: a ``datasets.Dataset`` (in memory or on disk) or a ``datasets.DatasetDict`` (every
            split, each its own release per column).
        column, columns: the string column to privatise, or several (``columns=["a", "b"]``,
            or a list as ``column``); other columns are untouched. Each column is a release
            spending ε (the ``budget`` section adds them up per row).
        mechanism: a word mechanism name or a built word mechanism (pickled to the workers).
        epsilon: ε of the mechanism (with a name).
        seed: None (secure, a fresh cache fingerprint) or an integer (reproducible; flagged).
        num_proc: worker processes of ``Dataset.map`` (None: this process).
        batch_size: rows per ``map`` batch (never the output of a seeded run).
        ledger, ledger_policy, budget: a privacy ledger (a path or a
            :class:`textdp.ledger.Ledger`), as in :func:`textdp.privatize`: each column's
            non-missing texts, in row order, are one release's input (fingerprinted in the
            driver before the map); ``refuse`` raises before any noise is drawn.
        **options: the options of :func:`textdp.spec.release_spec` (``oov``, ``mask_token``, …,
            ``vocabulary``, ``allocation``) and the mechanism's parameters.

    Returns:
        ``(dataset, report)``. For a ``Dataset`` and ``column=``: the column's report. With
        ``columns=``: ``{"columns": {name: report}, "budget": ...}``. For a ``DatasetDict``: a
        ``DatasetDict`` and ``{"splits": {split: <the above>}, "budget": ...}``.
    """
    from textdp.ledger import as_ledger

    datasets = _datasets()
    names, single = _columns(column, columns)
    book = as_ledger(ledger, ledger_policy, budget)
    spec = release_spec(mechanism, epsilon, seed=seed, **options)
    if spec.kind != "word":
        raise ValueError(f"{spec.name} is not run by the datasets front (a language model in "
                         "every map worker, and a report without counters to merge): run "
                         "textdp.privatize on the column's texts")
    if isinstance(ds, datasets.DatasetDict):
        for split in ds.values():  # every split checked before anything is released
            for c in names:
                _check_column(split, c)
        done = {name: _privatize_columns(split, names, spec, num_proc, batch_size, book)
                for name, split in ds.items()}
        out = datasets.DatasetDict({name: d for name, (d, _) in done.items()})
        by_split = {name: r for name, (_, r) in done.items()}
        return out, {"splits": {name: r[names[0]] if single else
                                {"columns": r, "budget": _budget({name: r}, spec)["per_split"][name]}
                                for name, r in by_split.items()},
                     "budget": _budget(by_split, spec)}
    if not isinstance(ds, datasets.Dataset):
        raise TypeError(f"expected a datasets.Dataset or DatasetDict, got {type(ds).__name__}")
    for c in names:
        _check_column(ds, c)
    out, reports = _privatize_columns(ds, names, spec, num_proc, batch_size, book)
    if single:
        return out, reports[names[0]]
    return out, {"columns": reports, "budget": _budget({None: reports}, spec)["per_split"][None]}


def _privatize_columns(ds: Any, names: list[str], spec: ReleaseSpec, num_proc: int | None,
                       batch_size: int, book: Any) -> tuple[Any, dict[str, dict[str, Any]]]:
    """Each of ``names`` privatised in turn (a release each); their reports by column."""
    from textdp.runner import run_release

    reports: dict[str, dict[str, Any]] = {}
    for c in names:
        outcome = run_release(spec, _Column(ds, c), _MapEngine(num_proc, batch_size), ledger=book)
        ds, reports[c] = outcome.output, outcome.report
    if len(names) > 1 and spec.seed is not None:
        note = (f"one seed drives columns {', '.join(names)}: document i of each draws from the "
                "same stream (seed, i), so their noise is correlated")
        for c in names:
            reports[c] = reports[c].with_context(notes=[note])
    return ds, reports


def _budget(by_split: dict[Any, dict[str, dict[str, Any]]], spec: ReleaseSpec) -> dict[str, Any]:
    """ε per split (its columns composed sequentially: a row's texts in every column are
    released once per column) and in total (the splits in parallel: disjoint rows, so a row's
    guarantee is its split's — per group of one metric, the largest split's ε), keyed on the
    spec's measurement as the ledger keys them."""
    from textdp.privacy.composition import compose_reports

    measurement = spec.mechanism_object().measurement
    per_split = {}
    largest: dict[tuple[str, str], tuple[str, float]] = {}
    for split, reports in by_split.items():
        composed = compose_reports(reports, measurement)
        per_split[split] = {"per_column": {c: r["guarantee"].get("epsilon")
                                           for c, r in reports.items()},
                            "columns": composed.to_dict()}
        for g in composed.groups:
            key = (g.family, g.metric_id)
            largest[key] = (g.metric, max(largest.get(key, ("", 0.0))[1], g.epsilon))
        if not composed.bounded:
            largest[("not composable", "")] = ("", float("inf"))
    return {"per_split": per_split,
            "total": [{"family": f, "metric": m, "epsilon": e}
                      for (f, _), (m, e) in largest.items()],
            "composition": "columns of a row: sequential (ε's add); splits: parallel (disjoint "
                           "rows: a row's guarantee is its own split's)"}


@dataclasses.dataclass(frozen=True)
class _Column:
    """The runner's source (:func:`textdp.runner.run_release`): one column of a dataset."""

    ds: Any
    column: str

    @property
    def name(self) -> str:
        return f"dataset column {self.column!r}"

    def fingerprint(self) -> tuple[str, int]:
        """The ledger's fingerprint of the non-missing texts of the column in row order."""
        from textdp.privacy.fingerprint import InputHash

        h = InputHash("texts")
        for chunk in self.ds.data.column(self.column).chunks:  # never the whole column at once
            h.texts(t for t in chunk.to_pylist() if t is not None)
        return h.hexdigest(), h.count


@dataclasses.dataclass(frozen=True)
class _MapEngine:
    """The runner's engine: ``Dataset.map`` over the column (:func:`_privatize`)."""

    num_proc: int | None
    batch_size: int

    def run(self, spec: ReleaseSpec, source: _Column, measurement: Any) -> Any:
        from textdp.runner import Outcome

        return Outcome(*_privatize(source.ds, source.column, spec, self.num_proc,
                                   self.batch_size))


def _privatize(ds: Any, column: str, spec: ReleaseSpec, num_proc: int | None,
               batch_size: int) -> tuple[Any, dict[str, Any]]:
    parent = spec.privatizer()
    t0 = time.perf_counter()
    mapper = _Mapper(spec, column, _null_rows(ds, column))
    fingerprint = _fingerprint(ds, column, spec, parent.mechanism)
    mapped = ds.map(mapper, batched=True, batch_size=batch_size, with_indices=True,
                    num_proc=num_proc, new_fingerprint=fingerprint,
                    load_from_cache_file=None if spec.seed is not None else False,
                    desc="textdp privatize")
    if COUNTERS_COLUMN in mapped.column_names:
        counters = mapped.data.column(COUNTERS_COLUMN).drop_null().to_pylist()
        result = mapped.remove_columns([COUNTERS_COLUMN])
    else:  # an empty Dataset: map() never called the mapper, so there is nothing to count
        counters, result = [], mapped
    wall = time.perf_counter() - t0
    tallies = sum((Tallies.from_json(json.loads(c)) for c in counters), Tallies.zero())
    # The performance is the wall time of the call.
    tallies = dataclasses.replace(tallies, nanoseconds=round(wall * 1e9) if counters else 0)
    report = parent.report(tallies, engine="datasets", workers=int(num_proc or 1), sections={
        "datasets": {"column": column, "rows": len(ds), "fingerprint": fingerprint,
                     "fingerprint_source": "random (unseeded)" if spec.seed is None
                     else "derived from input, seed, mechanism, parameters, vocabulary",
                     "document_numbering": "row order, missing values skipped"}})
    return result, report



def assess(ds: Any, column: str = "text", label_column: str | None = None,
           **options: Any) -> Any:
    """:func:`textdp.assess` on ``ds[column]`` (labels from ``label_column``): rows with a text
    (and, with labels, a label) are the documents, in row order; ``options`` are
    :func:`textdp.assess`'s (``mechanisms``, ``epsilons``, ``sample``, ``seed``, the targets,
    release options). Nothing is released and no ledger budget is spent; the assessment is
    computed on the originals and is for the data owner only.

    Returns:
        the :class:`textdp.assess.Assessment`.
    """
    from textdp.assess import assess as run

    _check_column(ds, column)
    if label_column is not None and label_column not in ds.column_names:
        raise ValueError(f"the dataset has no column {label_column!r} "
                         f"({names_listing(label_column, ds.column_names)})")
    texts = ds[column]
    labels = None if label_column is None else ds[label_column]
    keep = [i for i, t in enumerate(texts)
            if t is not None and (labels is None or labels[i] is not None)]
    for i in keep:
        if not isinstance(texts[i], str):
            raise TypeError(f"row {i} of {column!r} is {type(texts[i]).__name__}, expected a "
                            "string or None")
    return run([texts[i] for i in keep],
               None if labels is None else [labels[i] for i in keep], **options)


def synthesize(ds: Any, column: str = "text", label_column: str | None = None,
               unit_column: str | None = None, *, epsilon: float, n: int,
               **options: Any) -> tuple[Any, Any]:
    """:func:`textdp.synthesize` on a ``datasets.Dataset``: the rows with a text (and, when
    named, a label and a unit) are the private documents, in row order. ``options`` are
    :func:`textdp.synthesize`'s (``delta``, ``rounds``, ``seed``, ``ledger``, …).

    Returns:
        ``(dataset, report)``: a new ``Dataset`` of ``n`` rows — ``column`` and, with labels,
        ``label_column`` (its feature kept: a ``ClassLabel`` stays one) — and the privacy report.
    """
    from textdp.synthesis.fronts import documents, synthesize_rows

    datasets = _datasets()
    if not isinstance(ds, datasets.Dataset):
        raise TypeError(f"expected a datasets.Dataset, got {type(ds).__name__} (a DatasetDict: "
                        "synthesize from one split, e.g. ds['train'])")
    _check_column(ds, column)
    named = [c for c in (column, label_column, unit_column) if c is not None]
    for c in named[1:]:
        if c not in ds.column_names:
            raise KeyError(f"no column {c!r}; {names_listing(c, ds.column_names)}")
    if len(set(named)) != len(named):
        raise ValueError("column, label_column and unit_column must be different columns")
    values = {c: list(ds[c]) for c in named}
    others = [values[c] for c in (label_column, unit_column) if c is not None]
    rows = documents(values[column], *others, where=f"column {column!r}")
    picked = {c: [values[c][i] for i in rows] for c in named}
    picked[None] = None
    pick = picked.get
    result, labels = synthesize_rows(pick(column), pick(label_column), pick(unit_column),
                                     epsilon=epsilon, n=n,
                                     input_name=f"dataset column {column!r}", **options)
    columns = {column: result.texts}
    features = {column: ds.features[column]}
    if label_column is not None:
        columns[label_column] = labels
        features[label_column] = ds.features[label_column]
    out = datasets.Dataset.from_dict(columns, features=datasets.Features(features))
    report = result.report.with_context(engine="datasets", sections={"datasets": {
        "column": column, "rows": len(ds), "documents": len(rows),
        "document_numbering": "row order, rows missing a text, label or unit skipped"}})
    return out, report
