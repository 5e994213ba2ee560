"""SanText and SanText+: the exponential mechanism over the vocabulary, all of it or its rarest part.

Yue, Du, Wang, Li, Sun, Chow, "Differential Privacy for Text Analytics via Natural Text
Sanitization", Findings of ACL 2021 (SPEC §2.6).

* SanText: Pr[M(x) = y] ∝ exp(−(ε/2)·‖φ(x) − φ(y)‖) over y ∈ V. Numerator and normaliser each move
  by at most e^{εd/2} when x changes, so this is ε·‖φ(x) − φ(x′)‖ metric DP (the paper's bound).
* SanText+: V_S = the rarest fraction w of V (sensitive words), V_N = the rest. A sensitive x is
  replaced by y ∈ V_S with Pr ∝ exp(−(ε/2)‖φ(x) − φ(y)‖); a non-sensitive x is kept with
  probability 1 − p and otherwise replaced the same way by a word of V_S. Exact bound, derived here
  from that law and checked exhaustively by the tests: for every *sensitive* output y ∈ V_S,
  Pr[M(x)=y] ≤ exp(ε·d(x,x′) + c)·Pr[M(x′)=y] with c = ln(1/p) when x is sensitive and x′ is not,
  c = 0 otherwise; a *non-sensitive* output is only the unchanged input (it reveals it, which is
  SanText+'s utility-optimised design: non-sensitive words are not protected when kept).

Sensitive words are chosen from public word frequencies (``wordfreq``), not from the data being
sanitised; the reference code counts them in the task's own corpus (and takes one word too many).

Sampling never builds the |V|×|V_S| probability matrix (8.9 GiB at 34.5k words in float64, as the
reference code does): one row of distances per distinct input word, in blocks (one GEMM each),
and every token of that word draws from the shared row by certified sequential halving
(:func:`textdp.mechanisms.word.tem.sample_by_distinct_word`) — the same law as a Gumbel-max over
the row, at O(log|V|) per token, and a function of the word and its uniforms alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp._checks import EPSILON, Parameter
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.mechanisms.word.tem import TILE, distances_from, sample_by_distinct_word
from textdp.neighbors import NearestNeighbors
from textdp.noise import halving_levels
from textdp.privacy import Notion
from textdp.vocab import Vocabulary

__all__ = ["SanText", "SanTextPlus", "sensitive_words"]

_REFERENCE = ("Yue, Du, Wang, Li, Sun, Chow, Findings of ACL 2021 (SanText / SanText+); "
              "SPEC §2.6")


def sensitive_words(vocabulary: Vocabulary, w: float,
                    frequencies: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """Sorted ids of the rarest ⌈w·|V|⌉ words (at least one).

    ``frequencies`` (aligned with the vocabulary, larger = more frequent) defaults to
    ``wordfreq.word_frequency(word, "en")``; ties go to the later vocabulary row as rarer.
    """
    n = len(vocabulary)
    if frequencies is None:
        import wordfreq

        freq = np.fromiter((wordfreq.word_frequency(word, "en") for word in vocabulary.words),
                           dtype=np.float64, count=n)
    else:
        freq = np.asarray(frequencies, dtype=np.float64)
        if freq.shape != (n,) or not np.isfinite(freq).all():
            raise ValueError(f"frequencies must be {n} finite numbers, one per vocabulary word")
    count = max(1, math.ceil(w * n - 1e-9))
    rarest_first = np.lexsort((-np.arange(n), freq))
    return np.sort(rarest_first[:count])


class _ExponentialOverVocabulary(WordMechanism):
    """Shared machinery: Pr[y | x] ∝ exp(−(ε/2)·d(x, y)) over the output set ``self._outputs``."""

    _outputs: np.ndarray

    def _setup(self, outputs: np.ndarray) -> None:
        self._outputs = np.asarray(outputs, dtype=np.int64)
        self._out_nn = NearestNeighbors(self.vocabulary.vectors[self._outputs])
        # Column of each vocabulary word among the outputs (−1 when it is not one).
        self._column = np.full(len(self.vocabulary), -1, dtype=np.int64)
        self._column[self._outputs] = np.arange(self._outputs.size)
        self._levels = halving_levels(self._outputs.size, TILE)

    def _replacement_log_law(self, w: int) -> np.ndarray:
        """log Pr[y | replace x = w] over the output set, float64."""
        logits = -(self.epsilon / 2.0) * distances_from(self.vocabulary.vectors, w, self._outputs)
        logits -= logits.max()
        return logits - np.log(np.exp(logits).sum())

    def _replace(self, ids: np.ndarray, u: np.ndarray) -> np.ndarray:
        cols = sample_by_distinct_word(self._out_nn, self.vocabulary.vectors, ids, u,
                                       scale=self.epsilon / 2.0, cap=None,
                                       self_column=self._column)
        return self._outputs[cols]


@register
class SanText(_ExponentialOverVocabulary):
    """SanText: every word replaced by the exponential mechanism over V (Yue et al. 2021).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter per unit of Euclidean distance.
    """

    name = "santext"
    reference = _REFERENCE

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float) -> None:
        super().__init__(vocabulary, epsilon=epsilon)
        self._setup(np.arange(len(self.vocabulary)))

    def output_distribution(self, word: str | int, *, log: bool = False) -> np.ndarray:
        """Exact Pr[M(word) = v] for every v (float64; natural logs with ``log=True``)."""
        logp = self._replacement_log_law(self._word_id(word))
        return logp if log else np.exp(logp)

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.random((ids.size, self._levels))

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        return self._replace(ids, noise)


@register
class SanTextPlus(_ExponentialOverVocabulary):
    """SanText+: sensitive (rare) words always replaced, others with probability p (Yue et al.).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter per unit of Euclidean distance.
        p: probability that a non-sensitive word is replaced, p ∈ (0, 1] (paper: 0.3).
        w: fraction of the vocabulary treated as sensitive (the rarest words), w ∈ (0, 1]
            (paper: 0.9).
        frequencies: optional word frequencies aligned with the vocabulary (default: wordfreq).
    """

    name = "santext_plus"
    PARAMETERS = (
        EPSILON,
        Parameter("p", float, "probability that a non-sensitive word is replaced (paper: 0.3)",
                  default=0.3, low=0.0, high=1.0, low_open=True),
        Parameter("w", float, "fraction of the vocabulary treated as sensitive, the rarest words "
                  "(paper: 0.9)", default=0.9, low=0.0, high=1.0, low_open=True),
        Parameter("frequencies", object, "word frequencies aligned with the vocabulary (default: "
                  "wordfreq); checked by sensitive_words", default=None, nullable=True),
    )
    reference = _REFERENCE

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float, p: float = 0.3,
                 w: float = 0.9, frequencies: Sequence[float] | np.ndarray | None = None) -> None:
        super().__init__(vocabulary, epsilon=epsilon, p=p, w=w, frequencies=frequencies)
        self._p: float = self._params["p"]
        self._w: float = self._params["w"]
        sensitive = sensitive_words(self.vocabulary, self._w, frequencies)
        self._is_sensitive = np.zeros(len(self.vocabulary), dtype=bool)
        self._is_sensitive[sensitive] = True
        self._frequency_source = "wordfreq" if frequencies is None else "user-supplied"
        self._setup(sensitive)

    @property
    def p(self) -> float:
        return self._p

    @property
    def w(self) -> float:
        return self._w

    @property
    def sensitive(self) -> np.ndarray:
        """Boolean mask over the vocabulary: True for sensitive words (read-only copy)."""
        return self._is_sensitive.copy()

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "p": self._p, "w": self._w,
                "sensitive_words": int(self._outputs.size),
                "frequencies": self._frequency_source}

    # --- the guarantee: utility-optimised, with an additive ln(1/p) --------------------------
    @property
    def notion(self) -> Notion:
        return Notion.UTILITY_OPTIMISED_METRIC_DP

    @property
    def protected_outputs(self) -> np.ndarray:
        """The sensitive words: a kept non-sensitive word is released unprotected by design."""
        return self.sensitive

    def privacy_loss(self, a: Any, b: Any) -> np.ndarray:
        """ε·d(a, b) + c over sensitive outputs, c = ln(1/p) when exactly one of a, b is
        sensitive (either direction of the module docstring's bound), else 0; rounded up."""
        a, b = np.asarray(a), np.asarray(b)
        loss = super().privacy_loss(a, b)
        mixed = self._is_sensitive[a] != self._is_sensitive[b]
        # ln(1/p) raised by one ulp covers the logarithm's rounding, the sum's by one more.
        c = float(np.nextafter(-math.log(self._p), np.inf)) if self._p < 1 else 0.0
        extra = np.where(mixed, c, 0.0)
        with np.errstate(invalid="ignore"):
            total = loss + extra
        return np.where(extra > 0, np.nextafter(total, np.inf), total)

    @property
    def per_word(self) -> str:
        extra = math.log(1.0 / self._p)
        return ("for every sensitive output y: Pr[M(x)=y] ≤ exp(ε·‖φ(x)−φ(x′)‖ + c)·Pr[M(x′)=y], "
                f"c = ln(1/p) = {extra:.6g} when x is sensitive and x′ is not, else c = 0; "
                "a non-sensitive word is released unchanged with probability 1 − p "
                f"= {1 - self._p:g}, and such an output identifies it")

    @property
    def assumptions(self) -> tuple[str, ...]:
        return (f"sensitive words: the rarest {self._outputs.size} of {len(self.vocabulary)} "
                f"(w = {self._w:g}) by {self._frequency_source} frequencies, fixed independently "
                "of the data",
                "non-sensitive words are not protected when kept (by design of SanText+)")

    def output_distribution(self, word: str | int, *, log: bool = False) -> np.ndarray:
        """Exact Pr[M(word) = v] for every v (float64; natural logs with ``log=True``)."""
        x = self._word_id(word)
        logp = np.full(len(self.vocabulary), -np.inf)
        law = self._replacement_log_law(x)
        if self._is_sensitive[x]:
            logp[self._outputs] = law
        else:
            logp[self._outputs] = law + math.log(self._p)
            logp[x] = math.log1p(-self._p) if self._p < 1 else -np.inf
        return logp if log else np.exp(logp)

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Column 0: keep-or-replace coin of non-sensitive words; then the replacement's uniforms.
        return rng.random((ids.size, 1 + self._levels))

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        out = ids.copy()
        replace = self._is_sensitive[ids] | (noise[:, 0] < self._p)
        pos = np.flatnonzero(replace)
        out[pos] = self._replace(ids[pos], noise[pos, 1:])
        return out

