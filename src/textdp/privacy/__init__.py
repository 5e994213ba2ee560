"""Guarantees as code: budgets, notions, privacy maps, and the guarantee a release reports.

Every mechanism carries its privacy map (OpenDP's measurement + privacy map; Tumult Core's
``privacy_function``): ``mechanism.privacy_map(d_in)`` is the :class:`Budget` (ε, δ) it spends on
two inputs at distance ``d_in`` in its input metric, rounded up. :class:`Guarantee` is what a report
shows: its notion, ε and δ come from the same code, its prose renders them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from decimal import ROUND_CEILING, Decimal
from enum import StrEnum
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["Budget", "Guarantee", "Notion", "Numerics", "SAME_LENGTH_CAVEAT", "check_distance",
           "format_up", "round_down", "round_up", "round_up_product", "round_up_sum"]

SAME_LENGTH_CAVEAT = (
    "Word-by-word composition: two documents of the same number of privatised words "
    "w_1..w_l and w'_1..w'_l are indistinguishable up to exp(ε·Σ_i d(w_i, w'_i)). "
    "Documents of different lengths are distinguishable: the number of tokens, the position of "
    "every privatised word, the case pattern of each word and every unprotected token "
    "(whitespace, punctuation, and the kinds listed under 'unprotected') are released as they are."
)


class Notion(StrEnum):
    """The privacy notion a guarantee is stated in (the value is what reports print)."""

    #: Pr[M(x)=y] ≤ exp(ε·d(x, x′))·Pr[M(x′)=y] for a metric d on words (Chatzikokolakis et al. 2013).
    METRIC_DP = "metric DP (d_χ-privacy)"
    #: Metric DP for the protected (sensitive) outputs only; an unprotected output is released only
    #: for one input and identifies it (utility-optimised LDP, Murakami & Kawamoto 2019; SanText+).
    UTILITY_OPTIMISED_METRIC_DP = ("utility-optimised metric DP: metric DP for sensitive outputs, "
                                   "non-sensitive words released unprotected when kept")
    #: Pure ε-DP between the words of one group (they share an output set); words of different
    #: groups have disjoint output sets, so an output reveals the group (CusText, Chen et al. 2023).
    OUTPUT_SET_DP = ("ε-DP between words that share an output set; no protection across groups")
    #: Metric DP in the Euclidean distance of R^d, δ = 0 (Lipschitz privacy).
    PURE_LIPSCHITZ = "metric DP (Lipschitz privacy), pure"
    #: Lipschitz privacy up to an additive δ (Feyisetan & Kasiviswanathan 2021, Proposition 5).
    APPROXIMATE_LIPSCHITZ = "(ε, δ)-Lipschitz privacy"
    #: Pure ε-DP for documents differing in one substituted sentence (Meehan et al. 2022).
    SENTENCE_DP = "ε-SentDP (pure local DP, one sentence substituted)"
    #: Pure ε-DP between any two documents, applied by each user to their own (DP-Prompt).
    LOCAL_DP = "pure ε-DP per document (local), any two documents"
    #: (ε, δ)-DP of a whole release for datasets that differ by adding or removing one unit (a
    #: document, or all documents of one person): DP synthetic text (Xie et al. 2024).
    APPROXIMATE_DP = "(ε, δ)-DP, dataset level (add or remove one unit)"
    #: No formal guarantee could be established for these parameters.
    NONE = "no formal guarantee verified"


class Numerics(StrEnum):
    """What the guarantee assumes about floating point (OpenDP labels the first "idealized")."""

    #: Proven for exact real arithmetic; float rounding in the sampler is not covered.
    IDEALIZED = "idealized float"
    #: Released reals snapped to a power-of-two grid: a mitigation of floating-point attacks
    #: (Mironov 2012). No proof covers this multivariate sampler, so it does not claim float-safety.
    SNAPPED = "snapped to a 2^k grid (mitigation; not proven float-safe)"


@dataclass(frozen=True, slots=True)
class Budget:
    """The privacy spent on a pair of inputs: ε and δ (arrays when the distance was an array)."""

    epsilon: float | np.ndarray
    delta: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        eps = self.epsilon
        return {"epsilon": eps.tolist() if isinstance(eps, np.ndarray) else float(eps),
                "delta": float(self.delta)}


def check_distance(d_in: Any) -> float | np.ndarray:
    """``d_in`` as float64 (scalar or array); ValueError for NaN or a negative distance."""
    d = np.asarray(d_in, dtype=np.float64)
    if np.isnan(d).any() or (d < 0).any():
        raise ValueError(f"a distance must be ≥ 0 (inf allowed), got {d_in!r}")
    return float(d) if d.ndim == 0 else d


def round_up_product(a: float | np.ndarray, b: float | np.ndarray) -> float | np.ndarray:
    """The smallest float64 ≥ the exact product a·b, for a, b ≥ 0 (vectorised).

    The rounded product p = fl(a·b) is compared with its exact error e = a·b − p (Dekker's
    TwoProduct, exact for operands below 2^996); p is raised by one ulp only when e > 0, so an
    exactly representable product (ε·1, ε·0) comes back unchanged.
    """
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        p = a64 * b64
        split = 134217729.0  # 2^27 + 1 (Veltkamp)
        ca, cb = split * a64, split * b64
        a_hi = ca - (ca - a64)
        b_hi = cb - (cb - b64)
        a_lo, b_lo = a64 - a_hi, b64 - b_hi
        err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
        out = np.where(np.isfinite(p) & (err > 0), np.nextafter(p, np.inf), p)
    return float(out) if out.ndim == 0 else out


def round_up(exact: Fraction | int) -> float:
    """The smallest float64 ≥ ``exact`` (∞ beyond the largest float).

    The rule every reported ε and δ follows: compute the exact value from the float inputs
    (``Fraction(x)`` is the exact value of a float ``x``), then round it up, never to nearest:
    ``float(Fraction)`` rounds to nearest, which is below the exact value about half the time.
    """
    try:
        nearest = float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.nextafter(math.inf, 0.0)  # −max float
    return math.nextafter(nearest, math.inf) if Fraction(nearest) < exact else nearest


def round_down(exact: Fraction | int) -> float:
    """The largest float64 ≤ ``exact`` (−∞ below the most negative float)."""
    return -round_up(-exact)


def round_up_sum(values: Iterable[float]) -> float:
    """The exact sum of finite floats, rounded up (:func:`round_up`)."""
    return round_up(sum((Fraction(float(v)) for v in values), Fraction(0)))


def format_up(value: float, digits: int = 6) -> str:
    """``value`` printed with ``digits`` significant digits (as ``:g`` does), rounded up: a
    printed ε or δ is never below the number it stands for (``f"{0.1 + 0.2:g}"`` prints 0.3,
    below 0.1 + 0.2)."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    exact = Decimal(value)  # the float's exact value
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    # A decimal of ≤ 15 significant digits survives the trip through the nearest float.
    return f"{float(exact.quantize(step, rounding=ROUND_CEILING)):.{digits}g}"


@dataclass(frozen=True, slots=True)
class Guarantee:
    """The privacy guarantee of one mechanism with its parameters, as a report shows it.

    ``notion``, ``epsilon``, ``delta``, ``numerics`` and ``verified`` are what the mechanism's
    privacy map computes with; the other fields are its rendering in words.

    Attributes:
        notion: the privacy notion (:class:`Notion`; a matching string is accepted).
        epsilon: ε per unit of ``metric`` (metric DP) or the pure ε (SentDP).
        metric: the distance the guarantee is stated in, in words.
        per_word: the inequality for one word, in words and symbols.
        per_document: how it composes over a document, with its caveats.
        delta: the δ of an (ε, δ) guarantee, 0 for pure guarantees.
        assumptions: conditions the guarantee rests on (stated, never silently assumed).
        verified: False when no formal guarantee could be established for these parameters.
        reference: paper and equation the guarantee comes from.
        numerics: idealised float, or snapped outputs (:class:`Numerics`).
    """

    notion: Notion
    epsilon: float
    metric: str
    per_word: str
    per_document: str = SAME_LENGTH_CAVEAT
    delta: float = 0.0
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    verified: bool = True
    reference: str = ""
    numerics: Numerics = Numerics.IDEALIZED

    def __post_init__(self) -> None:
        object.__setattr__(self, "notion", Notion(self.notion))
        object.__setattr__(self, "numerics", Numerics(self.numerics))

    def to_dict(self) -> dict:
        """JSON-ready: the enums as their string values, the assumptions as a list."""
        d = asdict(self)
        d["notion"] = str(self.notion)
        d["numerics"] = str(self.numerics)
        d["assumptions"] = list(self.assumptions)
        return d
