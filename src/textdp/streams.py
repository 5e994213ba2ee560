"""Document streams: where each document's randomness comes from.

Unseeded, one secure generator (OS entropy) serves every document. Seeded, document i draws from
its own generator derived from (seed, i) — mechanism noise first, then the random words of
``oov="random"`` — so a seeded run's output depends neither on how documents are grouped into
batches nor on the process that runs them. A long document is privatised in segments
(:func:`textdp.pipeline._segments`); its later segments continue its one stream where the
previous segment left it (the carried state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from textdp import _random

__all__ = ["DocumentStreams", "Layout"]


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the pieces of a batch come from: per piece, its document's corpus ``position``,
    whether it ``continued`` an earlier segment of that document, and whether it ``continues``
    in a later one; ``owner`` is the document's index in the call to
    :meth:`textdp.pipeline.Privatizer.run`."""

    position: np.ndarray
    continued: np.ndarray
    continues: np.ndarray
    owner: np.ndarray

    @classmethod
    def whole(cls, start: int, n: int) -> Layout:
        no = np.zeros(n, dtype=bool)
        return cls(np.arange(start, start + n, dtype=np.int64), no, no, np.arange(n))

    @classmethod
    def of(cls, start: int, rows: list[tuple[int, int, bool]]) -> Layout:
        owner, index, last = (np.array(c) for c in zip(*rows, strict=True))
        owner = owner.astype(np.int64)
        return cls(owner + start, index > 0, ~last.astype(bool), owner)


class DocumentStreams:
    """The generators of a run (see the module docstring). ``seed`` None: one secure generator;
    an integer: one generator per document position, segments continuing it."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._rng = _random.secure_generator() if seed is None else None
        self._generators = _random.DocumentGenerators(seed) if seed is not None else None
        # (document position, generator state) of a document whose next segment continues it.
        self._carry: tuple[int, dict[str, Any]] | None = None
        self._carry_generator: np.random.Generator | None = None  # receives a carried state

    def new_call(self) -> None:
        """A document never spans two calls of :meth:`textdp.pipeline.Privatizer.run`."""
        self._carry = None

    def draw(self, ids: np.ndarray, docs: np.ndarray, oov_docs: np.ndarray | None,
             layout: Layout, n_docs: int, vocabulary_size: int,
             draw_ids: Callable[[np.ndarray, np.random.Generator, np.ndarray | None], Any],
             concat: Callable[[list[Any]], Any],
             levels: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        """Mechanism noise for ``ids`` (``draw_ids(ids, generator, levels)``, joined by
        ``concat``) and, when ``oov_docs`` is given, random words for OOV tokens; ``docs`` and
        ``oov_docs`` are the (sorted) batch documents of each."""
        v = vocabulary_size
        if self.seed is None:
            noise = draw_ids(ids, self._rng, levels)
            rand = self._rng.integers(v, size=oov_docs.size) if oov_docs is not None else None
            return noise, rand
        # Seeded: document i draws from its own generator, mechanism noise first, then OOV words;
        # the segments of a long document each do so in turn, continuing the same stream.
        bounds = np.searchsorted(docs, np.arange(n_docs + 1))
        if oov_docs is not None:
            oov_bounds = np.searchsorted(oov_docs, np.arange(n_docs + 1))
            active = np.flatnonzero((np.diff(bounds) > 0) | (np.diff(oov_bounds) > 0))
        else:
            active = np.flatnonzero(np.diff(bounds) > 0)
        parts, rand_parts = [], []
        fresh = self._generators.many(layout.position[active[~layout.continued[active]]])
        for d in active.tolist():
            g = self._continued(int(layout.position[d])) if layout.continued[d] else next(fresh)
            parts.append(draw_ids(ids[bounds[d]:bounds[d + 1]], g,
                                  None if levels is None else levels[bounds[d]:bounds[d + 1]]))
            if oov_docs is not None:
                rand_parts.append(g.integers(v, size=int(oov_bounds[d + 1] - oov_bounds[d])))
            if layout.continues[d]:
                self._carry = (int(layout.position[d]), g.bit_generator.state)
        if not parts:
            parts = [draw_ids(ids[:0], _random.secure_generator(),
                              None if levels is None else levels[:0])]  # draws nothing
        noise = concat(parts)
        rand = np.concatenate(rand_parts) if oov_docs is not None else None
        return noise, rand

    def _continued(self, position: int) -> np.random.Generator:
        """The generator of a later segment of document ``position``: where the previous one
        left it, or fresh when no earlier segment drew anything."""
        if self._carry is None or self._carry[0] != position:
            return _random.document_generator(self.seed, position)
        if self._carry_generator is None:
            self._carry_generator = _random.seeded_generator(self.seed)
        self._carry_generator.bit_generator.state = self._carry[1]
        return self._carry_generator
