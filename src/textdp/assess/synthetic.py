"""Synthetic text by Private Evolution (form ``synthetic``): ``textdp.synthesize`` on the
training part of the task split, judged on the held-out part.

The release is a new corpus, not one private document per original, so the per-document
attacks of the other forms do not apply. Instead, as issue 32 measures a synthetic release
(:func:`textdp.audit.practice.practice_checks`, exact counts, not DP): identifiers of the
originals found in the output (leakage), 8-word sequences unique to one original found in the
output (memorisation), and originals that some synthetic document is closer to (MiniLM cosine)
than their own nearest other original (near-copies, the linkage analogue). Utility: the
assessment's TF-IDF + logistic-regression classifier trained on the synthetic documents and
their labels and tested on the held-out originals. Guarantee: synthesize's dataset-level
(ε, δ) from its report: every document (with persons, every person: synthesize then counts
persons as its units) gets that (ε, δ) whatever its length.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp.assess.baseline import NOT_MEASURED
from textdp.assess.utility import accuracy, wilson

__all__ = ["SYNTHETIC_EPSILONS", "guarantee_words", "synthetic_row"]

#: ε of synthesize's dataset-level guarantee in the grid (synthesize needs enough units per
#: label at small ε: it refuses a run whose noise would drown the votes, and the row says so).
SYNTHETIC_EPSILONS = (2.0, 8.0)


def _scale(epsilon: float, delta: float, sizes: np.ndarray, persons: bool) -> dict[str, Any]:
    from textdp.assess.scale import PERCENTILES, _at

    out: dict[str, Any] = {"unit": "person" if persons else "document",
                           "epsilon_per_unit": epsilon, "delta_per_unit": delta, "scale": "one",
                           "why": "", "domain": "synthesize's dataset-level guarantee: each "
                           + ("person" if persons else "document") + " is one unit"}
    for name, q in PERCENTILES:
        out[name] = {"units": _at(np.asarray(sizes), q), "epsilon": epsilon, "delta": delta}
    out["persons"] = None if not persons else {
        "count": None, **{name: {"documents": None, "units": None, "epsilon": epsilon,
                                 "delta": delta} for name, _ in PERCENTILES}}
    return out


def synthetic_row(epsilon: float, originals: Sequence[str], split: Any, shared: Any, *,
                  seed: int, embed: Any, original_embeddings: np.ndarray, model: Any = None,
                  document_kind: str = "text", progress: Any = None) -> dict[str, Any]:
    """The row of synthesize at ``epsilon`` (see the module docstring)."""
    import textdp
    from textdp.audit.practice import practice_checks

    train = [originals[i] for i in split.train]
    units = (None if shared.authors is None else [shared.authors[i] for i in split.train])
    row: dict[str, Any] = {
        "form": "synthetic", "mechanism": "synthesize", "variant": "", "label": "synthesize",
        "epsilon": float(epsilon), "epsilon_is_document_budget": False, "release": {},
        "privatize_options": "", "documents": len(train), "similarity": None,
        "similarity_interval": None, "task_accuracy_clean_train": None,
        "task_accuracy_clean_train_interval": None, "words_per_second": None,
        "entities_by_kind": {}, "whole_document": None,
        "command": (f"textdp synthesize INPUT --label-field LABEL --epsilon {epsilon:g} "
                    f"-n {len(train)} -o OUTPUT.jsonl"),
        "leakage": "counted over the whole output (identifiers of the originals found in it), "
                   "not per document",
        "linkage": "not applicable: no synthetic document corresponds to one private one "
                   "(near-copies are counted instead)"}
    row.update(dict.fromkeys(NOT_MEASURED))
    t0 = time.perf_counter()
    try:
        result = textdp.synthesize(train, labels=list(split.labels[split.train]), units=units,
                                   epsilon=float(epsilon), n=len(train), seed=seed, model=model,
                                   document_kind=document_kind, encoder=embed,
                                   progress=progress)
    except ValueError as exc:  # refused: too few units for this ε (the accountant's check)
        row.update(refused=str(exc).splitlines()[0], task_accuracy=None,
                   task_accuracy_interval=None, seconds=time.perf_counter() - t0,
                   document_guarantee=None)
        return row
    row["seconds"] = time.perf_counter() - t0
    g = result.report["guarantee"]
    scale = _scale(float(g["epsilon"]), float(g.get("delta") or 0.0), shared.sizes,
                   units is not None)
    test = [originals[i] for i in split.test]
    right = accuracy(result.texts, np.asarray(result.labels, dtype=object), test,
                     split.labels[split.test])
    m = len(split.test)
    checks = practice_checks(train, result.texts, encoder=embed,
                             original_embeddings=original_embeddings[split.train],
                             synthetic_embeddings=np.asarray(embed(result.texts)))
    row.update(task_accuracy=right / m, task_accuracy_interval=wilson(right, m),
               task_accuracy_protocol="trained on the synthetic documents, tested on the "
                                      "held-out originals",
               document_guarantee=scale, practice=checks.to_dict(),
               entities_survived_count=len(checks.identifiers_found),
               entities_found=checks.identifiers_checked,
               memorised_documents=checks.documents_with_unique_ngram,
               near_copies=checks.closer_than_neighbour)
    for name in ("median", "p90"):
        row[f"document_epsilon_{name}"] = scale[name]["epsilon"]
        row[f"document_delta_{name}"] = scale[name]["delta"]
        row[f"person_epsilon_{name}"] = scale[name]["epsilon"] if units is not None else None
    return row


def guarantee_words(row: dict[str, Any]) -> str:
    """The synthetic release's guarantee as a person reads it."""
    from textdp.privacy import format_up

    g = row.get("document_guarantee")
    if not g:
        return f"synthesize at ε = {row['epsilon']:g} was refused: {row.get('refused')}"
    return (f"synthesize at ε = {row['epsilon']:g}: (ε, δ)-DP at the dataset level, with each "
            f"{g['unit']} one unit: adding, removing or changing all the documents of one "
            f"{g['unit']} changes the probability of any synthetic corpus by at most a factor "
            f"e^{format_up(g['median']['epsilon'], 4)} (plus δ ≤ {format_up(g['median']['delta'], 2)}), "
            "whatever the length of its documents.")
