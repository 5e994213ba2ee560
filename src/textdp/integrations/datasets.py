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
* **The release.** Each column is one release through :func:`textdp.runner.run_release`: its
  non-missing texts the source (fingerprinted in the driver with a ledger), the engine
  :class:`textdp.engines.dataset_map.MapEngine` (the map workers, the cache fingerprint that
  never replays an unseeded run, one report per column with ``engine: "datasets"``).
* **The budget.** Several columns, or the splits of a ``DatasetDict``, give one report each and
  a ``budget``: the columns of a row compose sequentially (ε's add), the splits (disjoint rows)
  in parallel (:func:`textdp._fronts.split_budget`).
* **dp_prompt** is refused here: a language model per map worker, and its report has no counters
  to merge; run it with :func:`textdp.privatize` on the column's texts.

``datasets`` is an extra: ``pip install -e '.[datasets]'`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from textdp._fronts import check_distinct, correlated, split_budget, word_only
from textdp._guide import MissingExtra, install_hint, names_listing
from textdp.engines.dataset_map import COUNTERS_COLUMN, Column, MapEngine, check_column
from textdp.spec import ReleaseSpec, release_spec

__all__ = ["privatize", "assess", "synthesize", "COUNTERS_COLUMN"]


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise MissingExtra(install_hint("datasets", "textdp.integrations.datasets")) from exc
    return datasets


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
    check_distinct(columns)
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
    spec = word_only(release_spec(mechanism, epsilon, seed=seed, **options),
                     "is not run by the datasets front (a language model in every map worker, "
                     "and a report without counters to merge): run textdp.privatize on the "
                     "column's texts")
    is_dict = isinstance(ds, datasets.DatasetDict)
    if not is_dict and not isinstance(ds, datasets.Dataset):
        raise TypeError(f"expected a datasets.Dataset or DatasetDict, got {type(ds).__name__}")
    splits = dict(ds) if is_dict else {None: ds}
    for split in splits.values():  # every split checked before anything is released
        for c in names:
            check_column(split, c)
    done = {name: _privatize_columns(split, names, spec, num_proc, batch_size, book)
            for name, split in splits.items()}
    by_split = {name: r for name, (_, r) in done.items()}
    reports = {name: r[names[0]] if single else
               {"columns": r, "budget": split_budget({name: r}, spec)["per_split"][name]}
               for name, r in by_split.items()}
    if not is_dict:
        return done[None][0], reports[None]
    return (datasets.DatasetDict({name: d for name, (d, _) in done.items()}),
            {"splits": reports, "budget": split_budget(by_split, spec)})


def _privatize_columns(ds: Any, names: list[str], spec: ReleaseSpec, num_proc: int | None,
                       batch_size: int, book: Any) -> tuple[Any, dict[str, dict[str, Any]]]:
    """Each of ``names`` privatised in turn (a release each); their reports by column."""
    from textdp.runner import run_release

    reports: dict[str, dict[str, Any]] = {}
    for c in names:
        outcome = run_release(spec, Column(ds, c), MapEngine(num_proc, batch_size), ledger=book)
        ds, reports[c] = outcome.output, outcome.report
    return ds, correlated(reports, names if spec.seed is not None else [])


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

    check_column(ds, column)
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
    from textdp.synthesis.fronts import synthesize_columns

    datasets = _datasets()
    if not isinstance(ds, datasets.Dataset):
        raise TypeError(f"expected a datasets.Dataset, got {type(ds).__name__} (a DatasetDict: "
                        "synthesize from one split, e.g. ds['train'])")
    check_column(ds, column)
    for c in (label_column, unit_column):
        if c is not None and c not in ds.column_names:
            raise KeyError(f"no column {c!r}; {names_listing(c, ds.column_names)}")
    result, labels, documents = synthesize_columns(
        lambda c: list(ds[c]), column, label_column, unit_column,
        roles="column, label_column and unit_column", epsilon=epsilon, n=n,
        input_name=f"dataset column {column!r}", **options)
    columns = {column: result.texts}
    features = {column: ds.features[column]}
    if label_column is not None:
        columns[label_column] = labels
        features[label_column] = ds.features[label_column]
    out = datasets.Dataset.from_dict(columns, features=datasets.Features(features))
    report = result.report.with_context(engine="datasets", sections={"datasets": {
        "column": column, "rows": len(ds), "documents": documents,
        "document_numbering": "row order, rows missing a text, label or unit skipped"}})
    return out, report
