"""Figures quoted in the documentation's prose, recomputed by the code that gives them.

A page quotes them after a mark that names the figure and the quoted values::

    <!-- docs: figure mvc-unchanged 10=58% 8=37% 6=13% 3=0.7% -->
    … MVC returns about 58% of words unchanged at ε = 10, 37% at ε = 8, …

:func:`check` recomputes each value, fails when one is off by more than the figure's tolerance,
and fails when a value of the mark is not quoted in the paragraph that follows it — so the mark
and the prose cannot drift apart either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mvc_unchanged(epsilons: Sequence[float]) -> dict[float, float]:
    """The report's expected unchanged fraction (%) of MVC on examples/reviews.txt at each ε."""
    import textdp

    texts = (ROOT / "examples" / "reviews.txt").read_text(encoding="utf-8").splitlines()
    return {e: 100 * textdp.privatize(texts, mechanism="mvc", epsilon=e, seed=0)
            .report["deniability"]["expected_unchanged_fraction"] for e in epsilons}


def _unchanged_tolerance(value: float) -> float:
    """Percentage points: the Monte-Carlo estimate's 95% interval is about ±3 points (1,024
    draws) near 50%, much narrower near 0."""
    return 3.0 if value >= 5 else 0.75


#: name → (compute: keys → {key: value}, tolerance: value → allowed absolute difference).
FIGURES: dict[str, tuple[Callable[[Sequence[float]], dict[float, float]],
                         Callable[[float], float]]] = {
    "mvc-unchanged": (_mvc_unchanged, _unchanged_tolerance),
}


def parse(arg: str) -> tuple[str, dict[float, tuple[str, float]]]:
    """``"mvc-unchanged 10=58% 8=37%"`` → ``("mvc-unchanged", {10.0: ("58%", 58.0), …})``."""
    name, *pairs = arg.split()
    quoted = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        quoted[float(key)] = (text, float(re.sub(r"[^\d.]", "", text)))
    return name, quoted


def compute(name: str, keys: Sequence[float]) -> dict[float, float]:
    if name not in FIGURES:
        raise KeyError(f"unknown figure {name!r}; figures: {', '.join(FIGURES)}")
    return FIGURES[name][0](keys)


def check(arg: str, prose: str, *, fresh: dict[float, float] | None = None) -> list[str]:
    """The problems of one mark (empty: the quoted figures hold)."""
    name, quoted = parse(arg)
    fresh = fresh if fresh is not None else compute(name, list(quoted))
    tolerance = FIGURES[name][1]
    problems = []
    for key, (text, value) in quoted.items():
        if text not in prose:
            problems.append(f"{name} {key:g}={text} is not quoted in the paragraph after the mark")
        got = fresh[key]
        if abs(got - value) > tolerance(got):
            problems.append(f"{name} at {key:g}: the page says {text}, a fresh run gives "
                            f"{got:.1f} (tolerance ±{tolerance(got):g})")
    return problems
