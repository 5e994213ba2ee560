"""Budget allocation over the words of a document: ε_doc split into per-word ε_i.

"Spend Your Budget Wisely" (Meisenbacher et al. 2025) gives each privatised word its own ε_i with
Σ_i ε_i ≤ ε_doc. What the composed guarantee is depends on what the allocation looks at
(docs/allocation.md has the mathematics):

* **Public rules** (``uniform``, ``position``) use only the number n of privatised words of the
  document and each word's position — both released anyway (the same-length caveat). ε_i is then
  a public function of (n, i), and word-by-word composition is exact: two documents of n
  privatised words are indistinguishable up to exp(Σ_i ε_i·d(w_i, w′_i)) ≤ exp(ε_doc·max_i d).
* **The data-dependent rule** (``frequency``) gives rarer words a smaller ε (more protection),
  from their wordfreq Zipf frequency: ε_i is then a function of the *private* word, and
  M_{ε(w)}(w) against M_{ε(w′)}(w′) is not bounded by ε·d(w, w′) in general (for continuous
  noise of different scales the log-ratio is unbounded). It is offered only for mechanisms with
  a finite, exact law (CusText, CusText+), and its guarantee is the worst case over every
  allocation the rule can produce, computed exactly from the laws — never the realised one.
  Each ε_i depends on the word i and n only (no renormalisation across the document), so a word
  that is the same in both documents costs nothing.

Per-word ε is rounded *down* to a level of the grid 2^(j/8) ∪ {floor, ceiling} (so Σ stays
≤ ε_doc), one mechanism is built per level (cached), and each level's tokens are drawn in one
vectorised batch. Σ_i ε_i ≤ ε_doc holds in exact arithmetic, not only in floats: shares ε_doc/n
are rounded down, and every comparison of a sum or product with ε_doc bounds its rounding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from textdp.mechanisms import WordMechanism, create
from textdp.mechanisms.base import MIN_EPSILON
from textdp.mechanisms.word.custext import loss_upper_bound
from textdp.privacy import format_up, round_up_product
from textdp.privacy.measurement import Measurement, allocated
from textdp.text.stopwords import ENGLISH_STOPWORDS

__all__ = ["Allocation", "AllocatedMeasurement", "Allocator", "RULES", "PUBLIC_RULES", "frequency_weights"]

PUBLIC_RULES = ("uniform", "position")
RULES = (*PUBLIC_RULES, "frequency")
#: Levels per doubling of ε: rounding down loses at most 1 − 2^(−1/8) ≈ 8.3% of a word's ε.
LEVELS_PER_DOUBLING = 8
#: The frequency rule: a word at least this frequent (Zipf 6: once per thousand words) or a stop
#: word gets the full uniform share; rarer words get zipf/6 of it, never less than OMEGA_MIN.
ZIPF_FULL = 6.0
OMEGA_MIN = 0.25


@dataclass(frozen=True, slots=True)
class Allocation:
    """A document budget and the rule that splits it over the document's privatised words.

    Attributes:
        rule: ``uniform`` (ε_doc/n each), ``position`` (public weights from 2 at the first
            privatised word down to 1 at the last) or ``frequency`` (data-dependent: rarer
            words get less; CusText and CusText+ only, with a worst-case guarantee).
        epsilon_document: ε_doc, the most any document spends (Σ_i ε_i ≤ ε_doc).
        floor: per-word minimum ε when the budget allows it (n·floor ≤ ε_doc); a document
            too long for it gets ε_doc/n per word and is counted in the report.
        ceiling: per-word maximum ε.
    """

    rule: str
    epsilon_document: float
    floor: float | None = None
    ceiling: float | None = None

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown allocation rule {self.rule!r}; choose one of: "
                             f"{', '.join(RULES)}")
        for name in ("epsilon_document", "floor", "ceiling"):
            value = getattr(self, name)
            if value is None and name != "epsilon_document":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, got {value!r}")
            if not (math.isfinite(value) and value >= MIN_EPSILON):
                raise ValueError(f"{name} must be a finite number ≥ {MIN_EPSILON:g}, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.floor is not None and self.ceiling is not None and self.floor > self.ceiling:
            raise ValueError(f"epsilon floor {self.floor:g} exceeds the ceiling {self.ceiling:g}")

    @property
    def public(self) -> bool:
        return self.rule in PUBLIC_RULES

    @property
    def top(self) -> float:
        """The largest per-word ε the rule can give (a one-word document)."""
        top = self.epsilon_document
        return top if self.ceiling is None else min(top, self.ceiling)


def frequency_weights(words: list[str]) -> np.ndarray:
    """ω(w) ∈ [OMEGA_MIN, 1]: 1 for stop words and words of Zipf ≥ 6, else zipf/6 (wordfreq)."""
    import wordfreq

    zipf = np.fromiter((wordfreq.zipf_frequency(w, "en") for w in words), dtype=np.float64,
                       count=len(words))
    omega = np.clip(zipf / ZIPF_FULL, OMEGA_MIN, 1.0)
    stop = np.fromiter((w in ENGLISH_STOPWORDS for w in words), dtype=bool, count=len(words))
    omega[stop] = 1.0
    return omega


_WEIGHTS: dict[str, np.ndarray] = {}


def _vocabulary_weights(vocabulary: Any) -> np.ndarray:
    """:func:`frequency_weights` of a vocabulary, computed once per vocabulary (48k wordfreq
    look-ups take seconds)."""
    key = vocabulary.fingerprint
    if key not in _WEIGHTS:
        if len(_WEIGHTS) >= 4:
            _WEIGHTS.pop(next(iter(_WEIGHTS)))
        weights = frequency_weights(vocabulary.words)
        weights.flags.writeable = False
        _WEIGHTS[key] = weights
    return _WEIGHTS[key]


def grid_down(eps: np.ndarray) -> np.ndarray:
    """The largest 2^(j/8) ≤ eps (elementwise, eps > 0)."""
    j = np.floor(np.log2(eps) * LEVELS_PER_DOUBLING)
    level = np.exp2(j / LEVELS_PER_DOUBLING)
    return np.where(level > eps, np.exp2((j - 1) / LEVELS_PER_DOUBLING), level)


class _LeveledNoise:
    """Per-token levels and, per level, (token positions, that level's noise)."""

    def __init__(self, levels: np.ndarray, parts: dict[float, tuple[np.ndarray, Any]]) -> None:
        self.levels = levels
        self.parts = parts


class Allocator:
    """An :class:`Allocation` bound to a mechanism: per-token levels, draws and application.

    ``mechanism`` fixes the family and every parameter but ε; one mechanism per level is built
    on first use and kept.
    """

    def __init__(self, allocation: Allocation, mechanism: WordMechanism) -> None:
        if not isinstance(allocation, Allocation):
            raise TypeError("allocation must be a textdp.allocation.Allocation")
        self.allocation = allocation
        self.mechanism = mechanism
        self._by_level: dict[float, WordMechanism] = {}
        self._omega: np.ndarray | None = None
        if not allocation.public:
            if not hasattr(mechanism, "groups"):
                raise ValueError(
                    f"allocation rule {allocation.rule!r} makes ε a function of the private word; "
                    "its worst case is computed only for mechanisms with a finite grouped exact "
                    f"law (custext, custext_plus), not {mechanism.name!r}: for it the per-word "
                    "guarantee would not be metric DP. Use a public rule (uniform, position)")
            self._omega = _vocabulary_weights(mechanism.vocabulary)
        self.below_floor = 0
        self.lengths: set[int] = set()
        self.levels_used: set[float] = set()

    def level_mechanism(self, level: float) -> WordMechanism:
        mech = self._by_level.get(level)
        if mech is None:
            params = {**self.mechanism._params, "epsilon": level}
            mech = create(self.mechanism.name, self.mechanism.vocabulary, **params)
            self._by_level[level] = mech
        return mech

    # --- the rule ----------------------------------------------------------------------------
    def epsilons(self, ids: np.ndarray, docs: np.ndarray, n_docs: int) -> np.ndarray:
        """Per-token ε before rounding (tokens in document order, ``docs`` their documents)."""
        a = self.allocation
        n = np.bincount(docs, minlength=n_docs)
        starts = np.cumsum(n) - n
        n_tok = n[docs].astype(np.float64)
        share = _share_down(a.epsilon_document, np.maximum(n_tok, 1.0))
        floor = 0.0 if a.floor is None else a.floor
        ceiling = np.inf if a.ceiling is None else a.ceiling
        if a.rule == "frequency":
            eps = np.minimum(np.minimum(share, ceiling),
                             np.maximum(floor, share * self._omega[ids]))
        elif a.rule == "uniform":
            # The water fill's answer for equal weights, exactly: ε_doc/n rounded down (so an
            # exact share such as 8/4 = 2 stays on the grid), capped; below the floor only for
            # documents too long for it.
            eps = np.minimum(share, ceiling)
        else:
            position = np.arange(ids.size) - starts[docs]
            omega = (np.ones(ids.size) if a.rule == "uniform"
                     else 2.0 - position / np.maximum(n_tok - 1.0, 1.0))
            eps = _water_fill(omega, docs, n, a.epsilon_document, floor, ceiling)
        short = _exceeds(n, floor, a.epsilon_document) & (n > 0)
        self.below_floor += int(short.sum())
        self.lengths.update(np.unique(n[n > 0]).tolist())
        return eps

    def levels(self, ids: np.ndarray, docs: np.ndarray, n_docs: int) -> np.ndarray:
        """Per-token ε rounded down to a level (grid ∪ {floor, ceiling}), float64."""
        eps = self.epsilons(ids, docs, n_docs)
        return self.round_down(eps)

    def round_down(self, eps: np.ndarray) -> np.ndarray:
        a = self.allocation
        level = grid_down(np.maximum(eps, MIN_EPSILON))
        if a.floor is not None:
            level = np.where(eps >= a.floor, np.maximum(level, a.floor), level)
        if a.ceiling is not None:
            level = np.where(eps >= a.ceiling, a.ceiling, level)
        return level

    # --- drawing and applying, one batch per level --------------------------------------------
    def draw(self, ids: np.ndarray, rng: np.random.Generator,
             levels: np.ndarray) -> _LeveledNoise:
        parts = {}
        for level in np.unique(levels).tolist():  # ascending: a fixed order for seeded runs
            pos = np.flatnonzero(levels == level)
            parts[level] = (pos, self.level_mechanism(level).draw(ids[pos], rng))
        self.levels_used.update(parts)
        return _LeveledNoise(levels, parts)

    def concat_noise(self, parts: list[_LeveledNoise]) -> _LeveledNoise:
        offset, pieces = 0, {}
        for p in parts:
            for level, (pos, noise) in p.parts.items():
                pieces.setdefault(level, []).append((pos + offset, noise))
            offset += p.levels.size
        merged = {}
        for level, items in pieces.items():
            mech = self.level_mechanism(level)
            merged[level] = (np.concatenate([i[0] for i in items]),
                             mech.concat_noise([i[1] for i in items]))
        levels = np.concatenate([p.levels for p in parts]) if parts else np.empty(0)
        return _LeveledNoise(levels, merged)

    def apply(self, ids: np.ndarray, noise: _LeveledNoise) -> np.ndarray:
        out = np.asarray(ids, dtype=np.int64).copy()
        for level, (pos, level_noise) in noise.parts.items():
            out[pos] = self.level_mechanism(level).apply(out[pos], level_noise)
        return out

    # --- the guarantee -----------------------------------------------------------------------
    @property
    def measurement(self) -> Measurement:
        """The allocated run as a measurement of its own (:func:`textdp.privacy.measurement.
        allocated`): per word, in the mechanism's metric, ε_top·d; the ledger records the same."""
        a = self.allocation
        return allocated(self.mechanism.measurement, epsilon_document=a.epsilon_document,
                         epsilon_top=a.top, public=a.public)

    def worst_case_per_word(self, n: int) -> float:
        """Frequency rule, documents of n privatised words: max over words a, b that share an
        output set and outputs y of |ln Pr[M_{ε(n,a)}(a)=y] − ln Pr[M_{ε(n,b)}(b)=y]|, bounded
        from above: computed from the float log-laws and raised past their rounding error
        (:func:`textdp.mechanisms.word.custext.loss_upper_bound`), never below the exact value."""
        groups = self.mechanism.groups
        mapped = np.flatnonzero(groups.group_of >= 0)
        a = self.allocation
        share = float(_share_down(a.epsilon_document, float(n)))
        floor = 0.0 if a.floor is None else a.floor
        ceiling = np.inf if a.ceiling is None else a.ceiling
        eps = np.minimum(min(share, ceiling), np.maximum(floor, share * self._omega[mapped]))
        level = self.round_down(eps)
        logp = np.empty((mapped.size, groups.members.shape[1]))
        for lv in np.unique(level).tolist():
            rows = level == lv
            logp[rows] = self.level_mechanism(lv)._logp[mapped[rows]]
        order = np.argsort(groups.group_of[mapped], kind="stable")
        g_sorted = groups.group_of[mapped][order]
        starts = np.flatnonzero(np.r_[True, np.diff(g_sorted) > 0])
        lp = np.where(np.isfinite(logp[order]), logp[order], np.nan)
        hi = np.maximum.reduceat(np.nan_to_num(lp, nan=-np.inf), starts, axis=0)
        lo = np.minimum.reduceat(np.nan_to_num(lp, nan=np.inf), starts, axis=0)
        with np.errstate(invalid="ignore"):
            spread = hi - lo
        spread = spread[np.isfinite(spread)]
        if not spread.size:
            return 0.0
        return float(loss_upper_bound(spread.max(), float(level.max()), groups.members.shape[1]))

    def for_run(self, tallies: Any) -> AllocatedMeasurement:
        """The composed measurement of a run that counted ``tallies``
        (:class:`textdp.tallies.Tallies`): what the report states for it (its privacy map is
        :attr:`measurement`)."""
        return AllocatedMeasurement(self, tallies)

    def describe(self, tallies: Any) -> dict[str, Any]:
        """The report's ``allocation`` section for a run that counted ``tallies`` (the documents
        below the floor, the lengths and the levels it saw)."""
        a = self.allocation
        out: dict[str, Any] = {
            "rule": a.rule, "public": a.public, "epsilon_document": a.epsilon_document,
            "epsilon_floor": a.floor, "epsilon_ceiling": a.ceiling,
            "rounding": (f"per-word ε rounded down to the grid 2^(j/{LEVELS_PER_DOUBLING}) ∪ "
                         "{floor, ceiling}, so Σ_i ε_i ≤ ε_doc holds after rounding"),
            "documents_below_floor": tallies.below_floor,
        }
        if a.public:
            out["depends_on"] = ("the number n of privatised words of the document and each "
                                 "word's position (both released); never on the words")
            out["per_document"] = (
                f"two documents of the same number n of privatised words w_1..w_n and "
                f"w'_1..w'_n: Pr[M(x)=y] ≤ exp(Σ_i ε_i·d(w_i, w'_i))·Pr[M(x')=y] with "
                f"Σ_i ε_i ≤ ε_doc = {a.epsilon_document:g}, so ≤ exp(ε_doc·max_i d(w_i, w'_i)); "
                "exact composition (ε_i is a public function of n and i)")
            out["levels_used"] = sorted(tallies.levels_used)
            return out
        worst = {n: self.worst_case_per_word(n) for n in sorted(tallies.lengths)}
        per_word = max(worst.values(), default=0.0)
        per_doc = max((round_up_product(float(n), w) for n, w in worst.items()), default=0.0)
        out["depends_on"] = ("the private words themselves (wordfreq Zipf frequency and stop-word "
                             "membership): data-dependent; the guarantee below is the worst case "
                             "over every allocation the rule can produce, never the realised one")
        out["worst_case_per_word"] = per_word
        out["worst_case_per_document"] = per_doc
        out["per_document"] = (
            f"two documents of n privatised words whose words pairwise share output sets: "
            f"ln-ratio ≤ Σ over the positions where they differ of L*(n), L*(n) = the exact worst "
            f"case over words of one group, outputs and the levels the rule gives at n; over this "
            f"run's lengths L* ≤ {format_up(per_word)} per word and n·L*(n) ≤ {format_up(per_doc)} "
            "per document "
            "(compare ε_doc = {:.6g} of a public rule); no protection across groups".format(
                a.epsilon_document))
        return out


def _share_down(budget: float, n: np.ndarray | float) -> np.ndarray:
    """budget/n rounded down (elementwise, n ≥ 1): n times it is at most ``budget`` exactly."""
    share = budget / np.asarray(n, dtype=np.float64)
    return np.where(_exceeds(n, share, budget), np.nextafter(share, 0.0), share)


def _exceeds(n: np.ndarray | float, value: np.ndarray | float, budget: float) -> np.ndarray:
    """Whether n·value > budget in exact arithmetic (elementwise)."""
    return np.asarray(round_up_product(np.asarray(n, dtype=np.float64), value)) > budget


def _water_fill(omega: np.ndarray, docs: np.ndarray, n: np.ndarray, budget: float, floor: float,
                ceiling: float) -> np.ndarray:
    """ε_i = clip(λ_d·ω_i, floor, ceiling) with the largest λ_d such that Σ_i ε_i ≤ budget per
    document d (bisection, vectorised over documents); ε_doc/n (rounded down) where
    n·floor > budget. Every "≤ budget" holds for the exact sum: a float sum of m terms ≥ 0 is
    at most (m − 1)·2⁻⁵³ below it, so the test compares the float sum raised by 2(m + 1)·2⁻⁵³."""
    n_docs = n.size
    lo = np.zeros(n_docs)
    wmin = np.full(n_docs, np.inf)
    np.minimum.at(wmin, docs, omega)
    hi = np.where(np.isfinite(wmin), budget / np.where(np.isfinite(wmin), wmin, 1.0), 0.0)
    for _ in range(100):  # λ to float precision
        mid = 0.5 * (lo + hi)
        total = np.bincount(docs, np.clip(mid[docs] * omega, floor, ceiling), minlength=n_docs)
        ok = total + total * ((n + 1) * 2.0**-52) <= budget
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    eps = np.clip(lo[docs] * omega, floor, ceiling)
    all_ceiling = ~_exceeds(n, ceiling, budget)
    eps = np.where(all_ceiling[docs], ceiling, eps)
    short = _exceeds(n, floor, budget)
    return np.where(short[docs], _share_down(budget, np.maximum(n[docs], 1)), eps)


class AllocatedMeasurement:
    """Budget allocation as one composed measurement: the per-word mechanisms at their levels,
    composed over a document (exactly for a public rule, by the worst case for the frequency
    rule). The report's builder (:func:`textdp.privacy.report.word_report`) asks it for the
    guarantee, the parameters, the unchanged fraction and the warnings of the run that counted
    ``tallies``; nothing here edits a report."""

    def __init__(self, allocator: Allocator, tallies: Any) -> None:
        self.allocator = allocator
        self.tallies = tallies
        self.section = allocator.describe(tallies)

    @property
    def epsilon(self) -> float:
        """The largest per-word ε any word can get."""
        return self.allocator.allocation.top

    def guarantee(self, per_word: Mapping[str, Any]) -> dict[str, Any]:
        """The composed guarantee, from the guarantee of the mechanism at the top level."""
        a = self.allocator.allocation
        out = {**per_word, "epsilon": a.top, "per_document": self.section["per_document"],
               "assumptions": [*per_word["assumptions"],
                               f"budget allocation {a.rule!r} "
                               f"({'public' if a.public else 'data-dependent'}); "
                               f"per-word ε ≤ {a.top:g}"]}
        if not a.public:
            out["per_word"] = (f"the per-word ε depends on the private word; worst case over "
                               f"every allocation the rule can produce: ln-ratio ≤ "
                               f"{format_up(self.section['worst_case_per_word'])} for words "
                               "that share an output set; no protection across groups")
        return out

    def parameters(self, per_word: Mapping[str, Any]) -> dict[str, Any]:
        a = self.allocator.allocation
        return {**per_word, "epsilon": None, "allocation": a.rule,
                "epsilon_document": a.epsilon_document, "epsilon_floor": a.floor,
                "epsilon_ceiling": a.ceiling}

    def deniability(self, estimated: Mapping[str, Any], by_policy: Mapping[str, int]
                    ) -> dict[str, Any]:
        """The unchanged fraction observed over the run (the per-level laws differ, so the
        single-mechanism estimate does not apply); the estimate when nothing was privatised."""
        from textdp.privacy.unchanged import wilson_interval

        privatized, unchanged = by_policy["privatized"], by_policy["privatized_unchanged"]
        if not privatized:
            return dict(estimated)
        low, high = wilson_interval(unchanged, privatized)
        return {**estimated, "expected_unchanged_fraction": unchanged / privatized,
                "method": "observed", "interval": [low, high],
                "interval_method": "Wilson score, 95%", "draws": 0}

    def warnings(self) -> list[str]:
        below = self.tallies.below_floor
        if not below:
            return []
        return [f"{below} document(s) too long for the per-word floor "
                f"{self.allocator.allocation.floor:g}: their words got ε_doc/n < floor"]


def resolve_allocation(allocation: str | Allocation | None, epsilon: float | None,
                       epsilon_document: float | None, epsilon_floor: float | None,
                       epsilon_ceiling: float | None, mechanism: Any,
                       ) -> tuple[Allocation | None, float | None]:
    """What ``privatize(allocation=..., epsilon_document=..., ...)`` means: (the allocation or
    None, the ε to build the mechanism with). With a rule name, ``epsilon_document`` replaces
    ``epsilon``; the mechanism is then built at the top level, and ε is set per level."""
    if isinstance(allocation, str):
        if epsilon is not None:
            raise ValueError("with allocation, give epsilon_document instead of epsilon")
        if epsilon_document is None:
            raise ValueError("allocation needs epsilon_document")
        allocation = Allocation(allocation, epsilon_document, epsilon_floor, epsilon_ceiling)
    elif allocation is None and (epsilon_document, epsilon_floor, epsilon_ceiling) != (None,) * 3:
        raise ValueError("epsilon_document, epsilon_floor and epsilon_ceiling need allocation=")
    if allocation is not None and epsilon is None and not isinstance(mechanism, WordMechanism):
        epsilon = allocation.top  # the parameters every level shares; ε is set per level
    return allocation, epsilon


def allocation_params(params: dict[str, Any], epsilon: float | None,
                      mechanism: Any) -> tuple[dict[str, Any], float | None]:
    """For fronts that take :func:`textdp.privatize`'s keywords as ``**params`` (Ray, datasets):
    the params with ``allocation``, ``epsilon_document``, ``epsilon_floor`` and
    ``epsilon_ceiling`` replaced by the resolved :class:`Allocation` under ``allocation`` (a
    Privatizer option that holds no generator, so it may be shipped to workers), and the ε to
    build the mechanism with (:func:`resolve_allocation`)."""
    params = dict(params)
    allocation = params.pop("allocation", None)
    document, floor, ceiling = (params.pop(k, None) for k in
                                ("epsilon_document", "epsilon_floor", "epsilon_ceiling"))
    allocation, epsilon = resolve_allocation(allocation, epsilon, document, floor, ceiling,
                                             mechanism)
    if allocation is not None:
        params["allocation"] = allocation
    return params, epsilon
