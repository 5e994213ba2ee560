"""Vickrey: choose between the two nearest words of the noisy vector.

Xu, Aggarwal, Feyisetan, Teissier, "On a Utilitarian Approach to Privacy Preserving Text
Generation", PrivateNLP @ NAACL 2021 (SPEC §2.3):

* φ̂ = φ(w) + z with z of density ∝ exp(−ε‖z‖) (MVC's noise);
* w₁, w₂ = the nearest and second-nearest words to φ̂ in V ∖ {w} (the input word is excluded);
* output w₁ with probability p = (1 − t)·‖φ(w₂) − φ̂‖ / (t·‖φ(w₁) − φ̂‖ + (1 − t)·‖φ(w₂) − φ̂‖),
  else w₂; t ∈ [0, 1] (plain distances, not squared; not a softmax).

Guarantee. If the two candidates are the nearest words of φ̂ in all of V, the selection reads only
φ̂ and independent randomness, so it is post-processing of MVC and keeps ε·‖φ(w) − φ(w′)‖ metric DP
(the paper's argument). Excluding the input word breaks that argument, and no bound of the form
ε·d can hold: M(w) never outputs w, while M(w′) outputs w with positive probability (whenever w
is among the two nearest words of φ(w′) + z in V ∖ {w′}, an event of positive probability for
distinct vectors), so Pr[M(w)=w]/Pr[M(w′)=w] = 0 — the ratio in the other direction is
unbounded. With ``exclude_input=True`` (the default, as in SPEC) the report therefore says "no
formal guarantee verified"; ``exclude_input=False`` gives the verified ε·d variant.

Both candidates and their float64 distances come from one exact, certified top-2 search per token
(:meth:`textdp.neighbors.NearestNeighbors.two_nearest`).
"""

from __future__ import annotations

import numpy as np

from textdp._checks import EPSILON, Parameter
from textdp.mechanisms import register
from textdp.mechanisms.base import WordMechanism
from textdp.neighbors.approximate import NEIGHBORS, search_note, searcher
from textdp.noise import metric_laplace
from textdp.privacy import Notion
from textdp.vocab import Vocabulary

__all__ = ["Vickrey", "first_choice_probability"]

_REFERENCE = ("Xu, Aggarwal, Feyisetan, Teissier, PrivateNLP 2021 (Vickrey mechanism: choice "
              "between the two nearest neighbours of the noisy vector); SPEC §2.3")


def first_choice_probability(d1: np.ndarray, d2: np.ndarray, t: float) -> np.ndarray:
    """p(t, φ̂) = (1−t)·d₂ / (t·d₁ + (1−t)·d₂): probability of outputting the nearest candidate.

    Where the denominator vanishes (d₁ = d₂ = 0, or t = 1 and d₁ = 0) p takes its limit along
    d₁ = d₂, which is 1 − t.
    """
    d1 = np.asarray(d1, dtype=np.float64)
    d2 = np.asarray(d2, dtype=np.float64)
    num = (1.0 - t) * d2
    den = t * d1 + num
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0 - t)
    return np.clip(p, 0.0, 1.0)


@register
class Vickrey(WordMechanism):
    """MVC noise, then a t-weighted choice between the two nearest words (Xu et al. 2021).

    Args:
        vocabulary: words and vectors (default: :func:`textdp.vocab.load_default`).
        epsilon: privacy parameter of the noise (per unit of Euclidean distance).
        t: t ∈ [0, 1]; larger t favours the second-nearest word (t = 0: always the nearest).
        exclude_input: exclude the input word from the two candidates (SPEC and the paper's
            algorithm). True gives no verifiable guarantee (see the module docstring); False
            gives ε·d metric DP by post-processing.
        neighbors: "exact" (certified) or "approximate" (faiss HNSW, for big vocabularies;
            post-processing, see :mod:`textdp.neighbors.approximate`).
    """

    name = "vickrey"
    PARAMETERS = (
        EPSILON,
        Parameter("t", float, "t, the weight of the second-nearest word (0: always the nearest)",
                  default=0.75, low=0.0, high=1.0),
        Parameter("exclude_input", bool, "exclude the input word from the two candidates (SPEC; "
                  "no verifiable guarantee) or not (ε·d metric DP)", default=True),
        NEIGHBORS,
    )
    reference = _REFERENCE

    def __init__(self, vocabulary: Vocabulary | None = None, *, epsilon: float,
                 t: float = 0.75, exclude_input: bool = True, neighbors: str = "exact") -> None:
        super().__init__(vocabulary, epsilon=epsilon, t=t, exclude_input=exclude_input,
                         neighbors=neighbors)
        self._t: float = self._params["t"]
        self._exclude: bool = self._params["exclude_input"]
        need = 3 if self._exclude else 2
        if len(self.vocabulary) < need:
            raise ValueError(f"vickrey needs at least {need} words in the vocabulary")
        self._nn = searcher(self.vocabulary, self._params)

    @property
    def t(self) -> float:
        return self._t

    @property
    def exclude_input(self) -> bool:
        return self._exclude

    @property
    def notion(self) -> Notion:
        # Excluding the input word is not post-processing of MVC: M(w) never outputs w while
        # M(w′) can, so no bound holds (module docstring).
        return Notion.NONE if self._exclude else Notion.METRIC_DP

    @property
    def per_word(self) -> str:
        if not self._exclude:
            return super().per_word
        return ("none: the input word is excluded from the candidates, so M(w) never "
                "outputs w while M(w′) can; Pr[M(w′)=w] ≤ exp(ε·d)·Pr[M(w)=w] = 0 fails, "
                "and no ε·d bound holds. The noise alone is ε-metric-DP, but the selection "
                "reads the input word and is not post-processing")

    @property
    def assumptions(self) -> tuple[str, ...]:
        if self._exclude:
            return ("use exclude_input=False for the ε·d metric-DP variant",) + search_note(self)
        return ("candidates are the two nearest words of the noisy vector in the whole "
                "vocabulary, so the choice is post-processing of MVC's noisy vector",
                ) + search_note(self)

    def draw(self, ids: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        z = metric_laplace(ids.size, self.vocabulary.dim, self.epsilon, rng, dtype=np.float32)
        return z, rng.random(ids.size)

    def apply(self, ids: np.ndarray, noise: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        z, coin = noise
        noisy = self.vocabulary.vectors[ids]
        noisy += z
        idx, dist = self._nn.two_nearest(noisy, exclude=ids if self._exclude else None)
        p = first_choice_probability(dist[:, 0], dist[:, 1], self._t)
        return np.where(coin < p, idx[:, 0], idx[:, 1])
