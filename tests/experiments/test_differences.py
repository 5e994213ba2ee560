"""The arithmetic behind docs/results/differences.md (issue 34), checked on cases worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest


def test_deep_candidate_probability_matches_the_exponential_mechanism():
    from experiments.differences import deep_probability

    # b candidates of utility j, m − b of utility 0: Pr ∝ e^{εu/2} (Δu = 1).
    b, j, eps, m = 25, 3, 6.0, 5000
    w = np.array([math.exp(eps * j / 2)] * b + [1.0] * (m - b))
    assert deep_probability(b, j, eps, m) == pytest.approx(w[:b].sum() / w.sum(), rel=1e-12)
    # SentDP Table 1's columns reach 0.95 only from the ε the page states, not before.
    for (b, j), eps in zip(((55, 5), (25, 3), (5, 2), (1, 1)), (3, 6, 10, 23), strict=True):
        assert deep_probability(b, j, eps) >= 0.95 > deep_probability(b, j, eps - 1)


def test_reference_tem_law_on_a_hand_worked_case():
    from experiments.differences import reference_tem_n_w

    # Three words at distances 0, 1, 5; ε = 2, a table of 3 rows, |vocab.txt| = 3, β = 0.001:
    # γ = round(ln(0.999·3/0.001), 1) = 8.0, so every word is within γ and ⊥ scores
    # −8 + ln(3/3) = −8; Pr[input] = 1 / (1 + e^{−1} + e^{−5} + e^{−8}).
    d = np.array([0.0, 1.0, 5.0])
    got = reference_tem_n_w(d, 0, 2.0, n_table=3, n_vocab_txt=3)
    assert got == pytest.approx(1 / (1 + math.exp(-1) + math.exp(-5) + math.exp(-8)), rel=1e-12)
    # A word outside γ leaves L_w and moves ⊥'s score by 2·ln(|V|/|L_w|)/ε.
    d = np.array([0.0, 1.0, 50.0])
    want = 1 / (1 + math.exp(-1) + math.exp(-8 + math.log(3 / 2)))
    assert reference_tem_n_w(d, 0, 2.0, n_table=3, n_vocab_txt=3) == pytest.approx(want)
