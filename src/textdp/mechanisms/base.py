"""The word-mechanism protocol: token ids in, token ids out, randomness split from computation.

A mechanism separates *drawing* its randomness (:meth:`WordMechanism.draw`, the only place a
Generator is used) from *applying* it (:meth:`WordMechanism.apply`, deterministic and vectorised
over a whole batch). The driver can then draw each document's noise from that document's own
generator and still apply a whole batch in one blocked computation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from textdp._checks import check_epsilon, check_rng
from textdp.privacy import Guarantee
from textdp.vocab import Vocabulary, load_default

__all__ = ["WordMechanism"]


class WordMechanism(ABC):
    """Base class of word-level mechanisms over a :class:`~textdp.vocab.Vocabulary`.

    Subclasses set ``name``, implement :meth:`draw`, :meth:`apply` and :attr:`guarantee`, and may
    implement ``output_distribution(word)`` when the output law has a closed form.
    """

    name: ClassVar[str]

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float) -> None:
        self._vocabulary = vocabulary if vocabulary is not None else load_default()
        if not isinstance(self._vocabulary, Vocabulary):
            raise TypeError("vocabulary must be a textdp.vocab.Vocabulary")
        self._epsilon = check_epsilon(epsilon)

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocabulary

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def parameters(self) -> dict[str, Any]:
        """Every parameter that changes the output law (for the report)."""
        return {"epsilon": self._epsilon}

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee: ...

    @abstractmethod
    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> Any:
        """All randomness needed to privatise ``ids`` (1-D int array of vocabulary rows)."""

    @abstractmethod
    def apply(self, ids: np.ndarray, noise: Any) -> np.ndarray:
        """Deterministic, vectorised: the output ids for ``ids`` given ``noise`` from :meth:`draw`."""

    def concat_noise(self, parts: Sequence[Any]) -> Any:
        """Join per-document draws in document order (arrays, or tuples of arrays)."""
        if isinstance(parts[0], tuple):
            return tuple(np.concatenate(p) for p in zip(*parts, strict=True))
        return np.concatenate(parts)

    def privatize_ids(self, ids: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        ids = self._check_ids(ids)
        return self.apply(ids, self.draw(ids, check_rng(rng)))

    def privatize_words(self, words: Sequence[str],
                        rng: np.random.Generator | None = None) -> list[str]:
        """Privatise in-vocabulary words (lowercase output). Raises KeyError for an unknown word."""
        ids = np.fromiter((self._vocabulary.index(w) for w in words), dtype=np.int64,
                          count=len(words))
        return self._vocabulary.words_array[self.privatize_ids(ids, rng)].tolist()

    def _check_ids(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError("ids must be a 1-D integer array")
        if ids.size and (ids.min() < 0 or ids.max() >= len(self._vocabulary)):
            raise ValueError("ids out of range of the vocabulary")
        return ids.astype(np.int64, copy=False)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f"{type(self).__name__}({params}, vocabulary={self._vocabulary.name!r})"
