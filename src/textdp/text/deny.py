"""Deny-list terms found on a lookup key, so that spelling tricks do not let a term through.

A term and a document are compared on their **keys**: NFKC, case-folded (``Ｊｏｈｎ`` and
``JOHN`` are ``john``), with default-ignorable and format characters removed (a soft hyphen,
ZWJ, ZWSP or a variation selector inside ``jo\u00adhn`` does not hide it), and any run of
whitespace (NBSP, a double space, a line break) read as one space, so a multi-word term matches
however its words are separated. A match is a whole word on the key (no letter, digit or ``_``
on either side) and is mapped back to the exact span of the original characters it came from.

All terms are searched at once with an Aho–Corasick automaton (``pyahocorasick``): one pass
over a document whatever the number of terms (100k terms build in about a second, once).
The result is a function of one document alone; the caller passes whole documents (the
pipeline finds spans before it cuts a long document into segments).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import numpy as np

__all__ = ["DenyList", "deny_key"]

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) outside category Cf, which is
# removed as a whole: the combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# Mongolian free variation selectors, variation selectors, and the reserved tag-plane block.
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
                     (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
                     (0xE0000, 0xE0FFF))
_WORD = re.compile(r"\w")
# ASCII whitespace as str.isspace() sees it (the slow path uses isspace() itself).
_ASCII_SPACE = np.zeros(128, dtype=bool)
_ASCII_SPACE[[c for c in range(128) if chr(c).isspace()]] = True


def _ignorable(ch: str) -> bool:
    if unicodedata.category(ch) == "Cf":
        return True
    c = ord(ch)
    return any(a <= c <= b for a, b in _IGNORABLE_RANGES)


def _fold(piece: str) -> str:
    """NFKC case fold of one base character and its marks (NFKC again: folding may denormalise)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", piece).casefold())


def _key_map(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """(key of ``text``, start and end in ``text`` of the characters each key character came
    from). Whitespace runs become one space; ignorable characters vanish."""
    n = len(text)
    if text.isascii():  # no ignorable characters, NFKC is the identity, case fold is lower()
        codes = np.frombuffer(text.lower().encode("ascii"), dtype=np.uint8)
        space = _ASCII_SPACE[codes]
        keep = np.ones(n, dtype=bool)
        keep[1:] = ~(space[1:] & space[:-1])  # the first of a whitespace run stays, as " "
        starts = np.flatnonzero(keep)
        ends = np.append(starts[1:], n)
        key = np.where(space, np.uint8(32), codes)[keep].tobytes().decode("ascii")
        return key, starts, ends
    out: list[str] = []
    starts_l: list[int] = []
    ends_l: list[int] = []
    i = 0
    while i < n:
        ch = text[i]
        if ch.isspace():
            j = i + 1
            while j < n and (text[j].isspace() or _ignorable(text[j])):
                j += 1
            if not out or out[-1] != " ":
                out.append(" ")
                starts_l.append(i)
                ends_l.append(j)
            else:  # a space right after an ignorable-separated run: one run
                ends_l[-1] = j
            i = j
            continue
        if _ignorable(ch):
            i += 1
            continue
        j = i + 1  # the marks that compose with it (NFKC composes é from e + U+0301)
        while j < n and (unicodedata.combining(text[j]) or _ignorable(text[j])):
            j += 1
        folded = _fold("".join(c for c in text[i:j] if not _ignorable(c)))
        for c in folded:
            out.append(" " if c.isspace() else c)
            starts_l.append(i)
            ends_l.append(j)
        i = j
    return ("".join(out), np.array(starts_l, dtype=np.int64), np.array(ends_l, dtype=np.int64))


def deny_key(term: str) -> str:
    """The lookup key of a term (see the module docstring), stripped of outer spaces."""
    return _key_map(term)[0].strip()


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
        key, starts, ends = _key_map(text)
        found = []
        for last, length in self._built().iter(key):
            a, b = last + 1 - length, last + 1
            if (a > 0 and _WORD.match(key[a - 1])) or (b < len(key) and _WORD.match(key[b])):
                continue
            found.append((a, b))
        found.sort(key=lambda s: (s[0], s[0] - s[1]))
        out: list[tuple[int, int]] = []
        reach = -1
        for a, b in found:
            if a >= reach:
                out.append((int(starts[a]), int(ends[b - 1])))
                reach = b
        return out
