"""Utility of privatised text: downstream classification and semantic similarity.

* **Downstream classification** (Feyisetan et al., WSDM 2020, §5.2): a scikit-learn logistic
  regression on sentence features (mean GloVe, SBERT, or TF-IDF), in the paper's two settings —
  *train on private, test on clean* ("training time") and *train on clean, test on private*
  ("test time") — plus 1-Diffractor's (§4.1.1) *train and test on private*, next to the clean
  baseline (train and test clean) and the chance level.
* **Semantic similarity** (Meisenbacher et al., IWSPA 2024, Table 2): mean SBERT cosine
  similarity between each original sentence and its privatised version.

Tasks (offline assets only): binary sentiment on the VADER sentence sets
(:func:`vader_sentiment_task`) and topic classification over the Debian fortunes categories
(:func:`fortunes_topic_task`). Any :class:`Task` works.

Evaluators precompute everything that does not depend on the mechanism (the clean features and
the clean model) once, so that a sweep over mechanisms and ε only pays for the private texts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textdp._checks import check_rng
from textdp._random import library_seed
from textdp.evaluation._common import derive_seed
from textdp.mechanisms.base import WordMechanism

__all__ = [
    "Task", "vader_sentiment_task", "fortunes_topic_task", "split_indices", "Features",
    "make_features", "privatize_texts", "UtilityEvaluator", "downstream_utility",
    "semantic_similarity", "classification_scores", "chance_accuracy",
]

FeatureSpec = str | Callable[[list[str]], Any]


# --- tasks ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """Labelled texts: ``labels[i]`` indexes ``label_names``."""

    name: str
    texts: tuple[str, ...]
    labels: np.ndarray
    label_names: tuple[str, ...]
    description: str = ""

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.labels):
            raise ValueError(f"{len(self.texts)} texts but {len(self.labels)} labels")
        if len(self.texts) < 2:
            raise ValueError("a task needs at least two texts")

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n_classes(self) -> int:
        return len(self.label_names)

    def describe(self) -> dict[str, Any]:
        counts = np.bincount(self.labels, minlength=self.n_classes)
        return {"name": self.name, "description": self.description, "documents": len(self),
                "classes": self.n_classes,
                "class_counts": {n: int(c) for n, c in zip(self.label_names, counts, strict=True)}}


def _balanced(groups: dict[str, list[str]], per_class: int | None,
              rng: np.random.Generator) -> tuple[list[str], list[int], list[str]]:
    names = sorted(groups)
    texts: list[str] = []
    labels: list[int] = []
    for k, name in enumerate(names):
        items = groups[name]
        take = len(items) if per_class is None else min(per_class, len(items))
        idx = np.sort(rng.choice(len(items), size=take, replace=False))
        texts.extend(items[i] for i in idx)
        labels.extend([k] * take)
    return texts, labels, names


def vader_sentiment_task(max_docs: int | None = 2000, rng: np.random.Generator | None = None, *,
                         sets: Sequence[str] = ("tweets", "movie_reviews", "amazon", "nyt"),
                         neutral: float = 0.5) -> Task:
    """Binary sentiment on the VADER sentence sets (Hutto & Gilbert 2014).

    A sentence is positive when its mean human rating is > ``neutral``, negative when < −``neutral``
    (the rest is dropped); the two classes are balanced, ``max_docs // 2`` each at most.
    """
    from textdp.datasets import load_vader

    rng = check_rng(rng)
    groups: dict[str, list[str]] = {"negative": [], "positive": []}
    for name in sets:
        for s in load_vader(name):
            if s.score > neutral:
                groups["positive"].append(s.text)
            elif s.score < -neutral:
                groups["negative"].append(s.text)
    per = min(len(g) for g in groups.values())
    if max_docs is not None:
        per = min(per, max_docs // 2)
    texts, labels, names = _balanced(groups, per, rng)
    return Task("vader-sentiment", tuple(texts), np.asarray(labels), tuple(names),
                f"binary sentiment (mean rating beyond ±{neutral:g}) on the VADER sets "
                f"{', '.join(sets)}; balanced")


def fortunes_topic_task(max_docs: int | None = 2000, rng: np.random.Generator | None = None, *,
                        min_per_class: int = 100) -> Task:
    """Topic classification: which Debian fortunes category file an entry comes from.

    Categories with at least ``min_per_class`` entries, balanced to the same count per class
    (at most ``max_docs`` in all; when that leaves fewer than 10 per category, only the largest
    categories are kept, 10 each). Attribution lines are not part of the text.
    """
    from textdp.datasets.fortunes import load_fortunes

    rng = check_rng(rng)
    groups: dict[str, list[str]] = {}
    for e in load_fortunes():
        groups.setdefault(e.category, []).append(e.text)
    groups = {k: v for k, v in groups.items() if len(v) >= min_per_class}
    if len(groups) < 2:
        raise ValueError(f"fewer than two fortunes categories have ≥ {min_per_class} entries")
    if max_docs is not None and max_docs // len(groups) < _MIN_TOPIC_DOCS:
        # Too few documents for every category: keep the largest ones, _MIN_TOPIC_DOCS each.
        keep = sorted(groups, key=lambda k: (-len(groups[k]), k))[:max(2, max_docs // _MIN_TOPIC_DOCS)]
        groups = {k: groups[k] for k in keep}
    per = min(len(v) for v in groups.values())
    if max_docs is not None:
        per = min(per, max(2, max_docs // len(groups)))
    texts, labels, names = _balanced(groups, per, rng)
    return Task("fortunes-topic", tuple(texts), np.asarray(labels), tuple(names),
                f"topic = fortunes category file ({len(names)} categories with ≥ {min_per_class} "
                "entries); balanced")


_MIN_TOPIC_DOCS = 10


def split_indices(labels: np.ndarray, test_fraction: float = 0.3,
                  rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A stratified train/test split: ``test_fraction`` of every class (at least one) to test."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    rng = check_rng(rng)
    labels = np.asarray(labels)
    train, test = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        if idx.size < 2:
            raise ValueError(f"class {c} has fewer than two examples")
        k = min(max(1, int(round(test_fraction * idx.size))), idx.size - 1)
        test.append(idx[:k])
        train.append(idx[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


# --- features and classifiers --------------------------------------------------------------------
class Features:
    """Texts → feature matrix. ``"tfidf"`` is fitted on training texts; encoders are fixed.

    Encoder outputs of texts encoded with ``remember=True`` (the clean texts) are memoised, so a
    sweep encodes them once; private texts are encoded afresh and not kept.
    """

    def __init__(self, spec: FeatureSpec = "glove-mean") -> None:
        self.spec = spec
        self.sparse = spec == "tfidf"
        self._memo: dict[str, np.ndarray] = {}
        if self.sparse:
            self.name = "tfidf"
            self._encoder = None
        else:
            import os

            from textdp.encoders import get_encoder

            # Model loading would draw its own progress bars and warnings on stderr.
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

            self._encoder = get_encoder(spec)
            self.name = str(getattr(self._encoder, "name", "custom"))

    def encode(self, texts: Sequence[str], *, remember: bool = False) -> np.ndarray:
        """Dense encoder features; not for ``tfidf``."""
        if self._encoder is None:
            raise TypeError("tfidf features are fitted per training set; use vectorizer()")
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0))
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        fresh: dict[str, np.ndarray] = {}
        if todo:
            out = np.asarray(self._encoder(todo), dtype=np.float64)
            fresh = dict(zip(todo, out, strict=True))
            if remember:
                self._memo.update(fresh)
        return np.vstack([self._memo[t] if t in self._memo else fresh[t] for t in texts])

    def vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1, lowercase=True)

    def describe(self) -> dict[str, Any]:
        if self._encoder is None:
            return {"name": "tfidf", "model": "TF-IDF of word uni- and bigrams (sublinear tf), "
                                              "fitted on the training texts"}
        describe = getattr(self._encoder, "describe", None)
        return describe() if callable(describe) else {"name": self.name}


def make_features(spec: FeatureSpec | Features) -> Features:
    return spec if isinstance(spec, Features) else Features(spec)


#: :func:`textdp._random.library_seed`'s purpose for the order of SAGA's passes. ``seed % 2**32``
#: (what stood here) would give seeds that differ only above bit 32 the same passes.
_SAGA = 2


class _Classifier:
    """Logistic regression on ``features`` (standardised dense features, or TF-IDF)."""

    def __init__(self, features: Features, seed: int = 0) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.features = features
        if features.sparse:
            # SAGA: the same model as lbfgs, many times faster on wide sparse TF-IDF matrices;
            # ``seed`` only orders its passes over the data.
            self.model = make_pipeline(features.vectorizer(),
                                       LogisticRegression(C=10.0, solver="saga", max_iter=3000,
                                                          random_state=library_seed(seed, _SAGA)))
        else:
            self.model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000))

    def _x(self, texts: Sequence[str], remember: bool) -> Any:
        return list(texts) if self.features.sparse else self.features.encode(texts, remember=remember)

    def fit(self, texts: Sequence[str], labels: np.ndarray, *, remember: bool = False) -> _Classifier:
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model.fit(self._x(texts, remember), labels)
        return self

    def predict(self, texts: Sequence[str], *, remember: bool = False) -> np.ndarray:
        return np.asarray(self.model.predict(self._x(texts, remember)))


def classification_scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import f1_score

    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return {"accuracy": float((y_true == y_pred).mean()),
            "macro_f1": float(f1_score(y_true, y_pred, average="macro", zero_division=0))}


def chance_accuracy(train_labels: np.ndarray, test_labels: np.ndarray) -> float:
    """Accuracy of always predicting the most frequent training class."""
    majority = Counter(np.asarray(train_labels).tolist()).most_common(1)[0][0]
    return float((np.asarray(test_labels) == majority).mean())


# --- privatising a corpus -------------------------------------------------------------------------
def privatize_texts(texts: Sequence[str], mechanism: WordMechanism,
                    rng: np.random.Generator | None = None, *, oov: str = "mask") -> list[str]:
    """``texts`` through the textdp pipeline (tokenise, privatise, restore case) with ``mechanism``.

    The pipeline takes an integer seed; it is drawn from ``rng`` (document i then uses the
    generator derived from (seed, i)).
    """
    from textdp.release import privatize

    # entities="none": this measures the word mechanism, as the papers' protocols do (the
    # entity stage is measured on its own: benchmarks.run entities)
    return privatize(list(texts), mechanism, seed=derive_seed(check_rng(rng)), oov=oov,
                     entities="none").texts


# --- downstream classification --------------------------------------------------------------------
class _TaskEvaluator(ABC):
    """A classifier trained once on the clean training split of ``task``, with its clean scores.

    What a utility evaluation and an attack share: both score private versions of the task's
    texts against a model fitted on clean text, so the split, the clean features and the clean
    model are computed once per task, not once per mechanism and ε.
    """

    def __init__(self, task: Task, features: FeatureSpec | Features, *,
                 split: tuple[np.ndarray, np.ndarray] | None = None,
                 rng: np.random.Generator | None = None) -> None:
        self.task = task
        self.features = make_features(features)
        rng = check_rng(rng)
        self.train, self.test = split if split is not None else split_indices(task.labels, 0.3, rng)
        self._seed = derive_seed(rng)
        texts = task.texts
        self._train_clean = [texts[i] for i in self.train]
        self._test_clean = [texts[i] for i in self.test]
        self.y_train = task.labels[self.train]
        self.y_test = task.labels[self.test]
        self._clean_model = _Classifier(self.features, self._seed).fit(self._train_clean, self.y_train,
                                                           remember=True)
        self.clean = classification_scores(
            self.y_test, self._clean_model.predict(self._test_clean, remember=True))
        self.chance = chance_accuracy(self.y_train, self.y_test)

    @abstractmethod
    def evaluate(self, private_texts: Sequence[str]) -> dict[str, Any]:
        """Scores of private versions of all the task's texts (aligned with ``task.texts``)."""

    @abstractmethod
    def _model(self) -> tuple[str, str]:
        """How :meth:`describe` names the clean model: (key, description)."""

    def _check_aligned(self, private_texts: Sequence[str]) -> None:
        if len(private_texts) != len(self.task):
            raise ValueError(f"{len(private_texts)} private texts for a task of {len(self.task)}")

    def describe(self) -> dict[str, Any]:
        key, model = self._model()
        return {"task": self.task.describe(), "features": self.features.describe(), key: model,
                "train_documents": int(self.train.size), "test_documents": int(self.test.size),
                "clean": self.clean, "chance_accuracy": self.chance}

    @classmethod
    def _once(cls, task: Task, mechanism: WordMechanism, features: FeatureSpec | Features,
              oov: str, rng: np.random.Generator | None) -> dict[str, Any]:
        """Build the evaluator, privatise every text of ``task`` with ``mechanism``, evaluate."""
        rng = check_rng(rng)
        ev = cls(task, features, rng=rng)
        return ev.evaluate(privatize_texts(task.texts, mechanism, rng, oov=oov))


class UtilityEvaluator(_TaskEvaluator):
    """Downstream classification utility of private versions of ``task``'s texts.

    Args:
        task: the labelled texts.
        features: ``"glove-mean"``, ``"sbert"``, ``"tfidf"``, a callable encoder, or :class:`Features`.
        split: (train, test) index arrays (default: a stratified 70/30 split drawn from ``rng``).
    """

    def __init__(self, task: Task, features: FeatureSpec | Features = "glove-mean", *,
                 split: tuple[np.ndarray, np.ndarray] | None = None,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__(task, features, split=split, rng=rng)

    def _model(self) -> tuple[str, str]:
        return ("classifier", "scikit-learn LogisticRegression"
                + (" (C=10, SAGA) on TF-IDF" if self.features.sparse
                   else " (lbfgs) on standardised features"))

    def evaluate(self, private_texts: Sequence[str]) -> dict[str, Any]:
        """Scores for private versions of *all* the task's texts (aligned with ``task.texts``).

        Returns ``{"clean", "train_private", "test_private", "both_private", "chance_accuracy"}``;
        each setting has accuracy and macro-F1. ``both_private`` (train and test on private text)
        is the 1-Diffractor paper's protocol (§4.1.1); the other two are the MVC paper's.
        """
        self._check_aligned(private_texts)
        train_private = [private_texts[i] for i in self.train]
        test_private = [private_texts[i] for i in self.test]
        private_model = _Classifier(self.features, self._seed).fit(train_private, self.y_train)
        return {
            "clean": dict(self.clean),
            "train_private": classification_scores(self.y_test,
                                                   private_model.predict(self._test_clean)),
            "test_private": classification_scores(self.y_test,
                                                  self._clean_model.predict(test_private)),
            "both_private": classification_scores(self.y_test, private_model.predict(test_private)),
            "chance_accuracy": self.chance,
        }


def downstream_utility(task: Task, mechanism: WordMechanism, *,
                       features: FeatureSpec | Features = "glove-mean", oov: str = "mask",
                       rng: np.random.Generator | None = None) -> dict[str, Any]:
    """One-shot: privatise ``task`` with ``mechanism`` and score both settings (see the module)."""
    return UtilityEvaluator._once(task, mechanism, features, oov, rng)


# --- semantic similarity ---------------------------------------------------------------------------
def semantic_similarity(original: Sequence[str], private: Sequence[str], *,
                        features: FeatureSpec | Features = "sbert") -> dict[str, Any]:
    """Cosine similarity between each original text and its private version (1-Diffractor Table 2).

    Returns the mean, the quartiles and ``per_text`` (NaN where a vector is zero, e.g. a mean-GloVe
    text without in-vocabulary words; those are left out of the mean).
    """
    if len(original) != len(private):
        raise ValueError(f"{len(original)} original texts but {len(private)} private ones")
    f = make_features(features)
    if f.sparse:
        raise ValueError("semantic similarity needs a sentence encoder (sbert or glove-mean)")
    a, b = f.encode(original, remember=True), f.encode(private)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,ij->i", a, b) / (na * nb)
    cos[(na == 0) | (nb == 0)] = np.nan
    ok = cos[np.isfinite(cos)]
    q = np.quantile(ok, [0.25, 0.5, 0.75]) if ok.size else [np.nan] * 3
    return {"encoder": f.name, "mean": float(ok.mean()) if ok.size else float("nan"),
            "q25": float(q[0]), "median": float(q[1]), "q75": float(q[2]),
            "n": int(ok.size), "per_text": cos}
