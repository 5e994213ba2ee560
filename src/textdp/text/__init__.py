"""Tokenization with an exact round trip, token classes and case patterns.

Two views of the same segmentation:

* :func:`tokenize` / :func:`detokenize` — the readable view: a list of :class:`Token`
  ``(text, kind)`` whose concatenation is the input, byte for byte, for every Unicode string.
* :func:`split_batch` — the fast view used by the mechanisms: every document is split once by a
  C-level regular expression into alternating *structure* and *alphanumeric* runs, so that
  privatising a corpus never runs Python code per token.

Both agree on what a token is: a **word** is a letter (``[^\\W\\d_]``) followed by letters and
*joining marks*, a **number** a decimal digit followed by digits and joining marks, **whitespace**
a run of ``\\s``, **punctuation** a run of Unicode ``P*`` characters, and **other** a run of
anything else (symbols, emoji, control characters, a mark with no letter or digit before it).
``_`` is punctuation (Unicode Pc).

Joining marks (:func:`is_joining_mark`) are the combining marks (Unicode Mn, Mc, Me: accents of
NFD text, Indic vowel signs and viramas, variation selectors, the combining grapheme joiner,
enclosing keycaps) and four format characters (Cf) that sit *inside* words: ZERO WIDTH JOINER
U+200D, ZERO WIDTH NON-JOINER U+200C (Persian, Indic), WORD JOINER U+2060 and SOFT HYPHEN U+00AD.
They belong to the letter or digit before them, so ``re\\u0301sume\\u0301`` (NFD) is one word and
``दिल्ली`` is not cut at its vowel signs. Other Cf characters do not join: ZERO WIDTH SPACE
U+200B marks a word *boundary* by definition (Thai, Khmer), and bidi controls, BOM and tag
characters are not part of a word's spelling; they are "other" tokens. An emoji ZWJ sequence
(``👩\\u200d💻``) has no letter before its ZWJ, so it stays one "other" run.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import chain
from typing import NamedTuple

__all__ = [
    "Token",
    "TokenClass",
    "CasePattern",
    "tokenize",
    "detokenize",
    "case_pattern",
    "restore_case",
    "SplitBatch",
    "split_batch",
    "count_structure",
    "is_joining_mark",
    "lookup_key",
    "JOINERS",
]


class TokenClass(StrEnum):
    WORD = "word"
    NUMBER = "number"
    WHITESPACE = "whitespace"
    PUNCTUATION = "punctuation"
    OTHER = "other"
    IDENTIFIER = "identifier"  # an e-mail address, URL, … (textdp.text.identifiers): one unit


class Token(NamedTuple):
    text: str
    kind: TokenClass


def _is_punctuation(ch: str) -> bool:
    """The punctuation class: Unicode general category P* (so ``_``, Pc, is punctuation)."""
    return unicodedata.category(ch)[0] == "P"


# Format characters (Cf) that join the letters around them; see the module docstring.
JOINERS = "\u00ad\u200c\u200d\u2060"
# Dropped from lookup keys, as Unicode's NFKC_Casefold drops default-ignorable code points.
_IGNORABLE = dict.fromkeys(map(ord, JOINERS + "\u034f"), None) | dict.fromkeys(
    [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)], None)


def is_joining_mark(ch: str) -> bool:
    """A combining mark (Mn, Mc, Me) or one of :data:`JOINERS`: it continues the token before it."""
    return unicodedata.category(ch)[0] == "M" or ch in JOINERS


def lookup_key(word: str) -> str:
    """The vocabulary key of a token: NFKC of its case fold, joiners and variation selectors removed.

    ``ｈｅｌｌｏ``, ``HELLO``, ``ﬁne`` and NFD ``re\u0301sume\u0301`` get the keys ``hello``,
    ``hello``, ``fine`` and NFC ``résumé`` (an approximation of Unicode's NFKC_Casefold). An ASCII
    token's key is its lowercase form.
    """
    if word.isascii():
        return word.lower()
    folded = unicodedata.normalize("NFD", word.translate(_IGNORABLE)).casefold()
    return unicodedata.normalize("NFKC", folded)


_WORD = r"[^\W\d_]"  # one letter; a word token continues with letters and joining marks
_NUMBER = r"\d"
_WS = r"\s+"
_WS_RE = re.compile(_WS)


@cache
def _members() -> tuple[str, str]:
    """(punctuation, joining marks) as escaped character-class members, by one scan of Unicode.

    ``re`` has no ``\\p{P}`` or ``\\p{M}``, so the classes list their members (~0.4 s, on first
    use): a process that only privatises (the code-array path) never pays it.
    """
    punct, marks = [], []
    for c in map(chr, range(sys.maxunicode + 1)):
        if _is_punctuation(c):
            punct.append(c)
        elif is_joining_mark(c):
            marks.append(c)
    # Escape every member so that ']' '-' '^' '\\' are literal inside the class.
    return "".join(map(re.escape, punct)), "".join(map(re.escape, marks))


@cache
def _clitic_patterns() -> tuple[str, str]:
    """(clitic letters, the n of n't): the letters of an English contraction's clitic, which are
    punctuation here, not a word ("It|'s", "do|n't"; ``textdp.text._codes._mark_clitics`` is the
    same rule on code arrays, and a test holds the two together). A clitic follows an apostrophe
    (' or ’) that follows a letter: 's 'd 'm 're 've 'll, or 't after n (the n goes with it);
    then comes no letter, digit or joining mark."""
    marks = _members()[1]
    end = f"(?![^\\W_]|[{marks}])"
    clitic = (f"(?:(?<={_WORD}['’])(?:[sSdDmM]|[rR][eE]|[vV][eE]|[lL][lL])"
              f"|(?<=[nN]['’])[tT]){end}")
    return clitic, f"[nN](?=['’][tT]{end})"


@cache
def _clitic_second() -> str:
    """The second letter of a two-letter clitic ('re 've 'll): no word starts there either."""
    end = f"(?![^\\W_]|[{_members()[1]}])"
    return f"(?:(?<={_WORD}['’][rRvV])[eE]|(?<={_WORD}['’][lL])[lL]){end}"


@cache
def _alnum_patterns() -> tuple[str, str]:
    """(word, number) token patterns: a letter or digit, then its kind and joining marks; a
    word neither starts at a clitic nor takes the n of n't (:func:`_clitic_patterns`)."""
    marks = _members()[1]
    clitic, n_of_nt = _clitic_patterns()
    letter = f"(?!{n_of_nt}){_WORD}"
    return (f"(?!{clitic}|{_clitic_second()}){letter}(?:{letter}|[{marks}])*",
            f"{_NUMBER}[\\d{marks}]*")


@cache
def _split_re() -> re.Pattern[str]:
    # Alphanumeric runs (words and numbers) are the only tokens a mechanism may rewrite.
    word, number = _alnum_patterns()
    return re.compile(f"({word}|{number})")


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(token, punctuation, other) patterns, built on first use."""
    members = _members()[0]
    word, number = _alnum_patterns()
    clitic, n_of_nt = _clitic_patterns()
    punct = f"(?:[{members}]|{clitic}|{n_of_nt})+"
    other = f"[^\\w\\s{members}]+"  # everything else (marks with no letter or digit before them)
    token = re.compile(f"(?P<word>{word})|(?P<number>{number})|(?P<whitespace>{_WS})"
                       f"|(?P<punctuation>{punct})|(?P<other>{other})", re.DOTALL)
    return token, re.compile(punct), re.compile(other)


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into classified tokens; ``detokenize(tokenize(s)) == s`` for every string."""
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects str, got {type(text).__name__}")
    return [Token(m.group(), TokenClass(m.lastgroup)) for m in _patterns()[0].finditer(text)]


def detokenize(tokens: Iterable[Token | str]) -> str:
    """Concatenate tokens back into text (the exact inverse of :func:`tokenize`)."""
    return "".join(t if isinstance(t, str) else t.text for t in tokens)


class CasePattern(StrEnum):
    LOWER = "lower"
    TITLE = "title"
    UPPER = "upper"
    MIXED = "mixed"


def case_pattern(word: str) -> CasePattern:
    """The case pattern of a token: lower, Title, UPPER (≥ 2 letters, all upper) or mixed.

    A token whose letters have no case (e.g. CJK) counts as lower.
    """
    if not any(c.isupper() for c in word):
        return CasePattern.LOWER
    if len(word) > 1 and word.isupper():
        return CasePattern.UPPER
    if word[:1].isupper() and not any(c.isupper() for c in word[1:]):
        return CasePattern.TITLE
    return CasePattern.MIXED


def restore_case(replacement: str, original: str) -> str:
    """Give ``replacement`` (lowercase) the case pattern of ``original``.

    lower → as is; Title → first letter upper; UPPER → all upper; mixed (``iPad``, ``McDonald``)
    → the original's per-character mask, position by position (lowercase beyond its length), so
    that a word replaced by itself comes back byte for byte.
    """
    pattern = case_pattern(original)
    if pattern is CasePattern.LOWER:
        return replacement
    if pattern is CasePattern.UPPER:
        return replacement.upper()
    if pattern is CasePattern.TITLE:
        return replacement[:1].upper() + replacement[1:]
    return "".join(c.upper() if o.isupper() else c
                   for c, o in zip(replacement, original.ljust(len(replacement)), strict=False))


@dataclass(slots=True)
class SplitBatch:
    """A batch of documents split into structure runs (even slots) and alphanumeric runs (odd).

    ``parts[i]`` is ``re.split`` output for document ``i``: ``''.join(parts[i])`` is the document.
    ``words`` holds every alphanumeric run of the batch in order and ``counts[i]`` how many belong
    to document ``i``; :meth:`join` writes replacements back without a per-token Python loop.
    """

    parts: list[list[str]]
    words: list[str]
    counts: list[int]

    def join(self, replacements: Sequence[str]) -> list[str]:
        if len(replacements) != len(self.words):
            raise ValueError("one replacement per alphanumeric token is required")
        out: list[str] = []
        start = 0
        for parts, n in zip(self.parts, self.counts, strict=True):
            parts[1::2] = replacements[start : start + n]
            start += n
            out.append("".join(parts))
        return out

    def structure(self) -> str:
        """All structure runs of the batch, separated by a letter so runs never merge."""
        return "a".join(chain.from_iterable(p[0::2] for p in self.parts))


def split_batch(texts: Sequence[str]) -> SplitBatch:
    split = _split_re().split
    parts = [split(t) for t in texts]
    odd = [p[1::2] for p in parts]
    counts = [len(o) for o in odd]
    return SplitBatch(parts, list(chain.from_iterable(odd)), counts)


def count_structure(structure: str) -> dict[TokenClass, int]:
    """Count whitespace, punctuation and other tokens in :meth:`SplitBatch.structure` output."""
    _, punct_re, other_re = _patterns()
    return {
        TokenClass.WHITESPACE: len(_WS_RE.findall(structure)),
        TokenClass.PUNCTUATION: len(punct_re.findall(structure)),
        TokenClass.OTHER: len(other_re.findall(structure)),
    }
