"""Truncated Gumbel, density-aware: a noisy choice among a random number of nearest words.

Xu, Aggarwal, Feyisetan, Teissier, "Density-Aware Differentially Private Textual Perturbations
Using Truncated Gumbel Noise", FLAIRS 2021 (SPEC §2.4). With Δ the largest and Δ₀ the smallest
distance between two different words of V (global, computed once and exactly):

* α = (ε − 2(1 + ln|V|)/Δ₀)/3 and b = 2Δ / min{W₀(2αΔ), ln(αΔ₀)} (W₀: principal Lambert W);
* k ~ Poisson(ln|V|) conditioned on 1 ≤ k ≤ |V|; the candidates are the k nearest words of w,
  w itself first (distance 0);
* output argmin_j (d_j + g_j) over the candidates, g_j iid Gumbel(0, b) conditioned on |g_j| ≤ Δ.

Guarantee: the paper's theorem — ε·‖φ(w) − φ(w′)‖ metric DP, where ε enters only through α and b
above. It turns per-pair constants into multiples of d(w, w′) using d(w, w′) ≥ Δ₀ for w ≠ w′, so
Δ₀ must be the minimum over *all* pairs of different words and must be positive: a vocabulary with
two words at the same vector is rejected (no finite ε is possible there). The formula needs
α > 0 and ln(αΔ₀) > 0, i.e. ε > (5 + 2 ln|V|)/Δ₀: a smaller ε raises ValueError naming that bound.
(The public reference code estimates Δ, Δ₀ from one random word, and takes the real part of a
complex Lambert W when α ≤ 0, silently producing a meaningless scale.)

Cost: the k-nearest-word lists (k ≤ 32 covers Poisson(ln|V|) up to probabilities ≈ 1e-8 for
|V| ≈ 50k; larger k are searched exactly on demand), Δ and Δ₀ come from one certified pass over all
|V|² pairs, cached in memory and on disk keyed by the vocabulary's fingerprint. After that a token
costs a lookup, k truncated-Gumbel draws and an argmin.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from textdp.io.atomic import atomic_save_npz
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors import NearestNeighbors, NeighborGraph
from textdp.noise import truncated_gumbel, truncated_poisson
from textdp.vocab import Vocabulary, cache_dir

__all__ = ["TruncatedGumbel", "lambert_w0", "smallest_feasible_epsilon", "vocabulary_graph"]

GRAPH_K = 32
_GRAPH_FORMAT = 1
_GRAPHS: dict[tuple[str, int], NeighborGraph] = {}


def lambert_w0(x: float) -> float:
    """Principal branch W₀(x) for real x ≥ 0 (Halley's iteration; real arithmetic only)."""
    x = float(x)
    if not (x >= 0 and math.isfinite(x)):
        raise ValueError(f"W₀ is used here only for finite x ≥ 0, got {x!r}")
    if x == 0:
        return 0.0
    w = math.log1p(x) if x < 3 else math.log(x) - math.log(math.log(x))
    for _ in range(100):
        ew = math.exp(w)
        f = w * ew - x
        step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        w -= step
        if abs(step) <= 4e-16 * max(1.0, abs(w)):
            break
    return w


def smallest_feasible_epsilon(n_words: int, min_distance: float) -> float:
    """The infimum of feasible ε: the scale b needs ln(αΔ₀) > 0, i.e. ε > (5 + 2 ln|V|)/Δ₀."""
    return (5.0 + 2.0 * math.log(n_words)) / min_distance


def vocabulary_graph(vocabulary: Vocabulary, k: int = GRAPH_K) -> NeighborGraph:
    """Each word's k nearest other words, and the exact Δ₀ and Δ, cached by fingerprint."""
    k = min(int(k), len(vocabulary) - 1)
    key = (vocabulary.fingerprint, k)
    if key in _GRAPHS:
        return _GRAPHS[key]
    path = cache_dir() / "neighbors" / f"graph-v{_GRAPH_FORMAT}-{vocabulary.fingerprint[:32]}-k{k}.npz"
    graph = _load_graph(path, vocabulary, k)
    if graph is None:
        graph = NearestNeighbors(vocabulary.vectors).neighbor_graph(k)
        _save_graph(path, vocabulary, graph)
    _GRAPHS[key] = graph
    return graph


def _load_graph(path: Path, vocabulary: Vocabulary, k: int) -> NeighborGraph | None:
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            if str(f["fingerprint"]) != vocabulary.fingerprint:
                return None
            idx, dist = f["indices"].astype(np.int64), f["distances"]
            if idx.shape != (len(vocabulary), k) or dist.shape != idx.shape:
                return None
            ext = f["extremes"]
            pairs = f["pairs"]
        return NeighborGraph(idx, dist, float(ext[0]), (int(pairs[0]), int(pairs[1])),
                             float(ext[1]), (int(pairs[2]), int(pairs[3])))
    except Exception:  # a corrupt or foreign file is recomputed, never trusted
        return None


def _save_graph(path: Path, vocabulary: Vocabulary, g: NeighborGraph) -> None:
    try:
        atomic_save_npz(path, fingerprint=np.array(vocabulary.fingerprint),
                        indices=g.indices.astype(np.int32), distances=g.distances,
                        extremes=np.array([g.min_distance, g.max_distance]),
                        pairs=np.array([*g.min_pair, *g.max_pair]))
    except OSError:
        pass  # a read-only cache only costs time


@register
class TruncatedGumbel(WordMechanism):
    """Density-aware truncated-Gumbel word replacement (Xu et al., FLAIRS 2021).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter per unit of Euclidean distance; must exceed
            (5 + 2 ln|V|)/Δ₀ for this vocabulary (ValueError otherwise, naming the bound).
    """

    name = "gumbel"
    # The paper's theorem, as stated: ε·‖φ(w) − φ(w′)‖ metric DP (the base class's map).
    reference = ("Xu, Aggarwal, Feyisetan, Teissier, FLAIRS 2021 (density-aware truncated "
                 "Gumbel mechanism and its privacy theorem); SPEC §2.4")

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float) -> None:
        super().__init__(vocabulary, epsilon=epsilon)
        vocab = self.vocabulary
        n = len(vocab)
        graph = vocabulary_graph(vocab)
        if graph.min_distance <= 0:
            a, b = (vocab.words[i] for i in graph.min_pair)
            raise ValueError(
                f"words {a!r} and {b!r} have the same vector (Δ₀ = 0): the truncated-Gumbel "
                "guarantee needs Δ₀ > 0 and holds for no ε on this vocabulary; remove duplicates")
        self._graph = graph
        self._delta = graph.max_distance
        self._delta0 = graph.min_distance
        eps_min = smallest_feasible_epsilon(n, self._delta0)
        alpha = (self.epsilon - 2.0 * (1.0 + math.log(n)) / self._delta0) / 3.0
        if not alpha * self._delta0 > 1.0:
            raise ValueError(
                f"epsilon={self.epsilon:g} is infeasible for truncated Gumbel on this vocabulary "
                f"(|V| = {n}, Δ₀ = {self._delta0:.6g}, Δ = {self._delta:.6g}): the scale "
                f"b = 2Δ/min(W₀(2αΔ), ln(αΔ₀)) needs ln(αΔ₀) > 0, i.e. epsilon > "
                f"(5 + 2 ln|V|)/Δ₀ = {eps_min:.6g}; the smallest feasible epsilon is just above "
                f"{eps_min:.6g}")
        self._alpha = alpha
        denom = min(lambert_w0(2.0 * alpha * self._delta), math.log(alpha * self._delta0))
        self._scale = 2.0 * self._delta / denom
        self._poisson_mean = math.log(n)
        self._exact: NearestNeighbors | None = None

    @property
    def scale(self) -> float:
        """b, the Gumbel scale."""
        return self._scale

    @property
    def max_distance(self) -> float:
        """Δ, the largest distance between two words (also the truncation bound of the noise)."""
        return self._delta

    @property
    def min_distance(self) -> float:
        """Δ₀, the smallest distance between two different words."""
        return self._delta0

    @property
    def assumptions(self) -> tuple[str, ...]:
        v = self.vocabulary
        return (
            f"Δ₀ = {self._delta0:.9g} (closest pair {v.words[self._graph.min_pair[0]]!r}, "
            f"{v.words[self._graph.min_pair[1]]!r}) and Δ = {self._delta:.9g} are the exact "
            "minimum and maximum distances between different words of the whole vocabulary",
            f"α = {self._alpha:.9g}, b = {self._scale:.9g}, k ~ Poisson(ln {len(v)}) "
            f"conditioned on [1, {len(v)}]",
            "the guarantee is the paper's theorem; textdp implements its mechanism and "
            "constants and audits the law empirically, the proof itself is not re-derived here",
        )

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.vocabulary)
        k = truncated_poisson(self._poisson_mean, 1, n, ids.size, rng)
        g = truncated_gumbel(int(k.sum()), self._scale, self._delta, rng)
        return k, g

    def apply(self, ids: np.ndarray, noise: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        k, g = noise
        out = np.empty(ids.size, dtype=np.int64)
        if ids.size == 0:
            return out
        offsets = np.zeros(ids.size + 1, dtype=np.int64)
        np.cumsum(k, out=offsets[1:])
        chunk = 1 << 16
        for s in range(0, ids.size, chunk):
            e = min(s + chunk, ids.size)
            out[s:e] = self._choose(ids[s:e], k[s:e], g[offsets[s]:offsets[e]])
        return out

    def _choose(self, ids: np.ndarray, k: np.ndarray, g: np.ndarray) -> np.ndarray:
        n = ids.size
        width = int(k.max())
        kg = self._graph.indices.shape[1]
        m = min(width - 1, kg)
        cand = np.empty((n, width), dtype=np.int64)
        dist = np.full((n, width), np.inf)
        cand[:, 0] = ids
        dist[:, 0] = 0.0
        cand[:, 1:1 + m] = self._graph.indices[ids, :m]
        dist[:, 1:1 + m] = self._graph.distances[ids, :m]
        deep = np.flatnonzero(k - 1 > kg)
        if deep.size:
            # Beyond the cached lists (probability ≈ 1e-8 per token): exact search on demand.
            if self._exact is None:
                self._exact = NearestNeighbors(self.vocabulary.vectors)
            kk = int(k[deep].max()) - 1
            idx, d = self._exact.kneighbors(self.vocabulary.vectors[ids[deep]], kk,
                                            exclude=ids[deep])
            cand[deep, 1:1 + kk] = idx
            dist[deep, 1:1 + kk] = d
        used = np.arange(width) < k[:, None]
        noisy = np.where(used, dist, np.inf)
        # Row-major boolean assignment matches the draw's layout: token i's k_i values in a row.
        noisy[used] += g
        return cand[np.arange(n), noisy.argmin(axis=1)]
