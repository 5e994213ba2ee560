"""Which word pairs an audit tests: the closest (tightest claims), random ones, or the user's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from textdp.mechanisms.base import WordMechanism

__all__ = ["closest_pairs", "random_pairs", "given_pairs"]

#: Up to this many words every pair is a candidate for "closest"; above, each word's nearest
#: neighbours in the vocabulary's vectors are (textdp.mechanisms.word.gumbel.vocabulary_graph).
ALL_PAIRS_UP_TO = 512
_BLOCK = 1 << 16  # pairs per privacy_loss call: bounds the (pairs × dim) float64 temporaries


def _candidates(mechanism: WordMechanism) -> tuple[np.ndarray, np.ndarray]:
    n = len(mechanism.vocabulary)
    if n <= ALL_PAIRS_UP_TO:
        a, b = np.triu_indices(n, 1)
        return a.astype(np.int64), b.astype(np.int64)
    from textdp.mechanisms.word.gumbel import vocabulary_graph

    g = vocabulary_graph(mechanism.vocabulary)
    a = np.repeat(np.arange(n, dtype=np.int64), g.indices.shape[1])
    b = g.indices.ravel().astype(np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    key = np.unique(lo[keep] * n + hi[keep])
    return key // n, key % n


def closest_pairs(mechanism: WordMechanism, k: int) -> np.ndarray:
    """The ``k`` pairs with the smallest claim (``privacy_loss``), ties by ``distance``.

    These are the tightest claims, where a violation shows first; a mechanism whose claim is
    ε·d picks its nearest pairs. On a large vocabulary the candidates are each word's nearest
    neighbours in Euclidean distance of the vectors, ranked by the mechanism's own claim.
    """
    a, b = _candidates(mechanism)
    claim = np.empty(a.size)
    dist = np.empty(a.size)
    for i in range(0, a.size, _BLOCK):
        s = slice(i, i + _BLOCK)
        claim[s] = mechanism.privacy_loss(a[s], b[s])
        dist[s] = mechanism.distance(a[s], b[s])
    order = np.lexsort((dist, claim))[:k]
    return np.stack([a[order], b[order]], axis=1)


def random_pairs(mechanism: WordMechanism, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` distinct unordered pairs of distinct words, uniformly at random."""
    n = len(mechanism.vocabulary)
    k = min(k, n * (n - 1) // 2)
    seen: dict[int, None] = {}
    while len(seen) < k:
        x = rng.integers(0, n, size=(2 * (k - len(seen)) + 8, 2))
        x = x[x[:, 0] != x[:, 1]]
        for key in (np.minimum(x[:, 0], x[:, 1]) * n + np.maximum(x[:, 0], x[:, 1])).tolist():
            seen.setdefault(key)
            if len(seen) == k:
                break
    keys = np.fromiter(seen, dtype=np.int64, count=k)
    return np.stack([keys // n, keys % n], axis=1)


def _word_id(mechanism: WordMechanism, word: Any) -> int:
    if isinstance(word, str):
        try:
            return mechanism.vocabulary.index(word)
        except KeyError:
            raise ValueError(f"word {word!r} is not in the vocabulary "
                             f"{mechanism.vocabulary.name}") from None
    if isinstance(word, bool) or not isinstance(word, (int, np.integer)):
        raise TypeError(f"a pair holds two words or two vocabulary ids, got {word!r}")
    if not 0 <= int(word) < len(mechanism.vocabulary):
        raise ValueError(f"word id {int(word)} out of range of the vocabulary "
                         f"({len(mechanism.vocabulary)} words)")
    return int(word)


def given_pairs(mechanism: WordMechanism, pairs: Iterable[Any]) -> np.ndarray:
    """The user's pairs (words or ids) as an (n, 2) id array; a word paired with itself or an
    empty list is a ValueError."""
    if isinstance(pairs, np.ndarray) and pairs.dtype.kind in "iu":
        rows = [tuple(int(v) for v in p) for p in pairs.reshape(-1, pairs.shape[-1])]
    else:
        rows = [tuple(p) for p in pairs]
    out = []
    for row in rows:
        if len(row) != 2:
            raise ValueError(f"a pair holds two words, got {row!r}")
        a, b = (_word_id(mechanism, w) for w in row)
        if a == b:
            raise ValueError(f"pair {row!r}: a word and itself is not a pair")
        out.append((a, b))
    if not out:
        raise ValueError("no word pairs to audit")
    return np.asarray(out, dtype=np.int64)
