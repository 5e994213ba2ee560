"""Choosing ε from worst-case plausible deniability targets (Feyisetan et al., WSDM 2020, §3–4).

The paper picks ε by fixing worst-case targets — no word released unchanged more than half the time
(max_w N_w ≤ 0.5), every word with at least so many plausible outputs (min_w S_w ≥ 50) — and reading
off the ε values whose N_w / S_w histograms meet them (Fig. 2). :func:`calibrate` does that search:

1. Measure N_w and S_w on the same words at every ε of a log-spaced grid, with **common random
   numbers**: every ε sees the same underlying randomness (the same generator state), so the
   curves are smooth in ε. For MVC this makes the Monte-Carlo N_w exactly non-decreasing in ε (the
   noisy point moves along a fixed ray and Voronoi cells are convex).
2. Do not assume monotonicity: N_w usually grows and S_w shrinks with ε, but at very small ε MVC's
   outputs collapse onto a few "hub" words (M(w) tends to a fixed, non-uniform law, §3.1), so the
   support can *shrink* again. We check it on the grid and report every ε interval that meets
   the targets.
3. Refine each boundary between a passing and a failing grid point by bisection in log ε.

S_w is the paper's §4.1 statistic, the number of distinct outputs in ``n_draws`` draws (its exact
expectation for mechanisms with ``output_distribution``), so that mechanisms are compared on one
definition; ``support="mass"`` uses the exact smallest-(1 − η)-mass set instead.

Monte-Carlo estimates carry sampling error, so by default a target counts as met only with a
margin of ``z`` standard errors (Wilson upper bound for N_w; distinct count minus z·√(singletons+1)
for S_w, see :class:`~textdp.evaluation.deniability.Deniability`). Exact laws need no margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from textdp import _random
from textdp._checks import check_rng
from textdp.evaluation._common import jsonable
from textdp.evaluation.deniability import (
    DEFAULT_ETA,
    Deniability,
    check_weights,
    has_exact_law,
    plausible_deniability,
    resolve_words,
)
from textdp.mechanisms.base import WordMechanism

__all__ = ["Calibration", "CalibrationPoint", "calibrate", "default_grid", "DEFAULT_MARGIN"]

#: Standard errors a Monte-Carlo estimate must beat a target by.
DEFAULT_MARGIN = 3.0

Support = Literal["distinct", "mass"]


def default_grid(lo: float = 0.01, hi: float = 100.0, per_decade: int = 4) -> list[float]:
    """Log-spaced ε values from ``lo`` to ``hi``, ``per_decade`` per factor of 10."""
    n = int(round(math.log10(hi / lo) * per_decade)) + 1
    return [float(f"{v:.4g}") for v in np.geomspace(lo, hi, n)]


@dataclass(frozen=True)
class CalibrationPoint:
    """The worst cases at one ε."""

    epsilon: float
    max_n_w: float
    max_n_w_word: str
    max_n_w_bound: float
    min_s_w: float
    min_s_w_word: str
    min_s_w_bound: float
    mean_n_w: float
    mean_s_w: float
    meets: bool
    refined: bool = False
    #: Measured on a user's data (weighted words): the weighted share of the data's privatised
    #: words whose word fails a target at this ε (with the margin); None on a vocabulary sample.
    share_failing: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        if d["share_failing"] is None:  # a vocabulary sample: the fields it always had
            del d["share_failing"]
        return d


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`: the ε intervals meeting the targets and the evidence.

    Attributes:
        ranges: maximal ε intervals ``(low, high)`` meeting the targets; ``None`` at an end means
            the interval reaches past the searched grid on that side.
        epsilon: the recommended ε: the largest ε that meets the targets (least noise, most
            utility), or None when no searched ε does.
        points: every measured ε, sorted.
    """

    mechanism: str
    parameters: dict[str, Any]
    max_n_w: float | None
    min_s_w: float | None
    support: str
    method: str
    n_draws: int
    margin: float
    eta: float
    words: tuple[str, ...]
    grid: tuple[float, ...]
    points: tuple[CalibrationPoint, ...]
    ranges: tuple[tuple[float | None, float | None], ...]
    epsilon: float | None
    monotone: dict[str, bool] = field(default_factory=dict)
    #: One weight per word when measured on a user's data (means are then weighted), else None.
    weights: tuple[float, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism, "parameters": self.parameters,
            "targets": {"max_n_w": self.max_n_w, "min_s_w": self.min_s_w},
            "support": self.support, "method": self.method, "n_draws": self.n_draws,
            "margin_standard_errors": self.margin, "eta": self.eta,
            "n_words": len(self.words), "words": list(self.words), "grid": list(self.grid),
            "epsilon": self.epsilon,
            "ranges": [{"low": lo, "high": hi} for lo, hi in self.ranges],
            "monotone": self.monotone,
            "points": [p.to_dict() for p in self.points],
            **({"weights": list(self.weights)} if self.weights is not None else {}),
        }

    def table(self) -> str:
        """A plain-text table of the measured ε (marks: ✓ meets the targets, · refinement)."""
        weighted = self.weights is not None
        head = f"{'epsilon':>10}  {'max N_w':>8}  {'min S_w':>8}  {'mean N_w':>8}  {'mean S_w':>9}"
        head += f"  {'failing':>7}  ok" if weighted else "  ok"
        lines = [head, "-" * len(head)]
        for p in self.points:
            share = "" if not weighted or p.share_failing is None else (
                # a few rare words failing must not read as none
                f"  {'<0.1%' if 0 < p.share_failing < 0.001 else f'{p.share_failing:.1%}':>7}")
            lines.append(f"{p.epsilon:>10.4g}  {p.max_n_w:>8.3f}  {p.min_s_w:>8.1f}  "
                         f"{p.mean_n_w:>8.3f}  {p.mean_s_w:>9.1f}{share}  "
                         f"{'✓' if p.meets else '✗'}{' ·' if p.refined else ''}")
        return "\n".join(lines)

    def describe(self) -> str:
        """One sentence: the recommended ε and the ranges."""
        targets = []
        if self.max_n_w is not None:
            targets.append(f"max N_w ≤ {self.max_n_w:g}")
        if self.min_s_w is not None:
            targets.append(f"min S_w ≥ {self.min_s_w:g}")
        what = " and ".join(targets)
        if not self.ranges:
            return (f"{self.mechanism}: no ε in [{self.grid[0]:g}, {self.grid[-1]:g}] meets {what} "
                    f"over {len(self.words)} words")
        parts = []
        for lo, hi in self.ranges:
            lo_s = f"< {self.grid[0]:g}" if lo is None else f"{lo:.4g}"
            hi_s = f"> {self.grid[-1]:g}" if hi is None else f"{hi:.4g}"
            parts.append(f"[{lo_s}, {hi_s}]")
        rec = f"; recommended ε = {self.epsilon:.4g} (the largest)" if self.epsilon else ""
        return (f"{self.mechanism}: {what} over {len(self.words)} words holds for ε in "
                f"{' ∪ '.join(parts)}{rec}")

    def text(self, vocabulary: Any) -> str:
        """The result as ``textdp calibrate`` prints it: what was measured, :meth:`table`,
        :meth:`describe`, and a note where N_w or S_w is not monotone in ε (one line each)."""
        lines = [f"{self.mechanism} on {vocabulary.name} ({len(vocabulary):,} words), "
                 f"{len(self.words)} words × {self.n_draws} draws, "
                 f"{self.method.replace('_', ' ')}"
                 + (f", margin {self.margin:g} s.e." if self.method == "monte_carlo" else ""),
                 self.table(), self.describe()]
        if not (self.monotone.get("max_n_w_nondecreasing", True)
                and self.monotone.get("min_s_w_nonincreasing", True)):
            lines.append("note: N_w or S_w is not monotone in ε on this grid (see the table)")
        return "".join(line + "\n" for line in lines)


def _point(d: Deniability, max_n_w: float | None, min_s_w: float | None, support: str,
           margin: float, refined: bool) -> CalibrationPoint:
    s = d.distinct if support == "distinct" else d.s_w
    s = np.asarray(s, dtype=np.float64)
    n_bound = d.n_w_upper(margin)
    s_bound = d.distinct_lower(margin) if support == "distinct" else s
    i, j = int(np.argmax(d.n_w)), int(np.argmin(s))
    failing = np.zeros(len(d.words), dtype=bool)
    if max_n_w is not None:
        failing |= n_bound > max_n_w
    if min_s_w is not None:
        failing |= s_bound < min_s_w
    share = None if d.weights is None else float(np.average(failing, weights=d.weights))
    meets = ((max_n_w is None or float(n_bound.max()) <= max_n_w)
             and (min_s_w is None or float(s_bound.min()) >= min_s_w))
    return CalibrationPoint(
        epsilon=d.epsilon, max_n_w=float(d.n_w[i]), max_n_w_word=d.words[i],
        max_n_w_bound=float(n_bound.max()), min_s_w=float(s[j]), min_s_w_word=d.words[j],
        min_s_w_bound=float(s_bound.min()), mean_n_w=d.mean(d.n_w), mean_s_w=d.mean(s),
        meets=bool(meets), refined=refined, share_failing=share)


def calibrate(factory: Callable[[float], WordMechanism], *, max_n_w: float | None = 0.5,
              min_s_w: float | None = 50, words: Sequence[str] | Sequence[int] | int = 200,
              n_draws: int = 1000, grid: Sequence[float] | None = None, refine_steps: int = 5,
              support: Support = "distinct", method: str = "auto", margin: float | None = None,
              eta: float = DEFAULT_ETA, rng: np.random.Generator | None = None,
              progress: Callable[[int], Any] | None = None,
              weights: Sequence[float] | np.ndarray | None = None) -> Calibration:
    """The ε intervals whose worst-case N_w and S_w meet the targets over the sampled words.

    Args:
        factory: ε → a built mechanism (e.g. ``lambda e: create("mvc", vocab, epsilon=e)``).
        max_n_w: target for max_w N_w (None: no target).
        min_s_w: target for min_w S_w (None: no target).
        words: words, vocabulary rows, or how many to sample uniformly from the vocabulary.
        n_draws: draws per word per ε (Monte Carlo), and the n of the exact distinct count.
        grid: the ε values to search (default :func:`default_grid`, 0.01 … 100).
        refine_steps: bisection steps (in log ε) per boundary.
        support: ``"distinct"`` (the paper's S_w estimator) or ``"mass"`` (exact laws only).
        method: ``"auto"``, ``"exact"`` or ``"monte_carlo"`` (see :func:`plausible_deniability`).
        margin: standard errors a Monte-Carlo estimate must beat a target by (default 3; 0 gives
            the paper's plain point estimates).
        rng: source of all randomness (word sample, and the common random numbers).
        progress: called with 1 after each measured ε (e.g. ``tqdm.update``).
        weights: one weight per word of ``words`` (not with a number to sample): how often each
            occurs in the user's data (:meth:`textdp.evaluation.data.DataWords.select`). Means
            are then weighted and each point states the weighted share of the data's words that
            fail a target; the targets themselves stay worst cases over the words.
    """
    _check_targets(max_n_w, min_s_w, support, refine_steps)
    grid = sorted({float(e) for e in (grid if grid is not None else default_grid())})
    if not grid or grid[0] <= 0 or not all(math.isfinite(e) for e in grid):
        raise ValueError("the ε grid must hold finite values > 0")
    rng = check_rng(rng)
    first = factory(grid[0])
    ids = resolve_words(first.vocabulary, words, rng)
    w = check_weights(weights, ids.size)
    exact = has_exact_law(first) if method == "auto" else method == "exact"
    if support == "mass" and not exact:
        raise ValueError("support='mass' needs an exact output law (a mechanism with "
                         "output_distribution); use support='distinct'")
    if margin is None:
        margin = 0.0 if exact else DEFAULT_MARGIN
    if margin < 0:
        raise ValueError("margin must be ≥ 0")
    crn = int(rng.integers(2**63))  # the common random numbers: one generator state for every ε
    the_method = "exact" if exact else "monte_carlo"
    words_out: tuple[str, ...] = ()
    cache: dict[float, CalibrationPoint] = {}

    def measure(eps: float, refined: bool = False) -> CalibrationPoint:
        nonlocal words_out
        if eps in cache:
            return cache[eps]
        mech = first if eps == grid[0] else factory(eps)
        d = plausible_deniability(mech, ids, n_draws, _random.public_generator(crn),
                                  method=the_method, eta=eta, weights=w)
        words_out = d.words
        p = _point(d, max_n_w, min_s_w, support, margin, refined)
        cache[eps] = p
        if progress is not None:
            progress(1)
        return p

    _refine([measure(e) for e in grid], measure, refine_steps)
    allp = sorted(cache.values(), key=lambda p: p.epsilon)
    passing = [p.epsilon for p in allp if p.meets]
    return Calibration(
        mechanism=first.name, parameters=jsonable({k: v for k, v in first.parameters.items()
                                                     if k != "epsilon"}),
        max_n_w=max_n_w, min_s_w=min_s_w, support=support, method=the_method, n_draws=n_draws,
        margin=float(margin), eta=eta, words=words_out, grid=tuple(grid), points=tuple(allp),
        ranges=_ranges(allp), epsilon=max(passing) if passing else None,
        monotone=_monotone(allp, exact),
        weights=None if w is None else tuple(float(x) for x in w))


def _check_targets(max_n_w: float | None, min_s_w: float | None, support: str,
                   refine_steps: int) -> None:
    if max_n_w is None and min_s_w is None:
        raise ValueError("give at least one target (max_n_w or min_s_w)")
    if max_n_w is not None and not 0 < max_n_w <= 1:
        raise ValueError(f"max_n_w must lie in (0, 1], got {max_n_w!r}")
    if min_s_w is not None and not min_s_w >= 1:
        raise ValueError(f"min_s_w must be ≥ 1, got {min_s_w!r}")
    if support not in ("distinct", "mass"):
        raise ValueError(f"support must be 'distinct' or 'mass', got {support!r}")
    if refine_steps < 0:
        raise ValueError("refine_steps must be ≥ 0")


def _refine(points: list[CalibrationPoint], measure: Callable[..., CalibrationPoint],
            refine_steps: int) -> None:
    """Refine every boundary between grid neighbours that disagree, by bisection in log ε."""
    for a, b in zip(points[:-1], points[1:], strict=True):
        if a.meets == b.meets:
            continue
        lo, hi = a.epsilon, b.epsilon
        for _ in range(refine_steps):
            mid = float(f"{math.sqrt(lo * hi):.6g}")
            if mid in (lo, hi):
                break
            if measure(mid, refined=True).meets == a.meets:
                lo = mid
            else:
                hi = mid


def _ranges(allp: list[CalibrationPoint]) -> tuple[tuple[float | None, float | None], ...]:
    """The maximal runs of passing points as ε intervals (None: open past the grid's end)."""
    ranges: list[tuple[float | None, float | None]] = []
    start: int | None = None
    for i, p in enumerate(allp):
        if p.meets and start is None:
            start = i
        if start is not None and (not p.meets or i == len(allp) - 1):
            end = i if p.meets else i - 1
            lo_e = None if start == 0 else allp[start].epsilon
            hi_e = None if (p.meets and i == len(allp) - 1) else allp[end].epsilon
            ranges.append((lo_e, hi_e))
            start = None
    return tuple(ranges)


def _monotone(allp: list[CalibrationPoint], exact: bool) -> dict[str, bool]:
    """Whether the worst cases move the usual way in ε (Monte Carlo gets a rounding tolerance)."""
    n_seq = [p.max_n_w for p in allp]
    s_seq = [p.min_s_w for p in allp]
    tol_n = 0.0 if exact else 1e-12
    return {
        "max_n_w_nondecreasing": all(b >= a - tol_n for a, b in zip(n_seq, n_seq[1:], strict=False)),
        "min_s_w_nonincreasing": all(b <= a + 1e-9 for a, b in zip(s_seq, s_seq[1:], strict=False)),
    }
