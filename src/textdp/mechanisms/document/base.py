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

from textdp.privacy import Guarantee

__all__ = ["DocumentMechanism"]


class DocumentMechanism(ABC):
    """The interface of :class:`DeepCandidate` and :class:`Truncation`."""

    name: ClassVar[str]
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

    def _sentdp_guarantee(self, per_word: str, assumptions: tuple[str, ...],
                          reference: str) -> Guarantee:
        """ε-SentDP for documents of the same sentence count (Def. 3.1), as every member states it."""
        from textdp.mechanisms.document.deepcandidate import SENTDP_SAME_COUNT

        return Guarantee(notion="ε-SentDP (pure local DP, one sentence substituted)",
                         epsilon=self._epsilon, metric="", per_word=per_word,
                         per_document=SENTDP_SAME_COUNT, assumptions=assumptions,
                         reference=reference)

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What a privacy report needs: name, parameters, fingerprints, guarantee."""

    @abstractmethod
    def release(self, sentence_embeddings: np.ndarray, rng: np.random.Generator | None = None,
                ) -> Any:
        """One private release for one document, given by its (k, d) sentence embeddings."""
