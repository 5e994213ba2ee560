"""pandas: ``import textdp.pandas`` registers a ``.textdp`` accessor on Series and DataFrames.

``series.textdp.privatize(mechanism="mvc", epsilon=8)`` returns a Series with the same index, name
and (for text dtypes) dtype; ``df.textdp.privatize(columns=["a", "b"], ...)`` returns a DataFrame
with those columns privatised and the other columns untouched. ``columns`` is required: no column
is privatised unless it is named (an identifier or a code in a string column would come back
masked, and every column spends ε). A named column that does not hold text (numbers, dicts) is
refused, before any column is released. The privacy report goes to ``.attrs["textdp_report"]``
(a DataFrame's: one report per column, by column name), and a DataFrame's ε per column and in
total to ``.attrs["textdp_budget"]``.

The options are those of :func:`textdp.spec.release_spec` (the same names in every front:
:data:`textdp.spec.OPTION_NAMES`), built into one release spec per call; ``dp_prompt`` works too.

Which documents, and which generator each uses:

* A missing value (None, NaN, ``pd.NA``, ``NaT``) is not a document: it stays missing in the
  output and is not counted. Any other non-string value is a ``TypeError`` naming its row.
* The documents of a column are numbered 0, 1, 2, … in row order, skipping missing values — the
  numbering of ``textdp privatize`` on a file of the same values (``--null pass``: a null is not a
  document) and of :func:`textdp.privatize` on the list of the non-missing values. With a seed,
  document i uses the generator derived from (seed, i), so a seeded run gives, byte for byte, the
  texts of the CLI and of :func:`textdp.privatize` with that seed on the same values. With no
  missing value, the document number is the row position.
* Each column is a separate release, spending ε again (and its own report). Unseeded, each column
  draws from its own secure generator. With one integer seed every column uses the same streams
  (document i of each column draws from (seed, i)) — so each column equals the CLI on that column,
  but the noise of row i is correlated across columns; a mapping ``{column: seed}`` gives each
  column its own seed. Seeded runs are for tests, never for production.

Only this module imports pandas; it is an extra (``pip install -e '.[pandas]'`` from the
repository root).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from textdp._guide import MissingExtra, install_hint, names_listing

try:
    import pandas as pd
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise MissingExtra(install_hint("pandas", "textdp.pandas")) from exc

from textdp._checks import check_seed
from textdp.ledger import as_ledger
from textdp.release import run_spec
from textdp.spec import ReleaseSpec, release_spec

__all__ = ["SeriesAccessor", "DataFrameAccessor", "privatize_series", "assess_frame",
           "synthesize_frame", "REPORT_KEY", "BUDGET_KEY"]

#: Where the report is stored: ``result.attrs[REPORT_KEY]``.
REPORT_KEY = "textdp_report"
#: Where a DataFrame's ε per column and in total is stored: ``result.attrs[BUDGET_KEY]``.
BUDGET_KEY = "textdp_budget"


def _documents(series: pd.Series) -> tuple[np.ndarray, list[str]]:
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


def _is_text(dtype: Any) -> bool:
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


def _frame_budget(reports: Mapping[str, dict[str, Any]], spec: ReleaseSpec) -> dict[str, Any]:
    """ε per column and in total (:data:`BUDGET_KEY`): the columns of one row belong to one
    person, so their releases compose sequentially (ε's add, rounded up; guarantees in
    different metrics are listed side by side, not summed), keyed on the spec's measurement as
    the ledger keys them (:func:`textdp.privacy.composition.compose_reports`).
    """
    from textdp.privacy.composition import compose_reports

    per_column = {c: {"notion": r["guarantee"].get("notion"),
                      "epsilon": r["guarantee"].get("epsilon"),
                      "delta": r["guarantee"].get("delta")} for c, r in reports.items()}
    total = compose_reports(reports, spec.mechanism_object().measurement)
    return {"per_column": per_column, "total": total.to_dict(),
            "composition": "sequential over the columns: a row's texts in every named column "
                           "are released once per column, so their ε's add"}


def privatize_series(series: pd.Series, mechanism: Any = "mvc", epsilon: float | None = None,
                     *, seed: int | None = None, batch_size: int | None = None,
                     ledger: Any = None, ledger_policy: str = "warn",
                     budget: float | None = None, **options: Any) -> pd.Series:
    """Privatise the texts of ``series`` (see the module docstring); report in ``.attrs``.

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
    return _release(series, _documents(series), spec, book, batch_size)


@pd.api.extensions.register_series_accessor("textdp")
class SeriesAccessor:
    """``series.textdp.privatize(mechanism=..., epsilon=..., seed=None, **options)``."""

    def __init__(self, series: pd.Series) -> None:
        self._series = series

    def privatize(self, mechanism: Any = "mvc", epsilon: float | None = None, *,
                  seed: int | None = None, **options: Any) -> pd.Series:
        """A Series of private texts; see :func:`privatize_series`."""
        return privatize_series(self._series, mechanism, epsilon, seed=seed, **options)

    def assess(self, labels: Any = None, **options: Any) -> Any:
        """Assess the texts of this Series (:func:`textdp.assess`; nothing is released): see
        :func:`assess_frame`. ``labels`` is a Series (same index) or a sequence, or None."""
        frame = pd.DataFrame({"text": self._series})
        if labels is not None:
            frame["label"] = (labels.reindex(self._series.index) if isinstance(labels, pd.Series)
                              else list(labels))
        return assess_frame(frame, "text", "label" if labels is not None else None, **options)


@pd.api.extensions.register_dataframe_accessor("textdp")
class DataFrameAccessor:
    """``df.textdp.privatize(columns=[...], mechanism=..., epsilon=..., seed=None, **options)``."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def privatize(self, columns: Sequence[Any] | Any = None, mechanism: Any = "mvc",
                  epsilon: float | None = None, *,
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
        frame = self._frame
        text_columns = [c for c in frame.columns if _is_text(frame[c].dtype)]
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
        if len(set(columns)) != len(columns):
            raise ValueError(f"a column is named twice in {columns!r}")
        not_text = [c for c in columns if not _is_text(frame[c].dtype)]
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
        documents = {c: _documents(frame[c]) for c in columns}
        out = frame.copy()
        reports: dict[str, Any] = {}
        for c in columns:
            one = dataclasses.replace(spec, seed=check_seed(seed.get(c))) if per_column else spec
            col = _release(frame[c], documents[c], one, book, batch_size)
            reports[str(c)] = col.attrs[REPORT_KEY]
            out[c] = col
        shared = [c for c in columns if not isinstance(seed, Mapping) and seed is not None]
        if len(shared) > 1:
            note = (f"one seed drives columns {', '.join(map(str, shared))}: document i of each "
                    "draws from the same stream (seed, i), so their noise is correlated")
            for c in shared:
                reports[str(c)] = reports[str(c)].with_context(notes=[note])
        out.attrs = {**frame.attrs, REPORT_KEY: reports, BUDGET_KEY: _frame_budget(reports, spec)}
        return out

    def assess(self, text: Any, label: Any = None, **options: Any) -> Any:
        """Assess the ``text`` column (labels from ``label``) with :func:`textdp.assess`: see
        :func:`assess_frame`. Nothing is released and no ledger budget is spent."""
        return assess_frame(self._frame, text, label, **options)

    def synthesize(self, text: Any, label: Any = None, unit: Any = None, *, epsilon: float,
                   n: int, **options: Any) -> pd.DataFrame:
        """``n`` synthetic documents that follow the ``text`` column: see
        :func:`synthesize_frame`."""
        return synthesize_frame(self._frame, text, label, unit, epsilon=epsilon, n=n, **options)


def synthesize_frame(frame: pd.DataFrame, text: Any, label: Any = None, unit: Any = None, *,
                     epsilon: float, n: int, **options: Any) -> pd.DataFrame:
    """:func:`textdp.synthesize` on a DataFrame: the rows with a text (and, when named, a label
    and a unit) are the private documents, in row order; ``label`` makes the generation
    label-conditional, ``unit`` names who wrote each row (the guarantee then protects all rows
    of a person). ``options`` are :func:`textdp.synthesize`'s (``delta``, ``rounds``, ``seed``,
    ``ledger``, …). Returns a new DataFrame of ``n`` rows: the ``text`` column and, with
    ``label``, the ``label`` column (the labels as stored: integers stay integers); the
    privacy report is in ``.attrs["textdp_report"]``."""
    from textdp.synthesis.fronts import documents, synthesize_rows

    named = [c for c in (text, label, unit) if c is not None]
    for c in named:
        if c not in frame.columns:
            raise KeyError(f"no such column: {c!r} ({names_listing(str(c), frame.columns)})")
    if len(set(named)) != len(named):
        raise ValueError("text, label and unit must be different columns")
    values = {c: frame[c].to_numpy(dtype=object).tolist() for c in named}
    rows = documents(values[text], *(values[c] for c in (label, unit) if c is not None),
                     where=f"column {text!r}")
    picked = {c: [values[c][i] for i in rows] for c in named}
    picked[None] = None
    pick = picked.get
    result, labels = synthesize_rows(pick(text), pick(label), pick(unit), epsilon=epsilon, n=n,
                                     input_name=f"DataFrame column {text!r}", **options)
    out = pd.DataFrame({text: result.texts, **({label: labels} if label is not None else {})})
    out.attrs = {REPORT_KEY: result.report.with_context(engine="pandas", sections={"pandas": {
        "rows": int(len(frame)), "documents": len(rows), "column": str(text),
        "document_numbering": "row order, rows missing a text, label or unit skipped"}})}
    return out


def assess_frame(frame: pd.DataFrame, text: Any, label: Any = None, **options: Any) -> Any:
    """:func:`textdp.assess` on a column of ``frame``: the rows with a text (and, with ``label``,
    a label) are the documents, in row order; ``options`` are :func:`textdp.assess`'s
    (``mechanisms``, ``epsilons``, ``sample``, ``seed``, the targets, release options). The
    assessment is computed on the originals and is for the data owner only (its report says so).
    Returns the :class:`textdp.assess.Assessment` (rows without a text or a label are not
    documents: its sample counts the others)."""
    from textdp.assess import assess

    for c in (text,) if label is None else (text, label):
        if c not in frame.columns:
            raise KeyError(f"no such column: {c!r} ({names_listing(str(c), frame.columns)})")
    if not _is_text(frame[text].dtype):
        raise TypeError(f"column {text!r} holds {frame[text].dtype}, not text")
    keep = ~np.asarray(pd.isna(frame[text]), dtype=bool)
    if label is not None:
        keep &= ~np.asarray(pd.isna(frame[label]), dtype=bool)
    rows, texts = _documents(frame[text][keep])
    labels = None if label is None else frame[label][keep].to_numpy(dtype=object)[rows].tolist()
    return assess(texts, labels, **options)
