"""The Private Evolution loop (Lin et al., ICLR 2024, Algorithm 1; Xie et al., ICML 2024, Aug-PE,
Algorithm 1), label-conditional, with the private side confined to one function per round.

    S_0 ← RANDOM_API: P_l documents per label l from label prompts      (public)
    for t = 1 … T:
        H_t  ← DP_NN_HISTOGRAM(private embeddings, embed(S_{t−1}))       (the only private step)
        w_t  ← max(H_t − θσ, 0) per label block                          (post-processing)
        S_t  ← per label, m draws ∝ w_t; each distinct parent kept once,
               every other draw a VARIATION_API rewrite of its parent    (post-processing)
    return S_T  (m = P_l for t < T, the label's output quota n_l for t = T)

The output quotas n_l (Σ n_l = n) come from the noisy histograms (the noisy vote totals of each
label block over all rounds, post-processing), or are equal; the private label counts are never
read for them. The private embeddings are computed once, from the masked documents.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp.synthesis.histogram import histogram, noisy, votes

__all__ = ["LABEL_MIXES", "Evolution", "Population", "RoundRecord", "quotas"]

#: How the output's label quotas are set: from the noisy histograms, or equal.
LABEL_MIXES = ("noisy", "equal")


@dataclass(frozen=True, slots=True)
class Population:
    """Synthetic documents and their label codes."""

    texts: tuple[str, ...]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """What a round released or did (all of it post-processing of the noisy histogram)."""

    round: int
    candidates: int
    above_threshold: int
    noisy_label_totals: tuple[float, ...]
    generated: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "candidates": self.candidates,
                "above_threshold": self.above_threshold,
                "noisy_label_totals": [round(x, 3) for x in self.noisy_label_totals],
                "generated": self.generated, "seconds": round(self.seconds, 3)}


def quotas(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split ∝ max(weights, 0) by largest remainders (equal if no weight is > 0)."""
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    if not w.sum() > 0:
        w = np.ones_like(w)
    exact = total * w / w.sum()
    base = np.floor(exact).astype(np.int64)
    rest = total - int(base.sum())
    order = np.argsort(-(exact - base), kind="stable")
    base[order[:rest]] += 1
    return base.tolist()


@dataclass
class Evolution:
    """One Private Evolution run (mutable while it runs; what it returns is frozen).

    Args:
        labels: the label names (public; one "" when the input has none).
        generate: ``(prompts, stage) → texts`` through the language model (public prompts).
        embed: ``texts → (k, d)`` float array (the encoder).
        prompts: :class:`textdp.synthesis.prompts.Prompts`.
        noise_multiplier: σ; rounds: T.
        population: candidates per label in rounds 1 … T−1 of selection (P_l).
        threshold: θ, in units of σ.
        label_mix: one of :data:`LABEL_MIXES`.
        noise_rng: the generator of the histogram noise (secure in production).
        select_rng: the generator of the selection draws.
        progress: ``(description, total) → bar`` (``update``, ``close``), or None.
    """

    labels: tuple[str, ...]
    generate: Callable[[list[str], int], list[str]]
    embed: Callable[[list[str]], np.ndarray]
    prompts: Any
    noise_multiplier: float
    rounds: int
    population: int
    threshold: float
    label_mix: str
    noise_rng: np.random.Generator
    select_rng: np.random.Generator
    progress: Callable[[str, int], Any] | None = None
    records: list[RoundRecord] = field(default_factory=list)
    generated: int = 0

    def _generate(self, prompts: list[str], stage: int, what: str) -> list[str]:
        self.generated += len(prompts)
        return self.generate(prompts, stage) if prompts else []

    def first(self) -> Population:
        """RANDOM_API: ``population`` documents per label from the label prompts."""
        codes = np.repeat(np.arange(len(self.labels)), self.population)
        texts = self._generate([self.prompts.first(self.labels[c]) for c in codes.tolist()], 0,
                               "initial population")
        return Population(tuple(texts), codes)

    def vote(self, population: Population, private: np.ndarray, private_labels: np.ndarray,
             units: np.ndarray | None) -> np.ndarray:
        """The one private step of a round: the noisy histogram H + N(0, σ²I) over the candidates
        (each private document votes for its nearest candidate of its own label; a unit's votes
        weigh ‖·‖₂ = 1 in all)."""
        candidates = np.asarray(self.embed(list(population.texts)), dtype=np.float64)
        chosen = votes(private, private_labels, candidates, population.labels)
        return noisy(histogram(chosen, units, len(population)), self.noise_multiplier,
                     self.noise_rng)

    def select(self, population: Population, counts: np.ndarray, sizes: Sequence[int],
               stage: int) -> tuple[Population, int]:
        """Per label l, ``sizes[l]`` draws ∝ max(H̃ − θσ, 0) (uniform when no candidate is above
        the threshold); each distinct parent kept once, the other draws rewritten by the model.
        Returns the new population and how many candidates were above the threshold."""
        weights = np.maximum(counts - self.threshold * self.noise_multiplier, 0.0)
        keep: list[int] = []
        vary: list[int] = []
        for code, size in enumerate(sizes):
            block = np.flatnonzero(population.labels == code)
            if size == 0 or not block.size:
                continue
            w = weights[block]
            p = w / w.sum() if w.sum() > 0 else np.full(block.size, 1.0 / block.size)
            draws = block[self.select_rng.choice(block.size, size=size, p=p)]
            seen: set[int] = set()
            for parent in draws.tolist():
                (vary if parent in seen else keep).append(parent)
                seen.add(parent)
        varied = self._generate([self.prompts.vary(population.texts[i],
                                                  self.labels[population.labels[i]])
                                 for i in vary], stage,
                                "variations")
        texts = [population.texts[i] for i in keep] + varied
        labels = np.concatenate([population.labels[keep], population.labels[vary]]).astype(
            np.int64)
        order = np.argsort(labels, kind="stable")
        return (Population(tuple(texts[i] for i in order.tolist()), labels[order]),
                int((weights > 0).sum()))

    def run(self, private: np.ndarray, private_labels: np.ndarray, units: np.ndarray | None,
            n: int) -> Population:
        """S_T with ``n`` documents in all (see the module docstring)."""
        population = self.first()
        totals = np.zeros(len(self.labels))
        for t in range(1, self.rounds + 1):
            t0, before = time.perf_counter(), self.generated
            counts = self.vote(population, private, private_labels, units)
            label_totals = np.bincount(population.labels, weights=counts,
                                       minlength=len(self.labels))
            totals += label_totals
            if t < self.rounds:
                sizes = [self.population] * len(self.labels)
            elif self.label_mix == "noisy":
                sizes = quotas(n, totals)
            else:
                sizes = quotas(n, np.ones(len(self.labels)))
            candidates = len(population)
            population, above = self.select(population, counts, sizes, t)
            self.records.append(RoundRecord(t, candidates, above, tuple(label_totals.tolist()),
                                            self.generated - before, time.perf_counter() - t0))
        return population


def signal_check(unit_counts: Sequence[int], labels: Sequence[str], noise_multiplier: float,
                 population: int, min_signal: float) -> str | None:
    """Why the noise would drown every label's votes, or None: a label's histogram holds the
    votes of its n_l units spread over P candidates, with noise of total norm ≈ σ√P; below
    n_l ≥ min_signal·σ·√P the selection is close to uniform (the private data cannot be seen)."""
    if min_signal <= 0:
        return None
    noise = noise_multiplier * math.sqrt(population)
    for count, label in zip(unit_counts, labels, strict=True):
        if count < min_signal * noise:
            name = f"label {label!r}" if label else "the input"
            return (f"{name} has {count} unit(s), too few for the asked ε: the accountant needs "
                    f"noise σ = {noise_multiplier:.3g} per count, and over its {population} "
                    f"candidates that noise (σ·√P = {noise:.3g}) exceeds its votes; the bound "
                    f"is σ·√P ≤ n_l/{min_signal:g}, so at least {math.ceil(min_signal * noise)} "
                    "units per label are needed (or a larger ε, fewer rounds, a smaller "
                    "population or -n)")
    return None
