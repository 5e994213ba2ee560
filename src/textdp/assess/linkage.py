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

from collections.abc import Sequence

import numpy as np

__all__ = ["ATTACKS", "similarity_matrices", "top_k", "linkage", "rates"]

ATTACKS = ("tfidf-words", "tfidf-chars", "sbert", "combined")
#: Scores closer than this are ties (float noise of an encoder on equal inputs).
TIE_TOLERANCE = 1e-6


def _tfidf(originals: Sequence[str], private: Sequence[str], **options: object) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(**options)
    try:
        known = vectorizer.fit_transform(originals)
    except ValueError:  # no term at all in the originals: nothing to link with
        return np.zeros((len(private), len(originals)))
    return np.asarray((vectorizer.transform(private) @ known.T).todense())


def similarity_matrices(originals: Sequence[str], private: Sequence[str],
                        original_embeddings: np.ndarray | None = None,
                        private_embeddings: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """attack → (n_private, n_originals) similarity; ``sbert`` and ``combined`` only with the
    (unit-norm) embeddings."""
    out = {"tfidf-words": _tfidf(originals, private),
           "tfidf-chars": _tfidf(originals, private, analyzer="char_wb", ngram_range=(2, 4),
                                 sublinear_tf=True)}
    if original_embeddings is not None and private_embeddings is not None:
        out["sbert"] = np.asarray(private_embeddings, dtype=np.float64) @ np.asarray(
            original_embeddings, dtype=np.float64).T
    standard = []
    for s in out.values():
        sd = s.std(axis=1, keepdims=True)
        standard.append((s - s.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0))
    out["combined"] = np.sum(standard, axis=0)
    return out


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Per private document i (row), the probability that its original (column i) is among
    the k best-scored originals, ties broken uniformly at random."""
    scores = np.asarray(scores, dtype=np.float64)
    true = np.diag(scores)[:, None]
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


def rates(matrices: dict[str, np.ndarray], n: int) -> dict[str, object]:
    """:func:`linkage`'s figures from attack → (n, n) similarity of released item i to original
    j (any release form: texts, vectors)."""
    by_attack = {}
    hits = {}
    for attack, scores in matrices.items():
        h1, h5 = top_k(scores, 1).sum(), top_k(scores, min(5, n)).sum()
        by_attack[attack] = {"top1": h1 / n, "top5": h5 / n}
        hits[attack] = (h1, h5)
    best = max(by_attack, key=lambda a: (by_attack[a]["top1"], by_attack[a]["top5"]))
    best5 = max(by_attack, key=lambda a: by_attack[a]["top5"])
    return {"top1": by_attack[best]["top1"], "top5": by_attack[best5]["top5"], "attack": best,
            "attack_top5": best5, "hits_top1": float(hits[best][0]),
            "hits_top5": float(hits[best5][1]), "chance_top1": 1 / n,
            "chance_top5": min(5, n) / n, "by_attack": by_attack, "n": n}
