"""The DP nearest-neighbour histogram: its sensitivity against a brute force over neighbouring
datasets, the person-level bound, the exact nearest neighbour, and the noise law (with power)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from textdp.synthesis.histogram import (
    SENSITIVITY,
    histogram,
    nearest,
    noisy,
    unit_contributions,
    votes,
)


def _dataset(rng, documents, candidates, labels, persons):
    """Random votes: each document has a label and a person; persons may write under several
    labels, and often vote several times for the same candidate (the hard case)."""
    doc_labels = rng.integers(0, labels, documents)
    cand_labels = np.sort(np.concatenate([np.arange(labels),
                                          rng.integers(0, labels, candidates - labels)]))
    chosen = np.empty(documents, dtype=np.int64)
    for i, lab in enumerate(doc_labels):
        block = np.flatnonzero(cand_labels == lab)
        chosen[i] = block[rng.integers(0, min(2, block.size))]  # few choices: repeated votes
    owners = rng.integers(0, persons, documents)
    return chosen, owners


def _brute_sensitivity(chosen, owners, size, weigh=histogram):
    """max over every unit u of ‖H(D) − H(D without u)‖₂, H recomputed from scratch."""
    full = weigh(chosen, owners, size)
    worst = 0.0
    for u in np.unique(owners):
        keep = owners != u
        rest = weigh(chosen[keep], owners[keep], size) if keep.any() else np.zeros(size)
        worst = max(worst, float(np.linalg.norm(full - rest)))
    return worst


def _one_over_sqrt_k(chosen, owners, size):
    """The rule a first sketch had: each of a person's k documents weighs 1/√k."""
    k = np.bincount(owners)[owners]
    return np.bincount(chosen, weights=1 / np.sqrt(k), minlength=size)


@pytest.mark.parametrize("seed", range(20))
def test_sensitivity_is_one_by_brute_force_over_neighbouring_datasets(seed):
    rng = np.random.default_rng(seed)
    chosen, owners = _dataset(rng, documents=30, candidates=8, labels=3, persons=6)
    assert _brute_sensitivity(chosen, owners, 8) == pytest.approx(SENSITIVITY, abs=1e-12)
    # Documents as units: every document is its own unit.
    docs = np.arange(chosen.size)
    assert _brute_sensitivity(chosen, docs, 8) == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(histogram(chosen, None, 8), np.bincount(chosen, minlength=8))


def test_the_brute_force_catches_a_weighting_that_is_not_bounded():
    """Power: the 1/√k-per-document rule exceeds sensitivity 1 as soon as a person's documents
    vote for the same candidate; the same brute force finds it."""
    rng = np.random.default_rng(0)
    worst = max(_brute_sensitivity(*_dataset(rng, 30, 8, 3, 6), 8, weigh=_one_over_sqrt_k)
                for _ in range(5))
    assert worst > 1.5
    # And an unweighted person (one vote per document) too.
    chosen, owners = _dataset(rng, 30, 8, 3, 6)
    assert _brute_sensitivity(chosen, owners, 8,
                              weigh=lambda c, o, s: np.bincount(c, minlength=s)) > 1.5


def test_a_persons_votes_split_one_vote_of_norm_one():
    # Person 0: 4 documents voting for the same candidate; person 1: 4 distinct candidates;
    # person 2: one document. Candidates 0..4 across two labels.
    chosen = np.array([0, 0, 0, 0, 1, 2, 3, 4, 2])
    owners = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2])
    index, weights = unit_contributions(chosen, owners)
    h = histogram(chosen, owners, 5)
    assert h[0] == pytest.approx(1.0)  # 4 identical votes count once
    assert h[1] == pytest.approx(0.5) and h[3] == pytest.approx(0.5)  # 1/√4 each
    assert h[2] == pytest.approx(1.5)  # person 1's 1/2 and person 2's whole vote
    for u in range(3):
        per = np.bincount(index[np.repeat(np.arange(3), [1, 4, 1]) == u],
                          weights=weights[np.repeat(np.arange(3), [1, 4, 1]) == u], minlength=5)
        assert np.linalg.norm(per) == pytest.approx(1.0)


def test_nearest_is_the_exact_euclidean_nearest_neighbour():
    rng = np.random.default_rng(3)
    private, candidates = rng.normal(size=(500, 6)), rng.normal(size=(37, 6))
    brute = np.argmin(((private[:, None, :] - candidates[None]) ** 2).sum(-1), axis=1)
    assert np.array_equal(nearest(private, candidates), brute)


def test_votes_stay_within_the_label_block():
    rng = np.random.default_rng(4)
    private, candidates = rng.normal(size=(200, 4)), rng.normal(size=(20, 4))
    plabels, clabels = rng.integers(0, 3, 200), np.repeat(np.arange(3), [5, 7, 8])
    chosen = votes(private, plabels, candidates, clabels)
    assert np.array_equal(clabels[chosen], plabels)
    for lab in range(3):
        rows, cols = plabels == lab, np.flatnonzero(clabels == lab)
        assert np.array_equal(chosen[rows], cols[nearest(private[rows], candidates[cols])])


@pytest.mark.statistical
@pytest.mark.parametrize("sigma", [0.7, 3.0, 25.0])
def test_the_noise_is_gaussian_with_the_stated_scale_and_rejects_a_wrong_one(sigma):
    """KS test of H̃ − H against N(0, σ²) (n = 200,000, α = 1e-6), and the power check: the
    same test rejects noise 5% too small (the unsafe side)."""
    counts = np.arange(200_000, dtype=np.float64) % 7
    rng = np.random.default_rng(11)
    residual = noisy(counts, sigma, rng) - counts
    assert stats.kstest(residual, "norm", args=(0, sigma)).pvalue > 1e-6
    weak = noisy(counts, sigma * 0.95, np.random.default_rng(12)) - counts
    assert stats.kstest(weak, "norm", args=(0, sigma)).pvalue < 1e-6
    # Independent coordinates: neighbouring residuals uncorrelated.
    r = np.corrcoef(residual[:-1], residual[1:])[0, 1]
    assert abs(r) < 5.0 / np.sqrt(residual.size)


def test_every_subset_of_units_keeps_the_bound():
    """Group view: removing g units moves H by at most g (the privacy map's group privacy)."""
    rng = np.random.default_rng(5)
    chosen, owners = _dataset(rng, 18, 6, 2, 5)
    full = histogram(chosen, owners, 6)
    for g in (2, 3):
        for group in itertools.combinations(np.unique(owners).tolist(), g):
            keep = ~np.isin(owners, group)
            rest = histogram(chosen[keep], owners[keep], 6) if keep.any() else np.zeros(6)
            assert np.linalg.norm(full - rest) <= g + 1e-12
