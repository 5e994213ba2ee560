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
blocked GEMM for all of them, never a |V|×|V| matrix), L_w and the weights above; every token of
that word then draws its output from the shared row by sequential halving with its own uniforms
(:func:`textdp.noise.choose_from_weights`) — the same law as the per-token Gumbel-max over
L_w ∪ {⊥} followed by the uniform draw, at O(log|V|) per token instead of O(|L_w|). Every decision
is certified against the arithmetic's rounding error (see :func:`sample_by_distinct_word`), so a
token's output depends only on its word and its uniforms, not on the rest of the batch.
"""

from __future__ import annotations

import math

import numpy as np

from textdp._checks import EPSILON, Parameter
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors import NearestNeighbors
from textdp.noise import choose_from_weights, halving_levels
from textdp.vocab import Vocabulary

__all__ = ["TEM", "sample_by_distinct_word", "distances_from"]


def distances_from(vectors: np.ndarray, word: int, columns: np.ndarray | None = None) -> np.ndarray:
    """float64 Euclidean distances from row ``word`` to every row (or to ``columns``)."""
    v = np.asarray(vectors, dtype=np.float64)
    target = v if columns is None else v[columns]
    diff = target - v[word]
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


TILE = 64


def sample_by_distinct_word(neighbors: NearestNeighbors, vectors: np.ndarray, ids: np.ndarray,
                            u: np.ndarray, *, scale: float, cap: float | None,
                            self_column: np.ndarray) -> np.ndarray:
    """Per token, a row v of ``neighbors`` drawn ∝ exp(−scale·min(‖φ(v) − φ(w)‖, cap)).

    One row of weights per *distinct* input word w (a blocked GEMM over all of them, never a
    |V|×|V| array), shared by every token of w, which descends it by sequential halving with its
    own uniforms ``u`` (:func:`textdp.noise.choose_from_weights`). Every decision is
    *certified*: the GEMM's rigorous error bound, carried through sqrt and exp, bounds each
    weight's error, and a decision whose uniform falls within the resulting uncertainty of its
    threshold is not trusted. Uncertain tokens are redone from a float64 GEMM, and the few still
    uncertain from exactly computed distances. The output is therefore a function of (w, u) alone
    — the same whatever else is in the batch, as a seeded run requires — and follows the exact
    law; float32 does the bulk of the work.

    Args:
        neighbors: search structure over the candidate rows (the vocabulary, or SanText+'s V_S).
        vectors: the vocabulary's vectors (the queries are ``vectors[ids]``).
        ids: the tokens' word ids.
        u: (N, L) uniforms, L = :func:`textdp.noise.halving_levels` (number of candidates, TILE).
        scale: c in the weights (ε/2Δ).
        cap: the truncation of the distance (TEM's γ) or None.
        self_column: for every vocabulary id, its column among the candidate rows (−1: none);
            that distance is exactly 0 and is set so.
    """
    out = np.empty(ids.size, dtype=np.int64)
    if ids.size == 0:
        return out
    tokens = np.arange(ids.size)
    for dtype in (np.float32, np.float64):
        tokens = _certified_pass(neighbors, vectors, ids, u, tokens, out, scale, cap,
                                 self_column, dtype)
        if tokens.size == 0:
            return out
    for w in np.unique(ids[tokens]).tolist():
        tok = tokens[ids[tokens] == w]
        out[tok] = _exact_choice(neighbors, vectors[w], u[tok], scale, cap)
    return out


def _certified_pass(neighbors, vectors, ids, u, tokens, out, scale, cap, self_column, dtype):
    """Sample ``tokens`` from ``dtype`` weights; return the tokens whose choice is not certain."""
    words = ids[tokens]
    uniq, inverse = np.unique(words, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.zeros(uniq.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(inverse, minlength=uniq.size), out=starts[1:])
    cap2 = np.inf if cap is None else (scale * cap) ** 2
    unit = float(np.finfo(dtype).eps) / 2
    tiny = float(np.finfo(dtype).tiny)
    q = vectors[uniq].astype(np.float64)
    # Largest possible scaled distance per word: rounding of sqrt and the shift scale with it.
    x_max = scale * (neighbors.max_norm + np.sqrt(np.einsum("ij,ij->i", q, q)))
    if cap is not None:
        x_max = np.minimum(x_max, scale * cap)
    uncertain: list[np.ndarray] = []

    def block(a: int, b: int, sq: np.ndarray, err: np.ndarray) -> None:
        own = self_column[uniq[a:b]]
        has = np.flatnonzero(own >= 0)
        sq[has, own[has]] = np.inf
        nearest = sq.min(axis=1)  # smallest (c·d)² to another candidate
        sq[has, own[has]] = 0.0
        # After clipping to [0, cap²] (1-Lipschitz), |√ŝ − √s| ≤ min(√E, E/√ŝ); over a row's
        # non-self entries the worst case is at the smallest clipped value.
        with np.errstate(divide="ignore"):
            dx = np.minimum(np.sqrt(err), err / np.sqrt(np.clip(nearest, 0.0, cap2)))
        np.clip(sq, 0.0, cap2, out=sq)
        np.sqrt(sq, out=sq)
        # Shift each row so that its largest weight is 1 (rows that hold the word itself
        # already have distance 0); a common factor does not change the law.
        shift = np.sqrt(np.clip(nearest, 0.0, cap2)).astype(dtype)
        shift[has] = 0
        if shift.any():
            sq -= shift[:, None]
        np.negative(sq, out=sq)
        np.exp(sq, out=sq)
        # Each weight is within ρ·w + tiny of exp(−(x − shift)) for the exact x: the error of x
        # plus the rounding of sqrt and of the shift (a unit of x_max each, doubled), exp's own
        # error (≤ 8 ulp = 16 units), and the rounding of the tile sums (≤ TILE units).
        exponent = np.minimum(dx + 4 * unit * x_max[a:b], 50.0)
        rho = np.expm1(exponent) + (16 + TILE + 64) * unit
        tok = tokens[order[starts[a]:starts[b]]]
        cols, certain = choose_from_weights(sq, inverse[order[starts[a]:starts[b]]] - a, u[tok],
                                            tile=TILE, rel_error=rho, abs_error=4 * tiny)
        out[tok] = cols
        if not certain.all():
            uncertain.append(tok[~certain])

    neighbors.map_squared_distances(vectors[uniq], block, scale=scale, dtype=dtype)
    return np.sort(np.concatenate(uncertain)) if uncertain else np.empty(0, dtype=np.int64)


def _exact_choice(neighbors: NearestNeighbors, query: np.ndarray, u: np.ndarray, scale: float,
                  cap: float | None) -> np.ndarray:
    """The same halving on float64 weights from directly computed distances (for one word)."""
    diff = neighbors.vectors64 - np.asarray(query, dtype=np.float32).astype(np.float64)
    x = scale * np.sqrt(np.einsum("ij,ij->i", diff, diff))
    if cap is not None:
        np.minimum(x, scale * cap, out=x)
    w = np.exp(-(x - x.min()))[None, :]
    return choose_from_weights(w, np.zeros(u.shape[0], dtype=np.int64), u, tile=TILE)


@register
class TEM(WordMechanism):
    """Truncated exponential mechanism over the vocabulary (Carvalho et al., SDM 2023).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter per unit of Euclidean distance.
        beta: β ∈ (0, 1), the probability budget that sets the truncation radius γ.
    """

    name = "tem"
    PARAMETERS = (EPSILON, Parameter(
        "beta", float, "β, the probability budget that sets the truncation radius γ",
        default=0.001, low=0.0, high=1.0, low_open=True, high_open=True, flag=True))
    reference = ("Carvalho, Vasiloudis, Feyisetan, Tang, SDM 2023 (TEM and its metric-DP "
                 "theorem); SPEC §2.5")
    #: Sensitivity of the utility −‖φ(v) − φ(w)‖ per unit of the metric.
    sensitivity = 1.0

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 beta: float = 0.001) -> None:
        super().__init__(vocabulary, epsilon=epsilon, beta=beta)
        self._beta: float = self._params["beta"]
        n = len(self.vocabulary)
        scale = 2.0 * self.sensitivity / self.epsilon
        self._gamma = scale * math.log((1.0 - self._beta) * (n - 1) / self._beta)
        self._nn = NearestNeighbors(self.vocabulary.vectors)

    @property
    def beta(self) -> float:
        return self._beta

    @property
    def gamma(self) -> float:
        """The truncation radius γ."""
        return self._gamma

    @property
    def assumptions(self) -> tuple[str, ...]:
        return (f"utility −‖φ(v)−φ(w)‖ with sensitivity Δ = 1; γ = {self._gamma:.9g} "
                f"from β = {self._beta:g}",)

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

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # One uniform per halving decision (see sample_by_distinct_word).
        return rng.random((ids.size, halving_levels(len(self.vocabulary), TILE)))

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        return sample_by_distinct_word(
            self._nn, self.vocabulary.vectors, ids, noise,
            scale=self.epsilon / (2.0 * self.sensitivity), cap=self._gamma,
            self_column=np.arange(len(self.vocabulary)))
