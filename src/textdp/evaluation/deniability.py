"""Plausible deniability statistics N_w and S_w of a word mechanism.

Feyisetan, Balle, Drake, Diethe (WSDM 2020), §3.2 and §4.1:

* N_w = Pr[M(w) = w], the probability that the word is released unchanged;
* S_w = min{|S| : Pr[M(w) ∈ S] ≥ 1 − η}, the effective support of M(w).

A mechanism gives plausible deniability at ε when N_w is small and S_w large for (almost) every
word; the paper picks ε from the *worst case* over words (max N_w, min S_w).

Two ways to measure them, both here:

* **Monte Carlo** (the paper's §4.1, any mechanism): draw ``n_draws`` outputs per word — all draws
  of all words in *one* vectorised ``privatize_ids`` call — and take N_w as the frequency of
  M(w) = w and S_w as the number of distinct outputs (the paper's estimator of the support).
* **Exact** (mechanisms with ``output_distribution(word)``: 1-Diffractor, TEM, SanText, …):
  N_w = p(w | w) and S_w = the size of the smallest set holding 1 − η of the mass, both exactly;
  the expected number of distinct outputs in ``n_draws`` draws, Σ_v 1 − (1 − p_v)^n, is given
  too, so that exact and Monte-Carlo results can be compared like for like.

``Deniability.distinct`` is that comparable statistic under both methods (observed, or its exact
expectation); ``Deniability.s_w`` is S_w as defined above (the distinct count under Monte Carlo).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from textdp._checks import check_probability, check_rng
from textdp.evaluation._common import jsonable
from textdp.mechanisms.base import WordMechanism
from textdp.vocab import Vocabulary

__all__ = [
    "Deniability",
    "plausible_deniability",
    "has_exact_law",
    "output_law",
    "sample_words",
    "resolve_words",
    "check_weights",
    "DEFAULT_ETA",
]

#: η of S_w = min{|S| : Pr[M(w) ∈ S] ≥ 1 − η}: the mass S_w may leave out.
DEFAULT_ETA = 0.01

Method = Literal["auto", "exact", "monte_carlo"]


def has_exact_law(mechanism: WordMechanism) -> bool:
    """Whether the mechanism states its output law in closed form (``output_distribution``)."""
    return callable(getattr(mechanism, "output_distribution", None))


def output_law(mechanism: WordMechanism, word: int) -> np.ndarray:
    """Pr[M(word) = v] for every vocabulary row v, as a float64 array summing to 1."""
    fn = getattr(mechanism, "output_distribution", None)
    if not callable(fn):
        raise TypeError(f"mechanism {mechanism.name!r} has no output_distribution(word)")
    p = np.asarray(fn(int(word)), dtype=np.float64)
    if p.shape != (len(mechanism.vocabulary),):
        raise ValueError(f"{mechanism.name}.output_distribution returned shape {p.shape}, "
                         f"expected ({len(mechanism.vocabulary)},)")
    return p


def sample_words(vocabulary: Vocabulary, n: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """``n`` distinct vocabulary rows drawn uniformly (1-Diffractor §5.1 samples words this way).

    All rows when ``n`` ≥ the vocabulary size. Returned sorted, so reports read in vocabulary order.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of words must be a positive integer, got {n!r}")
    size = len(vocabulary)
    if n >= size:
        return np.arange(size, dtype=np.int64)
    return np.sort(check_rng(rng).choice(size, size=n, replace=False)).astype(np.int64)


def resolve_words(vocabulary: Vocabulary, words: Sequence[str] | Sequence[int] | np.ndarray | int,
                  rng: np.random.Generator | None = None) -> np.ndarray:
    """Vocabulary rows for ``words``: strings (looked up), row indices, or a count to sample."""
    if isinstance(words, (int, np.integer)) and not isinstance(words, bool):
        return sample_words(vocabulary, int(words), rng)
    if isinstance(words, str):
        raise TypeError("words must be a sequence of words, not a single string")
    items = list(words)
    if not items:
        raise ValueError("words must not be empty")
    if all(isinstance(w, str) for w in items):
        missing = [w for w in items if w not in vocabulary]
        if missing:
            shown = ", ".join(repr(w) for w in missing[:5])
            raise ValueError(f"{len(missing)} word(s) not in the vocabulary {vocabulary.name!r}: {shown}")
        return np.fromiter((vocabulary.index(w) for w in items), dtype=np.int64, count=len(items))
    ids = np.asarray(items)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError("words must be strings or integer vocabulary rows")
    if ids.min() < 0 or ids.max() >= len(vocabulary):
        raise ValueError("word ids out of range of the vocabulary")
    return ids.astype(np.int64)


@dataclass(frozen=True)
class Deniability:
    """N_w and S_w for each measured word, with the settings that produced them.

    Attributes:
        mechanism: mechanism name.
        epsilon: its ε.
        parameters: its full parameter dict.
        words: the measured words, in order.
        ids: their vocabulary rows.
        n_w: Pr[M(w) = w] (exact, or the Monte-Carlo frequency).
        s_w: S_w — exact: smallest set holding 1 − η of the mass; Monte Carlo: distinct outputs.
        distinct: distinct outputs in ``n_draws`` draws (Monte Carlo: observed; exact: expected).
        method: ``"exact"`` or ``"monte_carlo"``.
        n_draws: draws per word (Monte Carlo), or the n of the expected distinct count (exact).
        eta: the η of the exact S_w.
        singletons: Monte Carlo only: outputs seen exactly once per word. Var(distinct) ≤ E[singletons]
            (each output contributes q(1 − q) ≤ n·p·(1 − p)^(n−1), q = 1 − (1 − p)^n), so
            √(singletons + 1) is a conservative standard error of ``distinct``.
        weights: None (every word counts once), or one weight per word — measured on a user's
            data, how often the word occurs there (:mod:`textdp.evaluation.data`). The means and
            quantiles of :meth:`summary` are then weighted: a word that occurs 100 times counts
            100 times. The worst cases are the same either way (a maximum has no weight).
    """

    mechanism: str
    epsilon: float
    parameters: dict[str, Any]
    words: tuple[str, ...]
    ids: np.ndarray
    n_w: np.ndarray
    s_w: np.ndarray
    distinct: np.ndarray
    method: str
    n_draws: int
    eta: float
    singletons: np.ndarray | None = field(default=None)
    weights: np.ndarray | None = field(default=None)

    @property
    def exact(self) -> bool:
        return self.method == "exact"

    def n_w_upper(self, z: float = 0.0) -> np.ndarray:
        """Wilson upper confidence bound on N_w with ``z`` standard errors (exact: N_w itself)."""
        if self.exact or z <= 0:
            return self.n_w
        n = self.n_draws
        p = self.n_w
        z2 = z * z
        centre = p + z2 / (2 * n)
        half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
        return np.minimum((centre + half) / (1 + z2 / n), 1.0)

    def distinct_lower(self, z: float = 0.0) -> np.ndarray:
        """Lower bound on E[distinct]: ``distinct − z·√(singletons + 1)`` (exact: itself)."""
        if self.exact or z <= 0 or self.singletons is None:
            return self.distinct.astype(np.float64)
        return self.distinct - z * np.sqrt(self.singletons + 1.0)

    def worst(self) -> dict[str, Any]:
        """The worst cases the MVC paper calibrates on: the largest N_w and the smallest S_w."""
        i = int(np.argmax(self.n_w))
        j = int(np.argmin(self.s_w))
        k = int(np.argmin(self.distinct))
        return {"max_n_w": float(self.n_w[i]), "max_n_w_word": self.words[i],
                "min_s_w": float(self.s_w[j]), "min_s_w_word": self.words[j],
                "min_distinct": float(self.distinct[k]), "min_distinct_word": self.words[k]}

    def mean(self, values: np.ndarray) -> float:
        """The mean of a per-word statistic, weighted by :attr:`weights` when there are any."""
        values = np.asarray(values, dtype=np.float64)
        if self.weights is None:
            return float(values.mean())
        return float(np.average(values, weights=self.weights))

    def summary(self) -> dict[str, Any]:
        """Worst cases, means and quantiles (JSON-ready; weighted when there are weights)."""
        w = self.weights

        def stats(x: np.ndarray) -> dict[str, float]:
            q = (np.quantile(x, [0.05, 0.5, 0.95]) if w is None
                 else weighted_quantiles(x, w, [0.05, 0.5, 0.95]))
            return {"mean": self.mean(x), "min": float(x.min()), "p05": float(q[0]),
                    "median": float(q[1]), "p95": float(q[2]), "max": float(x.max())}

        out = {"mechanism": self.mechanism, "epsilon": self.epsilon, "method": self.method,
               "n_words": len(self.words), "n_draws": self.n_draws, "eta": self.eta,
               **self.worst(), "n_w": stats(self.n_w), "s_w": stats(self.s_w.astype(np.float64)),
               "distinct": stats(self.distinct.astype(np.float64))}
        if w is not None:
            out["weighted"] = True
        return out

    def to_dict(self, *, per_word: bool = True) -> dict[str, Any]:
        d = self.summary()
        d["parameters"] = jsonable(self.parameters)
        if per_word:
            d["per_word"] = {"word": list(self.words), "n_w": self.n_w.tolist(),
                             "s_w": self.s_w.tolist(), "distinct": self.distinct.tolist()}
            if self.weights is not None:
                d["per_word"]["weight"] = self.weights.tolist()
        return d


def plausible_deniability(mechanism: WordMechanism,
                          words: Sequence[str] | Sequence[int] | np.ndarray | int,
                          n_draws: int = 1000, rng: np.random.Generator | None = None, *,
                          method: Method = "auto", eta: float = DEFAULT_ETA,
                          weights: Sequence[float] | np.ndarray | None = None) -> Deniability:
    """N_w and S_w of ``mechanism`` on ``words`` (Feyisetan et al. 2020, §3.2 / §4.1).

    Args:
        mechanism: a built word mechanism.
        words: words (strings), vocabulary rows, or a number of words to sample uniformly.
        n_draws: draws per word for Monte Carlo (the paper uses 1,000; 1-Diffractor 100).
        rng: the only source of randomness (word sampling and draws).
        method: ``"exact"`` (needs ``output_distribution``), ``"monte_carlo"``, or ``"auto"``
            (exact when the mechanism has it).
        eta: the mass the exact S_w may leave out.
        weights: one non-negative weight per word (not with a number of words to sample), e.g.
            its count in the user's data; the summary's means and quantiles are then weighted.

    Returns:
        A :class:`Deniability` with one entry per word, in the order given.
    """
    if not isinstance(mechanism, WordMechanism):
        raise TypeError("mechanism must be a textdp word mechanism")
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}")
    n_draws = int(n_draws)
    eta = check_probability(eta, "eta")
    if method not in ("auto", "exact", "monte_carlo"):
        raise ValueError(f"method must be 'auto', 'exact' or 'monte_carlo', got {method!r}")
    rng = check_rng(rng)
    vocab = mechanism.vocabulary
    ids = resolve_words(vocab, words, rng)
    w = check_weights(weights, ids.size)
    exact = has_exact_law(mechanism) if method == "auto" else method == "exact"
    if exact and not has_exact_law(mechanism):
        raise ValueError(f"mechanism {mechanism.name!r} has no exact output law; "
                         "use method='monte_carlo'")
    if exact:
        n_w, s_w, distinct = _exact(mechanism, ids, n_draws, eta)
        singletons = None
    else:
        n_w, distinct, singletons = _monte_carlo(mechanism, ids, n_draws, rng)
        s_w = distinct
    return Deniability(
        mechanism=mechanism.name, epsilon=float(mechanism.epsilon),
        parameters=dict(mechanism.parameters), words=tuple(vocab.words_array[ids].tolist()),
        ids=ids, n_w=n_w, s_w=s_w, distinct=distinct,
        method="exact" if exact else "monte_carlo", n_draws=n_draws, eta=eta,
        singletons=singletons, weights=w)


def weighted_quantiles(x: np.ndarray, weights: np.ndarray, qs: Sequence[float]) -> np.ndarray:
    """The inverted-CDF quantiles of ``x`` under ``weights``: for each q the smallest value whose
    cumulative weight reaches q of the total — with integer weights, exactly the quantiles
    (``method="inverted_cdf"``) of ``x`` with each value repeated its weight times."""
    order = np.argsort(x, kind="stable")
    xs = np.asarray(x, dtype=np.float64)[order]
    cum = np.cumsum(np.asarray(weights, dtype=np.float64)[order])
    # Rounding: a cumulative weight that reaches q·total only up to float error still counts.
    at = np.searchsorted(cum, np.asarray(qs) * cum[-1] * (1 - 1e-12), side="left")
    return xs[np.minimum(at, xs.size - 1)]


def check_weights(weights: Sequence[float] | np.ndarray | None, n: int) -> np.ndarray | None:
    """``weights`` as a float64 array of ``n`` finite values ≥ 0 with a positive sum (or None)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"{w.size} weights for {n} words")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.sum() > 0):
        raise ValueError("weights must be finite, ≥ 0 and not all 0")
    return w


def _monte_carlo(mechanism: WordMechanism, ids: np.ndarray, n_draws: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = ids.size
    size = len(mechanism.vocabulary)
    # One vectorised call for every draw of every word: one noise matrix, one NN search.
    out = mechanism.privatize_ids(np.repeat(ids, n_draws), rng).reshape(k, n_draws)
    n_w = (out == ids[:, None]).mean(axis=1)
    # Count (word, output) pairs once: distinct outputs and singletons per word.
    keys = np.arange(k, dtype=np.int64)[:, None] * size + out
    uniq, counts = np.unique(keys.ravel(), return_counts=True)
    row = uniq // size
    distinct = np.bincount(row, minlength=k).astype(np.int64)
    singletons = np.bincount(row[counts == 1], minlength=k).astype(np.int64)
    return n_w, distinct, singletons


def _exact(mechanism: WordMechanism, ids: np.ndarray, n_draws: int,
           eta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = ids.size
    n_w = np.empty(k)
    s_w = np.empty(k, dtype=np.int64)
    distinct = np.empty(k)
    for i, w in enumerate(ids.tolist()):
        p = output_law(mechanism, w)
        n_w[i] = p[w]
        s_w[i] = mass_support(p, eta)
        distinct[i] = expected_distinct(p, n_draws)
    return n_w, s_w, distinct


def mass_support(p: np.ndarray, eta: float) -> int:
    """min{|S| : Σ_{v∈S} p_v ≥ 1 − η}: the largest probabilities first (exact S_w)."""
    total = float(p.sum())
    if not math.isfinite(total) or total <= 0:
        raise ValueError("the output distribution must have a positive finite total")
    cum = np.cumsum(np.sort(p)[::-1]) / total
    # Rounding: a cumulative sum that reaches 1 − η only up to float error still counts.
    return int(min(np.searchsorted(cum, (1.0 - eta) * (1 - 1e-12), side="left") + 1, p.size))


def expected_distinct(p: np.ndarray, n: int) -> float:
    """E[number of distinct values in n i.i.d. draws from p] = Σ_v 1 − (1 − p_v)^n."""
    with np.errstate(divide="ignore"):  # p_v = 1 gives log1p(−1) = −inf and q_v = 1, as it should
        q = -np.expm1(n * np.log1p(-np.clip(p, 0.0, 1.0)))
    return float(q.sum())
