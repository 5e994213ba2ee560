"""The pandas privatize front: a Series' or a DataFrame's text columns through the runner.

:func:`privatize_series` and :func:`privatize_frame` (``series.textdp.privatize``,
``df.textdp.privatize``; :mod:`textdp.pandas` says what they give) build one release spec per
call (:func:`textdp.spec.release_spec`), turn each column into its documents (missing values
skipped, in row order) and release each column with :func:`textdp.release.run_spec` (the
runner, :func:`textdp.runner.run_release`; its ledger names the column), then put the texts
back at their rows. The budget of a row's columns and the note on a shared seed are
:mod:`textdp._fronts`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from textdp._checks import check_seed
from textdp._fronts import check_distinct, column_budget, correlated
from textdp._guide import names_listing
from textdp.ledger import as_ledger
from textdp.release import run_spec
from textdp.spec import ReleaseSpec, release_spec

__all__ = ["BUDGET_KEY", "REPORT_KEY", "documents_of", "is_text", "privatize_frame",
           "privatize_series"]

#: Where the report is stored: ``result.attrs[REPORT_KEY]``.
REPORT_KEY = "textdp_report"
#: Where a DataFrame's ε per column and in total is stored: ``result.attrs[BUDGET_KEY]``.
BUDGET_KEY = "textdp_budget"


def documents_of(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Row positions of the documents (non-missing values) and their texts, in row order."""
    missing = np.asarray(pd.isna(series), dtype=bool)
    rows = np.flatnonzero(~missing)
    values = series.to_numpy(dtype=object)
    texts = values[rows].tolist()
    if set(map(type, texts)) - {str}:
        for r, t in zip(rows.tolist(), texts, strict=True):
            if not isinstance(t, str):
                what = "the Series" if series.name is None else f"column {series.name!r}"
                raise TypeError(f"{what} holds {type(t).__name__} at row "
                                f"{series.index[r]!r}, expected strings (or missing values)")
    return rows, texts


def _rebuild(series: pd.Series, rows: np.ndarray, texts: list[str]) -> pd.Series:
    """``series`` with ``texts`` at ``rows``; missing values kept as they were (None stays None)."""
    values = series.to_numpy(dtype=object, copy=True)
    out_values = np.empty(len(texts), dtype=object)
    out_values[:] = texts
    values[rows] = out_values
    dtype = series.dtype if pd.api.types.is_string_dtype(series.dtype) and not isinstance(
        series.dtype, pd.CategoricalDtype) else object
    return pd.Series(values, index=series.index, name=series.name, dtype=dtype)


def is_text(dtype: Any) -> bool:
    """A dtype that may hold text: a string dtype, ``object`` or a categorical of either."""
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    return pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype)


def _release(series: pd.Series, documents: tuple[np.ndarray, list[str]], spec: ReleaseSpec,
             book: Any, batch_size: int | None) -> pd.Series:
    """One column released under ``spec``: the Series, its report in ``.attrs``."""
    rows, texts = documents
    result = run_spec(spec, texts, batch_size=batch_size, book=book,
                      input_name=None if series.name is None
                      else f"DataFrame column {series.name!r}")
    out = _rebuild(series, rows, result.texts)
    out.attrs = {**series.attrs, REPORT_KEY: _pandas_section(result.report, series, rows)}
    return out


def _pandas_section(report: Any, series: pd.Series, rows: np.ndarray) -> Any:
    """The column's report in this front's context: ``engine`` and the ``pandas`` section
    (a new report of the same release, built again: :meth:`textdp.privacy.report.Report.with_context`)."""
    return report.with_context(engine="pandas", sections={"pandas": {
        "rows": int(len(series)), "missing": int(len(series) - rows.size),
        "column": None if series.name is None else str(series.name),
        "document_numbering": "row order, missing values skipped"}})


def privatize_series(series: pd.Series, mechanism: Any = "mvc", epsilon: float | None = None,
                     *, seed: int | None = None, batch_size: int | None = None,
                     ledger: Any = None, ledger_policy: str = "warn",
                     budget: float | None = None, **options: Any) -> pd.Series:
    """Privatise the texts of ``series`` (:mod:`textdp.pandas`); the report in ``.attrs``.

    ``mechanism`` is a name (:func:`textdp.mechanisms.available`, ``dp_prompt`` included) or a
    built word mechanism; ``options`` are those of :func:`textdp.spec.release_spec` (``oov``,
    ``mask_token``, ``keep_stopwords``, ``identifiers``, ``deny_list``, …, ``vocabulary``,
    ``allocation``) and the mechanism's parameters; ``batch_size`` and the ledger as in
    :func:`textdp.privatize`.
    """
    if not isinstance(series, pd.Series):
        raise TypeError(f"expected a pandas Series, got {type(series).__name__}")
    book = as_ledger(ledger, ledger_policy, budget)
    spec = release_spec(mechanism, epsilon, seed=seed, **options)
    return _release(series, documents_of(series), spec, book, batch_size)


def privatize_frame(frame: pd.DataFrame, columns: Sequence[Any] | Any = None,
                    mechanism: Any = "mvc", epsilon: float | None = None, *,
                    seed: int | Mapping[Any, int] | None = None, batch_size: int | None = None,
                    ledger: Any = None, ledger_policy: str = "warn", budget: float | None = None,
                    **options: Any) -> pd.DataFrame:
    """A copy of the frame with ``columns`` privatised, each a separate release (ε each).

    ``columns`` (required) names the text columns to privatise; the others are untouched.
    ``seed`` is None, one integer for every column, or ``{column: seed}`` (columns left out
    are unseeded). One release spec is built and shared; the reports are in
    ``.attrs["textdp_report"][column]``, the ε per column and in total in
    ``.attrs["textdp_budget"]``. With a ledger, each column is its own release in it.
    """
    text_columns = [c for c in frame.columns if is_text(frame[c].dtype)]
    if columns is None:
        raise ValueError("name the columns to privatise: columns=[...] (text columns: "
                         f"{', '.join(map(repr, text_columns)) or 'none'})")
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        columns = [columns]
    columns = list(columns)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(f"no such column(s): {missing!r} "
                       f"({names_listing(str(missing[0]), frame.columns)})")
    if not columns:
        raise ValueError("columns is empty: name the text columns to privatise")
    check_distinct(columns)
    not_text = [c for c in columns if not is_text(frame[c].dtype)]
    if not_text:
        raise TypeError(f"column {not_text[0]!r} holds {frame[not_text[0]].dtype}, not text "
                        f"(text columns: {', '.join(map(repr, text_columns)) or 'none'})")
    if isinstance(seed, Mapping):
        unknown = set(seed) - set(columns)
        if unknown:
            raise ValueError(f"seeds given for columns not privatised: {sorted(map(str, unknown))}")
    book = as_ledger(ledger, ledger_policy, budget)
    per_column = isinstance(seed, Mapping)
    spec = release_spec(mechanism, epsilon, seed=None if per_column else seed, **options)
    # Every column is checked (a dict among the texts) before any is released.
    documents = {c: documents_of(frame[c]) for c in columns}
    out = frame.copy()
    reports: dict[str, Any] = {}
    for c in columns:
        one = dataclasses.replace(spec, seed=check_seed(seed.get(c))) if per_column else spec
        col = _release(frame[c], documents[c], one, book, batch_size)
        reports[str(c)] = col.attrs[REPORT_KEY]
        out[c] = col
    if not per_column and seed is not None:
        reports = correlated(reports, [str(c) for c in columns])
    out.attrs = {**frame.attrs, REPORT_KEY: reports, BUDGET_KEY: column_budget(reports, spec)}
    return out
