"""CusText and CusText+: customised output sets and the exponential mechanism inside them.

Chen, Mo, Wang, Chen, Nie, Wang, Cui, "A Customized Text Sanitization Mechanism with Differential
Privacy", Findings of ACL 2023 (SPEC §7).

* **Mapping function** (the paper's Algorithm 1, its "conservative" strategy). Walk the
  vocabulary in a fixed public order (its row order: GloVe's rows are in corpus-frequency order);
  the first word x not yet mapped and its K − 1 nearest not-yet-mapped words (Euclidean, ties by
  row) form a group S, and every member of S is mapped to the output set S. Groups therefore
  partition the vocabulary, and every member of an output set has that same set; when fewer than
  K words remain, they form the last (smaller) group.
* **Sampling** (the paper's Eq. for the exponential mechanism). For x in group S, the utility of
  y ∈ S is the similarity normalised to [0, 1] over x's set,
  u(x, y) = (d_max(x) − d(x, y)) / (d_max(x) − d_min(x)), d = Euclidean distance,
  d_max/d_min over y ∈ S (d_min = 0: x is in S), so the sensitivity is Δu = 1 and
  Pr[M(x) = y] = exp(ε·u(x, y)/2) / Σ_{z∈S} exp(ε·u(x, z)/2).
* **Guarantee.** For x, x′ of one group, numerator and normaliser each move by at most e^{ε/2}:
  ε-DP between words that share an output set. Words of different groups have disjoint output
  sets: the output reveals the group, and nothing is protected across groups. The exact loss
  max_y |ln Pr[M(x)=y] − ln Pr[M(x′)=y]| (≤ ε) is what :meth:`CusText.privacy_loss` returns.
* **CusText+** keeps stop words unchanged (they are unprotected, and the pipeline counts them as
  kept stop words); the groups are built from the other words only.

Groups depend on the vocabulary and K only (never on the data), are built once per
(vocabulary, K, stop words) and shared by every ε (budget allocation builds one mechanism per ε
level). Sampling is vectorised: one row of weights per distinct input word, and every token draws
its column by sequential halving from its own uniforms (:func:`textdp.noise.choose_from_weights`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from textdp._checks import EPSILON, Parameter
from textdp.io.atomic import atomic_save_npz
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors import NearestNeighbors
from textdp.noise import choose_from_weights, halving_levels
from textdp.privacy import Notion
from textdp.text.stopwords import ENGLISH_STOPWORDS
from textdp.vocab import Vocabulary, cache_dir

__all__ = ["CusText", "CusTextPlus", "Groups", "build_groups", "log_law_error", "loss_upper_bound"]

_REFERENCE = ("Chen, Mo, Wang, Chen, Nie, Wang, Cui, Findings of ACL 2023 (CusText, Algorithm 1 "
              "and the exponential mechanism over normalised similarity); SPEC §7")
_TILE = 64
#: Bumped whenever the grouping changes: cached groups of another version are rebuilt.
ALGORITHM_VERSION = 1


def log_law_error(epsilon: float, k: int) -> float:
    """A bound on |computed − exact| of one entry of the float log-law ln Pr[M(x) = y] of a
    CusText mechanism at ``epsilon`` with output sets of at most ``k`` words.

    The exact law is the exponential mechanism of the stored float utilities u ∈ [0, 1],
    ε·u/2 − ln Σ_z exp(ε·u_z/2), in real arithmetic. Its float evaluation (in units of
    2⁻⁵³): the logit ε/2·u and the shift by the row's largest logit, ≤ 3ε/2; each of the k
    exponentials (NumPy's exp: < 4 ulp) and their sum, ≤ 2ε + k + 4 relative in the sum; the
    logarithm (< 4 ulp of ln k) and the last subtraction (≤ ε + ln k). The bound doubles their
    total, so that it does not rest on a tight count.
    """
    return (6.0 * epsilon + 8.0 * k + 32.0) * 2.0**-53


def loss_upper_bound(loss: np.ndarray, epsilon: float, k: int) -> np.ndarray:
    """An upper bound on the exact max_y |ln Pr[M_a(x)=y] − ln Pr[M_b(x′)=y]| given ``loss``,
    its value computed in floats from two log-laws of mechanisms at ε ≤ ``epsilon`` (each entry
    off by at most :func:`log_law_error`), raised past both entries' error and the subtraction's
    rounding, then by one ulp."""
    with np.errstate(invalid="ignore"):
        raised = loss * (1.0 + 2.0**-50) + 2.0 * log_law_error(epsilon, k)
    return np.nextafter(raised, np.inf)


class Groups:
    """The mapping function: ``group_of`` (|V|,) group id, −1 for an unmapped word (a CusText+
    stop word); ``members`` (G, K_max) rows of each group, −1 padded; ``utility`` (|V|, K_max):
    u(x, members[group_of[x], j]) in [0, 1], NaN in padding and for unmapped words."""

    def __init__(self, group_of: np.ndarray, members: np.ndarray, utility: np.ndarray) -> None:
        self.group_of = group_of
        self.members = members
        self.utility = utility
        self.sizes = (members >= 0).sum(axis=1)
        mapped = group_of >= 0
        # Column of each mapped word inside its own group's row (for Pr[M(x) = x]).
        self.self_column = np.full(group_of.size, -1, dtype=np.int64)
        rows = members[group_of[mapped]]
        self.self_column[mapped] = np.argmax(rows == np.flatnonzero(mapped)[:, None], axis=1)
        for a in (self.group_of, self.members, self.utility, self.sizes, self.self_column):
            a.flags.writeable = False


def _greedy(vectors: np.ndarray, eligible: np.ndarray, k: int) -> tuple[np.ndarray, list]:
    """Algorithm 1 over the ``eligible`` rows in row order: (group id per row, member lists).

    Every eligible word's 2K nearest eligible words come from the neighbour engine (one blocked,
    certified search); the first k − 1 still-free words of the leader's list are its k − 1
    nearest free words, because every free word outside the list is at least as far (ties by
    row). When a leader's list runs short, its nearest free words are found by a float64 scan of
    the free rows (the same order: distance, then row).
    """
    n = vectors.shape[0]
    rows = np.flatnonzero(eligible)
    group_of = np.full(n, -1, dtype=np.int64)
    free = eligible.copy()
    groups: list[np.ndarray] = []
    m = min(rows.size, 2 * k)
    idx, _ = NearestNeighbors(vectors[rows]).kneighbors(vectors[rows], m)
    lists = rows[idx]
    position = np.full(n, -1, dtype=np.int64)
    position[rows] = np.arange(rows.size)
    v64 = vectors.astype(np.float64)
    remaining = rows.size
    for leader in rows.tolist():  # once per word at construction, a few numpy calls per group
        if not free[leader]:
            continue
        if remaining <= k:  # the last group: every word still free
            chosen = np.flatnonzero(free)
        else:
            cand = lists[position[leader]]
            cand = cand[free[cand] & (cand != leader)]
            if cand.size < k - 1:
                cand = _nearest_free(v64, free, leader, k - 1)
            chosen = np.concatenate([[leader], cand[:k - 1]])
        group_of[chosen] = len(groups)
        free[chosen] = False
        remaining -= chosen.size
        groups.append(chosen)
    return group_of, groups


def _nearest_free(v64: np.ndarray, free: np.ndarray, leader: int, count: int) -> np.ndarray:
    """The ``count`` free rows nearest to ``leader`` (not itself), by (distance, row)."""
    cand = np.flatnonzero(free)
    cand = cand[cand != leader]
    diff = v64[cand] - v64[leader]
    d2 = np.einsum("ij,ij->i", diff, diff)
    if cand.size > count:
        kth = np.partition(d2, count - 1)[count - 1]
        keep = d2 <= kth
        cand, d2 = cand[keep], d2[keep]
    order = np.lexsort((cand, d2))
    return cand[order[:count]]


def _utilities(vectors64: np.ndarray, group_of: np.ndarray, members: np.ndarray) -> np.ndarray:
    """u(x, y) = (d_max(x) − d(x, y)) / (d_max(x) − d_min(x)) over x's group, float64."""
    n, kmax = group_of.size, members.shape[1]
    util = np.full((n, kmax), np.nan)
    mapped = np.flatnonzero(group_of >= 0)
    for a in range(0, mapped.size, 4096):  # blocks keep the (rows, K, d) differences small
        x = mapped[a:a + 4096]
        mem = members[group_of[x]]
        diff = vectors64[np.maximum(mem, 0)] - vectors64[x][:, None, :]
        d = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        d[mem < 0] = np.nan
        lo, hi = np.nanmin(d, axis=1, keepdims=True), np.nanmax(d, axis=1, keepdims=True)
        span = hi - lo
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.where(span > 0, (hi - d) / np.where(span > 0, span, 1.0), 1.0)
        u[mem < 0] = np.nan
        util[x] = u
    return util


_CACHE: dict[tuple, Groups] = {}


def groups_cache_path(vocabulary: Vocabulary, k: int, excluded: np.ndarray) -> Path:
    mask = hashlib.sha256(np.packbits(excluded).tobytes()).hexdigest()[:16]
    return (cache_dir() / "custext"
            / f"groups-v{ALGORITHM_VERSION}-{vocabulary.fingerprint[:40]}-k{k}-{mask}.npz")


def _valid_grouping(group_of: np.ndarray, eligible: np.ndarray, k: int) -> bool:
    """A partition of the eligible rows into groups of K in leader order, the last one ≤ K."""
    if group_of.shape != eligible.shape or not np.issubdtype(group_of.dtype, np.integer):
        return False
    if ((group_of >= 0) != eligible).any():
        return False
    sizes = np.bincount(group_of[eligible])
    if sizes.size == 0 or (sizes[:-1] != k).any() or not 1 <= sizes[-1] <= k:
        return False
    # Leaders (first row of each group) appear in row order.
    first = np.full(sizes.size, -1)
    rows = np.flatnonzero(eligible)
    first[group_of[rows[::-1]]] = rows[::-1]
    return bool((np.diff(first) > 0).all())


def _load_grouping(path: Path, vocabulary: Vocabulary, eligible: np.ndarray,
                   k: int) -> np.ndarray | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            group_of = data["group_of"].astype(np.int64)
            ok = (str(data["fingerprint"]) == vocabulary.fingerprint
                  and int(data["k"]) == k and int(data["version"]) == ALGORITHM_VERSION
                  and _valid_grouping(group_of, eligible, k))
    except Exception:  # missing, truncated, foreign or corrupt: rebuild
        return None
    return group_of if ok else None


def build_groups(vocabulary: Vocabulary, k: int, excluded: np.ndarray | None = None, *,
                 cache: bool = True) -> Groups:
    """The CusText mapping function of ``vocabulary`` for K = ``k``: kept in memory per
    (vocabulary, K, excluded rows) and, with ``cache``, in the user cache directory (a file that
    fails any check is rebuilt, never trusted). ``excluded``: boolean mask of rows left unmapped
    (CusText+'s stop words)."""
    n = len(vocabulary)
    k = int(k)
    excluded = np.zeros(n, dtype=bool) if excluded is None else np.asarray(excluded, dtype=bool)
    key = (vocabulary.fingerprint, k, np.packbits(excluded).tobytes())
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    eligible = ~excluded
    if not eligible.any():
        raise ValueError("no word left to group: every vocabulary word is excluded")
    path = groups_cache_path(vocabulary, k, excluded)
    group_of = _load_grouping(path, vocabulary, eligible, k) if cache else None
    if group_of is None:
        group_of, _ = _greedy(vocabulary.vectors, eligible, k)
        if cache:
            try:
                atomic_save_npz(path, group_of=group_of.astype("<i4"), k=np.int64(k),
                                fingerprint=np.str_(vocabulary.fingerprint),
                                version=np.int64(ALGORITHM_VERSION))
            except OSError:
                pass  # a read-only cache only costs time
    sizes = np.bincount(group_of[eligible])
    members = np.full((sizes.size, int(sizes.max())), -1, dtype=np.int64)
    rows = np.flatnonzero(eligible)
    order = rows[np.argsort(group_of[rows], kind="stable")]  # by group, then row
    starts = np.cumsum(sizes) - sizes
    g_sorted = group_of[order]
    members[g_sorted, np.arange(order.size) - starts[g_sorted]] = order
    util = _utilities(vocabulary.vectors.astype(np.float64), group_of, members)
    out = Groups(group_of, members, util)
    if len(_CACHE) >= 4:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = out
    return out


def _check_stopwords(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError("stopwords must be a collection of words")
    words = frozenset(value)
    if not all(isinstance(w, str) for w in words):
        raise TypeError("stopwords must be strings")
    return words


_K = Parameter("k", int, "K, the size of each customised output set (paper: 20)", default=20,
               low=1)
_CACHE_PARAM = Parameter("cache", bool, "load and store the groups in the user cache directory",
                         default=True)


@register
class CusText(WordMechanism):
    """CusText: the exponential mechanism inside customised output sets (Chen et al. 2023).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: ε of the exponential mechanism (utility normalised to [0, 1], Δu = 1).
        k: K, the size of every output set (the last group may be smaller).
        cache: load/store the groups in the user cache directory (they depend only on the
            vocabulary and K).
    """

    name = "custext"
    PARAMETERS = (EPSILON, _K, _CACHE_PARAM)
    reference = _REFERENCE

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 k: int = 20, cache: bool = True, **params: Any) -> None:
        super().__init__(vocabulary, epsilon=epsilon, k=k, cache=cache, **params)
        self._k: int = self._params["k"]
        if self._k > len(self.vocabulary):
            raise ValueError(f"k={self._k} exceeds the vocabulary's {len(self.vocabulary)} words")
        self._groups = build_groups(self.vocabulary, self._k, self._excluded(),
                                    cache=self._params["cache"])
        g = self._groups
        logits = (self.epsilon / 2.0) * np.where(np.isnan(g.utility), -np.inf, g.utility)
        mapped = g.group_of >= 0
        logits[mapped] -= logits[mapped].max(axis=1, keepdims=True)
        # Weights ∝ exp(ε·u/2), largest 1 per row (a common factor does not change the law).
        self._weights = np.exp(logits)
        self._weights[~mapped] = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            self._logp = logits - np.log(self._weights.sum(axis=1, keepdims=True))
        self._logp[~mapped] = -np.inf
        self._levels = halving_levels(g.members.shape[1], _TILE)

    def _excluded(self) -> np.ndarray | None:
        return None

    @property
    def k(self) -> int:
        return self._k

    @property
    def groups(self) -> Groups:
        """The mapping function (read-only arrays)."""
        return self._groups

    # --- the guarantee -----------------------------------------------------------------------
    @property
    def notion(self) -> Notion:
        return Notion.OUTPUT_SET_DP

    def distance(self, a: Any, b: Any) -> np.ndarray:
        """0 for the same word, 1 for two words of one group, ∞ otherwise (float64)."""
        a, b = np.asarray(a), np.asarray(b)
        g = self._groups.group_of
        same = (g[a] == g[b]) & (g[a] >= 0)
        return np.where(a == b, 0.0, np.where(same, 1.0, np.inf))

    def privacy_loss(self, a: Any, b: Any) -> np.ndarray:
        """max_y |ln Pr[M(a)=y] − ln Pr[M(b)=y]| of the exact law, bounded from above: the value
        computed from the float log-laws raised past their rounding error
        (:func:`loss_upper_bound`), and never above ε (the exact loss is at most ε: Δu = 1).
        ∞ across groups (disjoint output sets), 0 for a word and itself."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        d = self.distance(a, b)
        loss = np.where(d == 0, 0.0, np.inf)
        within = np.flatnonzero(np.isfinite(d.ravel()) & (d.ravel() > 0))
        if within.size:
            pa, pb = self._logp[a.ravel()[within]], self._logp[b.ravel()[within]]
            with np.errstate(invalid="ignore"):
                diff = np.abs(pa - pb)
            computed = np.nanmax(np.where(np.isfinite(pa), diff, np.nan), axis=1)
            flat = loss.ravel().copy()
            k = self._groups.members.shape[1]
            flat[within] = np.minimum(loss_upper_bound(computed, self.epsilon, k), self.epsilon)
            loss = flat.reshape(d.shape)
        return loss

    @property
    def metric(self) -> str:
        return (f"0 for the same word, 1 within one CusText group (the words that share an output "
                f"set of K = {self._k} words of {self.vocabulary.name}), ∞ across groups")

    @property
    def input_metric(self) -> str:
        """The substitution metric over the output sets (0 / 1 within a set / ∞ across): the
        sets are a function of the vocabulary, K and the words left out of them."""
        return f"word-output-set:k={self._k}{self._excluded_id()}:{self.vocabulary.fingerprint}"

    def _excluded_id(self) -> str:
        return ""

    @property
    def per_word(self) -> str:
        return ("Pr[M(w)=y] ≤ exp(ε)·Pr[M(w′)=y] for words w, w′ that share an output set and every "
                "output y; words of different groups have disjoint output sets, so an output "
                "reveals its group: no protection across groups")

    @property
    def assumptions(self) -> tuple[str, ...]:
        return (f"output sets from the public vocabulary alone (K = {self._k}, the vocabulary's "
                "row order, Euclidean distance; never from the data); "
                f"{self._groups.members.shape[0]} groups",
                "utility: similarity normalised to [0, 1] over each word's output set (Δu = 1)")

    # --- the law and sampling ----------------------------------------------------------------
    def output_distribution(self, word: str | int, *, log: bool = False) -> np.ndarray:
        """Exact Pr[M(word) = v] for every v (float64; natural logs with ``log=True``)."""
        x = self._word_id(word)
        logp = np.full(len(self.vocabulary), -np.inf)
        g = self._groups.group_of[x]
        if g < 0:
            logp[x] = 0.0
        else:
            row = self._groups.members[g]
            logp[row[row >= 0]] = self._logp[x][row >= 0]
        return logp if log else np.exp(logp)

    def probability_unchanged(self, ids: np.ndarray) -> np.ndarray:
        """Pr[M(w) = w] for every id (exact)."""
        ids = np.asarray(ids, dtype=np.int64)
        col = self._groups.self_column[ids]
        out = np.ones(ids.size)
        mapped = col >= 0
        out[mapped] = np.exp(self._logp[ids[mapped], col[mapped]])
        return out

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.random((ids.size, self._levels))

    def apply(self, ids: np.ndarray, noise: np.ndarray) -> np.ndarray:
        out = np.asarray(ids, dtype=np.int64).copy()
        g = self._groups.group_of[out]
        pos = np.flatnonzero(g >= 0)
        if pos.size:
            uniq, inverse = np.unique(out[pos], return_inverse=True)
            cols = choose_from_weights(self._weights[uniq], inverse, noise[pos], tile=_TILE)
            out[pos] = self._groups.members[g[pos], cols]
        return out


@register
class CusTextPlus(CusText):
    """CusText+: CusText, with stop words kept unchanged (unprotected) (Chen et al. 2023).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: ε of the exponential mechanism (utility normalised to [0, 1], Δu = 1).
        k: K, the size of every output set.
        stopwords: the words kept unchanged (default: textdp's English stop-word list, the one
            of ``keep_stopwords``).
    """

    name = "custext_plus"
    PARAMETERS = (EPSILON, _K, _CACHE_PARAM, Parameter(
        "stopwords", object, "words kept unchanged (default: textdp's English stop words)",
        default=None, nullable=True, check=_check_stopwords))
    #: The pipeline keeps these words before they reach the mechanism, and counts them.
    keeps_stopwords = True

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float, k: int = 20,
                 cache: bool = True, stopwords: Iterable[str] | None = None) -> None:
        super().__init__(vocabulary, epsilon=epsilon, k=k, cache=cache, stopwords=stopwords)

    @property
    def stopwords(self) -> frozenset[str]:
        return self._params["stopwords"] or ENGLISH_STOPWORDS

    def _excluded_id(self) -> str:
        if self._params["stopwords"] is None:
            return ":excluded=english"
        words = "\n".join(sorted(self.stopwords)).encode("utf-8")
        return f":excluded={hashlib.sha256(words).hexdigest()[:16]}"

    def _excluded(self) -> np.ndarray:
        mask = np.zeros(len(self.vocabulary), dtype=bool)
        ids = [self.vocabulary.lookup[w] for w in self.stopwords if w in self.vocabulary.lookup]
        mask[np.asarray(ids, dtype=np.int64)] = True
        return mask

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "k": self._k, "cache": self._params["cache"],
                "stopwords": "textdp English" if self._params["stopwords"] is None
                else f"{len(self.stopwords)} user-supplied"}

    @property
    def protected_outputs(self) -> np.ndarray:
        """Every grouped word; a kept stop word is released unprotected by design."""
        return self._groups.group_of >= 0

    @property
    def per_word(self) -> str:
        return super().per_word + "; stop words are released unchanged (unprotected)"

    @property
    def assumptions(self) -> tuple[str, ...]:
        return (*super().assumptions,
                f"{int((self._groups.group_of < 0).sum())} stop words are kept unchanged and are "
                "not protected (CusText+)")
