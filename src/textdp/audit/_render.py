"""An audit as a Markdown table, a one-paragraph summary and a plot of bound against claim."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textdp.audit.core import AuditResult

__all__ = ["markdown", "summary", "plot", "fmt_bound", "NOTE"]

#: What an audit can and cannot show: ends every summary and is stored in every result.
NOTE = ("A certified violation is a proof (at the stated confidence) that the mechanism spends "
        "more than it claims on that pair. 'no evidence' proves nothing: sampling cannot show "
        "that a mechanism satisfies differential privacy, only fail to find a violation with "
        "these draws, these pairs and these events.")


def fmt_bound(x: float | str) -> str:
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:.3g}" if abs(x) < 100 else f"{x:,.0f}"
    return "−" + text[1:] if text.startswith("-") else text  # the same minus as "−∞"


def summary(result: AuditResult) -> str:
    n = len(result.pairs)
    v = len(result.violations)
    head = (f"{result.mechanism} on {result.vocabulary}: {n} {result.pairs_method} pair(s), "
            f"{result.draws:,} draws per word, confidence {1 - result.alpha:g} for all bounds "
            f"together (Bonferroni: α = {result.alpha:g} / {2 * n} per direction).")
    if v:
        worst = max(result.violations, key=lambda p: p.lower_bound - p.claim)
        body = (f" VIOLATION CERTIFIED on {v} pair(s): e.g. ({worst.word_a}, {worst.word_b}) "
                f"spends at least {fmt_bound(worst.lower_bound)} where the mechanism claims "
                f"{fmt_bound(worst.claim)}.")
    else:
        body = " No evidence of a violation on these pairs."
    if any(math.isinf(p.claim) for p in result.pairs):
        body += (" Pairs with an infinite claim (no guarantee stated) cannot be violated; their "
                 "bounds still show how distinguishable the words are.")
    return head + body + " " + NOTE


def markdown(result: AuditResult) -> str:
    """The table, one row per pair, and the summary under it."""
    lines = ["| word a | word b | distance | claim ε | certified lower bound | event (a→b / b→a) "
             "| verdict |", "|---|---|---:|---:|---:|---|---|"]
    for p in result.pairs:
        ev = " / ".join(f"{d.event_size} word{'s' if d.event_size != 1 else ''}"
                        + (f" ({', '.join(d.event_words[:2])}…)" if d.event_size > 2 else
                           f" ({', '.join(d.event_words)})" if d.event_size else "")
                        for d in p.directions)
        lines.append(f"| {p.word_a} | {p.word_b} | {p.distance:.4g} | {fmt_bound(p.claim)} | "
                     f"{fmt_bound(p.lower_bound)} | {ev} | {p.verdict} |")
    return "\n".join(lines) + "\n\n" + summary(result) + "\n"


def plot(result: Mapping[str, Any], path: str | Path) -> Path:
    """Certified lower bound against claim, one point per pair, with the line y = x: a point
    above it is a certified violation. Pairs with an infinite claim or bound are listed in the
    title instead (they have no place on the axes)."""
    from textdp.evaluation.plots import _plt, _save

    plt = _plt()
    pts = [(float(p["claim"]), float(p["lower_bound"]), p["verdict"]) for p in result["pairs"]]
    shown = [(c, b, v) for c, b, v in pts if math.isfinite(c) and math.isfinite(b)]
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    hi = max([c for c, _, _ in shown] + [b for _, b, _ in shown] + [1e-9])
    lo = min([0.0] + [b for _, b, _ in shown])
    ax.plot([lo, hi * 1.05], [lo, hi * 1.05], color="#7f7f7f", lw=1, ls="--",
            label="lower bound = claim")
    for verdict, color in (("no evidence", "#1f77b4"), ("violation certified", "#d62728")):
        xs = [c for c, _, v in shown if v == verdict]
        ys = [b for _, b, v in shown if v == verdict]
        if xs:
            ax.scatter(xs, ys, s=18, color=color, label=verdict, zorder=3)
    ax.set_xlabel("claimed ε for the pair (privacy map)")
    ax.set_ylabel("certified lower bound on ε")
    hidden = len(pts) - len(shown)
    title = (f"{result['mechanism']}: {len(pts)} pairs, {result['draws']:,} draws/word, "
             f"α = {result['alpha']:g}")
    if hidden:
        title += f"\n{hidden} pair(s) with an infinite claim or bound not shown"
    ax.set_title(title)
    ax.legend(loc="upper left")
    return _save(fig, path)
