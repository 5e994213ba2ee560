"""How often a run's privatised words come back unchanged: the report's ``deniability`` section.

For a word w, N_w = Pr[M(w) = w] is the plausible-deniability statistic of Feyisetan, Balle, Drake
& Diethe (WSDM 2020, §3.2). A run that privatised word w ``c_w`` times returns, in expectation,

    U = Σ_w c_w · N_w / Σ_w c_w

of its privatised words unchanged. A large U means the text mostly comes back as it went in: the
guarantee still holds (it bounds what an observer learns), but most words are released as they
are. Two ways to compute U:

* ``exact``: a vectorised ``probability_unchanged(words)`` (1-Diffractor), or
  ``output_distribution(w)[w]`` per distinct word (TEM, SanText, SanText+) when the run has at
  most :data:`EXACT_WORDS` distinct words (each law is a pass over the vocabulary: for many
  distinct words this costs as much as the run itself);
* ``monte_carlo`` (MVC, Mahalanobis, Vickrey, truncated Gumbel, and the others beyond
  :data:`EXACT_WORDS` distinct words): :data:`MC_DRAWS` i.i.d. pairs (a word drawn in proportion
  to its count, one fresh mechanism draw, all in one vectorised call); each pair is a
  Bernoulli(U) trial, so U is their mean, with a Wilson score interval.

The estimator never touches the run's own generators (a seeded run's output does not change): it
draws from :func:`textdp._random.public_generator` for a seeded run (the report is then
reproducible) and from :func:`textdp._random.secure_generator` otherwise. Its cost is bounded
(at most :data:`MC_DRAWS` words through the mechanism), whatever the size of the run.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from textdp import _random

__all__ = ["DEFAULT_UNCHANGED_WARNING", "EXACT_WORDS", "MC_DRAWS",
           "expected_unchanged", "percent", "unchanged_warning", "wilson_interval"]

#: Above this expected fraction of unchanged words, the report warns (``unchanged_warning=``).
DEFAULT_UNCHANGED_WARNING = 0.5
#: Most distinct words whose exact N_w is computed one output law at a time (a pass over the
#: vocabulary each).
EXACT_WORDS = 32
#: Monte-Carlo (word, draw) pairs for mechanisms without a closed-form law.
MC_DRAWS = 1024
#: Two-sided 95% normal quantile.
_Z95 = 1.959963984540054
#: Spawn key of the estimator's public stream (documents use one-element keys (i,)).
_SPAWN_KEY = (0x756E63, 0x68616E)


def wilson_interval(successes: int, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends, not rounding residue
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _generator(seed: int | None) -> np.random.Generator:
    if seed is None:
        return _random.secure_generator()
    return _random.public_generator(seed, _SPAWN_KEY)


def _exact_n_w(mechanism: Any, ids: np.ndarray) -> np.ndarray:
    fast = getattr(mechanism, "probability_unchanged", None)
    if callable(fast):
        return np.asarray(fast(ids), dtype=np.float64)
    law = mechanism.output_distribution
    return np.array([float(law(int(w))[int(w)]) for w in ids.tolist()])


def expected_unchanged(mechanism: Any, counts: np.ndarray, *,
                       seed: int | None = None) -> dict[str, Any]:
    """The expected fraction of privatised words returned unchanged (see the module docstring).

    Args:
        mechanism: the word mechanism of the run (``draw``/``apply``; optionally
            ``probability_unchanged`` or ``output_distribution``).
        counts: how many times each vocabulary row was privatised (length |V|).
        seed: the run's seed (None: OS entropy), which picks the estimator's generator.

    Returns:
        ``expected_unchanged_fraction`` (None when nothing was privatised), ``method``,
        ``interval`` ([low, high], 95%; equal ends when exact), ``interval_method``, ``draws``,
        ``distinct_words`` and ``privatized_words``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    words = np.flatnonzero(counts)
    total = int(counts.sum())
    out: dict[str, Any] = {"expected_unchanged_fraction": None, "method": None, "interval": None,
                           "interval_method": None, "draws": 0,
                           "distinct_words": int(words.size), "privatized_words": total}
    if total == 0:
        return out
    weights = counts[words] / total
    has_fast = callable(getattr(mechanism, "probability_unchanged", None))
    has_law = callable(getattr(mechanism, "output_distribution", None))
    if has_fast or (has_law and words.size <= EXACT_WORDS):
        value = float(np.dot(weights, _exact_n_w(mechanism, words)))
        value = min(max(value, 0.0), 1.0)
        out.update(expected_unchanged_fraction=value, method="exact", interval=[value, value],
                   interval_method="exact", draws=0)
        return out
    rng = _generator(seed)
    sample = rng.choice(words, size=MC_DRAWS, p=weights)
    released = mechanism.apply(sample, mechanism.draw(sample, rng))
    hits = int(np.count_nonzero(released == sample))
    low, high = wilson_interval(hits, MC_DRAWS)
    out.update(expected_unchanged_fraction=hits / MC_DRAWS, method="monte_carlo",
               interval=[low, high], interval_method="Wilson score, 95%", draws=MC_DRAWS)
    return out


def unchanged_warning(section: dict[str, Any], threshold: float, epsilon: float) -> str | None:
    """The report's warning when the expected unchanged fraction exceeds ``threshold``."""
    value = section.get("expected_unchanged_fraction")
    if value is None or value <= threshold:
        return None
    return (f"most privatised words come back unchanged at ε = {epsilon:g}: an expected "
            f"{percent(value)} of them are released as they were (warning threshold "
            f"{percent(threshold)}); a smaller ε changes more of them")


def percent(value: float) -> str:
    """A fraction as a percentage that does not round 99.99% up to 100% (or 0.01% to 0%)."""
    if 0.0 < value < 0.001 or 0.999 < value < 1.0:
        return f"{value:.3%}"
    return f"{value:.1%}"
