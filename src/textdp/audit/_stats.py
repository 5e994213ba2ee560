"""Clopper–Pearson bounds and the two-half event test of a privacy claim (TESTING.md §4).

For words a, b and an event E (a set of outputs), ε-DP with additive δ promises
Pr[M(a) ∈ E] ≤ e^ε·Pr[M(b) ∈ E] + δ. With p_lo a lower confidence bound on Pr[M(a) ∈ E] and p_hi
an upper one on Pr[M(b) ∈ E], both from draws independent of how E was chosen,
L = ln((p_lo − δ) / p_hi) is a lower confidence bound on the ε the pair needs: each bound fails
with probability at most α′/2, so L ≤ the true ε with probability at least 1 − α′.
Clopper & Pearson (Biometrika 1934): the exact binomial bounds, by the inverse regularised beta.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["cp_lower", "cp_upper", "choose_event", "certify", "prefix_sizes"]


#: The relative margin by which a computed bound is moved outwards: SciPy's inverse regularised
#: beta is accurate to about 1e-13 relative in the tail probability it inverts; 2⁻⁴⁰ ≈ 9e-13 on p
#: moves the tail by more than that (tests/privacy/test_safe_side.py holds every bound against
#: the binomial tail summed at 60 digits).
_MARGIN = 2.0**-40


def cp_lower(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided lower Clopper–Pearson bound at level 1 − ``alpha`` for k successes in n trials:
    Beta.ppf(α, k, n − k + 1), and 0 when k = 0 (vectorised over k). Rounded down: the returned
    p satisfies Pr[Bin(n, p) ≥ k] ≤ α."""
    k = np.asarray(k, dtype=np.float64)
    safe = np.maximum(k, 1.0)
    p = special.betaincinv(safe, n - safe + 1.0, alpha)
    return np.where(k > 0, np.nextafter(p * (1.0 - _MARGIN), 0.0), 0.0)


def cp_upper(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    """One-sided upper Clopper–Pearson bound at level 1 − ``alpha``: Beta.ppf(1 − α, k + 1, n − k),
    and 1 when k = n (vectorised over k). Computed as 1 − the lower bound on the failure rate
    (1 − α in floats would lose the digits of a small α), rounded up: the returned p satisfies
    Pr[Bin(n, p) ≤ k] ≤ α."""
    k = np.asarray(k, dtype=np.float64)
    return np.where(k < n, np.minimum(np.nextafter(1.0 - cp_lower(n - k, n, alpha), 2.0), 1.0),
                    1.0)


def log_ratio_bound(k_a: np.ndarray | int, k_b: np.ndarray | int, n: int, alpha: float,
                    delta: float = 0.0) -> np.ndarray:
    """L = ln((p_lo − δ)/p_hi), each bound at α/2 (so L holds with probability ≥ 1 − α);
    −inf where p_lo ≤ δ. Rounded down: the subtraction, the quotient and the logarithm each
    round to nearest, so the result is lowered by a few ulps (never above the exact
    ln((p_lo − δ)/p_hi) of the two bounds)."""
    lo = cp_lower(k_a, n, alpha / 2) - delta
    hi = cp_upper(k_b, n, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo_down = np.nextafter(lo, -np.inf) if delta else lo
        ratio = np.nextafter(np.maximum(lo_down, 1e-300) / hi, 0.0)
        bound = np.log(ratio)
        bound = np.nextafter(bound - np.abs(bound) * 2.0**-50, -np.inf)
        return np.where(lo_down > 0, bound, -np.inf)


def prefix_sizes(m: int, dense: int = 64, growth: float = 1.08) -> np.ndarray:
    """Sizes 1..``dense``, then geometrically spaced up to ``m``: the prefixes tried as events.

    Trying every prefix costs one inverse beta per output word (0.7 s at 48k words, per
    direction); the geometric grid keeps the choice within a factor ``growth`` of any size.
    """
    sizes = np.arange(1, min(m, dense) + 1)
    if m > dense:
        n = int(np.ceil(np.log(m / dense) / np.log(growth)))
        tail = np.unique(np.round(dense * growth ** np.arange(1, n + 1)).astype(np.int64))
        sizes = np.concatenate([sizes, tail[tail < m], [m]])
    return np.unique(sizes)


def choose_event(c_a: np.ndarray, c_b: np.ndarray, n: int, alpha: float, delta: float = 0.0,
                 allowed: np.ndarray | None = None) -> np.ndarray:
    """The event (output ids) with the best lower bound on the *first* half's counts.

    Outputs seen from a are ranked by the plug-in log-ratio ln((c_a + ½)/(c_b + ½)); the event is
    the prefix of that ranking (one word, or the top m) whose bound ``log_ratio_bound`` on these
    counts is largest. ``allowed`` (a mask) restricts the event to the outputs the claim covers.
    """
    ok = c_a > 0
    if allowed is not None:
        ok &= allowed
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return cand
    score = np.log((c_a[cand] + 0.5) / (c_b[cand] + 0.5))
    order = cand[np.argsort(-score, kind="stable")]
    sizes = prefix_sizes(order.size)
    k_a = np.cumsum(c_a[order])[sizes - 1]
    k_b = np.cumsum(c_b[order])[sizes - 1]
    bounds = log_ratio_bound(k_a, k_b, n, alpha, delta)
    return order[: sizes[int(np.argmax(bounds))]]


def certify(event: np.ndarray, c_a: np.ndarray, c_b: np.ndarray, n: int, alpha: float,
            delta: float = 0.0) -> tuple[float, int, int]:
    """(L, k_a, k_b) for ``event`` on the *second* half's counts (n draws from each word)."""
    k_a = int(c_a[event].sum())
    k_b = int(c_b[event].sum())
    return float(log_ratio_bound(k_a, k_b, n, alpha, delta)), k_a, k_b
