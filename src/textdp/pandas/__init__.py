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

The fronts, one module each (every one an adapter onto the runner): :mod:`textdp.pandas.privatize`
(privatise), :mod:`textdp.pandas.frames` (assess and synthesize on a DataFrame's columns); this
module registers the accessors. Only this package imports pandas; it is an extra (``pip install
-e '.[pandas]'`` from the repository root).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textdp._guide import MissingExtra, install_hint

try:
    import pandas as pd
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise MissingExtra(install_hint("pandas", "textdp.pandas")) from exc

from textdp.pandas.frames import assess_frame, synthesize_frame
from textdp.pandas.privatize import BUDGET_KEY, REPORT_KEY, privatize_frame, privatize_series

__all__ = ["SeriesAccessor", "DataFrameAccessor", "privatize_series", "privatize_frame",
           "assess_frame", "synthesize_frame", "REPORT_KEY", "BUDGET_KEY"]


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
                  epsilon: float | None = None, *, seed: int | Mapping[Any, int] | None = None,
                  **options: Any) -> pd.DataFrame:
        """A copy of the frame with ``columns`` privatised, each a separate release (ε each):
        see :func:`privatize_frame`."""
        return privatize_frame(self._frame, columns, mechanism, epsilon, seed=seed, **options)

    def assess(self, text: Any, label: Any = None, **options: Any) -> Any:
        """Assess the ``text`` column (labels from ``label``) with :func:`textdp.assess`: see
        :func:`assess_frame`. Nothing is released and no ledger budget is spent."""
        return assess_frame(self._frame, text, label, **options)

    def synthesize(self, text: Any, label: Any = None, unit: Any = None, *, epsilon: float,
                   n: int, **options: Any) -> pd.DataFrame:
        """``n`` synthetic documents that follow the ``text`` column: see
        :func:`synthesize_frame`."""
        return synthesize_frame(self._frame, text, label, unit, epsilon=epsilon, n=n, **options)
