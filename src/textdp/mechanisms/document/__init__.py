"""Document-level mechanisms: ε-SentDP document embeddings (Meehan, Mrini & Chaudhuri, ACL 2022).

* :class:`DocumentMechanism` — the interface: sentence embeddings in, one embedding out.
* :class:`DeepCandidate` — exponential mechanism over public candidates, utility = approximate
  Tukey depth (two-sided, minimum over random projections).
* :class:`Truncation` — clip to a public box, average, Laplace noise (the paper's baseline).
* :class:`CandidateSet`, :func:`build_candidates` — the candidate set F, saved with a fingerprint.
* :class:`Recoder`, :func:`train_recoder` — the cluster-preserving recoder H (training needs torch).
* :func:`release_documents` — one release per document, with per-document generators when seeded.

The mechanisms take sentence embeddings (arrays) and never call an encoder:
:mod:`textdp.encoders` turns texts into them. Nothing here imports torch, scikit-learn or a
sentence encoder at import time.
"""

from textdp.mechanisms.document.base import DocumentMechanism
from textdp.mechanisms.document.candidates import CandidateSet, build_candidates
from textdp.mechanisms.document.deepcandidate import (
    CandidateRelease,
    DeepCandidate,
    exponential_log_probabilities,
    random_projections,
    tukey_depth_utilities,
)
from textdp.mechanisms.document.recoder import Recoder, RecoderTraining, train_recoder
from textdp.mechanisms.document.release import release_documents
from textdp.mechanisms.document.truncation import Truncation

__all__ = ["CandidateRelease", "CandidateSet", "DeepCandidate", "DocumentMechanism", "Recoder",
           "RecoderTraining", "Truncation", "build_candidates", "exponential_log_probabilities",
           "random_projections", "release_documents", "train_recoder", "tukey_depth_utilities"]
