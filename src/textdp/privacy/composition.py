"""Sequential composition of recorded guarantees: what several releases of one input spend.

Pure arithmetic, no files: the ledger (:mod:`textdp.ledger`) reads its entries and hands each
release's guarantee here as a :class:`Spend`. Sequential composition (Dwork & Roth 2014,
Theorem 3.16; for metric DP Chatzikokolakis et al. 2013, the same argument with ε·d in place of
ε) says that releasing the same input k times, with fresh randomness each time, spends the sum of
the k budgets — but only when they are budgets of the same kind:

* **metric DP per word** (MVC, Mahalanobis, Vickrey, Gumbel, TEM, 1-Diffractor): ε's add for
  the *same* metric — the same metric in words *and* the same vocabulary (or word lists), by
  fingerprint: Σ_i ε_i·d(w, w′) = (Σ_i ε_i)·d(w, w′). Two different metrics (Euclidean vs.
  Mahalanobis, GloVe vs. another vocabulary, 1-Diffractor's list positions) bound losses in
  different units: they are listed side by side, never summed.
* **Lipschitz privacy** of embeddings (PrivEmb, LaplaceVector): (ε, δ) add, (Σε_i, Σδ_i),
  for the same metric on the same input space (the encoder, or the raw vectors); pure and
  approximate Lipschitz privacy compose together (a pure one has δ = 0).
* **ε-SentDP** (DeepCandidate, Truncation): ε's add, for the same sentence splitter (which
  decides what "one sentence" is).
* **(ε, δ)-DP at the dataset level** (DP synthetic text, :mod:`textdp.synthesis`): releases of
  the same input with the same unit (document, or person) compose by the accountant that
  accounted each of them — the PLD accountant of ``dp-accounting`` over every release's recorded
  Gaussian events (:mod:`textdp.privacy.accounting`), ε at δ = Σ δ_i — and never above the sum
  of their ε's (basic composition, (Σε_i, Σδ_i), which also stands in when a release recorded
  no events or the accountant is not installed). Kept apart from the per-word families.
* **no composable statement**: a utility-optimised guarantee (SanText+: non-sensitive words
  are released unprotected, so repeated releases reveal them without bound), a release with no
  formal guarantee (notion "none", ε = ∞) or an unknown notion.

A guarantee that holds only under assumptions textdp could not verify (``verified`` False with a
real notion, e.g. PrivEmb's assumed input domain) composes under the same assumptions: its group
lists it under ``unverified``. These are listed as such; the cumulative
  guarantee of their input is stated as not bounded.

Groups are keyed on the stable ids of :mod:`textdp.privacy.measurement` (the notion's family and
the input metric's id: ``word-euclidean:<vocabulary fingerprint>``, ``vector-l2@encoder:…``, …),
never on the prose of the metric, so rewording a sentence cannot split one budget into two. A spend
without an id (a ledger line written before ids were recorded, whose metric could not be derived)
is keyed on an id of its prose, as it was: it composes with the spends of the same prose only.

Sums are exact: the floats are added as rationals and the total rounded up to the next float,
never down (as the privacy maps round).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from textdp.privacy import Notion, format_up, round_up_sum
from textdp.privacy.measurement import NOTION_IDS, _prose_id, notion_from_id

__all__ = ["Composition", "Group", "Spend", "compose", "compose_reports", "family_of", "sum_up"]

#: Notions (by stable id) whose ε's add over the same metric, and how the group is named in a
#: report: the prose is rendered from the id.
_FAMILIES: dict[str, str] = {
    "metric-dp": "metric DP per word",
    "pure-lipschitz": "Lipschitz privacy",
    "approx-lipschitz": "Lipschitz privacy",
    "sentence-dp": "ε-SentDP",
    "output-set-dp": "output-set DP per word",
    "local-dp": "pure ε-DP per document",
    "approx-dp": "(ε, δ)-DP, dataset level",
}
_RULES = {
    "metric DP per word": "sequential composition, same metric and vocabulary: ε's add "
                          "(per unit of the metric)",
    "Lipschitz privacy": "sequential composition, same metric and input space: (ε, δ) add",
    "ε-SentDP": "sequential composition, same sentence splitter: ε's add",
    "output-set DP per word": "sequential composition, same output sets (vocabulary and K): ε's "
                              "add between words of one set; no protection across sets in any "
                              "release",
    "pure ε-DP per document": "sequential composition: ε's add (any two documents)",
    "(ε, δ)-DP, dataset level": "adaptive composition by the PLD accountant of dp-accounting over "
                                "every release's Gaussian events, ε at δ = Σδ_i, never above "
                                "Σε_i (same input, same unit)",
}
_NOT_COMPOSABLE = {
    "utility-optimised-metric-dp":
        "utility-optimised: non-sensitive words are released unprotected, so repeated releases "
        "reveal them without bound; no cumulative ε can be stated",
    "none": "no formal guarantee for these parameters (ε = ∞)",
}


def sum_up(values: Iterable[float]) -> float:
    """The exact sum of ``values`` (floats ≥ 0 or ∞), rounded up to a float (never down)."""
    values = [float(v) for v in values]
    if any(math.isnan(v) for v in values):
        raise ValueError("cannot compose a NaN budget")
    if any(math.isinf(v) for v in values):
        return math.inf
    return round_up_sum(values)


@dataclass(frozen=True, slots=True)
class Spend:
    """One release's guarantee, as the ledger recorded it.

    Attributes:
        release: the release's id (what a report names).
        notion: the :class:`~textdp.privacy.Notion` (its value; an unknown string is kept and
            treated as not composable).
        epsilon: ε of the guarantee (per unit of ``metric`` for metric DP).
        delta: δ (0 for pure guarantees).
        metric: the metric in words (the guarantee's ``metric``).
        space: what else fixes the metric: the vocabulary's fingerprint (word mechanisms), the
            encoder (embeddings of texts), the sentence splitter (SentDP); "" when none.
        verified: False when the guarantee rests on assumptions textdp could not verify (e.g.
            PrivEmb's input domain): it still composes under them, and the group says so.
        metric_id: the stable id of the input metric, input space included
            (:mod:`textdp.privacy.measurement`): what groups are keyed on. "" when unknown: then an
            id of the prose (``metric`` and ``space``) stands in for it.
    """

    release: str
    notion: str
    epsilon: float
    delta: float = 0.0
    metric: str = ""
    space: str = ""
    verified: bool = True
    metric_id: str = ""
    #: The release's accounting events (:mod:`textdp.privacy.accounting`), for the families an
    #: accountant composes; () when none were recorded.
    events: tuple[Any, ...] = ()

    @property
    def key(self) -> str:
        """The metric id this spend composes on (an id of its prose when it has none)."""
        return self.metric_id or _prose_id(self.metric, self.space)

    @classmethod
    def from_guarantee(cls, guarantee: Mapping[str, Any], *, release: str = "",
                       space: str = "", metric_id: str = "", notion: str = "",
                       events: tuple[Any, ...] = ()) -> Spend:
        """From a guarantee dict (``Guarantee.to_dict()``, or a report's ``guarantee``);
        ``notion`` (a stable id) replaces the guarantee's prose notion when given."""
        eps = guarantee.get("epsilon", math.inf)
        return cls(release=release, notion=notion or str(guarantee.get("notion", "")),
                   epsilon=_epsilon(eps),
                   delta=float(guarantee.get("delta") or 0.0),
                   metric=str(guarantee.get("metric") or ""), space=space,
                   verified=bool(guarantee.get("verified", True)), metric_id=metric_id,
                   events=tuple(events))


def _epsilon(value: Any) -> float:
    """A recorded ε as a float: "inf" or None is ∞, and so is an integer too large for a float
    (a ledger line may hold ε = 10**400: unbounded, the safe side, never an OverflowError)."""
    if value in ("inf", "Infinity", None):
        return math.inf
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _notion(value: str) -> Notion:
    """The notion of a spend: a stable id (``metric-dp``) or the prose a report prints."""
    if value in _NOTION_ID_SET:
        return notion_from_id(value)
    return Notion(value)


_NOTION_ID_SET = frozenset(NOTION_IDS.values())


def family_of(spend: Spend) -> str | None:
    """The composition family of a spend, or None when it has no composable statement."""
    try:
        notion = NOTION_IDS[_notion(spend.notion)]
    except ValueError:
        return None
    if not math.isfinite(spend.epsilon) or notion not in _FAMILIES:
        return None
    return _FAMILIES[notion]


@dataclass(frozen=True, slots=True)
class Group:
    """Releases whose budgets add: one family, one metric, one space."""

    family: str
    metric: str
    space: str
    releases: tuple[str, ...]
    epsilon: float
    delta: float
    #: The releases whose guarantee rests on unverified assumptions (the total does too).
    unverified: tuple[str, ...] = ()
    #: The stable id of the metric the group is keyed on (``prose:…`` for old unmapped lines).
    metric_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "metric": self.metric, "metric_id": self.metric_id,
                "space": self.space,
                "releases": list(self.releases), "count": len(self.releases),
                "epsilon": self.epsilon, "delta": self.delta, "rule": _RULES[self.family],
                "unverified": list(self.unverified)}


@dataclass(frozen=True, slots=True)
class Composition:
    """The cumulative guarantee of several releases of one input.

    ``groups`` hold the releases whose budgets add, one per (family, metric, space), listed side
    by side; ``not_composable`` the releases with no composable statement, with the reason.
    """

    groups: tuple[Group, ...]
    not_composable: tuple[dict[str, str], ...] = field(default_factory=tuple)
    #: The exact sum of every composable release's ε, rounded up once (:attr:`total`); None:
    #: summed from the groups' (rounded) totals.
    spent: float | None = None

    @property
    def bounded(self) -> bool:
        """True when every release composes (else the total is not bounded)."""
        return not self.not_composable

    @property
    def comparable(self) -> bool:
        """True when one number states the whole: a single group and nothing unbounded."""
        return self.bounded and len(self.groups) <= 1

    @property
    def total(self) -> float:
        """The budget spent: every group's ε added, each in its own units (exact, rounded up);
        ∞ when a release does not compose.

        Across metrics and notions this sum is no guarantee in any one unit; it is what a budget
        is compared with, so that releases in different metrics cannot each spend the whole
        budget. It bounds the whole-document guarantee: Σ_g ε_g·s_g ≤ total·max_g s_g, s_g a
        document's largest distance in group g's metric (docs/accounting.md, "Per document").
        """
        if not self.bounded:
            return math.inf
        if self.spent is not None:
            return self.spent
        return sum_up(g.epsilon for g in self.groups)

    def over_budget(self, budget: float) -> list[str]:
        """Why the cumulative ε exceeds ``budget``; [] if it does not.

        Each group is compared in its own units (per unit of the metric for metric DP), and the
        groups together by :attr:`total`: budget fractions add across metrics and notions. A
        release without a composable statement makes the total unbounded, which exceeds any
        budget.
        """
        reasons = [f"release {n['release']}: {n['why']}" for n in self.not_composable]
        reasons += [f"{g.family} ({g.metric or 'no metric'}): cumulative ε = "
                    f"{format_up(g.epsilon)} > budget {budget:g}"
                    for g in self.groups if g.epsilon > budget]
        if not reasons and len(self.groups) > 1 and self.total > budget:
            reasons.append(f"across {len(self.groups)} metrics and notions: ε's added, each in "
                           f"its own units, = {format_up(self.total)} > budget {budget:g} (a "
                           "budget is shared across metrics, never spent in full in each)")
        return reasons

    def summary(self) -> str:
        """One line: each group's total, then the releases that do not compose."""
        parts = [f"{g.family}: ε = {format_up(g.epsilon)}"
                 + (f", δ = {format_up(g.delta)}" if g.delta else "")
                 + f" over {len(g.releases)} release(s)"
                 + (f" (per unit of {g.metric})" if g.family == "metric DP per word" else "")
                 + (f" (under unverified assumptions of {', '.join(g.unverified)})"
                    if g.unverified else "")
                 for g in self.groups]
        if len(self.groups) > 1:
            parts.insert(0, "different metrics, listed side by side, not summed as one "
                            f"guarantee (budget spent across them: {format_up(self.total)})")
        parts += [f"{n['release']}: not composable ({n['why']})" for n in self.not_composable]
        return "; ".join(parts) if parts else "no releases"

    def to_dict(self) -> dict[str, Any]:
        return {"groups": [g.to_dict() for g in self.groups],
                "not_composable": [dict(n) for n in self.not_composable],
                "bounded": self.bounded, "comparable": self.comparable,
                "spent": self.total if math.isfinite(self.total) else "inf",
                "summary": self.summary()}


def compose(spends: Iterable[Spend]) -> Composition:
    """The cumulative guarantee of ``spends`` (releases of one input) under sequential
    composition, per notion: grouped by (family, metric id), sums exact and rounded up. A group
    shows the prose metric and space of its first release."""
    keyed: dict[tuple[str, str], list[Spend]] = {}
    unbounded: list[dict[str, str]] = []
    for spend in spends:
        family = family_of(spend)
        if family is None:
            prose = spend.notion
            try:
                notion = _notion(spend.notion)
                why, prose = _NOT_COMPOSABLE.get(NOTION_IDS[notion], ""), str(notion)
            except ValueError:
                why = f"unknown notion {spend.notion!r}"
            why = why or f"ε = {format_up(spend.epsilon)}: no finite bound to compose"
            unbounded.append({"release": spend.release, "notion": prose, "why": why})
            continue
        keyed.setdefault((family, spend.key), []).append(spend)
    groups = tuple(Group(family, members[0].metric, members[0].space,
                         tuple(s.release for s in members),
                         _total_epsilon(family, members),
                         min(1.0, sum_up(s.delta for s in members)),
                         tuple(s.release for s in members if not s.verified), key)
                   for (family, key), members in keyed.items())
    # Summed from the releases, not from the groups' totals: one rounding, not two.
    spent = sum_up(s.epsilon for members in keyed.values() for s in members)
    return Composition(groups, tuple(unbounded), spent)


def _total_epsilon(family: str, members: list[Spend]) -> float:
    """A group's cumulative ε: the exact sum, rounded up; for dataset-level (ε, δ)-DP, the
    accountant's ε of all the releases' events at δ = Σδ_i when it is smaller (both are upper
    bounds at that δ: the accountant's by adaptive composition, the sum by basic composition)."""
    total = sum_up(s.epsilon for s in members)
    if family != _FAMILIES["approx-dp"] or len(members) < 2 or not all(s.events
                                                                       for s in members):
        return total
    delta = sum_up(s.delta for s in members)
    if not 0 < delta < 1:
        return total
    try:
        from textdp.privacy.accounting import epsilon_of

        accounted = epsilon_of([e for s in members for e in s.events], delta)
    except (ImportError, ValueError):  # no accountant here, or an event it cannot read
        return total
    from textdp.privacy import format_up

    return min(total, float(format_up(accounted)))


def compose_reports(reports: Mapping[str, Mapping[str, Any]], measurement: Any = None
                    ) -> Composition:
    """Sequential composition of the releases whose reports are ``reports`` (release name →
    report), as the ledger composes: keyed on the stable ids of ``measurement``
    (:class:`textdp.privacy.measurement.Measurement`, shared by the releases of one spec) when
    given, else on ids of each report's prose metric and vocabulary."""
    ids = ({} if measurement is None
           else {"metric_id": measurement.input_metric, "notion": measurement.notion})
    return compose(Spend.from_guarantee(
        r["guarantee"], release=str(name),
        space=str((r.get("vocabulary") or {}).get("fingerprint", "")), **ids)
        for name, r in reports.items())

