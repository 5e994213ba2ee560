"""Text generation for Private Evolution: a token sampler (temperature, top-p) drawing from
textdp's generators, and the one adapter onto the language-model engine.

Nothing the model sees here is private: the prompts are public templates around label names or
around synthetic documents, which are post-processing of the noisy histograms
(:mod:`textdp.synthesis.accountant`). Sampling is still drawn through :mod:`textdp._random`:
unseeded from the secure generator; seeded, prompt i of stage s from
``SeedSequence(seed, spawn_key=(s, i))``, so a seeded run gives the same texts whatever the batch
size or the order in which rows finish.

:func:`generate_ids` is the one place that calls the language-model engine
(:class:`textdp.lm.Engine`: continuous batching over a KV cache, the model loaded once per
process), with the same :class:`TokenSampler` protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from textdp import _random

__all__ = ["NucleusSampler", "TokenSampler", "Generator", "generate_ids", "row_generators",
           "torch_nucleus"]

#: Candidates kept sorted per row before falling back to a full sort (top-p rarely needs more).
_TOP = 256


class TokenSampler(Protocol):
    """What the engine calls at every step: float64 logits [k, vocab] of the k active rows, their
    prompt indices and token positions → the k next token ids."""

    def sample(self, logits: np.ndarray, rows: np.ndarray, steps: np.ndarray) -> np.ndarray: ...


def row_generators(count: int, seed: int | None, stage: int) -> list[np.random.Generator]:
    """One generator per prompt: seeded from (seed, stage, i), else one secure generator shared
    by every row (its stream is secret; reproducibility is not asked of it)."""
    if seed is None:
        shared = _random.secure_generator()
        return [shared] * count
    return [_random.seeded_generator(seed, (stage, i)) for i in range(count)]


class NucleusSampler:
    """softmax(logits / temperature) restricted to the smallest set of tokens whose probability
    reaches ``top_p`` (Holtzman et al., ICLR 2020), sampled by inversion with one uniform per row
    and step from that row's generator.

    Args:
        generators: one generator per prompt index.
        temperature: > 0.
        top_p: in (0, 1].
    """

    def __init__(self, generators: Sequence[np.random.Generator], *, temperature: float = 1.0,
                 top_p: float = 0.95) -> None:
        if not (isinstance(temperature, (int, float)) and temperature > 0):
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        if not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
        self.generators = list(generators)
        self.temperature = float(temperature)
        self.top_p = float(top_p)

    def probabilities(self, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(token ids, probabilities) per row, most probable first, truncated to the nucleus
        (rows padded with probability 0)."""
        z = np.asarray(logits, dtype=np.float64) / self.temperature
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        top = min(_TOP, p.shape[1])
        ids = np.argpartition(-p, top - 1, axis=1)[:, :top]
        part = np.take_along_axis(p, ids, axis=1)
        order = np.argsort(-part, axis=1, kind="stable")
        ids, part = np.take_along_axis(ids, order, axis=1), np.take_along_axis(part, order, axis=1)
        short = np.cumsum(part, axis=1)[:, -1] < self.top_p
        if short.any():  # the nucleus is wider than the partial sort: sort those rows fully
            full = np.argsort(-p[short], axis=1, kind="stable")
            ids = np.concatenate([ids, np.zeros((ids.shape[0], p.shape[1] - top), np.int64)], 1)
            part = np.concatenate([part, np.zeros((part.shape[0], p.shape[1] - top))], 1)
            ids[short] = full
            part[short] = np.take_along_axis(p[short], full, axis=1)
        cum = np.cumsum(part, axis=1)
        # Keep a token when the mass before it is below top_p (the first token always).
        keep = np.concatenate([np.ones((cum.shape[0], 1), bool), cum[:, :-1] < self.top_p], 1)
        part = np.where(keep, part, 0.0)
        return ids, part / part.sum(axis=1, keepdims=True)

    def _uniforms(self, rows: np.ndarray) -> np.ndarray:
        return np.array([self.generators[r].random() for r in np.asarray(rows).tolist()])

    def sample_torch(self, logits: Any, rows: np.ndarray, steps: np.ndarray) -> Any:
        """The engine's fast path (float64 logits on the model's device): on a GPU the law runs
        there (:func:`torch_nucleus`), so the [k, vocab] logits never cross to the host; on the
        CPU it is :meth:`sample` itself, unchanged."""
        if logits.device.type == "cpu":
            return self.sample(logits.numpy(), rows, steps)
        return torch_nucleus(logits, self._uniforms(rows), self.temperature, self.top_p)

    def sample(self, logits: np.ndarray, rows: np.ndarray, steps: np.ndarray) -> np.ndarray:
        ids, p = self.probabilities(logits)
        u = self._uniforms(rows)
        cum = np.cumsum(p, axis=1)
        pick = (cum < u[:, None] * cum[:, -1:]).sum(axis=1)
        pick = np.minimum(pick, (p > 0).sum(axis=1) - 1)
        return ids[np.arange(len(ids)), pick]


def torch_nucleus(logits: Any, u: np.ndarray, temperature: float, top_p: float) -> Any:
    """:meth:`NucleusSampler.sample`'s law in torch, on the logits' device: the same nucleus
    (the 256 most probable tokens, or a full sort for rows whose nucleus is wider), the same
    inversion with one uniform ``u[row]`` per row. Float64 throughout; only tokens of exactly
    equal probability may be ordered differently (the law is the same)."""
    import torch

    z = logits.double() / temperature
    p = torch.softmax(z, dim=1)
    top = min(_TOP, p.shape[1])
    part, ids = torch.topk(p, top, dim=1, sorted=True)
    if bool((part.sum(dim=1) < top_p).any()):  # a nucleus wider than the partial sort
        part, ids = torch.sort(p, dim=1, descending=True, stable=True)
    cum = torch.cumsum(part, dim=1)
    keep = torch.cat([torch.ones_like(cum[:, :1], dtype=torch.bool), cum[:, :-1] < top_p], 1)
    part = torch.where(keep, part, torch.zeros_like(part))
    cum = torch.cumsum(part / part.sum(dim=1, keepdim=True), dim=1)
    uu = torch.as_tensor(u, dtype=torch.float64, device=logits.device)
    pick = (cum < uu[:, None] * cum[:, -1:]).sum(dim=1)
    pick = torch.minimum(pick, (part > 0).sum(dim=1) - 1)
    return ids.gather(1, pick[:, None]).squeeze(1)


Generator = Callable[[list[str], int], list[str]]


def generate_ids(lm: Any, prompts: Sequence[Sequence[int]], *, max_new_tokens: int,
                 sampler: TokenSampler, batch_size: int = 16,
                 progress: Any = None, device: str = "cpu") -> list[list[int]]:
    """The generated token ids of every prompt (each row's first EOS kept), in order.

    The one adapter onto the engine (see the module docstring); ``progress`` gets ``update(k)``
    whenever k prompts have finished; ``device`` is the engine's (``auto``, ``cpu``, ``cuda``).
    """
    from textdp.lm import get_engine

    # The sampler keys every draw by (row, step), so the engine's continuous batching (rows
    # leaving and joining, prompts sorted by length) changes no output.
    engine = get_engine(lm, device=device, batch_size=batch_size)
    return engine.generate(prompts, max_new_tokens=max_new_tokens, sampler=sampler,
                           progress=None if progress is None else progress.update)
