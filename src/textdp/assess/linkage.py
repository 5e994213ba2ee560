"""The linkage attack: an attacker who holds the originals links each private document back.

For every private document the attacker ranks all originals by similarity and guesses the top
one (top-1) or the top five (top-5). Four similarity scores, all computed by maintained
libraries: word TF-IDF (scikit-learn's defaults, fitted on the originals: the plain attack),
character n-gram TF-IDF (matches words the mechanism changed only in part), the MiniLM sentence
embedding (meaning, when every word changed), and their sum after standardising each row. The
attack's success is the best of the four, so it is at least as strong as each of them.

Ties count fairly: when the true original shares its score with e others, it is in the top k
with probability (k − g)/e clipped to [0, 1] (g originals score strictly higher), so a private
text that carries no information (a constant) scores exactly chance, k/n.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ATTACKS", "OriginalIndex", "similarity_matrices", "rows_of", "top_k", "linkage",
           "rates"]

ATTACKS = ("tfidf-words", "tfidf-chars", "sbert", "combined")
#: Scores closer than this are ties (float noise of an encoder on equal inputs).
TIE_TOLERANCE = 1e-6


def _vectorizer(**options: object) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(**options)


#: The two TF-IDF attacks' scikit-learn options (word: the defaults).
_TFIDF = {"tfidf-words": {},
          "tfidf-chars": {"analyzer": "char_wb", "ngram_range": (2, 4), "sublinear_tf": True}}


class OriginalIndex:
    """What the attacker computes once from the originals, whatever the release: the two TF-IDF
    vectorisers fitted on them with the originals' vectors, and their unit-norm embeddings.
    Every setting's private texts are then only transformed (the fits are not repeated)."""

    def __init__(self, originals: Sequence[str], embeddings: np.ndarray | None = None) -> None:
        self.n = len(originals)
        self.embeddings = (None if embeddings is None
                           else np.asarray(embeddings, dtype=np.float64))
        self._fitted: dict[str, Any] = {}
        for attack, options in _TFIDF.items():
            vectorizer = _vectorizer(**options)
            try:
                known = vectorizer.fit_transform(originals)
            except ValueError:  # no term at all in the originals: nothing to link with
                self._fitted[attack] = None
                continue
            self._fitted[attack] = (vectorizer, known.T.tocsr())

    def matrices(self, private: Sequence[str], private_embeddings: np.ndarray | None = None,
                 encoded: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """attack → (rows, n_originals) similarity of each private document to each original.

        ``private_embeddings`` are those of the private documents ``encoded`` (indices into
        ``private``; default all): ``sbert`` and ``combined`` then have one row per encoded
        document (:func:`rows_of` says which), the TF-IDF attacks one per private document.
        """
        out: dict[str, np.ndarray] = {}
        for attack, fitted in self._fitted.items():
            if fitted is None:
                out[attack] = np.zeros((len(private), self.n))
            else:
                out[attack] = np.asarray((fitted[0].transform(private) @ fitted[1]).todense())
        rows = np.arange(len(private)) if encoded is None else np.asarray(encoded, np.int64)
        if self.embeddings is not None and private_embeddings is not None:
            out["sbert"] = np.asarray(private_embeddings, dtype=np.float64) @ self.embeddings.T
        else:
            rows = np.arange(len(private))
        # Standardising is per row, so the rows of a subset standardise as in the full matrix.
        standard = [_standard(s if a == "sbert" else s[rows]) for a, s in out.items()]
        out["combined"] = np.sum(standard, axis=0)
        return out


def _standard(s: np.ndarray) -> np.ndarray:
    sd = s.std(axis=1, keepdims=True)
    return (s - s.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0)


def similarity_matrices(originals: Sequence[str], private: Sequence[str],
                        original_embeddings: np.ndarray | None = None,
                        private_embeddings: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """attack → (n_private, n_originals) similarity; ``sbert`` and ``combined`` only with the
    (unit-norm) embeddings (:class:`OriginalIndex`, fitted for this one call)."""
    index = OriginalIndex(originals, original_embeddings)
    return index.matrices(private, private_embeddings)


def rows_of(matrices: Mapping[str, np.ndarray], encoded: np.ndarray | None
            ) -> dict[str, np.ndarray]:
    """attack → the private documents its rows stand for (the true original of row r is
    column ``rows[r]``): ``encoded`` for the embedding attacks of :meth:`OriginalIndex.matrices`
    given ``encoded``, every document for the others."""
    n = matrices["tfidf-words"].shape[0]
    subset = encoded is not None and "sbert" in matrices
    return {a: (np.asarray(encoded, np.int64) if subset and a in ("sbert", "combined")
                else np.arange(n)) for a in matrices}


def top_k(scores: np.ndarray, k: int, true_columns: np.ndarray | None = None) -> np.ndarray:
    """Per private document (row r), the probability that its original (column r, or
    ``true_columns[r]``) is among the k best-scored originals, ties broken uniformly at
    random."""
    scores = np.asarray(scores, dtype=np.float64)
    columns = np.arange(scores.shape[0]) if true_columns is None else true_columns
    true = scores[np.arange(scores.shape[0]), columns][:, None]
    scale = np.maximum(np.abs(true), 1.0) * TIE_TOLERANCE
    higher = (scores > true + scale).sum(axis=1)
    equal = (np.abs(scores - true) <= scale).sum(axis=1)
    return np.clip((k - higher) / equal, 0.0, 1.0)


def linkage(originals: Sequence[str], private: Sequence[str],
            original_embeddings: np.ndarray | None = None,
            private_embeddings: np.ndarray | None = None, *,
            matrices: dict[str, np.ndarray] | None = None) -> dict[str, object]:
    """Top-1 and top-5 linkage of each attack, the strongest attack's, and chance.

    ``matrices``: :func:`similarity_matrices` of the same documents, when already computed
    (the author attack shares them).

    Returns ``{"top1", "top5", "attack", "chance_top1", "chance_top5", "hits_top1", "hits_top5",
    "by_attack": {attack: {"top1", "top5"}}, "n"}``: ``hits_*`` are the strongest attack's
    expected numbers of documents linked (for the intervals).
    """
    n = len(originals)
    if n != len(private) or n < 2:
        raise ValueError("linkage needs at least two documents, as many private as original")
    if matrices is None:
        matrices = similarity_matrices(originals, private, original_embeddings,
                                       private_embeddings)
    return rates(matrices, n)


def rates(matrices: Mapping[str, np.ndarray], n: int,
          rows: Mapping[str, np.ndarray] | None = None) -> dict[str, object]:
    """:func:`linkage`'s figures from attack → (rows, n) similarity of released item r to
    original j (any release form: texts, vectors); ``rows`` (:func:`rows_of`) names the
    released item of each row when an attack saw only some of them (default: row r is item r
    of all n). Each attack's rate is over the items it saw (``n_top1``, ``n_top5``: the
    strongest attack's count, for its interval)."""
    by_attack = {}
    hits = {}
    for attack, scores in matrices.items():
        true = None if rows is None else rows[attack]
        m = scores.shape[0]
        h1, h5 = top_k(scores, 1, true).sum(), top_k(scores, min(5, n), true).sum()
        by_attack[attack] = {"top1": h1 / m, "top5": h5 / m, "documents": m}
        hits[attack] = (h1, h5, m)
    best = max(by_attack, key=lambda a: (by_attack[a]["top1"], by_attack[a]["top5"]))
    best5 = max(by_attack, key=lambda a: by_attack[a]["top5"])
    return {"top1": by_attack[best]["top1"], "top5": by_attack[best5]["top5"], "attack": best,
            "attack_top5": best5, "hits_top1": float(hits[best][0]),
            "hits_top5": float(hits[best5][1]), "n_top1": hits[best][2],
            "n_top5": hits[best5][2], "chance_top1": 1 / n,
            "chance_top5": min(5, n) / n, "by_attack": by_attack, "n": n}
