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

from textdp._checks import EPSILON, MIN_EPSILON, Parameter, check_parameters, check_rng
from textdp.privacy import Budget, Guarantee, Notion, Numerics, check_distance, round_up_product
from textdp.privacy.measurement import Measurement, measurement_of
from textdp.vocab import Vocabulary, load_default

__all__ = ["WordMechanism", "EUCLIDEAN_PER_WORD", "MIN_EPSILON"]

EUCLIDEAN_PER_WORD = ("Pr[M(w)=y] ≤ exp(ε·‖φ(w)−φ(w′)‖)·Pr[M(w′)=y] for all words w, w′ and "
                      "outputs y")


class WordMechanism(ABC):
    """Base class of word-level mechanisms over a :class:`~textdp.vocab.Vocabulary`.

    Subclasses set ``name``, declare ``PARAMETERS`` (validated here, once), implement
    :meth:`draw` and :meth:`apply`, and may implement ``output_distribution(word, log=False)``
    when the output law has a closed form.

    The guarantee is code: :meth:`distance` is the metric it is stated in, :meth:`privacy_map`
    turns a distance into the (ε, δ) spent, :meth:`privacy_loss` bounds the log-ratio of the
    output laws of two words; :attr:`guarantee` renders the same in words. By default a word
    mechanism is ε·d metric DP in the Euclidean distance of its vectors (MVC's Theorem 1 and
    the others' theorems); a mechanism whose metric, notion or bound differs overrides
    :meth:`distance`, :attr:`notion` or :meth:`privacy_loss`.
    """

    name: ClassVar[str]
    #: Every constructor parameter but the vocabulary, declared once (see :mod:`textdp._checks`).
    PARAMETERS: ClassVar[tuple[Parameter, ...]] = (EPSILON,)
    #: Paper and theorem the guarantee comes from.
    reference: ClassVar[str] = ""
    #: Word mechanisms release vocabulary ids computed in floating point, never snapped.
    numerics: ClassVar[Numerics] = Numerics.IDEALIZED

    def __init__(self, vocabulary: Vocabulary | None = None, **params: Any) -> None:
        # Parameters first: a bad one is reported before the default vocabulary is loaded.
        self._params = check_parameters(self.PARAMETERS, params, owner=f"mechanism {self.name!r}")
        self._epsilon: float = self._params["epsilon"]  # checked once: _checks.check_epsilon
        self._vocabulary = vocabulary if vocabulary is not None else load_default()
        if not isinstance(self._vocabulary, Vocabulary):
            raise TypeError("vocabulary must be a textdp.vocab.Vocabulary")

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocabulary

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def parameters(self) -> dict[str, Any]:
        """Every parameter that changes the output law (for the report)."""
        return dict(self._params)

    # --- the guarantee as code ---------------------------------------------------------------
    @property
    def notion(self) -> Notion:
        return Notion.METRIC_DP

    def distance(self, a: Any, b: Any) -> np.ndarray:
        """The guarantee's metric between words ``a`` and ``b`` (ids, broadcast; float64).

        Default: the Euclidean distance between the words' vectors, from their float64 copies.
        """
        v = self.vocabulary.vectors
        diff = v[np.asarray(a)].astype(np.float64) - v[np.asarray(b)].astype(np.float64)
        return np.sqrt(np.einsum("...i,...i->...", diff, diff))

    def _distance_error(self) -> float:
        """A relative bound on the rounding error of :meth:`distance` (default: the Euclidean
        norm of exact float64 differences: d products and sums, and the square root)."""
        return (self.vocabulary.dim + 3) * 2.0**-53

    def privacy_map(self, d_in: Any) -> Budget:
        """The (ε, δ) spent on two words at distance ``d_in`` (vectorised): ε·d rounded up."""
        d = check_distance(d_in)
        if self.notion is Notion.NONE:
            return Budget(np.full(np.shape(d), np.inf) if np.ndim(d) else np.inf)
        return Budget(round_up_product(self._epsilon, d))

    def privacy_loss(self, a: Any, b: Any) -> np.ndarray:
        """Bound on max_y |ln Pr[M(a)=y] − ln Pr[M(b)=y]| for word ids ``a``, ``b`` (broadcast).

        The maximum runs over the outputs the guarantee protects (all of them, except for a
        utility-optimised mechanism; see :attr:`protected_outputs`). Rounded up; ``inf`` where no
        guarantee holds; 0 for a word and itself.
        """
        a, b = np.asarray(a), np.asarray(b)
        d = self.distance(a, b) * (1.0 + self._distance_error())
        loss = np.asarray(self.privacy_map(d).epsilon, dtype=np.float64)
        return np.where(a == b, 0.0, loss)

    @property
    def protected_outputs(self) -> np.ndarray | None:
        """Boolean mask of the outputs :meth:`privacy_loss` covers; None: every output."""
        return None

    @property
    def metric(self) -> str:
        """The metric of :meth:`distance`, in words (for the guarantee)."""
        return f"Euclidean distance between word vectors of {self.vocabulary.name}"

    @property
    def input_metric(self) -> str:
        """The stable id of :meth:`distance` (:mod:`textdp.privacy.measurement`): what the ledger
        composes on. Default: the Euclidean metric of this vocabulary, named by its fingerprint."""
        return f"word-euclidean:{self.vocabulary.fingerprint}"

    @property
    def measurement(self) -> Measurement:
        """Input metric, notion and :meth:`privacy_map` as one measurement."""
        return measurement_of(self)

    @property
    def per_word(self) -> str:
        return EUCLIDEAN_PER_WORD

    @property
    def assumptions(self) -> tuple[str, ...]:
        return ()

    @property
    def guarantee(self) -> Guarantee:
        """The report's rendering of :attr:`notion`, ε, the metric and :meth:`privacy_map`."""
        notion = self.notion
        return Guarantee(notion=notion, epsilon=self._epsilon, metric=self.metric,
                         per_word=self.per_word,
                         delta=0.0 if notion is Notion.NONE else self.privacy_map(1.0).delta,
                         assumptions=self.assumptions, verified=notion is not Notion.NONE,
                         reference=self.reference, numerics=self.numerics)

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

    def _word_id(self, word: str | int) -> int:
        """The vocabulary row of ``word`` (a word, or a row index checked to be in range)."""
        if isinstance(word, str):
            return self.vocabulary.index(word)
        w = int(word)
        if not 0 <= w < len(self.vocabulary):
            raise ValueError(f"word id {w} out of range")
        return w

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
