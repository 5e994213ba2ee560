"""Utility: meaning kept (MiniLM cosine with the original) and task accuracy with a label.

Task accuracy follows the two protocols of the MVC paper (Xu et al. 2020, §4.2): a classifier
trained on private text and tested on private text (the data owner trains on what is released),
and one trained on the clean originals and tested on private text; both against the same
classifier trained and tested on the originals (the non-private baseline) and against chance
(always the most frequent training label). The classifier is scikit-learn's TF-IDF + logistic
regression: simple, fast, and what a first model on such data usually is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["wilson", "mean_interval", "similarity", "TaskSplit", "task_split", "Trained",
           "accuracy"]


def wilson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (scipy's ``binomtest``); a fractional count (the
    linkage attack's expected hits under ties) is rounded outward first."""
    from scipy.stats import binomtest

    if n <= 0:
        return (0.0, 1.0)
    lo_k = int(np.floor(successes + 1e-9))
    hi_k = int(np.ceil(successes - 1e-9))
    lo = binomtest(lo_k, n).proportion_ci(confidence, method="wilson").low
    hi = binomtest(hi_k, n).proportion_ci(confidence, method="wilson").high
    return (float(lo), float(hi))


def mean_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Student-t interval of a mean (scipy), (mean, mean) for a single value."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    if values.size < 2 or np.all(values == values[0]):
        m = float(values.mean()) if values.size else float("nan")
        return (m, m)
    lo, hi = stats.t.interval(confidence, values.size - 1, loc=values.mean(),
                              scale=stats.sem(values))
    return (float(lo), float(hi))


def measured_fields(link: dict, n: int, sims: np.ndarray, seconds: float, words: int) -> dict:
    """The fields every release form's row fills the same way: document linkage (top 1 and 5,
    their 95% intervals, chance), meaning kept (similarity), time; and the task, author and
    attribute fields empty until the form's own measurement fills them."""
    return {
        "linkage_top1": link["top1"],
        "linkage_top1_interval": wilson(link["hits_top1"], link.get("n_top1", n)),
        "linkage_top5": link["top5"],
        "linkage_top5_interval": wilson(link["hits_top5"], link.get("n_top5", n)),
        "linkage_chance": link["chance_top1"], "linkage_chance_top5": link["chance_top5"],
        "linkage_attack": link["attack"], "linkage_by_attack": link["by_attack"],
        "similarity": float(sims.mean()), "similarity_interval": mean_interval(sims),
        "similarity_documents": int(sims.size),
        "task_accuracy": None, "task_accuracy_interval": None,
        "task_accuracy_clean_train": None, "task_accuracy_clean_train_interval": None,
        "seconds": seconds, "words_per_second": words / seconds if seconds > 0 else None,
        "author_linkage": None, "author_linkage_top1": None,
        "author_linkage_top1_interval": None, "author_linkage_chance": None,
        "attribute": None, "attribute_accuracy": None, "attribute_accuracy_interval": None,
        "attribute_chance": None,
    }


def similarity(original_embeddings: np.ndarray, private_embeddings: np.ndarray) -> np.ndarray:
    """Per document, the cosine of its private and original sentence embeddings."""
    a = np.asarray(original_embeddings, dtype=np.float64)
    b = np.asarray(private_embeddings, dtype=np.float64)
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / np.where(na * nb > 0, na * nb, 1.0)


@dataclass(frozen=True, slots=True)
class TaskSplit:
    """Which sampled documents train and which test (a seeded, stratified 60/40 split)."""

    train: np.ndarray
    test: np.ndarray
    labels: np.ndarray


#: :func:`textdp._random.library_seed`'s purpose for the split (one number per use).
_SPLIT_PURPOSE = 1


def task_split(labels: Sequence[str], seed: int, *, purpose: int = _SPLIT_PURPOSE) -> TaskSplit:
    """The split of the assessment seeded with ``seed`` (any non-negative integer: scikit-learn
    gets a seed in its own range from :func:`textdp._random.library_seed`); ``purpose`` gives
    another use (the attribute attack) its own split."""
    from sklearn.model_selection import train_test_split

    from textdp import _random

    labels_array = np.asarray([str(x) for x in labels], dtype=object)
    index = np.arange(len(labels_array))
    _, counts = np.unique(labels_array, return_counts=True)
    n_test = int(np.ceil(0.4 * len(index)))
    stratify = labels_array if counts.min() >= 2 and n_test >= len(counts) else None
    train, test = train_test_split(index, test_size=0.4, stratify=stratify,
                                   random_state=_random.library_seed(seed, purpose))
    return TaskSplit(train=np.sort(train), test=np.sort(test), labels=labels_array)


def _classifier():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(sublinear_tf=True), LogisticRegression(max_iter=1000))


class Trained:
    """The classifier trained once on some texts (the originals, shared by every setting): its
    correct predictions on any test texts. The most frequent training label stands in when
    only one label is seen or no term is left."""

    def __init__(self, train_texts: Sequence[str], train_labels: np.ndarray) -> None:
        values, counts = np.unique(train_labels, return_counts=True)
        self.majority = values[np.argmax(counts)]
        self.model = None
        if len(values) >= 2:
            model = _classifier()
            try:
                model.fit(list(train_texts), train_labels)
            except ValueError:  # empty vocabulary: every private text reduced to nothing
                return
            self.model = model

    def correct(self, test_texts: Sequence[str], test_labels: np.ndarray) -> int:
        if self.model is None:
            return int((test_labels == self.majority).sum())
        return int((self.model.predict(list(test_texts)) == test_labels).sum())


def accuracy(train_texts: Sequence[str], train_labels: np.ndarray, test_texts: Sequence[str],
             test_labels: np.ndarray) -> int:
    """Correct predictions on the test texts of the classifier trained on the train texts
    (:class:`Trained`)."""
    return Trained(train_texts, train_labels).correct(test_texts, test_labels)


def chance(split: TaskSplit) -> int:
    """Correct predictions of always guessing the most frequent training label."""
    values, counts = np.unique(split.labels[split.train], return_counts=True)
    return int((split.labels[split.test] == values[np.argmax(counts)]).sum())
