"""1-Diffractor: metric-DP word replacement along one-dimensional word lists.

Meisenbacher, Chevli, Matthes, "1-Diffractor: Efficient and Utility-Preserving Text Obfuscation
Leveraging Word-Level Metric Differential Privacy", IWSPA 2024 (SPEC §2.7).

* **Lists** (§3, Algorithm 1): each list is the exact greedy nearest-neighbour chain through one
  embedding model from a seeded start word (:mod:`textdp.mechanisms.word._lists`), a permutation of
  the vocabulary. Φ_l(w) is w's position in list l and d_l(w, w′) = |Φ_l(w) − Φ_l(w′)| (Eq. (2)).
* **1-D_G** (``method="geometric"``, Eq. (3)–(5)): i′ = clamp(Φ_l(w) + X, 0, |V| − 1) with X
  two-sided geometric, P[X = x] ∝ e^{−ε|x|}; clamped per list, never renormalised (Theorem 1 and
  post-processing).
* **1-D_T** (``method="tem"``, §4.1.3): the truncated exponential mechanism of Carvalho et al.
  (SDM 2023; SPEC §2.5) on the list distance, Δ = 1: γ = (2/ε)·ln((1 − β)(|V| − 1)/β),
  L_w = {v : d_l(v, w) ≤ γ}, scores −d_l(v, w) on L_w and −γ + (2/ε)·ln|V∖L_w| for ⊥, Gumbel-max
  with scale 2/ε, ⊥ → a uniform word of V∖L_w. Its output law is
  P[v | w] ∝ exp(−(ε/2)·min(d_l(v, w), γ)), which we sample exactly by inverting its CDF (O(1) per
  token instead of 2γ + 2 Gumbel draws); the tests check it against a literal Gumbel-max sampler.
* **Several lists** (§3.1.2, Eq. (6)): the mechanism runs on every list and one candidate is
  released uniformly at random — in law, a uniformly random list l and the mechanism on l only,
  which is how we sample. Guarantee: ε·d_max(w, w′), d_max = max_l d_l(w, w′).

The paper's configurations: ``models=[E1, …, E5], n_lists=1`` is L0, ``n_lists=2`` is L1, and
one model with ``n_lists=1`` is L2. ``n_lists`` counts lists *per model*.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp._checks import EPSILON, Parameter
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.mechanisms.word._lists import ALGORITHM_VERSION, build_list, build_lists
from textdp.noise import clamped_geometric_log_pmf, two_sided_geometric
from textdp.vocab import Vocabulary

__all__ = ["Diffractor", "build_list", "build_lists", "tem_gamma"]

METHODS = ("geometric", "tem")
DEFAULT_BETA = 0.001


def tem_gamma(epsilon: float, beta: float, n_words: int) -> float:
    """TEM threshold γ = (2Δ/ε)·ln((1 − β)(|V| − 1)/β) with Δ = 1 (Carvalho et al. 2023; SPEC §2.5)."""
    return (2.0 / epsilon) * math.log((1.0 - beta) * (n_words - 1) / beta)


def _list_seeds(seeds: Sequence[int] | None, n_lists: int) -> list[int]:
    """The list seeds: ``seeds`` checked against ``n_lists``, or 0 … n_lists − 1."""
    if seeds is None:
        return list(range(n_lists))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise TypeError("seeds must be a sequence of non-negative integers")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    if n_lists not in (1, len(seeds)):
        raise ValueError(f"n_lists={n_lists} disagrees with {len(seeds)} seeds")
    if len(set(seeds)) != len(seeds):
        raise ValueError("seeds must be distinct (a repeated seed repeats a list)")
    return seeds


def _logsumexp_rows(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=0)
    return m + np.log(np.exp(x - m).sum(axis=0))


@register
class Diffractor(WordMechanism):
    """1-Diffractor (Meisenbacher et al. 2024): geometric or TEM noise on word-list positions.

    Args:
        vocabulary: the words to privatise (default: :func:`textdp.vocab.load_default`). Its
            vectors build the lists unless ``models`` is given.
        epsilon: ε per unit of list distance (position difference).
        method: ``"geometric"`` (1-D_G) or ``"tem"`` (1-D_T).
        n_lists: lists per embedding model (seeds 0 … n_lists − 1 unless ``seeds`` is given).
        beta: TEM's β ∈ (0, 1) (default 0.001); only for ``method="tem"``.
        models: embedding models over the same word set as ``vocabulary`` (e.g. the paper's five
            models for L0/L1); each gets ``n_lists`` lists. Default: ``[vocabulary]``.
        seeds: explicit list seeds (used for every model); overrides ``n_lists``.
        cache: load/store lists in the user cache directory.
    """

    name = "diffractor"
    PARAMETERS = (
        EPSILON,
        Parameter("method", str, "1-D_G (two-sided geometric) or 1-D_T (truncated exponential) on "
                  "list positions", default="geometric", choices=METHODS, flag=True),
        Parameter("n_lists", int, "word lists per embedding model (seeds 0 … n_lists − 1)",
                  default=1, low=1, flag=True),
        Parameter("beta", float, "TEM's β (method=tem only; default 0.001)", default=None,
                  low=0.0, high=1.0, low_open=True, high_open=True, nullable=True, flag=True),
        Parameter("models", object, "embedding models over the vocabulary's words (default: the "
                  "vocabulary)", default=None, nullable=True),
        Parameter("seeds", object, "explicit list seeds, for every model (overrides n_lists)",
                  default=None, nullable=True),
        Parameter("cache", bool, "load and store the lists in the user cache directory",
                  default=True),
    )

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 method: str = "geometric", n_lists: int = 1, beta: float | None = None,
                 models: Sequence[Vocabulary] | None = None, seeds: Sequence[int] | None = None,
                 cache: bool = True) -> None:
        if vocabulary is None and models:
            vocabulary = models[0]
        super().__init__(vocabulary, epsilon=epsilon, method=method, n_lists=n_lists, beta=beta,
                         models=models, seeds=seeds, cache=cache)
        self._method: str = self._params["method"]
        self._seeds = _list_seeds(seeds, self._params["n_lists"])
        if method == "tem":
            self._beta = DEFAULT_BETA if beta is None else self._params["beta"]
        else:
            if beta is not None:
                raise ValueError("beta only applies to method='tem'")
            self._beta = None
        seeds = self._seeds
        models = [self.vocabulary] if models is None else list(models)
        if not models:
            raise ValueError("models must not be empty")
        self._models = models
        self._lists = self._build_lists(models, seeds, cache)
        n_total, n = self._lists.shape
        self._n = n
        positions = np.empty_like(self._lists)
        rows = np.arange(n, dtype=np.int64)
        for k in range(n_total):
            positions[k, self._lists[k]] = rows
        self._positions = positions
        self._lists_flat = self._lists.ravel()
        self._positions_flat = positions.ravel()
        self._list0 = self._lists[0]
        self._pos0 = positions[0]
        self._gamma = tem_gamma(self.epsilon, self._beta, n) if method == "tem" else None

    # --- construction ---------------------------------------------------------------------
    def _build_lists(self, models: list[Vocabulary], seeds: list[int], cache: bool) -> np.ndarray:
        base = self.vocabulary
        out = []
        for model in models:
            if not isinstance(model, Vocabulary):
                raise TypeError("models must be textdp.vocab.Vocabulary objects")
            if model is base or model.words == base.words:
                to_base = None
            else:
                if len(model) != len(base) or set(model.words) != set(base.lookup):
                    raise ValueError(
                        f"model {model.name!r} must have exactly the words of the vocabulary "
                        f"{base.name!r} (restrict both to their common words first)")
                to_base = np.fromiter((base.lookup[w] for w in model.words), dtype=np.int64,
                                      count=len(model))
            lists = build_lists(model, seeds, cache=cache).astype(np.int64)
            out.append(lists if to_base is None else to_base[lists])
        return np.concatenate(out, axis=0)

    # --- description ------------------------------------------------------------------------
    @property
    def method(self) -> str:
        return self._method

    @property
    def n_lists(self) -> int:
        """Total number of lists (models × lists per model)."""
        return int(self._lists.shape[0])

    @property
    def beta(self) -> float | None:
        return self._beta

    @property
    def gamma(self) -> float | None:
        """TEM's truncation threshold γ in list positions (None for the geometric method)."""
        return self._gamma

    @property
    def lists(self) -> np.ndarray:
        """(n_lists, |V|) vocabulary rows in list order (read only)."""
        view = self._lists.view()
        view.flags.writeable = False
        return view

    @property
    def positions(self) -> np.ndarray:
        """(n_lists, |V|): positions[l, w] = Φ_l(w) (read only)."""
        view = self._positions.view()
        view.flags.writeable = False
        return view

    @property
    def lists_fingerprint(self) -> str:
        h = hashlib.sha256(f"diffractor-lists-v{ALGORITHM_VERSION}".encode())
        h.update(self._lists.astype("<i8", copy=False).tobytes())
        return h.hexdigest()

    @property
    def parameters(self) -> dict[str, Any]:
        p: dict[str, Any] = {
            "epsilon": self.epsilon,
            "method": self._method,
            "n_lists": self.n_lists,
            "lists_per_model": len(self._seeds),
            "seeds": list(self._seeds),
            "models": [{"name": m.name, "fingerprint": m.fingerprint} for m in self._models],
            "lists_fingerprint": self.lists_fingerprint,
            "list_algorithm": f"exact greedy chain v{ALGORITHM_VERSION}",
        }
        if self._method == "tem":
            p["beta"] = self._beta
            p["gamma"] = self._gamma
        return p

    # --- the guarantee: ε·d_max over the lists (Theorem 1, Eq. (6)) ------------------------------
    def distance(self, a: Any, b: Any) -> np.ndarray:
        """d_max(a, b) = max_l |Φ_l(a) − Φ_l(b)| for word ids (or words), broadcast; float64."""
        a = self._id(a) if isinstance(a, str) else np.asarray(a)
        b = self._id(b) if isinstance(b, str) else np.asarray(b)
        return np.abs(self._positions[:, a] - self._positions[:, b]).max(axis=0).astype(np.float64)

    def _distance_error(self) -> float:
        return 0.0  # differences of integer positions: exact

    @property
    def metric(self) -> str:
        return (f"d_max(w, w′) = max over the {self.n_lists} word list(s) of |Φ_l(w) − Φ_l(w′)| "
                f"(positions in exact greedy nearest-neighbour lists of "
                f"{', '.join(m.name for m in self._models)}; lists sha256 "
                f"{self.lists_fingerprint[:16]}…)")

    @property
    def input_metric(self) -> str:
        # The lists' fingerprint covers the models, seeds and the list algorithm's version.
        return f"word-list-position:{self.lists_fingerprint}"

    @property
    def per_word(self) -> str:
        return "Pr[M(w)=y] ≤ exp(ε·d_max(w,w′))·Pr[M(w′)=y] for all words w, w′ and outputs y"

    @property
    def assumptions(self) -> tuple[str, ...]:
        method = ("two-sided geometric noise on the list position, clamped per list"
                  if self._method == "geometric" else
                  f"truncated exponential mechanism on list positions (β={self._beta}, "
                  f"γ={self._gamma:.6g})")
        return ("the word lists are fixed before and independently of the data (they depend only "
                "on the embedding models and the public list seeds)",
                f"1-Diffractor {method}; one list chosen uniformly at random per word")

    @property
    def reference(self) -> str:  # type: ignore[override]
        return ("Meisenbacher, Chevli, Matthes, IWSPA 2024, Theorem 1 and Eq. (6)"
                + ("; Carvalho et al., SDM 2023 (TEM)" if self._method == "tem" else ""))

    # --- sampling -------------------------------------------------------------------------
    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray | tuple[np.ndarray, ...]:
        """Per token: the geometric offset (one list), (list choice, offset) (several lists), or
        (list choice, u₁, u₂) for TEM. Offsets first, then list choices."""
        m = ids.size
        k = self._lists.shape[0]
        if self._method == "geometric":
            offsets = two_sided_geometric(m, self._epsilon, rng)
            return (rng.integers(k, size=m), offsets) if k > 1 else offsets
        u = rng.random(2 * m)
        lists = rng.integers(k, size=m) if k > 1 else np.zeros(m, dtype=np.int64)
        return lists, u[:m], u[m:]

    def apply(self, ids: np.ndarray, noise: np.ndarray | tuple[np.ndarray, ...]) -> np.ndarray:
        n = self._n
        if isinstance(noise, np.ndarray):  # geometric, one list
            pos = self._pos0.take(ids)
            pos += noise
            np.clip(pos, 0, n - 1, out=pos)
            return self._list0.take(pos)
        if self.n_lists == 1:
            pos = self._pos0.take(ids)
            flat_base = None
        else:
            flat_base = noise[0] * n
            pos = self._positions_flat.take(flat_base + ids)
        if self._method == "geometric":
            pos += noise[1]
            np.clip(pos, 0, n - 1, out=pos)
        else:
            pos = self._tem_positions(pos, noise[1], noise[2])
        if flat_base is None:
            return self._list0.take(pos)
        flat_base += pos
        return self._lists_flat.take(flat_base)

    # --- TEM on a list: exact closed form -----------------------------------------------------
    def _tem_constants(self) -> tuple[float, float, float, int, float]:
        half = self.epsilon / 2.0
        a = math.exp(-half)
        one_minus_a = -math.expm1(-half)
        window = int(min(math.floor(self._gamma), self._n - 1))
        outside_weight = math.exp(-half * self._gamma)
        return half, a, one_minus_a, window, outside_weight

    def _tem_weights(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per position x: window [x+lo, x+hi], weights of right/left sides, ⊥ and total Z."""
        half, a, one_minus_a, window, w_out = self._tem_constants()
        n = self._n
        lo = -np.minimum(window, x)
        hi = np.minimum(window, n - 1 - x)
        right = a * -np.expm1(-half * hi) / one_minus_a  # Σ_{k=1}^{hi} a^k
        left = a * -np.expm1(half * lo) / one_minus_a  # Σ_{k=1}^{−lo} a^k
        n_out = n - (hi - lo + 1)
        bottom = n_out * w_out
        total = bottom + 1.0 + right + left
        return lo, hi, right, left, n_out, bottom, total

    def _tem_positions(self, x: np.ndarray, u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
        """Inverse-CDF sample of P[y | x] ∝ exp(−(ε/2)·min(|y − x|, γ)) over positions y."""
        half, a, one_minus_a, _, _ = self._tem_constants()
        lo, hi, right, left, n_out, bottom, total = self._tem_weights(x)
        t = u1 * total
        is_bottom = t < bottom
        t -= bottom
        is_center = ~is_bottom & (t < 1.0)
        t -= 1.0
        is_right = ~is_bottom & ~is_center & (t < right)
        is_left = ~is_bottom & ~is_center & ~is_right
        ratio = one_minus_a / a
        # Right: the smallest k ≥ 1 with Σ_{j=1}^{k} a^j > t, i.e. k = ⌊ln(1 − t(1−a)/a)/ln a⌋ + 1.
        with np.errstate(divide="ignore", invalid="ignore"):
            kr = np.floor(np.log1p(-np.clip(t, 0, None) * ratio) / -half) + 1.0
            t_left = t - right
            kl = np.floor(np.log1p(-np.clip(t_left, 0, None) * ratio) / -half) + 1.0
        kr = np.clip(np.nan_to_num(kr, nan=1.0, posinf=1e18), 1.0, np.maximum(hi, 1))
        kl = np.clip(np.nan_to_num(kl, nan=1.0, posinf=1e18), 1.0, np.maximum(-lo, 1))
        offset = np.zeros(x.shape, dtype=np.int64)
        offset[is_right] = kr[is_right].astype(np.int64)
        offset[is_left] = -kl[is_left].astype(np.int64)
        out = x + offset
        if is_bottom.any():
            b = np.flatnonzero(is_bottom)
            j = np.minimum(np.floor(u2[b] * n_out[b]).astype(np.int64), n_out[b] - 1)
            below = x[b] + lo[b]  # positions 0 … x+lo−1 lie below the window
            out[b] = np.where(j < below, j, j + (hi[b] - lo[b] + 1))
        return out

    # --- exact output law -------------------------------------------------------------------
    def _id(self, word: str | int | np.integer) -> int:
        if isinstance(word, str):
            return self.vocabulary.index(word)
        if isinstance(word, (numbers.Integral, np.integer)) and not isinstance(word, bool):
            if 0 <= int(word) < self._n:
                return int(word)
            raise ValueError(f"word id {word} out of range")
        raise TypeError("word must be a string or a vocabulary row index")

    def _list_log_pmf(self, x: int) -> np.ndarray:
        """ln P[output position = y | position x] on one list, y = 0 … |V|−1."""
        n = self._n
        if self._method == "geometric":
            return clamped_geometric_log_pmf(x, self.epsilon, 0, n - 1)
        half, _, _, window, _ = self._tem_constants()
        lo, hi, _, _, _, _, total = self._tem_weights(np.array([x]))
        y = np.arange(n)
        d = np.abs(y - x).astype(np.float64)
        logw = np.where(d <= window, -half * d, -half * self._gamma)
        return logw - math.log(float(total[0]))

    def log_output_distribution(self, word: str | int) -> np.ndarray:
        """ln Pr[M(word) = v] for every vocabulary row v (exact; finite everywhere)."""
        w = self._id(word)
        per_list = np.empty((self.n_lists, self._n))
        for k in range(self.n_lists):
            per_list[k] = self._list_log_pmf(int(self._positions[k, w]))[self._positions[k]]
        return _logsumexp_rows(per_list) - math.log(self.n_lists)

    def output_distribution(self, word: str | int, *, log: bool = False) -> np.ndarray:
        """Pr[M(word) = v] for every vocabulary row v: the exact closed form (clamping included);
        natural logs with ``log=True`` (as TEM's and SanText's)."""
        logp = self.log_output_distribution(word)
        return logp if log else np.exp(logp)

    def probability_unchanged(self, words: Sequence[str | int] | np.ndarray) -> np.ndarray:
        """Exact N_w = Pr[M(w) = w] for each word (plausible deniability, Feyisetan et al. 2020)."""
        arr = np.asarray(words)
        if arr.ndim == 1 and np.issubdtype(arr.dtype, np.integer):  # ids: no per-word Python
            if arr.size and (arr.min() < 0 or arr.max() >= self._n):
                raise ValueError("word ids out of range of the vocabulary")
            ids = arr.astype(np.int64, copy=False)
        else:
            ids = np.array([self._id(w) for w in words], dtype=np.int64)
        x = self._positions[:, ids]  # (lists, words)
        if self._method == "geometric":
            a = math.exp(-self.epsilon)
            edge = (x == 0) | (x == self._n - 1)
            p = np.where(edge, 1.0 / (1.0 + a), (1.0 - a) / (1.0 + a))
        else:
            p = 1.0 / self._tem_weights(x)[-1]
        return p.mean(axis=0)
