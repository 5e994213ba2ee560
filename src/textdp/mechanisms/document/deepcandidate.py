"""DeepCandidate: ε-SentDP document embeddings by the exponential mechanism over public candidates.

Meehan, Mrini & Chaudhuri, "Sentence-level Privacy for Document Embeddings", ACL 2022.

A document x = (s_1, …, s_k) is given by its sentence embeddings S_x = {H(G(s_l))} (G a frozen
sentence encoder, H an optional cluster-preserving recoder, §4.3). For each candidate f ∈ F (public
document embeddings built the same way, §4.1) the utility is the approximate Tukey depth of f among
S_x (§4.4, App. A.1, Algorithm 1), with p unit directions v_1 … v_p drawn from a seed that is
independent of the data:

    h_j(x, f) = #{l : ⟨s_l, v_j⟩ ≥ ⟨f, v_j⟩}
    u_j(x, f) = −|h_j(x, f) − k/2|                      (two-sided: depth on both sides)
    u(x, f)   = min_j u_j(x, f)                         (the lowest depth across projections)

u ∈ [−k/2, 0]. Substituting one sentence changes each h_j by at most 1, hence each u_j and their
minimum by at most 1: Δu = 1 (App. A.2).

Minimum over projections, not maximum — a deliberate choice. The prose (§4.4: "The approximate
depth of f_i is then its lowest depth across the p projections") and Tukey's definition (Def. 3.2:
the depth is the smallest count over all halfspaces) both take the minimum: the depth on
projection j is min(h_j, k − h_j) = k/2 − |h_j − k/2| = k/2 + u_j, so the lowest depth is
k/2 + min_j u_j. Algorithm 1, line 15, writes the opposite, "u(x, f_i) ← max_{j∈[p]} u_j(x, f_i)",
and App. A.2's proof expands the same max. Taken literally the max is degenerate: it scores a
candidate by the one projection on which it looks most central, and for any candidate some
direction splits the document's sentences evenly around it (turning v into −v turns h_j into
k − h_j one sentence at a time, so a direction in between has |h_j − k/2| ≤ 1/2); with enough
projections every candidate reaches the top utility and the release tends to a uniform draw from
F, whatever the document. docs/results/differences.md measures this. The sensitivity argument
holds for either (each u_j moves by at most 1), so the choice changes utility, not privacy.

The exponential mechanism (Def. 2.2) releases f with probability ∝ exp(ε·u(x, f)/2), which is
ε-SentDP (Thm. 4.1) for documents with the same number of sentences. Probabilities are computed
in log space (shift by the maximum utility, scale, log-sum-exp); sampling is Gumbel-max on the
exact log-probabilities.

Two mistakes of a public re-implementation are avoided on purpose: a one-sided depth
(h_j alone is *not* a depth: it rewards candidates below every sentence), and applying the recoder
after averaging (H is applied to every sentence, then the mean or the depth is taken).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from textdp import _random
from textdp._checks import (
    EPSILON,
    Parameter,
    check_epsilon,
    check_nonnegative_int,
    check_parameters,
    check_rng,
)
from textdp.mechanisms.document.base import SENTDP_SAME_COUNT, DocumentMechanism
from textdp.mechanisms.document.candidates import CandidateSet, fingerprint_array
from textdp.noise import gumbel_max
from textdp.privacy import Guarantee

__all__ = ["DeepCandidate", "CandidateRelease", "exponential_log_probabilities",
           "random_projections", "tukey_depth_utilities", "SENTDP_SAME_COUNT"]

def random_projections(dim: int, n_projections: int, seed: int) -> np.ndarray:
    """p unit directions in R^dim as the columns of a (dim, p) matrix, from ``seed`` alone.

    Each column is a normalised standard Gaussian vector, i.e. uniform on the unit sphere
    (Algorithm 1, line 1). The seed must not depend on the private data.
    """
    rng = _random.public_generator(seed)
    v = rng.standard_normal((dim, n_projections))
    return v / np.linalg.norm(v, axis=0, keepdims=True)


def tukey_depth_utilities(sentence_projections: np.ndarray,
                          candidate_projections: np.ndarray) -> np.ndarray:
    """Approximate Tukey depth utilities u(x, f) for every candidate (Algorithm 1, lines 3–15).

    Args:
        sentence_projections: (k, p), row l = (⟨s_l, v_1⟩, …, ⟨s_l, v_p⟩).
        candidate_projections: (m, p), row i = (⟨f_i, v_1⟩, …, ⟨f_i, v_p⟩).

    Returns:
        (m,) float array of u = min_j −|h_j − k/2| with h_j = #{l : ⟨s_l, v_j⟩ ≥ ⟨f, v_j⟩};
        integers or half-integers in [−k/2, 0].
    """
    sp = np.asarray(sentence_projections, dtype=np.float64)
    fp = np.asarray(candidate_projections, dtype=np.float64)
    k, p = sp.shape
    if fp.ndim != 2 or fp.shape[1] != p:
        raise ValueError(f"candidate projections {fp.shape} do not match sentence projections "
                         f"{sp.shape}")
    sorted_sp = np.sort(sp, axis=0)
    worst = np.zeros(fp.shape[0], dtype=np.float64)
    half = k / 2.0
    for j in range(p):
        # #{l : s_l ≥ f} = k − #{l : s_l < f}; searchsorted 'left' counts the strictly smaller.
        h = k - np.searchsorted(sorted_sp[:, j], fp[:, j], side="left")
        np.maximum(worst, np.abs(h - half), out=worst)
    return -worst


def exponential_log_probabilities(utilities: np.ndarray, epsilon: float,
                                  sensitivity: float = 1.0) -> np.ndarray:
    """ln Pr[o] of the exponential mechanism, Pr[o] ∝ exp(ε·u(o)/(2Δu)) (Meehan et al., Def. 2.2).

    Computed stably: utilities are shifted by their maximum *before* scaling (so neither a huge
    utility nor a huge ε overflows), then normalised with log-sum-exp. A candidate whose shifted
    utility overflows to −∞ gets probability 0, its correct limit.

    Raises:
        ValueError: empty utilities, or a NaN or infinite utility.
    """
    eps = check_epsilon(epsilon)
    delta = check_epsilon(sensitivity, "sensitivity")
    u = np.asarray(utilities, dtype=np.float64)
    if u.ndim != 1 or u.size == 0:
        raise ValueError("utilities must be a non-empty 1-D array")
    if not np.isfinite(u).all():
        raise ValueError("utilities must be finite (got NaN or ±inf)")
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = u - u.max()                          # ≤ 0; may overflow to −inf, never NaN
        logits = shifted * (eps / (2.0 * delta))       # ≤ 0, max exactly 0
        logits[np.isnan(logits)] = -np.inf            # 0·(−inf) cannot happen (eps > 0); guard
    return logits - np.log(np.exp(logits).sum())      # the sum is in [1, m]


def _check_callable(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not callable(value):
            raise TypeError(f"{name} must be callable (an array in, an array out) or None")
        return value
    return check


@dataclass(frozen=True, slots=True)
class CandidateRelease:
    """What DeepCandidate releases: one public candidate, by embedding, position and id."""

    embedding: np.ndarray
    index: int
    id: str


class DeepCandidate(DocumentMechanism):
    """ε-SentDP document embedding: sample a public candidate by approximate Tukey depth.

    Meehan, Mrini & Chaudhuri (ACL 2022): §4 (mechanism M_TD), Eq. (3) (utility), Algorithm 1
    (probabilities), Thm. 4.1 (privacy), §4.3 (recoder H).

    Args:
        epsilon: ε > 0 of ε-SentDP.
        candidates: the candidate set F, a :class:`CandidateSet` (checked to be built with the same
            recoder) or an (m, d) array already in the space of H(G(s)) means.
        n_projections: p, the number of random unit directions (the paper tunes p in 10–100 per ε).
        recoder: H, a callable (n, d) → (n, d') applied to every private sentence embedding before
            the depth is computed, or None. Candidates must have been built with the same H.
        projection_seed: the public seed of the directions; must not depend on the private data.

    A document is given by its (k, d) sentence embeddings G(s_l): the mechanism never sees text
    (:func:`textdp.encoders.encode_documents` makes the arrays).

    The mechanism is immutable once built; the candidates' projections are computed once.
    """

    name: ClassVar[str] = "deepcandidate"
    PARAMETERS: ClassVar[tuple[Parameter, ...]] = (
        EPSILON,
        Parameter("n_projections", int, "p, the number of random unit directions of the depth",
                  default=50, low=1),
        Parameter("recoder", object, "H, applied to every sentence embedding (None: identity)",
                  default=None, nullable=True, check=_check_callable("recoder")),
        Parameter("projection_seed", int, "public seed of the directions",
                  default=0, check=lambda v: check_nonnegative_int(v, "projection_seed")),
    )

    def __init__(self, candidates: CandidateSet | np.ndarray, *, epsilon: float,
                 n_projections: int = 50, recoder: Callable[[np.ndarray], np.ndarray] | None = None,
                 projection_seed: int = 0) -> None:
        p = check_parameters(self.PARAMETERS, dict(
            epsilon=epsilon, n_projections=n_projections, recoder=recoder,
            projection_seed=projection_seed), owner=self.name)
        self._epsilon: float = p["epsilon"]
        recoder_fp = None if recoder is None else getattr(recoder, "fingerprint", None)
        if isinstance(candidates, CandidateSet):
            built_with = candidates.recoder_fingerprint
            if recoder is None:
                mismatch = built_with is not None
            elif recoder_fp is None:  # an unfingerprinted callable: only "some recoder" is checked
                mismatch = built_with is None
            else:
                mismatch = built_with != recoder_fp
            if mismatch:
                built = candidates.recoder_fingerprint or "no recoder"
                given = recoder_fp or "no recoder"
                raise ValueError(
                    "the candidates were built with a different recoder than the mechanism's "
                    f"(candidates: {built}; mechanism: {given}); private sentences and candidates "
                    "must pass through the same H before averaging")
            self._candidates = candidates
        else:
            self._candidates = CandidateSet(np.asarray(candidates, dtype=np.float64),
                                            tuple(str(i) for i in range(len(candidates))),
                                            recoder_fingerprint=recoder_fp)
        self._n_projections: int = p["n_projections"]
        self._projection_seed: int = p["projection_seed"]
        self._recoder = recoder
        self._projections = random_projections(self._candidates.dim, self._n_projections,
                                               self._projection_seed)
        self._projections.setflags(write=False)
        self._candidate_projections = self._candidates.embeddings @ self._projections

    # -- read-only description -------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self._candidates.dim

    @property
    def candidates(self) -> CandidateSet:
        return self._candidates

    @property
    def n_projections(self) -> int:
        return self._n_projections

    @property
    def projection_seed(self) -> int:
        return self._projection_seed

    @property
    def projections(self) -> np.ndarray:
        """The (d, p) matrix of unit directions (read-only)."""
        return self._projections

    @property
    def recoder(self) -> Callable[[np.ndarray], np.ndarray] | None:
        return self._recoder

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self._epsilon, "n_projections": self._n_projections,
                "projection_seed": self._projection_seed, "candidates": len(self._candidates)}

    @property
    def guarantee(self) -> Guarantee:
        """ε-SentDP (Meehan et al. 2022, Def. 3.1; Thm. 4.1), for documents of equal length k."""
        return self._sentdp_guarantee(
            per_word="not per word: every word of the substituted sentence is covered at once "
                     "(Pr[M(x) ∈ O] ≤ e^ε Pr[M(x′) ∈ O] for x, x′ differing in one sentence)",
            assumptions=(
                "x and x′ have the same number of sentences (substitution, not insertion or "
                "deletion); sentences are what textdp.sentences.split_sentences (or the caller) "
                "makes of the text",
                "the candidate set, the recoder and the sentence encoder were built from public "
                "data only",
                "the projection seed does not depend on the private data",
            ),
            reference="Meehan, Mrini & Chaudhuri, ACL 2022: Def. 3.1, Eq. (3), Algorithm 1, "
                      "Thm. 4.1 (App. A.2)",
        )

    def describe(self) -> dict[str, Any]:
        """What a privacy report needs: parameters, fingerprints of F, H and the projections."""
        return {"mechanism": self.name, "parameters": self.parameters,
                "candidates": self._candidates.describe(),
                "recoder_fingerprint": None if self._recoder is None
                else getattr(self._recoder, "fingerprint", None),
                "projections_fingerprint": fingerprint_array(self._projections),
                "guarantee": self.guarantee.to_dict()}

    # -- the mechanism ---------------------------------------------------------------------
    def _sentences(self, document: Any) -> np.ndarray:
        return self._recode(self._raw_sentences(document))

    def _recode(self, s: np.ndarray) -> np.ndarray:
        if self._recoder is not None:
            s = np.asarray(self._recoder(s), dtype=np.float64)
            if s.ndim != 2 or not np.isfinite(s).all():
                raise ValueError("the recoder returned a non-finite or malformed array")
        if s.shape[1] != self._candidates.dim:
            raise ValueError(f"sentence embeddings have dimension {s.shape[1]}, the candidates "
                             f"{self._candidates.dim}")
        return s

    def _raw_sentences(self, document: Any) -> np.ndarray:
        if isinstance(document, str) or (isinstance(document, Sequence) and document
                                         and all(isinstance(s, str) for s in document)):
            raise TypeError("DeepCandidate takes sentence embeddings, not text: encode the "
                            "sentences first (encoders.encode_documents)")
        s = np.asarray(document, dtype=np.float64)
        if s.ndim != 2:
            raise ValueError(
                f"expected the (k, d) sentence embeddings of one document, got shape {s.shape}: "
                "the Tukey depth needs every sentence, not the document mean")
        if s.shape[0] == 0:
            raise ValueError("the document has no sentences")
        if not np.isfinite(s).all():
            raise ValueError("sentence embeddings contain a non-finite value")
        if self._recoder is None and s.shape[1] != self._candidates.dim:
            raise ValueError(f"sentence embeddings have dimension {s.shape[1]}, the candidates "
                             f"{self._candidates.dim}")
        return s

    def utilities(self, sentence_embeddings: Any) -> np.ndarray:
        """u(x, f) for every candidate f (Eq. 3, Algorithm 1): (m,) values in [−k/2, 0]."""
        s = self._sentences(sentence_embeddings)
        return tukey_depth_utilities(s @ self._projections, self._candidate_projections)

    def log_probabilities(self, sentence_embeddings: Any) -> np.ndarray:
        """ln Pr[release f_i | x] for every candidate, exact up to floating point."""
        return exponential_log_probabilities(self.utilities(sentence_embeddings), self._epsilon)

    def output_probabilities(self, sentence_embeddings: Any) -> np.ndarray:
        """Pr[release f_i | x] over F (Algorithm 1's P_F), ∝ exp(ε·u(x, f_i)/2); sums to 1."""
        return np.exp(self.log_probabilities(sentence_embeddings))

    def release(self, document: Any, rng: np.random.Generator | None = None) -> CandidateRelease:
        """Release one candidate for ``document``, given by its (k, d) sentence embeddings.

        Sampling is Gumbel-max on the exact log-probabilities: argmax_i (ln P_i + g_i) with g_i
        i.i.d. standard Gumbel, which has law P exactly.
        """
        rng = check_rng(rng)
        i = int(gumbel_max(self.log_probabilities(document), 1.0, rng))
        return CandidateRelease(self._candidates.embeddings[i], i, self._candidates.ids[i])

    def sample_indices(self, document: Any, size: int,
                       rng: np.random.Generator | None = None) -> np.ndarray:
        """``size`` independent releases for the same document, as candidate indices.

        The same sampler as :meth:`release` (Gumbel-max), with the utilities computed once; for
        tests and Monte-Carlo studies. Releasing the same document ``size`` times costs
        ``size·ε`` of privacy (composition).
        """
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
            raise ValueError(f"size must be a positive integer, got {size!r}")
        return gumbel_max(self.log_probabilities(document), 1.0, check_rng(rng), size=int(size))

    def release_many(self, documents: Sequence[Any], rng: np.random.Generator | None = None,
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Release one candidate per document: ((n, d) embeddings, (n,) candidate indices)."""
        rng = check_rng(rng)
        docs = [self._raw_sentences(doc) for doc in documents]
        idx = np.empty(len(docs), dtype=np.int64)
        if not docs:
            return np.zeros((0, self._candidates.dim)), idx
        # One recoder pass and one projection GEMM for the whole batch (BLAS is inefficient on
        # many tiny products); the depth and the draw stay per document, in document order.
        flat = self._recode(np.vstack(docs))
        proj = flat @ self._projections
        bounds = np.cumsum([d.shape[0] for d in docs])[:-1]
        for n, sp in enumerate(np.split(proj, bounds)):
            u = tukey_depth_utilities(sp, self._candidate_projections)
            idx[n] = gumbel_max(exponential_log_probabilities(u, self._epsilon), 1.0, rng)
        return self._candidates.embeddings[idx], idx

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f"DeepCandidate({params}, recoder={'yes' if self._recoder else 'none'})"
