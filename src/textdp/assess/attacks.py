"""The attacks beyond document linkage: author linkage and attribute inference.

* **Author linkage** (with a person field): the attacker holds *other* documents of the same
  people (a customer's earlier tickets, a person's public posts) and asks who wrote a released
  document. For every private document it scores each person by the nearest of that person's
  other original documents (the document itself excluded), with each similarity of
  :func:`textdp.assess.linkage.similarity_matrices` (word TF-IDF, character n-gram TF-IDF,
  MiniLM, their standardised sum), and guesses the best-scored person (top-1) or five (top-5).
  Its success is the best of the four, so it is at least as strong as a plain TF-IDF nearest
  neighbour over the authors' other documents. Chance is k over the number of persons. Only
  documents whose person has another document in the sample can be linked; the others are not
  counted (their number is reported).
* **Attribute inference** (with a sensitive field): the attacker knows the attribute (a
  diagnosis, a region, …) of some people and wants it for the others from what is released. Two
  attackers, trained on the originals or on the private text of the training split (a seeded
  stratified 60/40 split, not the task split), each tested on the private text of the test
  split; the stronger is reported, against always guessing the most frequent value and against
  the same classifier on the originals.

Ties count fairly, as in :func:`textdp.assess.linkage.top_k`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from textdp.assess.linkage import TIE_TOLERANCE
from textdp.assess.utility import accuracy, chance, task_split, wilson

__all__ = ["author_scores", "author_linkage", "attribute_inference", "ATTACKERS"]

#: What each attack models, one sentence each (the report's words).
ATTACKERS = {
    "linkage": "an attacker who holds your original documents (a leaked copy, an insider) and "
               "wants to know which original a released document is",
    "author_linkage": "an attacker who holds other documents written by the same people (their "
                      "earlier tickets, their public posts) and wants to know who wrote a "
                      "released document",
    "attribute": "an attacker who knows the {field} of some people together with their "
                 "documents and wants to infer it for the others from what is released",
}

#: :func:`textdp._random.library_seed`'s purpose for the attribute split.
_ATTRIBUTE_PURPOSE = 3


def _codes(values: Sequence[Any]) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray([str(v) for v in values], dtype=object), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if len(codes) else 0


def author_scores(scores: np.ndarray, authors: np.ndarray, n_authors: int) -> np.ndarray:
    """(n_private, n_authors): per private document i and person a, the best score of a's
    original documents other than i (−∞ where a has none)."""
    s = np.array(scores, dtype=np.float64)
    np.fill_diagonal(s, -np.inf)  # the attacker does not hold the document it attacks
    order = np.argsort(authors, kind="stable")
    sorted_authors = authors[order]
    starts = np.flatnonzero(np.r_[True, sorted_authors[1:] != sorted_authors[:-1]])
    out = np.full((s.shape[0], n_authors), -np.inf)
    out[:, sorted_authors[starts]] = np.maximum.reduceat(s[:, order], starts, axis=1)
    return out


def _top_k(scores: np.ndarray, true: np.ndarray, k: int) -> np.ndarray:
    """Per row, the probability that column ``true[row]`` is among the k best, ties at random."""
    t = scores[np.arange(scores.shape[0]), true][:, None]
    scale = np.maximum(np.abs(t), 1.0) * TIE_TOLERANCE
    higher = (scores > t + scale).sum(axis=1)
    equal = (np.abs(scores - t) <= scale).sum(axis=1)
    return np.clip((k - higher) / equal, 0.0, 1.0)


def author_linkage(matrices: Mapping[str, np.ndarray], authors: Sequence[Any]) -> dict[str, Any]:
    """Top-1 and top-5 author linkage of each attack, the strongest one's, and chance.

    ``matrices``: attack → (n, n) similarity of private document i to original j (the same
    documents in the same order). Returns ``{"top1", "top5", "top1_interval", "top5_interval",
    "attack", "chance_top1", "chance_top5", "linkable", "persons", "by_attack"}``; the rates are
    None when no document's person has another document in the sample.
    """
    codes, m = _codes(authors)
    per_person = np.bincount(codes, minlength=m)
    linkable = per_person[codes] >= 2
    n = int(linkable.sum())
    out: dict[str, Any] = {"linkable": n, "persons": m, "chance_top1": 1 / m if m else None,
                           "chance_top5": min(5, m) / m if m else None, "by_attack": {}}
    if n == 0 or m < 2:
        return {**out, "top1": None, "top5": None, "top1_interval": None,
                "top5_interval": None, "attack": None}
    hits = {}
    for attack, s in matrices.items():
        a = author_scores(s, codes, m)[linkable]
        true = codes[linkable]
        hits[attack] = (_top_k(a, true, 1).sum(), _top_k(a, true, min(5, m)).sum())
        out["by_attack"][attack] = {"top1": hits[attack][0] / n, "top5": hits[attack][1] / n}
    best = max(hits, key=lambda k: hits[k])
    best5 = max(hits, key=lambda k: hits[k][1])
    return {**out, "top1": hits[best][0] / n, "top5": hits[best5][1] / n, "attack": best,
            "top1_interval": wilson(hits[best][0], n), "top5_interval": wilson(hits[best5][1], n)}


def attribute_split(values: Sequence[Any], seed: int) -> Any:
    """The attribute attack's split of the sample (its own seeded stream)."""
    return task_split([str(v) for v in values], seed, purpose=_ATTRIBUTE_PURPOSE)


def attribute_baseline(originals: Sequence[str], split: Any) -> dict[str, Any]:
    """The classifier on the originals (train and test) and always guessing the majority."""
    y_train, y_test = split.labels[split.train], split.labels[split.test]
    right = accuracy([originals[i] for i in split.train], y_train,
                     [originals[i] for i in split.test], y_test)
    guess = chance(split)
    m = len(split.test)
    return {"originals": right / m, "originals_interval": wilson(right, m),
            "chance": guess / m, "chance_interval": wilson(guess, m), "test": m,
            "values": int(len(np.unique(split.labels)))}


def attribute_inference(originals: Sequence[str], private: Sequence[str], split: Any
                        ) -> dict[str, Any]:
    """The stronger of the two attackers' accuracy on the private test documents, with its
    95% interval and which one it was (``"trained on originals"`` or ``"trained on private"``)."""
    y_train, y_test = split.labels[split.train], split.labels[split.test]
    test_private = [private[i] for i in split.test]
    scores = {
        "trained on originals": accuracy([originals[i] for i in split.train], y_train,
                                         test_private, y_test),
        "trained on private": accuracy([private[i] for i in split.train], y_train,
                                       test_private, y_test)}
    best = max(scores, key=lambda k: scores[k])
    m = len(split.test)
    return {"accuracy": scores[best] / m, "accuracy_interval": wilson(scores[best], m),
            "attack": best, "by_attack": {k: v / m for k, v in scores.items()}}
