"""Deny-list (and allow-list) terms found on the key folding, so that spelling tricks do not
let a term through.

A term and a document are compared on their **keys** (:func:`textdp.text.fold.fold_key`, the
one folding every matcher uses): NFKC-like compatibility folding, case-folded (``Ｊｏｈｎ`` and
``JOHN`` are ``john``), nonspacing marks removed (``María`` is ``maria``, in NFC or NFD, and so
is ``Mar\u0323ia``), default-ignorable characters removed (a soft hyphen, ZWJ, ZWSP or a
variation selector inside ``jo\u00adhn`` does not hide it), confusables mapped to ASCII
(Cyrillic ``М\u0430ria`` is ``maria``), and any run of whitespace (NBSP, a double space, a
line break) read as one space, so a multi-word term matches however its words are separated.
A match is a whole word on the key (no letter, digit or ``_`` on either side: ``maria`` is
found in ``Maria-Garcia``, not in ``Mariana``) and is mapped back to the exact span of the
original characters it came from.

All terms are searched at once with an Aho–Corasick automaton (``pyahocorasick``): one pass
over a document whatever the number of terms (100k terms build in about a second, once).
The result is a function of one document alone; the caller passes whole documents (the
pipeline finds spans before it cuts a long document into segments).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from textdp.text.fold import Folded, fold_key, key_string

__all__ = ["DenyList", "deny_key"]

_WORD = re.compile(r"\w")


def deny_key(term: str) -> str:
    """The lookup key of a term (see the module docstring), stripped of outer spaces."""
    return key_string(term)


class DenyList:
    """Terms always masked, matched as whole words on their keys.

    Args:
        terms: the terms; those whose key is empty are ignored, duplicates kept once.
    """

    def __init__(self, terms: Iterable[str]) -> None:
        keys = (deny_key(t) for t in terms)
        self.keys: tuple[str, ...] = tuple(dict.fromkeys(k for k in keys if k))
        self._automaton = None

    def __len__(self) -> int:
        return len(self.keys)

    def __getstate__(self) -> dict:  # the automaton is rebuilt where it is used
        return {"keys": self.keys, "_automaton": None}

    def _built(self):  # noqa: ANN202 - ahocorasick.Automaton
        if self._automaton is None:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for key in self.keys:
                automaton.add_word(key, len(key))
            automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The [start, end) spans of ``text`` holding a term: sorted and disjoint, the leftmost
        match first, then the longest."""
        if not self.keys or not text:
            return []
        return self.find(fold_key(text))[0]

    def find(self, key: Folded) -> list[list[tuple[int, int]]]:
        """Per document of a key-folded batch, the original spans holding a term (as
        :meth:`spans` gives them for each document alone)."""
        bounds = key.bounds.tolist()
        out: list[list[tuple[int, int]]] = []
        automaton = self._built() if self.keys else None
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if automaton is None or hi == lo:
                out.append([])
                continue
            doc = key.text[lo:hi]
            found = []
            for last, length in automaton.iter(doc):
                a, b = last + 1 - length, last + 1
                if (a > 0 and _WORD.match(doc[a - 1])) or (b < len(doc) and _WORD.match(doc[b])):
                    continue
                found.append((a, b))
            found.sort(key=lambda s: (s[0], s[0] - s[1]))
            chosen: list[tuple[int, int]] = []
            reach = -1
            for a, b in found:
                if a >= reach:
                    chosen.append((a + lo, b + lo))
                    reach = b
            if not chosen or key.source is None:  # positions are the original's
                out.append(chosen)
                continue
            spans = np.array(chosen, dtype=np.int64)
            starts, ends = key.back(spans[:, 0], spans[:, 1])
            out.append(list(zip(starts.tolist(), ends.tolist(), strict=True)))
        return out
