"""Black-box empirical ε (TESTING.md §4) for the nearest-neighbour mechanisms whose output law has no
closed form: mahalanobis, vickrey and the truncated Gumbel.

For a pair of words (w, w′) with claimed bound B = ε·d(w, w′), draw N outputs from each, choose an
event S (a set of outputs ranked by plug-in log-ratio, the prefix with the best lower confidence
bound) on the first half, and certify on the fresh second half with Clopper–Pearson intervals:
ε_lcb = ln(p₁_lcb / p₂_ucb) at α′ = α / (number of tests). ε_lcb > B is a certified violation;
otherwise there is no evidence (sampling cannot prove DP). Every test also runs a deliberately
broken variant and requires the audit to flag it.
"""

import math

import numpy as np
import pytest
from scipy import stats

from textdp.mechanisms.word.gumbel import (
    TruncatedGumbel,
    smallest_feasible_epsilon,
    vocabulary_graph,
)
from textdp.mechanisms.word.mahalanobis import Mahalanobis
from textdp.mechanisms.word.vickrey import Vickrey
from textdp.vocab import Vocabulary

pytestmark = pytest.mark.statistical
ALPHA = 1e-6


def _vocab(n, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


def _pairs(vocab, n_closest, n_random, seed=0):
    """The closest pairs (hardest) and a few random ones."""
    x = vocab.vectors.astype(np.float64)
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    iu = np.triu_indices(len(vocab), 1)
    order = np.argsort(d[iu])
    pairs = [(int(iu[0][i]), int(iu[1][i])) for i in order[:n_closest]]
    rng = np.random.default_rng(seed)
    while len(pairs) < n_closest + n_random:
        a, b = (int(v) for v in rng.choice(len(vocab), 2, replace=False))
        if (min(a, b), max(a, b)) not in pairs:
            pairs.append((min(a, b), max(a, b)))
    return pairs


def _cp_lower(k, n, a):
    return 0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1)


def _cp_upper(k, n, a):
    return 1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k)


def _eps_lcb(first, second, half, n_out, a):
    """Choose S on the first half of the samples, certify on the second half."""
    c1 = np.bincount(first[0][:half], minlength=n_out)
    c2 = np.bincount(second[0][:half], minlength=n_out)
    order = np.argsort(-np.log((c1 + 0.5) / (c2 + 0.5)))
    k1, k2 = np.cumsum(c1[order]), np.cumsum(c2[order])
    best, best_m = -np.inf, 1
    for m in range(1, n_out):  # the full set has ratio 1: never informative
        lo, hi = _cp_lower(k1[m - 1], half, a), _cp_upper(k2[m - 1], half, a)
        if lo > 0 and math.log(lo / hi) > best:
            best, best_m = math.log(lo / hi), m
    event = order[:best_m]
    rest = first[0].size - half
    k1 = int(np.isin(first[0][half:], event).sum())
    k2 = int(np.isin(second[0][half:], event).sum())
    lo, hi = _cp_lower(k1, rest, a), _cp_upper(k2, rest, a)
    return -np.inf if lo == 0 else math.log(lo / hi)


def audit(mech, pairs, bound, n, seed):
    """Largest ε_lcb − B over the pairs (both directions); > 0 is a certified violation."""
    rng = np.random.default_rng(seed)
    words = sorted({w for p in pairs for w in p})
    samples = {w: (mech.privatize_ids(np.full(n, w, dtype=np.int64), rng),) for w in words}
    a = ALPHA / (2 * len(pairs))
    worst, report = -np.inf, []
    for x, y in pairs:
        for p, q in ((x, y), (y, x)):
            e = _eps_lcb(samples[p], samples[q], n // 2, len(mech.vocabulary), a)
            b = bound(p, q)
            report.append((p, q, round(e, 3), round(b, 3)))
            worst = max(worst, e - b)
    return worst, report


def _euclid(vocab):
    x = vocab.vectors.astype(np.float64)
    return lambda a, b: float(np.linalg.norm(x[a] - x[b]))


N = 200_000


def test_mahalanobis_passes_and_a_scaled_up_epsilon_is_flagged():
    vocab = _vocab(30)
    eps = 1.5
    right = Mahalanobis(vocab, epsilon=eps, lam=0.5)
    pairs = _pairs(vocab, 2, 1)
    bound = lambda a, b: float(right.privacy_loss(a, b))  # noqa: E731
    worst, report = audit(right, pairs, bound, N, seed=1)
    assert worst <= 0, report
    # Broken: noise for 4ε while claiming ε.
    worst, report = audit(Mahalanobis(vocab, epsilon=4 * eps, lam=0.5), pairs, bound, N, seed=2)
    assert worst > 0, report


def test_vickrey_without_exclusion_passes_and_broken_variants_are_flagged():
    vocab = _vocab(30)
    eps = 1.5
    pairs = _pairs(vocab, 2, 1)
    dist = _euclid(vocab)
    right = Vickrey(vocab, epsilon=eps, t=0.75, exclude_input=False)
    bound = lambda a, b: float(right.privacy_loss(a, b))  # noqa: E731
    assert bound(*pairs[0]) == pytest.approx(eps * dist(*pairs[0]), rel=1e-14)
    worst, report = audit(right, pairs, bound, N, seed=3)
    assert worst <= 0, report
    worst, report = audit(Vickrey(vocab, epsilon=4 * eps, exclude_input=False), pairs, bound, N,
                          seed=4)
    assert worst > 0, report
    # SPEC's variant (input word excluded) has no ε·d guarantee, and the audit proves it.
    spec = Vickrey(vocab, epsilon=eps, t=0.75)
    assert not spec.guarantee.verified and math.isinf(spec.privacy_loss(*pairs[0]))
    worst, report = audit(spec, pairs, bound, N, seed=5)
    assert worst > 0, report


class _ShrunkNoise(TruncatedGumbel):
    """Broken: the Gumbel noise multiplied by a small factor after drawing."""

    factor = 1.0

    def draw(self, ids, rng):
        k, g = super().draw(ids, rng)
        return k, g * self.factor


def test_truncated_gumbel_passes_and_shrunk_noise_is_flagged():
    # The claimed bound is at least ε·Δ₀ > 5 + 2 ln|V| for every pair, so a violation can only
    # be certified with N ≳ 30·e^{5 + 2 ln|V|} draws: a small vocabulary keeps that affordable.
    vocab = _vocab(8, seed=4)
    eps = smallest_feasible_epsilon(8, vocabulary_graph(vocab).min_distance) * 1.01
    pairs = _pairs(vocab, 2, 1)
    right = TruncatedGumbel(vocab, epsilon=eps)
    bound = lambda a, b: float(right.privacy_loss(a, b))  # noqa: E731
    assert bound(*pairs[0]) == pytest.approx(eps * _euclid(vocab)(*pairs[0]), rel=1e-14)
    n = 1_000_000
    worst, report = audit(right, pairs, bound, n, seed=6)
    assert worst <= 0, report
    broken = _ShrunkNoise(vocab, epsilon=eps)
    # Small enough that a word can no longer lose to a neighbour: outputs become deterministic.
    broken.factor = broken.min_distance / (4 * broken.max_distance)
    worst, report = audit(broken, pairs, bound, n, seed=7)
    assert worst > 0, report
