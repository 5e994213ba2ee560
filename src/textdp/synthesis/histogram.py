"""The DP nearest-neighbour histogram of Private Evolution: every private unit votes, once.

Lin, Gopi, Kulkarni, Nori & Yekhanin, "Differentially Private Synthetic Data via Foundation Model
APIs 1: Images" (ICLR 2024), Algorithm 2 (DP_NN_HISTOGRAM), and Xie et al., "… 2: Text" (Aug-PE,
ICML 2024), Algorithm 1 lines 10–13: each private sample votes for its nearest synthetic sample
in an embedding space; the vote counts H get Gaussian noise N(0, σ²I); the noisy counts are
thresholded and drive the selection.

**Sensitivity (stated, and tested against a brute force over neighbouring datasets).** The
candidates (the synthetic samples and their embeddings) are fixed before the private data is
looked at in a round (they depend on the private data only through earlier noisy histograms:
adaptive composition). The histogram is

    H(D) = Σ_{u ∈ D} c_u,   c_u = h_u / ‖h_u‖₂,

where h_u ∈ ℕ^P counts the votes of unit u's documents (each document votes for its nearest
candidate of its own label) over **all** P candidates of all labels, concatenated. A unit is a
document (then h_u is one vote, c_u a one-hot vector) or, with a unit field, a person: all of the
person's documents, under every label they wrote in. Every c_u has ‖c_u‖₂ = 1 and depends on u's
documents only, so adding or removing one unit changes H by exactly c_u:

    Δ₂ = max_{D ~ D'} ‖H(D) − H(D')‖₂ = 1.

The person-level bound is this normalisation: a person's documents split one vote of L2 norm 1
(k votes for k distinct candidates weigh 1/√k each; k votes for one candidate weigh 1/k each).
Weighting each of k documents by 1/√k regardless of where they vote — the rule
the project SPEC (§10) sketches — is not enough: k documents voting for the same candidate then add
√k to one count (‖c_u‖₂ = √k). The test suite shows that rule failing the brute force.

**Labels.** The label histograms are blocks of the one vector H, each document voting inside its
label's block; one Gaussian draw over the whole vector is the one mechanism of each round. This
is why per-label histograms cost no more than one: for documents, a unit lies in one block
(parallel composition); for persons who wrote under several labels, their vote is split across
blocks by the normalisation above, so the whole vector still has sensitivity 1 — which
parallel composition over labels would not give (it would spend once per label a person
appears in).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["SENSITIVITY", "histogram", "nearest", "noisy", "unit_contributions", "votes"]

#: L2 sensitivity of :func:`histogram` under adding or removing one unit (see the module docstring).
SENSITIVITY = 1.0
_BLOCK = 2048


def nearest(private: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """For each row of ``private`` (n, d), the index of its nearest row of ``candidates`` (P, d) in
    Euclidean distance (ties: the lowest index), in blocks of rows; float64 throughout."""
    private = np.asarray(private, dtype=np.float64)
    candidates = np.asarray(candidates, dtype=np.float64)
    if candidates.shape[0] == 0:
        raise ValueError("no candidate to vote for")
    sq = np.einsum("ij,ij->i", candidates, candidates)
    out = np.empty(private.shape[0], dtype=np.int64)
    for s in range(0, private.shape[0], _BLOCK):
        block = private[s:s + _BLOCK]
        # ‖x − c‖² = ‖x‖² − 2x·c + ‖c‖²; ‖x‖² is the same for every candidate of a row.
        out[s:s + _BLOCK] = np.argmin(sq[None, :] - 2.0 * block @ candidates.T, axis=1)
    return out


def votes(private: np.ndarray, private_labels: np.ndarray, candidates: np.ndarray,
          candidate_labels: np.ndarray) -> np.ndarray:
    """The candidate each private document votes for: its nearest candidate of its own label
    (global candidate indices). A label with no candidate is an error."""
    private_labels = np.asarray(private_labels)
    candidate_labels = np.asarray(candidate_labels)
    out = np.empty(len(private_labels), dtype=np.int64)
    for label in np.unique(private_labels):
        rows = np.flatnonzero(private_labels == label)
        cols = np.flatnonzero(candidate_labels == label)
        if not cols.size:
            raise ValueError(f"label index {label} has private documents but no candidate")
        out[rows] = cols[nearest(private[rows], candidates[cols])]
    return out


def unit_contributions(document_votes: np.ndarray, units: np.ndarray | None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(candidate indices, weights) of every unit's contribution c_u = h_u / ‖h_u‖₂, flattened:
    the histogram is ``np.bincount(indices, weights)``. ``units`` None: every document is a unit."""
    document_votes = np.asarray(document_votes, dtype=np.int64)
    if units is None:
        return document_votes, np.ones(document_votes.size)
    units = np.asarray(units, dtype=np.int64)
    if units.shape != document_votes.shape:
        raise ValueError("one unit per document")
    # h_u as (unit, candidate) pairs with their counts.
    pairs, counts = np.unique(np.stack([units, document_votes], axis=1), axis=0,
                              return_counts=True)
    counts = counts.astype(np.float64)
    norms = np.sqrt(np.bincount(pairs[:, 0], weights=counts * counts))
    return pairs[:, 1], counts / norms[pairs[:, 0]]


def histogram(document_votes: np.ndarray, units: np.ndarray | None, size: int) -> np.ndarray:
    """H = Σ_u c_u over ``size`` candidates (float64), of L2 sensitivity :data:`SENSITIVITY`."""
    index, weights = unit_contributions(document_votes, units)
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64)


def noisy(counts: np.ndarray, noise_multiplier: float, rng: np.random.Generator) -> np.ndarray:
    """H + N(0, σ²I), σ = ``noise_multiplier`` × :data:`SENSITIVITY`: the Gaussian mechanism.

    ``rng`` must be secure in production (:func:`textdp._random.secure_generator`); numpy's
    normal sampler is the idealised-float Gaussian (no floating-point attack mitigation)."""
    counts = np.asarray(counts, dtype=np.float64)
    return counts + (noise_multiplier * SENSITIVITY) * rng.standard_normal(counts.shape)


def label_codes(labels: Sequence[str] | None, count: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes of ``labels`` (sorted label names; one class "" when None)."""
    if labels is None:
        return np.zeros(count, dtype=np.int64), ("",)
    names = tuple(sorted(set(labels)))
    index = {name: i for i, name in enumerate(names)}
    return np.fromiter((index[x] for x in labels), dtype=np.int64, count=count), names
