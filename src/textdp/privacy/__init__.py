"""Guarantees as data: what a release promises, stated once by the mechanism that gives it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Guarantee", "SAME_LENGTH_CAVEAT"]

SAME_LENGTH_CAVEAT = (
    "Word-by-word composition: two documents of the same number of privatised words "
    "w_1..w_l and w'_1..w'_l are indistinguishable up to exp(ε·Σ_i d(w_i, w'_i)). "
    "Documents of different lengths are distinguishable: the number of tokens, the position of "
    "every privatised word, the case pattern of each word and every unprotected token "
    "(whitespace, punctuation, and the kinds listed under 'unprotected') are released as they are."
)


@dataclass(frozen=True, slots=True)
class Guarantee:
    """The privacy guarantee of one mechanism with its parameters.

    Attributes:
        notion: e.g. "metric DP (d_χ-privacy)", "(ε, δ)-Lipschitz privacy", "ε-SentDP".
        epsilon: ε per unit of ``metric`` (metric DP) or the pure ε (SentDP).
        metric: the distance the guarantee is stated in, in words.
        per_word: the inequality for one word, in words and symbols.
        per_document: how it composes over a document, with its caveats.
        delta: the δ of an (ε, δ) guarantee, 0 for pure guarantees.
        assumptions: conditions the guarantee rests on (stated, never silently assumed).
        verified: False when no formal guarantee could be established for these parameters.
        reference: paper and equation the guarantee comes from.
    """

    notion: str
    epsilon: float
    metric: str
    per_word: str
    per_document: str = SAME_LENGTH_CAVEAT
    delta: float = 0.0
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    verified: bool = True
    reference: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        return d
