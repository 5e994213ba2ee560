"""What the table fronts of ``synthesize`` share (``df.textdp.synthesize``,
``textdp.integrations.datasets.synthesize``): which rows are documents, and labels given back
as the values the user stored.

A front checks that its columns exist, calls :func:`synthesize_columns` (which picks the rows
and calls :func:`synthesize_rows`), and builds its table from the result; the release itself is
:func:`textdp.synthesis.api.synthesize` (the spec, the source and
:func:`textdp.runner.run_release`, with the ledger), so every front gives the same release.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["documents", "synthesize_columns", "synthesize_rows"]


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value) or (isinstance(value, float) and math.isnan(value))
    except (TypeError, ValueError):  # pd.NA and other values without a truth value
        return True


def documents(texts: Sequence[Any], *others: Sequence[Any] | None, where: str = "column"
              ) -> list[int]:
    """Positions of the rows that are documents: a text, and a value in each of ``others``
    given (label, unit); a missing value (None, NaN, ``pd.NA``) leaves the row out. A text that
    is not a string is a TypeError naming its row."""
    keep = []
    for i, t in enumerate(texts):
        if _missing(t) or any(o is not None and _missing(o[i]) for o in others):
            continue
        if not isinstance(t, str):
            raise TypeError(f"row {i} of the text {where} holds {type(t).__name__}, expected a "
                            "string (or a missing value)")
        keep.append(i)
    return keep


def synthesize_rows(texts: Sequence[str], labels: Sequence[Any] | None,
                    units: Sequence[Any] | None, **options: Any) -> tuple[Any, list[Any] | None]:
    """:func:`textdp.synthesis.api.synthesize` on the rows given; returns the result and its
    labels as the values the input stored (an integer label comes back an integer)."""
    from textdp.synthesis.api import synthesize

    result = synthesize(list(texts), labels=None if labels is None else list(labels),
                        units=None if units is None else list(units), **options)
    if labels is None or result.labels is None:
        return result, None
    back: dict[str, Any] = {}
    for value in labels:
        back.setdefault(str(value), value)
    return result, [back[label] for label in result.labels]


def synthesize_columns(read: Callable[[Any], Sequence[Any]], text: Any, label: Any, unit: Any, *,
                       roles: str, input_name: str, **options: Any
                       ) -> tuple[Any, list[Any] | None, int]:
    """:func:`synthesize_rows` on a table's columns: ``read(column)`` gives a column's values in
    row order; the rows that are :func:`documents` (a text, and a label and a unit when named)
    are the private documents. ``roles`` names the three arguments in the message when two name
    the same column. Returns the result, its labels as stored, and the number of documents."""
    named = [c for c in (text, label, unit) if c is not None]
    if len(set(named)) != len(named):
        raise ValueError(f"{roles} must be different columns")
    values = {c: read(c) for c in named}
    rows = documents(values[text], *(values[c] for c in (label, unit) if c is not None),
                     where=f"column {text!r}")
    picked = {c: [values[c][i] for i in rows] for c in named}
    result, labels = synthesize_rows(picked[text], None if label is None else picked[label],
                                     None if unit is None else picked[unit],
                                     input_name=input_name, **options)
    return result, labels, len(rows)
