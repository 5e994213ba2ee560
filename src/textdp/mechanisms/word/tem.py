"""TEM: the truncated exponential mechanism over the vocabulary.

Carvalho, Vasiloudis, Feyisetan, Tang, "TEM: High Utility Metric Differential Privacy on Text",
SDM 2023 (SPEC §2.5). With utility f(v) = −‖φ(v) − φ(w)‖ (sensitivity Δ = 1 per unit distance):

* γ = (2Δ/ε)·ln((1 − β)(|V| − 1)/β), β ∈ (0, 1);
* L_w = {v : ‖φ(v) − φ(w)‖ ≤ γ}; scores f(v) for v ∈ L_w and, for the extra element ⊥,
  f(⊥) = −γ + (2Δ/ε)·ln|V ∖ L_w| (−∞ when V ∖ L_w is empty);
* add iid Gumbel(0, 2Δ/ε) to every score, take the argmax; if ⊥ wins, output a uniform word of
  V ∖ L_w.

Output law (what this module samples, and returns from :meth:`TEM.output_distribution`): by the
Gumbel-max trick, Pr[v ∈ L_w] ∝ e^{−εd(w,v)/2} and Pr[⊥] ∝ |V∖L_w|·e^{−εγ/2}, which ⊥'s uniform
choice spreads as e^{−εγ/2} on each word outside L_w. Since d > γ exactly outside L_w,

    Pr[M(w) = v] = exp(−(ε/2Δ)·min(d(w, v), γ)) / Σ_u exp(−(ε/2Δ)·min(d(w, u), γ)).

|min(d(w,v), γ) − min(d(w′,v), γ)| ≤ d(w, w′), so numerator and normaliser each move by at most
e^{εd/2}: ε·d(w, w′) metric DP (the paper's theorem). The public reference code weights ⊥ by
ln(|V|/|L_w|) instead of ln|V∖L_w| — a different, wrong law.

Sampling: for each *distinct* input word of a batch, one row of distances to every word (one
blocked float64 GEMM for all of them, never a |V|×|V| matrix), L_w and the weights above; every
token of that word then draws its output from the shared row by inversion from one uniform
(:func:`textdp.noise.choose_from_weights`) — the same law as the per-token Gumbel-max over
L_w ∪ {⊥} followed by the uniform draw, at O(log|V|) per token instead of O(|L_w|). Every choice is
certified against the GEMM's rounding error (see :func:`sample_by_distinct_word`), so a token's
output depends only on its word and its uniform, not on the rest of the batch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from textdp._checks import check_probability
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors.knn import ExactNeighbors
from textdp.noise import choose_from_weights
from textdp.privacy import Guarantee
from textdp.vocab import Vocabulary

__all__ = ["TEM", "sample_by_distinct_word", "distances_from"]


def distances_from(vectors: np.ndarray, word: int, columns: np.ndarray | None = None) -> np.ndarray:
    """float64 Euclidean distances from row ``word`` to every row (or to ``columns``)."""
    v = np.asarray(vectors, dtype=np.float64)
    target = v if columns is None else v[columns]
    diff = target - v[word]
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def sample_by_distinct_word(neighbors: ExactNeighbors, vectors: np.ndarray, ids: np.ndarray,
                            u: np.ndarray, *, scale: float, cap: float | None,
                            self_column: np.ndarray) -> np.ndarray:
    """Per token, a row v of ``neighbors`` drawn ∝ exp(−scale·min(‖φ(v) − φ(w)‖, cap)).

    One row of weights per *distinct* input word w (one float64 GEMM per block of words, never
    a |V|×|V| array), shared by every token of w, which inverts it at its uniform ``u``
    (:func:`textdp.noise.choose_from_weights`). Each choice is *certified*: the GEMM's rigorous
    error bound, carried through sqrt and exp, bounds the error of every running sum, and a
    token whose target falls within that bound of its column's ends (probability ≈ 1e-6) is
    redone on exactly computed distances. The output is therefore a function of (w, u) alone —
    the same whatever else is in the batch, as a seeded run requires — and equals inversion of
    the exact float64 law.

    Args:
        neighbors: exact search over the candidate rows (the vocabulary, or SanText+'s V_S).
        vectors: the vocabulary's vectors (the queries are ``vectors[ids]``).
        ids, u: the tokens' word ids and uniforms.
        scale: c in the weights (ε/2Δ).
        cap: the truncation of the distance (TEM's γ) or None.
        self_column: for every vocabulary id, its column among the candidate rows (−1: none);
            that distance is exactly 0 and is set so.
    """
    out = np.empty(ids.size, dtype=np.int64)
    if ids.size == 0:
        return out
    uniq, inverse = np.unique(ids, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.zeros(uniq.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(inverse, minlength=uniq.size), out=starts[1:])
    cap2 = np.inf if cap is None else (scale * cap) ** 2
    unit = 2.0**-53
    n_cols = neighbors.n_vectors
    uncertain: list[np.ndarray] = []

    def block(a: int, b: int, sq: np.ndarray, err: np.ndarray) -> None:
        own = self_column[uniq[a:b]]
        has = np.flatnonzero(own >= 0)
        sq[has, own[has]] = np.inf
        nearest = sq.min(axis=1)  # smallest (c·d)² to another row
        sq[has, own[has]] = 0.0
        # |√x̂ − √x| ≤ min(√E, E/√x̂): the worst case over a row is at its smallest value.
        with np.errstate(divide="ignore"):
            dx = np.minimum(np.sqrt(err), err / np.sqrt(np.maximum(nearest, 0.0)))
        # Relative error of each weight (sqrt, exp rounding: a few units) and of the sums.
        kappa = np.expm1(dx + 16 * unit) + (n_cols + 256) * unit
        np.clip(sq, 0.0, cap2, out=sq)
        np.sqrt(sq, out=sq)
        np.negative(sq, out=sq)
        np.exp(sq, out=sq)
        tokens = order[starts[a]:starts[b]]
        cols, certain = choose_from_weights(sq, inverse[tokens] - a, u[tokens], margin=kappa)
        out[tokens] = cols
        if not certain.all():
            uncertain.append(tokens[~certain])

    neighbors.map_squared_distances(vectors[uniq], block, scale=scale)
    if uncertain:
        redo = np.concatenate(uncertain)
        for w in np.unique(ids[redo]).tolist():
            tok = redo[ids[redo] == w]
            out[tok] = _exact_choice(neighbors, vectors[w], u[tok], scale, cap)
    return out


def _exact_choice(neighbors: ExactNeighbors, query: np.ndarray, u: np.ndarray, scale: float,
                  cap: float | None) -> np.ndarray:
    """Inversion of the float64 law computed directly (differences, not a GEMM) for one word."""
    rows = neighbors.vectors64
    diff = rows - np.asarray(query, dtype=np.float32).astype(np.float64)
    d = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    if cap is not None:
        np.minimum(d, cap, out=d)
    running = np.cumsum(np.exp(-scale * d))
    j = np.searchsorted(running, (1.0 - u) * running[-1], side="left")
    return np.minimum(j, d.size - 1)


@register
class TEM(WordMechanism):
    """Truncated exponential mechanism over the vocabulary (Carvalho et al., SDM 2023).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter per unit of Euclidean distance.
        beta: β ∈ (0, 1), the probability budget that sets the truncation radius γ.
    """

    name = "tem"
    #: Sensitivity of the utility −‖φ(v) − φ(w)‖ per unit of the metric.
    sensitivity = 1.0

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 beta: float = 0.001) -> None:
        super().__init__(vocabulary, epsilon=epsilon)
        self._beta = check_probability(beta, "beta")
        n = len(self.vocabulary)
        scale = 2.0 * self.sensitivity / self.epsilon
        self._gamma = scale * math.log((1.0 - self._beta) * (n - 1) / self._beta)
        self._nn = ExactNeighbors(self.vocabulary.vectors)

    @property
    def beta(self) -> float:
        return self._beta

    @property
    def gamma(self) -> float:
        """The truncation radius γ."""
        return self._gamma

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "beta": self._beta}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            notion="metric DP (d_χ-privacy)",
            epsilon=self.epsilon,
            metric=f"Euclidean distance between word vectors of {self.vocabulary.name}",
            per_word="Pr[M(w)=y] ≤ exp(ε·‖φ(w)−φ(w′)‖)·Pr[M(w′)=y] for all words w, w′ and "
                     "outputs y",
            assumptions=(f"utility −‖φ(v)−φ(w)‖ with sensitivity Δ = 1; γ = {self._gamma:.9g} "
                         f"from β = {self._beta:g}",),
            reference="Carvalho, Vasiloudis, Feyisetan, Tang, SDM 2023 (TEM and its metric-DP "
                      "theorem); SPEC §2.5",
        )

    def truncation_set(self, word: str | int) -> np.ndarray:
        """L_w: ids of the words within γ of ``word`` (float64 distances)."""
        w = self._word_id(word)
        return np.flatnonzero(distances_from(self.vocabulary.vectors, w) <= self._gamma)

    def output_distribution(self, word: str | int, *, log: bool = False) -> np.ndarray:
        """Exact Pr[M(word) = v] for every v (float64; natural logs with ``log=True``)."""
        w = self._word_id(word)
        d = distances_from(self.vocabulary.vectors, w)
        logits = -(self.epsilon / (2.0 * self.sensitivity)) * np.minimum(d, self._gamma)
        logits -= logits.max()
        logp = logits - np.log(np.exp(logits).sum())
        return logp if log else np.exp(logp)

    def _word_id(self, word: str | int) -> int:
        if isinstance(word, str):
            return self.vocabulary.index(word)
        w = int(word)
        if not 0 <= w < len(self.vocabulary):
            raise ValueError(f"word id {w} out of range")
        return w

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.random(ids.size)

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        return sample_by_distinct_word(
            self._nn, self.vocabulary.vectors, ids, noise,
            scale=self.epsilon / (2.0 * self.sensitivity), cap=self._gamma,
            self_column=np.arange(len(self.vocabulary)))
