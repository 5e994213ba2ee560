"""The zero-private-data reference row (form ``baseline``): what a classifier learns from text a
language model writes from the label names alone.

``textdp synthesize`` starts Private Evolution from a first population written from public
label prompts (RANDOM_API; Lin et al., ICLR 2024; Xie et al., ICML 2024): the same prompts
(:meth:`textdp.synthesis.prompts.Prompts.first`), the same model, sampler and clean-up, but no
private document is read, so its guarantee is ε = 0 (the label *names* are treated as public, as
synthesize does; their frequencies are not used: the labels take equal turns). Utility: the
assessment's TF-IDF + logistic-regression classifier trained on as many generated documents as
the task split has training documents, and tested on the held-out originals of that split.

It is a reference, not a candidate release: a setting whose task accuracy is not above it pays
privacy for nothing. No document of the output corresponds to a private one, so linkage and
leakage do not apply; the recommendation never picks it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp.assess.utility import accuracy, wilson

__all__ = ["BASELINE_WHY", "baseline_row", "generate_from_labels"]

BASELINE_WHY = ("no private document is read: the language model writes from the label names "
                "alone (treated as public, as synthesize does)")
#: The row fields of a text-per-document measurement that a generated release does not have.
NOT_MEASURED = (
    "entities_found", "entities_survived_count", "entities_survived",
    "entities_survived_interval", "independent_leakage", "independent_survived_count",
    "documents_leaking", "documents_leaking_interval", "words_privatized", "words_unchanged",
    "words_unchanged_interval", "linkage_top1", "linkage_top1_interval", "linkage_top5",
    "linkage_top5_interval", "linkage_chance", "linkage_chance_top5", "linkage_attack",
    "linkage_by_attack", "author_linkage", "author_linkage_top1",
    "author_linkage_top1_interval", "author_linkage_chance", "attribute", "attribute_accuracy",
    "attribute_accuracy_interval", "attribute_chance")
#: :func:`textdp.synthesis.generation.row_generators`'s stage of the baseline's draws.
_STAGE = 0


def generate_from_labels(labels: Sequence[str], *, model: Any = None, document_kind: str = "text",
                         seed: int | None, max_new_tokens: int = 64, batch_size: int = 16,
                         progress: Any = None) -> list[str]:
    """One document per entry of ``labels``, written by the language model from the label's
    RANDOM_API prompt (synthesize's sampler: temperature 1, top-p 0.95; its clean-up)."""
    from textdp.lm import LanguageModel, shared_model
    from textdp.synthesis.generation import NucleusSampler, generate_ids, row_generators
    from textdp.synthesis.prompts import Prompts, clean

    lm = model if isinstance(model, LanguageModel) else shared_model(model)
    prompts = Prompts(kind=document_kind)
    ids = lm.prompt_ids([prompts.first(label) for label in labels], "{document}")
    sampler = NucleusSampler(row_generators(len(ids), seed, _STAGE), temperature=1.0, top_p=0.95)
    rows = generate_ids(lm, ids, max_new_tokens=max_new_tokens, sampler=sampler,
                        batch_size=batch_size, progress=progress)
    return [clean(t) for t in lm.decode(rows)]


def _zero_scale(sizes: np.ndarray, units: Sequence[Any] | None) -> dict[str, Any]:
    """The guarantee column of a release that reads no private document: ε = δ = 0 for every
    document and person (the shape of :func:`textdp.assess.scale.document_scale`)."""
    from textdp.assess.scale import PERCENTILES, _at

    out: dict[str, Any] = {"unit": "document", "epsilon_per_unit": 0.0, "delta_per_unit": 0.0,
                           "scale": "one", "why": "", "domain": BASELINE_WHY}
    for name, q in PERCENTILES:
        out[name] = {"units": _at(np.asarray(sizes), q), "epsilon": 0.0, "delta": 0.0}
    out["persons"] = None if units is None else {
        "count": len(set(units)),
        **{name: {"documents": 0, "units": 0, "epsilon": 0.0, "delta": 0.0}
           for name, _ in PERCENTILES}}
    return out


def baseline_row(originals: Sequence[str], split: Any, shared: Any, *, seed: int,
                 model: Any = None, document_kind: str = "text", progress: Any = None
                 ) -> dict[str, Any]:
    """The reference row: generated training documents, tested on the held-out originals."""
    names = sorted(set(split.labels.tolist()))
    n = len(split.train)
    labels = [names[i % len(names)] for i in range(n)]  # equal turns: no private count used
    bar = progress("baseline (label prompts) ε=0", n) if progress is not None else None
    t0 = time.perf_counter()
    try:
        texts = generate_from_labels(labels, model=model, document_kind=document_kind,
                                     seed=seed, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    test = [originals[i] for i in split.test]
    right = accuracy(texts, np.asarray(labels, dtype=object), test, split.labels[split.test])
    m = len(split.test)
    scale = _zero_scale(shared.sizes, shared.units)
    row: dict[str, Any] = {
        "form": "baseline", "reference": True, "mechanism": "baseline", "variant": "",
        "label": "baseline (label prompts)", "epsilon": 0.0, "epsilon_is_document_budget": False,
        "release": {}, "privatize_options": "", "command": "", "documents": n,
        "generated": n, "example": texts[0] if texts else "",
        "leakage": "not applicable: " + BASELINE_WHY,
        "linkage": "not applicable: no generated document corresponds to a private one",
        "document_guarantee": scale, "whole_document": None,
        "task_accuracy": right / m, "task_accuracy_interval": wilson(right, m),
        "task_accuracy_protocol": "trained on generated documents, tested on the held-out "
                                  "originals",
        "task_accuracy_clean_train": None, "task_accuracy_clean_train_interval": None,
        "seconds": seconds, "words_per_second": None, "similarity": None,
        "similarity_interval": None,
    }
    row.update(dict.fromkeys(NOT_MEASURED))
    row["entities_by_kind"] = {}
    for name in ("median", "p90"):
        row[f"document_epsilon_{name}"] = 0.0
        row[f"document_delta_{name}"] = 0.0
        row[f"person_epsilon_{name}"] = None if shared.units is None else 0.0
    return row
