"""What assess accepts: the documents, their class labels and per-document fields, checked once
at the entry (one line naming the problem for each refusal)."""

from __future__ import annotations

from typing import Any

import numpy as np

from textdp._checks import check_texts


def check_field(values: Any, n: int, what: str) -> list[str] | None:
    """A per-document field (a person, a sensitive attribute) as text, one per document."""
    if values is None:
        return None
    if isinstance(values, str):
        raise TypeError(f"{what} must be a sequence, one per document, not one string")
    out = [label_text(i, v, what) for i, v in enumerate(values)]
    if len(out) != n:
        raise ValueError(f"{len(out)} {what}s for {n} documents")
    return out


def check_texts_and_labels(texts: Any, labels: Any, known: Any = None
                 ) -> tuple[list[str], list[str] | None, list[Any] | None]:
    texts = check_texts(texts)
    if len(texts) < 2:
        raise ValueError(f"assess needs at least 2 documents, got {len(texts)}")
    if known is not None:
        known = [list(k) if not isinstance(k, str) else k for k in known]
        if len(known) != len(texts) or any(isinstance(k, str) for k in known):
            raise ValueError("known must hold one list of strings per document")
    if labels is None:
        return texts, None, known
    if isinstance(labels, str):
        raise TypeError("labels must be a sequence, one per document, not one string")
    labels = [label_text(i, x) for i, x in enumerate(labels)]
    if len(labels) != len(texts):
        raise ValueError(f"{len(labels)} labels for {len(texts)} documents")
    return texts, labels, known


def label_text(i: int, value: Any, what: str = "label") -> str:
    """A class label as text: strings, integers and booleans (numpy's too), as Hugging Face
    datasets and most labelled sets give them; an integral float (a pandas integer column with a
    missing value becomes float) is its integer, so 3 and 3.0 are one class."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_ | int | np.integer):
        return str(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    raise TypeError(f"{what} {i} is {value!r}: a {what} is a class, given as a string, an "
                    "integer or a boolean")
