"""The recognition stage: identifiers and entities resolved into one set of spans.

:class:`Recognisers` runs both families of the recogniser registry (:mod:`textdp.text.recognisers`)
— the identifiers (:class:`textdp.text.identifiers.Identifiers`: the built-in kinds, the user's
patterns, the deny-list) and the entities (:class:`textdp.text.entities.Entities`: the model, the
gazetteers, the addresses, the user's recognisers, the allow-list) — on one folding of a batch,
and resolves where their spans overlap, for :func:`textdp.text._codes.encode_batch`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from textdp.text.fold import FoldedBatch
from textdp.text.recognisers import ALLOWED

if TYPE_CHECKING:
    from textdp.text.entities import Entities

__all__ = ["Recognisers"]

_JOINERS = np.array([ord("-"), ord("'"), ord("’"), 0x2010, 0x2011], dtype=np.uint32)
_APOSTROPHES = np.array([ord("'"), ord("’")], dtype=np.uint32)
#: Lower-case particles of surnames (de Vries, van der Berg, da Silva, bin Said, al Amin).
_PARTICLES = re.compile(r"(?:[ \t]+(?:de|da|di|do|du|del|della|der|den|des|dos|das|van|von|la|le"
                        r"|bin|ibn|al|el|ter|ten|op|zu))+[ \t]+")
_PARTICLES_MAX = 20


class Recognisers:
    """Identifiers and entities as one recogniser of spans for
    :func:`textdp.text._codes.encode_batch`: kinds are the identifier kinds (their indices
    unchanged), then the entity kinds, then :data:`ALLOWED`.

    Where spans overlap, identifiers (and deny-list terms) win, then allow-list terms; an
    entity keeps what is left of it, cut at the winners and widened to whole words (a word is
    never split into an entity and leftover pieces; a closing possessive ``'s`` is no piece of
    the name: ``[PERSON]'s``); overlapping entities are merged into one (``address`` if one of
    them is, else the first).
    """

    def __init__(self, identifiers: Any, entities: Entities) -> None:
        self.identifiers = identifiers
        self.entities = entities
        self.identifier_kinds: tuple[str, ...] = (identifiers.kinds if identifiers is not None
                                                  else ())
        self.kinds = (*self.identifier_kinds, *entities.kinds, ALLOWED)
        twice = sorted({k for k in self.kinds if self.kinds.count(k) > 1})
        if twice:
            raise ValueError(f"kind {twice[0]!r} is both an identifier kind and an entity kind; "
                             "give the pattern or the recogniser another name")
        self._index = {k: i for i, k in enumerate(self.kinds)}

    def spans(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The spans of one whole document (as :meth:`find` gives them for a batch of one): a
        long document's spans are found before it is cut into segments, so no cut changes them."""
        from textdp.text._codes import _ENC, _ERR, _classes

        codes = np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)
        if not codes.size:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, empty
        cls, _ = _classes(codes)
        return self.find([text], text, codes, cls, np.array([0, codes.size], dtype=np.int64))

    def label(self, kind: str) -> str:
        if kind == ALLOWED:
            return ""
        if kind in self.entities.kinds:
            return self.entities.label(kind)
        return self.identifiers.label(kind)

    def find(self, texts: Sequence[str], text: str, codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The spans of a batch as :meth:`textdp.text.identifiers.Identifiers.find` returns them:
        (starts, ends, kind indices), sorted, disjoint, non-empty, within a document."""
        from textdp.text._codes import DIGIT, MARK, _ranges

        folded = FoldedBatch(text, doc_bounds, codes)  # once, for every recogniser
        if self.identifiers is not None:
            starts, ends, kinds = self.identifiers.find(texts, text, codes, cls, doc_bounds,
                                                        folded=folded)
        else:
            starts = ends = kinds = np.empty(0, dtype=np.int64)
        found = self.entities.find(texts, folded=folded)
        if not any(found):
            return starts, ends, kinds
        n = codes.size
        taken = np.zeros(n + 1, dtype=bool)
        if starts.size:
            taken[_ranges(starts, ends - starts)[0]] = True
        word = (cls <= DIGIT) | (cls == MARK)
        # A hyphen or apostrophe between letters joins a word for widening (Ji-woo, O'Brien):
        # the model may tag "woo Müller" and leave "Ji-" out.
        joiner = np.zeros(n, dtype=bool)
        if n > 2:
            joiner[1:-1] = np.isin(codes[1:-1], _JOINERS) & word[:-2] & word[2:]
            # ...but not the apostrophe of a possessive "'s" that ends a word: "Maria's" is
            # "[PERSON]'s" (the clitic belongs to the sentence, and tells nothing of the name).
            clitic = np.isin(codes[1:-1], _APOSTROPHES) & ((codes[2:] | 32) == ord("s"))
            clitic[:-1] &= ~word[3:]
            joiner[1:-1] &= ~clitic
        rows: list[tuple[int, int, int]] = []
        allowed, entities = [], []
        for d, spans in enumerate(found):
            base = int(doc_bounds[d])
            for a, b, kind in spans:
                (allowed if kind == ALLOWED else entities).append((base + a, base + b, kind, d))
        for a, b, _, _ in sorted(allowed):
            if not taken[a:b].any():
                taken[a:b] = True
                rows.append((a, b, self._index[ALLOWED]))
        for a, b, kind in self._merged(entities, word | joiner, doc_bounds, text):
            rows += self._pieces(a, b, kind, taken, word)
        if not rows:
            return starts, ends, kinds
        extra = np.array(rows, dtype=np.int64)
        starts = np.concatenate([starts, extra[:, 0]])
        ends = np.concatenate([ends, extra[:, 1]])
        kinds = np.concatenate([kinds.astype(np.int64), extra[:, 2]])
        order = np.argsort(starts, kind="stable")
        return starts[order], ends[order], kinds[order]

    @staticmethod
    def _merged(entities: list[tuple[int, int, str, int]], word: np.ndarray,
                doc_bounds: np.ndarray, text: str) -> list[tuple[int, int, str]]:
        """Entity spans widened to whole words within their document, overlapping ones merged,
        and two people's spans with only a name particle between them (``Shirin de Vries``:
        the gazetteers find the given name and the surname, the particle is the name's too)."""
        out: list[list[Any]] = []
        for a, b, kind, d in sorted(entities):
            lo, hi = int(doc_bounds[d]), int(doc_bounds[d + 1])
            while a > lo and word[a - 1] and word[a]:
                a -= 1
            while b < hi and word[b] and word[b - 1]:
                b += 1
            if out and out[-1][3] == d and (a < out[-1][1] or (
                    kind == out[-1][2] == "person" and a - out[-1][1] <= _PARTICLES_MAX
                    and _PARTICLES.fullmatch(text, out[-1][1], a) is not None)):
                last = out[-1]
                last[1] = max(last[1], b)
                if kind == "address":
                    last[2] = kind
            else:
                out.append([a, b, kind, d])
        return [(a, b, kind) for a, b, kind, _ in out]

    def _pieces(self, a: int, b: int, kind: str, taken: np.ndarray,
                word: np.ndarray) -> list[tuple[int, int, int]]:
        """What is left of entity [a, b) outside the spans already taken, trimmed to words."""
        free = ~taken[a:b]
        if not free.any():
            return []
        edges = np.flatnonzero(np.diff(np.concatenate([[False], free, [False]]).astype(np.int8)))
        out = []
        index = self._index[kind]
        for s, e in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            s, e = a + s, a + e
            inner = np.flatnonzero(word[s:e])
            if not inner.size:
                continue
            s, e = s + int(inner[0]), s + int(inner[-1]) + 1
            taken[s:e] = True
            out.append((s, e, index))
        return out

