"""PNG plots for the evaluation reports (matplotlib, headless Agg backend).

Every function takes plain data (the JSON-ready dicts the evaluation writes to ``results.json``),
draws one figure and writes it to ``path``; so a report can be redrawn from its results file.
One colour per mechanism, the same in every figure of a report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["deniability_histograms", "deniability_curves", "calibration_plot",
           "privacy_utility_curves", "tradeoff_plot", "efficiency_plot", "token_plot",
           "mechanism_colors"]

_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
            "#17becf", "#7f7f7f", "#bcbd22"]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "axes.grid": True, "grid.alpha": 0.3,
                         "axes.spines.top": False, "axes.spines.right": False,
                         "font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8,
                         "svg.hashsalt": "textdp"})
    return plt


def _eps_axis(ax: Any, values: Sequence[float]) -> None:
    """Log ε axis with a plain-number tick at every measured ε."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log")
    vals = sorted({float(v) for v in values})
    if vals:
        if len(vals) > 12:  # too many to label: keep every k-th
            vals = vals[:: math.ceil(len(vals) / 12)]
        ax.xaxis.set_major_locator(FixedLocator(vals))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_xlabel("ε")


def mechanism_colors(names: Sequence[str]) -> dict[str, str]:
    return {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(dict.fromkeys(names))}


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # No timestamp in the PNG metadata: the same data gives the same file.
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def deniability_histograms(entries: Sequence[Mapping[str, Any]], path: str | Path, *,
                           title: str = "") -> Path:
    """MVC Fig. 2: histograms of S_w (top) and N_w (bottom) over words, one column per ε.

    ``entries``: deniability dicts with ``per_word`` (``Deniability.to_dict()``), sorted by ε.
    S_w is the paper's statistic, distinct outputs in n draws (its expectation for exact laws).
    """
    plt = _plt()
    k = len(entries)
    fig, axes = plt.subplots(2, k, figsize=(2.6 * k + 0.6, 4.4), squeeze=False)
    for j, e in enumerate(entries):
        pw = e["per_word"]
        s = np.asarray(pw["distinct"], float)
        n = np.asarray(pw["n_w"], float)
        ax = axes[0, j]
        lo, hi = float(s.min()), float(s.max())
        if hi - lo < 1e-6 * max(1.0, abs(hi)):  # all words alike (e.g. an exact 1-D law)
            lo, hi = lo - 0.5, hi + 0.5
        ax.hist(s, bins=20, range=(lo, hi), color="#4c72b0")
        ax.set_title(f"ε = {e['epsilon']:g}")
        how = "" if e.get("method") == "monte_carlo" else ", expected"
        ax.set_xlabel(f"S_w (distinct of {e['n_draws']}{how})")
        ax.axvline(s.min(), color="#d62728", lw=1, ls="--")
        ax = axes[1, j]
        ax.hist(n, bins=20, range=(0, 1), color="#55a868")
        ax.set_xlabel("N_w")
        ax.axvline(n.max(), color="#d62728", lw=1, ls="--")
    axes[0, 0].set_ylabel("words")
    axes[1, 0].set_ylabel("words")
    if title:
        fig.suptitle(title + "  (dashed: worst case)")
    fig.tight_layout()
    return _save(fig, path)


def deniability_curves(series: Mapping[str, Sequence[Mapping[str, Any]]], path: str | Path, *,
                       title: str = "") -> Path:
    """Worst-case (solid) and mean (dotted) N_w and S_w against ε, one colour per mechanism.

    ``series``: mechanism → deniability summaries (``Deniability.summary()``), any order.
    """
    plt = _plt()
    colors = mechanism_colors(list(series))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    for name, rows in series.items():
        rows = sorted(rows, key=lambda r: r["epsilon"])
        eps = [r["epsilon"] for r in rows]
        c = colors[name]
        a1.plot(eps, [r["max_n_w"] for r in rows], "-o", color=c, ms=3, label=name)
        a1.plot(eps, [r["n_w"]["mean"] for r in rows], ":", color=c)
        a2.plot(eps, [r["distinct"]["min"] for r in rows], "-o", color=c, ms=3)
        a2.plot(eps, [r["distinct"]["mean"] for r in rows], ":", color=c)
    all_eps = [r["epsilon"] for rows in series.values() for r in rows]
    _eps_axis(a1, all_eps)
    a1.set_ylim(-0.02, 1.02)
    a1.set_ylabel("N_w")
    a1.set_title("N_w = Pr[M(w) = w]")
    _eps_axis(a2, all_eps)
    a2.set_yscale("log")
    a2.set_ylabel("S_w (distinct outputs)")
    a2.set_title("S_w: distinct outputs per word")
    fig.suptitle((title + "\n" if title else "") + "solid: worst case over words, dotted: mean")
    fig.tight_layout()
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, max(1, len(series))),
               frameon=False)
    return _save(fig, path)


def calibration_plot(result: Mapping[str, Any], path: str | Path) -> Path:
    """N_w and S_w against ε with the targets and the ε ranges that meet them (shaded)."""
    plt = _plt()
    pts = sorted(result["points"], key=lambda p: p["epsilon"])
    eps = np.array([p["epsilon"] for p in pts])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    a1.plot(eps, [p["max_n_w"] for p in pts], "-o", ms=3, color="#d62728", label="max N_w")
    a1.plot(eps, [p["mean_n_w"] for p in pts], ":", color="#d62728", label="mean N_w")
    a2.plot(eps, [p["min_s_w"] for p in pts], "-o", ms=3, color="#1f77b4", label="min S_w")
    a2.plot(eps, [p["mean_s_w"] for p in pts], ":", color="#1f77b4", label="mean S_w")
    targets = result["targets"]
    if targets.get("max_n_w") is not None:
        a1.axhline(targets["max_n_w"], color="k", lw=1, ls="--", label="target")
    if targets.get("min_s_w") is not None:
        a2.axhline(targets["min_s_w"], color="k", lw=1, ls="--", label="target")
    for r in result["ranges"]:
        lo = r["low"] if r["low"] is not None else eps.min()
        hi = r["high"] if r["high"] is not None else eps.max()
        for ax in (a1, a2):
            ax.axvspan(lo, hi, color="#2ca02c", alpha=0.15, lw=0)
    if result.get("epsilon"):
        for ax in (a1, a2):
            ax.axvline(result["epsilon"], color="#2ca02c", lw=1.5)
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        ax.legend(loc="best")
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    a1.set_ylim(-0.02, 1.02)
    a1.set_ylabel("N_w")
    a2.set_yscale("log")
    a2.set_ylabel("S_w")
    fig.suptitle(f"Calibration of {result['mechanism']} over {result['n_words']} words "
                 f"({result['method'].replace('_', ' ')}; green: ε meeting the targets)")
    fig.tight_layout()
    return _save(fig, path)


def _band(ax: Any, y: float | None, color: str, label: str) -> None:
    if y is not None and math.isfinite(y):
        ax.axhline(y, color=color, lw=1, ls="--", label=label)


def privacy_utility_curves(panels: Sequence[Mapping[str, Any]], path: str | Path, *,
                           colors: Mapping[str, str] | None = None) -> Path:
    """One panel per measurement: score against ε, one colour per mechanism.

    ``panels``: ``{"title", "ylabel", "lines": {mechanism: {"eps": [...], "y": [...],
    "style": "-"}}, "baseline": float|None, "chance": float|None, "lower_is_better": bool}``.
    A mechanism may have several lines (key ``"mvc · train private"``); the colour goes by the
    part before " · ".
    """
    plt = _plt()
    k = len(panels)
    cols = min(k, 3)
    rows = math.ceil(k / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.1 * cols, 3.2 * rows), squeeze=False)
    names = [n.split(" · ")[0] for p in panels for n in p["lines"]]
    colors = dict(colors or mechanism_colors(names))
    for ax, p in zip(axes.ravel(), panels, strict=False):
        for label, line in p["lines"].items():
            c = colors.get(label.split(" · ")[0], "#333333")
            ax.plot(line["eps"], line["y"], line.get("style", "-o"), color=c, ms=3, label=label)
        _band(ax, p.get("baseline"), "#444444", "clean baseline")
        _band(ax, p.get("chance"), "#aaaaaa", "chance")
        _eps_axis(ax, [e for line in p["lines"].values() for e in line["eps"]])
        ax.set_ylabel(p.get("ylabel", "accuracy"))
        ax.set_title(p["title"] + (" (lower = more private)" if p.get("lower_is_better") else ""))
        ax.legend(loc="best")
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    return _save(fig, path)


def tradeoff_plot(points: Mapping[str, Sequence[tuple[float, float, float]]], path: str | Path, *,
                  xlabel: str, ylabel: str, title: str = "",
                  colors: Mapping[str, str] | None = None) -> Path:
    """Privacy–utility frontier: (attack accuracy, utility) per ε, one line per mechanism.

    ``points``: mechanism → [(epsilon, x, y), ...].
    """
    plt = _plt()
    colors = dict(colors or mechanism_colors(list(points)))
    fig, ax = plt.subplots(figsize=(5, 3.8))
    for name, pts in points.items():
        pts = sorted(pts)
        xs, ys = [p[1] for p in pts], [p[2] for p in pts]
        ax.plot(xs, ys, "-o", ms=3, color=colors.get(name, "#333333"), label=name)
        for e, x, y in pts:
            ax.annotate(f"{e:g}", (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title or "privacy–utility trade-off (labels: ε)")
    ax.legend(loc="best")
    fig.tight_layout()
    return _save(fig, path)


def efficiency_plot(rows: Sequence[Mapping[str, Any]], path: str | Path, *,
                    colors: Mapping[str, str] | None = None) -> Path:
    """Words per second (log scale) and MiB per 1,000 words, one bar per mechanism (1-D Fig. 6)."""
    plt = _plt()
    labels = [f"{r['mechanism']}\nε={r['epsilon']:g}" for r in rows]
    colors = dict(colors or mechanism_colors([r["mechanism"] for r in rows]))
    cs = [colors.get(r["mechanism"], "#333333") for r in rows]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(max(6, 1.6 * len(rows) + 2), 3.4))
    a1.bar(labels, [r["words_per_second"] for r in rows], color=cs)
    a1.set_yscale("log")
    a1.set_ylabel("words / second (ids → ids)")
    a1.set_title("speed (higher is better)")
    a2.bar(labels, [max(r["peak_mib_per_1000_words"], 1e-6) for r in rows], color=cs)
    a2.set_yscale("log")
    a2.set_ylabel("peak MiB per 1,000 words")
    a2.set_title("memory (lower is better)")
    for ax in (a1, a2):
        ax.grid(axis="x", visible=False)
    fig.tight_layout()
    return _save(fig, path)


def token_plot(by_class: Mapping[str, int], by_policy: Mapping[str, int], path: str | Path) -> Path:
    """Token accounting of a privatisation run: tokens by class and words by policy."""
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.2))
    a1.barh(list(by_class), list(by_class.values()), color="#4c72b0")
    a1.set_title("tokens by class")
    a1.set_xlabel("tokens")
    shown = {k: v for k, v in by_policy.items() if v}
    a2.barh(list(shown) or ["(none)"], list(shown.values()) or [0], color="#55a868")
    a2.set_title("what happened to words and numbers")
    a2.set_xlabel("tokens")
    fig.tight_layout()
    return _save(fig, path)
