"""pandas: ``import textdp.pandas`` registers a ``.textdp`` accessor on Series and DataFrames.

``series.textdp.privatize(mechanism="mvc", epsilon=8)`` returns a Series with the same index, name
and (for text dtypes) dtype; ``df.textdp.privatize(columns=["a", "b"], ...)`` returns a DataFrame
with those columns privatised and the other columns untouched. The privacy report goes to
``.attrs["textdp_report"]`` (a DataFrame's: one report per column, by column name).

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

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from textdp._guide import MissingExtra, install_hint, names_listing

try:
    import pandas as pd
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise MissingExtra(install_hint("pandas", "textdp.pandas")) from exc

from textdp.allocation import allocation_params
from textdp.pipeline import build_mechanism
from textdp.pipeline import privatize as _privatize

__all__ = ["SeriesAccessor", "DataFrameAccessor", "privatize_series", "REPORT_KEY"]

#: Where the report is stored: ``result.attrs[REPORT_KEY]``.
REPORT_KEY = "textdp_report"

# Options of textdp.privatize that configure the run, not the mechanism.
_RUN_OPTIONS = frozenset(inspect.signature(_privatize).parameters) - {
    "texts", "mechanism", "epsilon", "seed", "vocabulary", "params"}


def _split_options(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    run = {k: v for k, v in kwargs.items() if k in _RUN_OPTIONS}
    return run, {k: v for k, v in kwargs.items() if k not in _RUN_OPTIONS}


def _documents(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Row positions of the documents (non-missing values) and their texts, in row order."""
    missing = np.asarray(pd.isna(series), dtype=bool)
    rows = np.flatnonzero(~missing)
    values = series.to_numpy(dtype=object)
    texts = values[rows].tolist()
    if set(map(type, texts)) - {str}:
        for r, t in zip(rows.tolist(), texts, strict=True):
            if not isinstance(t, str):
                raise TypeError(f"row {series.index[r]!r} of {series.name!r} is "
                                f"{type(t).__name__}, expected a string or a missing value")
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


def privatize_series(series: pd.Series, mechanism: Any = "mvc", epsilon: float | None = None,
                     *, seed: int | None = None, **kwargs: Any) -> pd.Series:
    """Privatise the texts of ``series`` (see the module docstring); report in ``.attrs``.

    ``mechanism`` is a name or a built word mechanism; ``kwargs`` are the options of
    :func:`textdp.privatize` (``oov``, ``mask_token``, ``keep_stopwords``, ``identifiers``, …,
    ``vocabulary``) and the mechanism's parameters.
    """
    if not isinstance(series, pd.Series):
        raise TypeError(f"expected a pandas Series, got {type(series).__name__}")
    kwargs, epsilon = allocation_params(kwargs, epsilon, mechanism)
    run, params = _split_options(kwargs)
    mech = build_mechanism(mechanism, epsilon, params.pop("vocabulary", None), params)
    rows, texts = _documents(series)
    result = _privatize(texts, mech, seed=seed, **run)
    out = _rebuild(series, rows, result.texts)
    report = result.report.with_context(engine="pandas", sections={"pandas": {
        "rows": int(len(series)), "missing": int(len(series) - rows.size),
        "column": None if series.name is None else str(series.name),
        "document_numbering": "row order, missing values skipped"}})
    out.attrs = {**series.attrs, REPORT_KEY: report}
    return out


@pd.api.extensions.register_series_accessor("textdp")
class SeriesAccessor:
    """``series.textdp.privatize(mechanism=..., epsilon=..., seed=None, **options)``."""

    def __init__(self, series: pd.Series) -> None:
        self._series = series

    def privatize(self, mechanism: Any = "mvc", epsilon: float | None = None, *,
                  seed: int | None = None, **kwargs: Any) -> pd.Series:
        """A Series of private texts; see :func:`privatize_series`."""
        return privatize_series(self._series, mechanism, epsilon, seed=seed, **kwargs)


@pd.api.extensions.register_dataframe_accessor("textdp")
class DataFrameAccessor:
    """``df.textdp.privatize(columns=[...], mechanism=..., epsilon=..., seed=None, **options)``."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def privatize(self, columns: Sequence[Any] | Any = None, mechanism: Any = "mvc",
                  epsilon: float | None = None, *,
                  seed: int | Mapping[Any, int] | None = None, **kwargs: Any) -> pd.DataFrame:
        """A copy of the frame with ``columns`` privatised, each a separate release (ε each).

        ``columns`` defaults to every column of a string or object dtype. ``seed`` is None, one
        integer for every column, or ``{column: seed}`` (columns left out are unseeded). The
        mechanism is built once and shared; the reports are in
        ``.attrs["textdp_report"][column]``.
        """
        frame = self._frame
        if columns is None:
            columns = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c].dtype)
                       or frame[c].dtype == object]
        elif isinstance(columns, str) or not isinstance(columns, Sequence):
            columns = [columns]
        columns = list(columns)
        missing = [c for c in columns if c not in frame.columns]
        if missing or not columns:
            raise KeyError(f"no such column(s): {missing!r} ({names_listing(str(missing[0]), frame.columns)})"
                           if missing else "no text columns")
        if len(set(columns)) != len(columns):
            raise ValueError(f"a column is named twice in {columns!r}")
        if isinstance(seed, Mapping):
            unknown = set(seed) - set(columns)
            if unknown:
                raise ValueError(f"seeds given for columns not privatised: {sorted(map(str, unknown))}")
        run, params = _split_options(kwargs)
        mech = build_mechanism(mechanism, epsilon, params.pop("vocabulary", None), params)
        out = frame.copy()
        reports: dict[str, Any] = {}
        for c in columns:
            s = seed.get(c) if isinstance(seed, Mapping) else seed
            col = privatize_series(frame[c], mech, seed=s, **run)
            reports[str(c)] = col.attrs[REPORT_KEY]
            out[c] = col
        shared = [c for c in columns if not isinstance(seed, Mapping) and seed is not None]
        if len(shared) > 1:
            note = (f"one seed drives columns {', '.join(map(str, shared))}: document i of each "
                    "draws from the same stream (seed, i), so their noise is correlated")
            for c in shared:
                reports[str(c)] = reports[str(c)].with_context(notes=[note])
        out.attrs = {**frame.attrs, REPORT_KEY: reports}
        return out
