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
from textdp.assess.utility import Trained, accuracy, chance, task_split, wilson

__all__ = ["author_scores", "author_linkage", "attribute_inference", "attribute_attacker",
           "ATTACKERS"]

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


def author_scores(scores: np.ndarray, authors: np.ndarray, n_authors: int,
                  rows: np.ndarray | None = None) -> np.ndarray:
    """(n_private, n_authors): per private document i (row r, document ``rows[r]``) and person
    a, the best score of a's original documents other than i (−∞ where a has none)."""
    s = np.array(scores, dtype=np.float64)
    # The attacker does not hold the document it attacks.
    own = np.arange(s.shape[0]) if rows is None else rows
    s[np.arange(s.shape[0]), own] = -np.inf
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


def author_linkage(matrices: Mapping[str, np.ndarray], authors: Sequence[Any],
                   rows: Mapping[str, np.ndarray] | None = None) -> dict[str, Any]:
    """Top-1 and top-5 author linkage of each attack, the strongest one's, and chance.

    ``matrices``: attack → (rows, n) similarity of private document r to original j (the same
    documents in the same order); ``rows`` (:func:`textdp.assess.linkage.rows_of`) names the
    private document of each row of an attack that saw only some (default: all, in order).
    Returns ``{"top1", "top5", "top1_interval", "top5_interval", "attack", "chance_top1",
    "chance_top5", "linkable", "persons", "by_attack"}``; the rates are None when no document's
    person has another document in the sample. Each attack's rate is over the linkable
    documents it saw (``documents``: their number for the strongest one).
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
        seen = np.arange(s.shape[0]) if rows is None else np.asarray(rows[attack])
        keep = linkable[seen]
        k = int(keep.sum())
        if k == 0:
            continue
        a = author_scores(s, codes, m, seen)[keep]
        true = codes[seen[keep]]
        hits[attack] = (_top_k(a, true, 1).sum(), _top_k(a, true, min(5, m)).sum(), k)
        out["by_attack"][attack] = {"top1": hits[attack][0] / k, "top5": hits[attack][1] / k,
                                    "documents": k}
    best = max(hits, key=lambda a: (hits[a][0] / hits[a][2], hits[a][1] / hits[a][2]))
    best5 = max(hits, key=lambda a: hits[a][1] / hits[a][2])
    h1, _, n1 = hits[best]
    _, h5, n5 = hits[best5]
    return {**out, "documents": n1, "top1": h1 / n1, "top5": h5 / n5, "attack": best,
            "top1_interval": wilson(h1, n1), "top5_interval": wilson(h5, n5)}


def attribute_split(values: Sequence[Any], seed: int) -> Any:
    """The attribute attack's split of the sample (its own seeded stream)."""
    return task_split([str(v) for v in values], seed, purpose=_ATTRIBUTE_PURPOSE)


def attribute_attacker(originals: Sequence[str], split: Any) -> Trained:
    """The attribute attacker trained on the originals of the training split (the same for
    every setting: fitted once)."""
    return Trained([originals[i] for i in split.train], split.labels[split.train])


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


def attribute_inference(originals: Sequence[str], private: Sequence[str], split: Any,
                        trained: Trained | None = None) -> dict[str, Any]:
    """The stronger of the two attackers' accuracy on the private test documents, with its
    95% interval and which one it was (``"trained on originals"`` or ``"trained on private"``);
    ``trained``: the attacker trained on the originals' training split, when already fitted
    (:func:`attribute_attacker`)."""
    y_train, y_test = split.labels[split.train], split.labels[split.test]
    test_private = [private[i] for i in split.test]
    if trained is None:
        trained = attribute_attacker(originals, split)
    scores = {
        "trained on originals": trained.correct(test_private, y_test),
        "trained on private": accuracy([private[i] for i in split.train], y_train,
                                       test_private, y_test)}
    best = max(scores, key=lambda k: scores[k])
    m = len(split.test)
    return {"accuracy": scores[best] / m, "accuracy_interval": wilson(scores[best], m),
            "attack": best, "by_attack": {k: v / m for k, v in scores.items()}}
