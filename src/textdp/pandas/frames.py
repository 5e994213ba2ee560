"""The pandas fronts of assess and synthesize: a DataFrame's columns as their documents.

:func:`assess_frame` (``df.textdp.assess``, ``series.textdp.assess``) hands the rows with a text
(and a label) to :func:`textdp.assess` (no release); :func:`synthesize_frame`
(``df.textdp.synthesize``) hands its columns to
:func:`textdp.synthesis.fronts.synthesize_columns`, the release shared with the ``datasets``
front (:func:`textdp.synthesis.api.synthesize`: the spec, the source and the runner).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from textdp._guide import names_listing
from textdp.pandas.privatize import REPORT_KEY, documents_of, is_text

__all__ = ["assess_frame", "synthesize_frame"]


def synthesize_frame(frame: pd.DataFrame, text: Any, label: Any = None, unit: Any = None, *,
                     epsilon: float, n: int, **options: Any) -> pd.DataFrame:
    """:func:`textdp.synthesize` on a DataFrame: the rows with a text (and, when named, a label
    and a unit) are the private documents, in row order; ``label`` makes the generation
    label-conditional, ``unit`` names who wrote each row (the guarantee then protects all rows
    of a person). ``options`` are :func:`textdp.synthesize`'s (``delta``, ``rounds``, ``seed``,
    ``ledger``, …). Returns a new DataFrame of ``n`` rows: the ``text`` column and, with
    ``label``, the ``label`` column (the labels as stored: integers stay integers); the
    privacy report is in ``.attrs["textdp_report"]``."""
    from textdp.synthesis.fronts import synthesize_columns

    for c in (text, label, unit):
        if c is not None and c not in frame.columns:
            raise KeyError(f"no such column: {c!r} ({names_listing(str(c), frame.columns)})")
    result, labels, documents = synthesize_columns(
        lambda c: frame[c].to_numpy(dtype=object).tolist(), text, label, unit,
        roles="text, label and unit", epsilon=epsilon, n=n,
        input_name=f"DataFrame column {text!r}", **options)
    out = pd.DataFrame({text: result.texts, **({label: labels} if label is not None else {})})
    out.attrs = {REPORT_KEY: result.report.with_context(engine="pandas", sections={"pandas": {
        "rows": int(len(frame)), "documents": documents, "column": str(text),
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
    if not is_text(frame[text].dtype):
        raise TypeError(f"column {text!r} holds {frame[text].dtype}, not text")
    keep = ~np.asarray(pd.isna(frame[text]), dtype=bool)
    if label is not None:
        keep &= ~np.asarray(pd.isna(frame[label]), dtype=bool)
    rows, texts = documents_of(frame[text][keep])
    labels = None if label is None else frame[label][keep].to_numpy(dtype=object)[rows].tolist()
    return assess(texts, labels, **options)
