"""What every ε-SentDP document mechanism is: sentence embeddings in, one embedding out.

SentDP (Meehan, Mrini & Chaudhuri, ACL 2022, Def. 3.1): a mechanism M over documents
x = (s_1, …, s_k) is ε-SentDP if Pr[M(x) ∈ O] ≤ e^ε Pr[M(x′) ∈ O] for every x′ that differs
from x in one sentence (same k). A document is given by its (k, d) sentence embeddings: the
mechanisms never see text and never call an encoder (:mod:`textdp.encoders` does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from textdp.privacy import Budget, Guarantee, Notion, Numerics, check_distance, round_up_product
from textdp.privacy.measurement import Measurement, measurement_of

__all__ = ["DocumentMechanism", "SENTDP_SAME_COUNT"]

SENTDP_SAME_COUNT = (
    "Sentence-level: two documents with the same number of sentences k that differ in one whole "
    "sentence (any sentence replaced by any other) are ε-indistinguishable; documents differing "
    "in a sentences are (a·ε)-indistinguishable (group privacy). Inserting or deleting a "
    "sentence is not covered: the neighbouring relation keeps k fixed. The released embedding "
    "is a public candidate, so the output itself carries no text of the document."
)


class DocumentMechanism(ABC):
    """The interface of :class:`DeepCandidate` and :class:`Truncation`."""

    name: ClassVar[str]
    notion: ClassVar[Notion] = Notion.SENTENCE_DP
    numerics: ClassVar[Numerics] = Numerics.IDEALIZED
    _epsilon: float

    @property
    def epsilon(self) -> float:
        """ε of ε-SentDP, per substituted sentence."""
        return self._epsilon

    @property
    @abstractmethod
    def dim(self) -> int:
        """The dimension of released embeddings."""

    @property
    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """Every parameter that changes the output law."""

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The ε-SentDP guarantee with its assumptions."""

    def privacy_map(self, d_in: Any) -> Budget:
        """ε-SentDP's map: documents of k sentences differing in ``d_in`` substituted sentences
        get (d_in·ε, 0) (group privacy; Meehan et al. 2022, Def. 3.1), rounded up, vectorised."""
        return Budget(round_up_product(self._epsilon, check_distance(d_in)))

    #: The stable id of the metric ``d_in`` counts in: substituted sentences (a release's input
    #: space adds the sentence splitter, which decides what one sentence is).
    input_metric: ClassVar[str] = "sentence-substitution"

    @property
    def measurement(self) -> Measurement:
        """Input metric, notion and :meth:`privacy_map` as one measurement."""
        return measurement_of(self)

    def _sentdp_guarantee(self, *, per_word: str, assumptions: tuple[str, ...],
                          reference: str) -> Guarantee:
        """The ε-SentDP guarantee: notion, ε, δ and numerics from the code (``privacy_map(1)``,
        one substituted sentence), the rest in words."""
        budget = self.privacy_map(1)
        return Guarantee(notion=self.notion, epsilon=budget.epsilon, delta=budget.delta,
                         numerics=self.numerics, metric="", per_word=per_word,
                         per_document=SENTDP_SAME_COUNT, assumptions=assumptions,
                         reference=reference)

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What a privacy report needs: name, parameters, fingerprints, guarantee."""

    @abstractmethod
    def release(self, sentence_embeddings: np.ndarray, rng: np.random.Generator | None = None,
                ) -> Any:
        """One private release for one document, given by its (k, d) sentence embeddings."""
