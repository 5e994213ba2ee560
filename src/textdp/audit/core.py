"""``audit(mechanism, pairs=..., draws=...)``: certified lower bounds on a word mechanism's ε.

For each word pair (a, b): ``draws`` outputs from each word through the mechanism's public
path (:meth:`~textdp.mechanisms.base.WordMechanism.privatize_ids`, so any subclass works), split
into halves. On the first half an event E is chosen in each direction (a→b and b→a): the output
word, or set of words, with the largest plug-in log-ratio. On the fresh second half
Clopper–Pearson bounds give L = ln((p_lo(M(a) ∈ E) − δ) / p_hi(M(b) ∈ E)), a lower confidence
bound on the ε the pair spends, with a Bonferroni split of ``alpha`` over pairs × directions, so
that all the bounds hold together with probability ≥ 1 − alpha. The claim is the mechanism's own
``privacy_loss(a, b)`` (its privacy map at the pair's distance). L > claim certifies a violation;
otherwise there is no evidence of one — sampling cannot prove a mechanism private.

The recipe is the one textdp's own tests use (TESTING.md §4), after the black-box audits of
DP-Sniper (Bichsel et al., S&P 2021) and StatDP (Ding et al., CCS 2018).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from textdp import _random
from textdp.audit._draws import DEFAULT_CHUNK, count_outputs, dense
from textdp.audit._pairs import closest_pairs, given_pairs, random_pairs
from textdp.audit._render import NOTE  # the rendering's wording: the report states it too
from textdp.audit._stats import certify, choose_event
from textdp.mechanisms.base import WordMechanism

__all__ = ["audit", "AuditResult", "PairAudit", "DirectionAudit", "VIOLATION", "NO_EVIDENCE",
           "NOTE"]

VIOLATION = "violation certified"
NO_EVIDENCE = "no evidence"
_SHOWN_EVENT_WORDS = 5


@dataclass(frozen=True)
class DirectionAudit:
    """One direction of a pair: the event chosen on the first half and its certified bound."""

    source: str
    target: str
    event_size: int
    event_words: tuple[str, ...]   # the first few words of the event, best first
    k_source: int                  # second-half draws from `source` that fell in the event
    k_target: int
    lower_bound: float


@dataclass(frozen=True)
class PairAudit:
    a: int
    b: int
    word_a: str
    word_b: str
    distance: float
    claim: float               # privacy_loss(a, b): ε the mechanism claims for this pair
    delta: float               # the privacy map's δ at that distance (0 for word mechanisms)
    lower_bound: float         # the larger of the two directions' certified bounds
    directions: tuple[DirectionAudit, DirectionAudit]

    @property
    def violation(self) -> bool:
        return self.lower_bound > self.claim

    @property
    def verdict(self) -> str:
        return VIOLATION if self.violation else NO_EVIDENCE

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "word_a": self.word_a, "word_b": self.word_b,
                "distance": self.distance, "claim": _num(self.claim), "delta": self.delta,
                "lower_bound": _num(self.lower_bound), "verdict": self.verdict,
                "directions": [{**d.__dict__, "event_words": list(d.event_words),
                                "lower_bound": _num(d.lower_bound)} for d in self.directions]}


def _num(x: float) -> float | str:
    """JSON has no infinities: ±inf become the strings "inf" / "-inf"."""
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@dataclass(frozen=True)
class AuditResult:
    mechanism: str
    parameters: dict[str, Any]
    vocabulary: str
    pairs_method: str
    draws: int
    alpha: float
    alpha_per_test: float      # alpha / (2 · number of pairs): Bonferroni over pairs × directions
    seed: int | None
    seconds: float
    draws_per_second: float
    pairs: tuple[PairAudit, ...]

    @property
    def violations(self) -> tuple[PairAudit, ...]:
        return tuple(p for p in self.pairs if p.violation)

    @property
    def verdict(self) -> str:
        return VIOLATION if self.violations else NO_EVIDENCE

    def summary(self) -> str:
        from textdp.audit._render import summary

        return summary(self)

    def markdown(self) -> str:
        from textdp.audit._render import markdown

        return markdown(self)

    def to_dict(self) -> dict[str, Any]:
        from textdp.evaluation._common import jsonable

        head = {k: v for k, v in self.__dict__.items() if k != "pairs"}
        return {"schema": "textdp.audit/1", **jsonable(head), "verdict": self.verdict,
                "violations": len(self.violations), "note": NOTE,
                "pairs": [p.to_dict() for p in self.pairs]}

    def plot(self, path: str | Path) -> Path:
        from textdp.audit._render import plot

        return plot(self.to_dict(), path)


def _resolve_pairs(mechanism: WordMechanism, pairs: Any, n_pairs: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, str]:
    if isinstance(pairs, str):
        if pairs == "closest":
            return closest_pairs(mechanism, n_pairs), "closest"
        if pairs == "random":
            return random_pairs(mechanism, n_pairs, rng), "random"
        raise ValueError(f"pairs must be 'closest', 'random' or word pairs, got {pairs!r}")
    return given_pairs(mechanism, pairs), "given"


def _check(mechanism: Any, draws: Any, alpha: Any, n_pairs: Any, chunk: Any) -> None:
    if not isinstance(mechanism, WordMechanism):
        raise TypeError(f"audit() takes a textdp WordMechanism, got {type(mechanism).__name__}")
    for name, value, low in (("draws", draws, 2), ("n_pairs", n_pairs, 1), ("chunk", chunk, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        if value < low:
            raise ValueError(f"{name} must be at least {low}, got {value}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")


def _direction(mech: WordMechanism, counts: dict, src: int, dst: int, halves: tuple[int, int],
               a: float, delta: float, allowed: np.ndarray | None) -> DirectionAudit:
    v = len(mech.vocabulary)
    first = [dense(counts[w][0], v) for w in (src, dst)]
    event = choose_event(first[0], first[1], halves[0], a, delta, allowed)
    second = [dense(counts[w][1], v) for w in (src, dst)]
    bound, k_src, k_dst = certify(event, second[0], second[1], halves[1], a, delta)
    words = mech.vocabulary.words
    return DirectionAudit(words[src], words[dst], int(event.size),
                          tuple(words[i] for i in event[:_SHOWN_EVENT_WORDS].tolist()),
                          k_src, k_dst, bound)


def audit(mechanism: WordMechanism, pairs: Literal["closest", "random"] | Iterable[Any] = "closest",
          *, draws: int = 100_000, alpha: float = 0.05, seed: int | None = None,
          n_pairs: int = 10, chunk: int = DEFAULT_CHUNK,
          progress: Callable[[int, int], None] | None = None) -> AuditResult:
    """Certified lower bounds on the ε ``mechanism`` spends on word pairs, against its claims.

    Args:
        mechanism: any :class:`~textdp.mechanisms.base.WordMechanism`, a user's subclass too.
        pairs: "closest" (the ``n_pairs`` pairs with the smallest claim: the tightest),
            "random" (``n_pairs`` uniformly random pairs), or word pairs — an iterable of
            (a, b), words or vocabulary ids.
        draws: outputs drawn from each word (half choose the events, half certify).
        alpha: the chance that any of the reported bounds is wrong (Bonferroni over pairs and
            both directions of each).
        seed: None (the secure random source) or an integer for a reproducible audit.
        chunk: draws per call of the mechanism (memory vs. speed).
        progress: called as ``progress(done, total)`` draws after every chunk.

    Returns:
        :class:`AuditResult`: per pair the words, distance, claim, certified lower bound and
        verdict ("violation certified" when the bound exceeds the claim, else "no evidence").
    """
    _check(mechanism, draws, alpha, n_pairs, chunk)
    t0 = time.perf_counter()
    pick = _random.public_generator(seed, (0,)) if seed is not None else _random.secure_generator()
    ids, method = _resolve_pairs(mechanism, pairs, int(n_pairs), pick)
    rng = _random.public_generator(seed, (1,)) if seed is not None else _random.secure_generator()
    t_draw = time.perf_counter()
    counts = count_outputs(mechanism, ids.ravel(), int(draws), rng, chunk=int(chunk),
                           progress=progress)
    t_draw = time.perf_counter() - t_draw
    a_test = alpha / (2 * len(ids))
    halves = (int(draws) // 2, int(draws) - int(draws) // 2)
    allowed = mechanism.protected_outputs
    claims = np.asarray(mechanism.privacy_loss(ids[:, 0], ids[:, 1]), dtype=np.float64)
    dist = np.asarray(mechanism.distance(ids[:, 0], ids[:, 1]), dtype=np.float64)
    results = []
    for (x, y), claim, d in zip(ids.tolist(), claims.tolist(), dist.tolist(), strict=True):
        delta = float(np.max(mechanism.privacy_map(d).delta))
        dirs = (_direction(mechanism, counts, x, y, halves, a_test, delta, allowed),
                _direction(mechanism, counts, y, x, halves, a_test, delta, allowed))
        words = mechanism.vocabulary.words
        results.append(PairAudit(x, y, words[x], words[y], d, claim, delta,
                                 max(dirs[0].lower_bound, dirs[1].lower_bound), dirs))
    n_drawn = len(counts) * int(draws)
    return AuditResult(getattr(mechanism, "name", type(mechanism).__name__),
                       dict(mechanism.parameters), mechanism.vocabulary.name, method, int(draws),
                       float(alpha), a_test, seed, time.perf_counter() - t0,
                       n_drawn / max(t_draw, 1e-9), tuple(results))
