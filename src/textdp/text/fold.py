"""One canonical form for every matcher, and the map from it back to the original characters.

Entities, identifiers, the deny-list and the allow-list look at a document through one
*folding*, so that a name or an address written with decomposed accents, marks added inside a
word, invisible characters or letters of another script that look the same is seen as the
plain word it displays. A span found on the folded text is mapped back to exactly the original
characters it came from; the text the user gets is built from the original, so text no span
covers comes back byte for byte.

The folding is a function of each **character** (a table, applied with numpy), in this order:

1. **compatibility decomposition** (NFKD): ``ﬁ`` → ``fi``, ``Ｍａｒｉａ`` (full width) and
   ``𝐌𝐚𝐫𝐢𝐚`` (mathematical bold) → ``Maria``, ``＠`` → ``@``, NBSP and the other spaces →
   a space, ``é`` → ``e`` + U+0301;
2. **nonspacing and enclosing marks removed** (Mn, Me: accents, a mark added inside a word,
   ``M⃝``); spacing marks (Mc, the vowel signs of Brahmic scripts) are kept;
3. **default-ignorable characters removed**: format characters (Cf: ZERO WIDTH SPACE, ZWJ, ZWNJ,
   WORD JOINER, SOFT HYPHEN, BOM, bidi controls, tags) and the other Default_Ignorable_Code_Point
   ranges (variation selectors, the combining grapheme joiner, Hangul fillers);
4. the rest recomposed within the character (NFC: a Hangul syllable stays one syllable), and
   decimal digits of every script written as ASCII digits (``٣`` → ``3``);
5. **confusables**: a letter, punctuation mark or symbol that Unicode's confusables data
   (UTS #39 ``confusables.txt``, as shipped by the ``confusable-homoglyphs`` package, never
   downloaded) lists as confusable with an ASCII one becomes that ASCII character — a letter
   becomes a letter of its own case (Cyrillic ``а`` → ``a``, ``І`` → ``I``, Greek ``ο`` →
   ``o``), a stroked Latin letter its base (``ł`` → ``l``, ``ø`` → ``o``, ``đ`` → ``d``), and
   a Latin ligature its letters where the data says so (``æ`` → ``ae``).

That is the **cased** form, which the entity model and the identifier recognisers read (spaCy
relies on case). Matchers that ignore case (the deny- and allow-lists) read the **key** form:
the cased form case-folded (``ß`` → ``ss``, ``İ`` → ``i``) and folded again, dashes (Unicode
Pd: ``-``, ``‐``, ``–``, ``—``) read as spaces, and every run of whitespace read as one space
(``Maria-Garcia``, ``Maria – Garcia`` and ``Maria\u00a0Garcia`` are all ``maria garcia``).

Offsets: a folded character comes from one original character (a character may fold to none or
to several). A span ``[a, b)`` of the folded text maps to the original characters from the one
``a`` came from to the one ``b − 1`` came from, plus the removed characters (marks, invisible
characters) right after it, within its document: ``Jose\\u0301`` is masked whole.

What the folding cannot see: look-alikes made of ASCII alone (``l``/``I``/``1``, ``O``/``0``,
``rn`` for ``m``); homoglyphs between two non-Latin scripts (only confusables with an ASCII
character are mapped); a letter of a non-Latin script for which the data has no ASCII
look-alike; words spelled out (``maria at example dot com`` is left to the e-mail recogniser);
misspellings and transliterations (``Mariya``). Folding also merges what it should not on
purpose: ``résumé`` and ``resume`` are one word to the matchers, and so are words of Brahmic or
Hebrew script that differ only in nonspacing vowel signs (a deny-list term then masks both).

Cost: ASCII text is not copied (the cased form is the text itself); other text costs two numpy
table look-ups per character and one decode (figures in docs/entities.md). The tables (a 4-byte
and a 1-byte entry per code point of planes 0–3 and 14, per form) are built once per process
where non-ASCII text is first folded, in one to two seconds.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from dataclasses import dataclass
from importlib.resources import files

import numpy as np

__all__ = ["Folded", "FoldedBatch", "fold", "fold_key", "fold_string", "key_string", "CONFUSABLES_SOURCE"]

#: Where the confusables come from (the report and docs name it).
CONFUSABLES_SOURCE = "confusable-homoglyphs (Unicode UTS #39 confusables.txt)"
_ENC = "utf-32-le"
_ERR = "surrogatepass"
# Code points whose folding is computed: planes 0–3 (every assigned character but those of
# plane 14) and plane 14 (tags, variation selectors supplement); the private-use planes 15–16
# and the unassigned planes 4–13 fold to themselves.
_SIZE = 0xE1000
_RANGES = ((0, 0x40000), (0xE0000, 0xE1000))
# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) outside category Cf, which is
# removed as a whole: the combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# Mongolian free variation selectors, variation selectors, and the reserved tag-plane block.
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
                     (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
                     (0xE0000, 0xE0FFF))
_BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _ignorable(c: int) -> bool:
    if unicodedata.category(chr(c)) == "Cf":
        return True
    return any(a <= c <= b for a, b in _IGNORABLE_RANGES)


def _dropped(ch: str) -> bool:
    """Removed by the folding: a nonspacing or enclosing mark, or a default-ignorable character."""
    return unicodedata.category(ch) in ("Mn", "Me") or _ignorable(ord(ch))


def _base(ch: str) -> str:
    """Steps 1–4 of the module docstring for one character (no confusables)."""
    kept = "".join(c for c in unicodedata.normalize("NFKD", ch) if not _dropped(c))
    kept = unicodedata.normalize("NFC", kept)
    return "".join(str(unicodedata.decimal(c)) if unicodedata.category(c) == "Nd" else c
                   for c in kept)


def _kind(ch: str) -> str:
    """'L' letter, 'P' punctuation or symbol, '' neither (what a confusable may map between)."""
    cat = unicodedata.category(ch)[0]
    return "L" if cat == "L" else "P" if cat in "PS" else ""


@functools.cache
def _confusables() -> dict[str, str]:
    """Non-ASCII character → the ASCII string it is confusable with (step 5).

    The package stores ``confusables.txt`` as an undirected relation (each pair both ways). A
    character with a single-character look-alike maps to an ASCII member of its class (the
    characters connected to it) of the same kind and, for letters, of the same case where there
    is one; a character whose one entry is a sequence (``ł`` → ``l`` + U+0338) is a source of
    the data and maps to that sequence folded, when that is ASCII letters (one letter, or the
    letters of a Latin ligature).
    """
    data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json")
                      .read_text("utf-8"))

    def clean(s: str) -> str:
        return "".join(c for c in s if c not in _BIDI)

    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    out: dict[str, str] = {}
    for key, entries in data.items():
        key = clean(key)
        if len(key) != 1:
            continue
        for entry in entries:
            other = clean(entry["c"])
            if len(other) == 1:
                parent[find(key)] = find(other)
            elif len(entries) == 1 and not key.isascii() and _kind(key) == "L":
                folded = "".join(_base(c) for c in other)
                if folded.isascii() and folded.isalpha() and _same_case(key, folded[0]) and (
                        len(folded) == 1 or unicodedata.name(key, "").startswith("LATIN")):
                    out[key] = folded
    classes: dict[str, list[str]] = {}
    for x in list(parent):
        classes.setdefault(find(x), []).append(x)
    for members in classes.values():
        ascii_members = sorted(m for m in members if m.isascii())
        if not ascii_members:
            continue
        for m in members:
            kind = _kind(m)
            if m.isascii() or not kind or m in out:
                continue
            same = [a for a in ascii_members if _kind(a) == kind]
            if kind == "L":
                # Never across case: the entity screen starts at a capital (Cyrillic "Б" is
                # listed with "b", and stays).
                same = [a for a in same if _same_case(m, a)]
            if same:
                out[m] = same[0]
    return out


def _same_case(ch: str, ascii_letter: str) -> bool:
    """A caseless letter may map to either case; a cased one to its own case only."""
    if not (ch.isupper() or ch.islower()):
        return True
    return ch.isupper() == ascii_letter.isupper()


def _fold_char(ch: str) -> str:
    """The cased folding of one character (module docstring, steps 1–5)."""
    if ch.isascii():
        return ch
    confusable = _confusables()
    base = _base(ch)
    return "".join(confusable.get(c, c) if not c.isascii() else c for c in base)


def _key_char(ch: str) -> str:
    """The key folding of one character: the cased folding, case-folded, folded again."""
    out = _fold_char(ch)
    for _ in range(4):  # a fixed point within two rounds for every character of Unicode 15
        again = "".join(_fold_char(c) for c in out.casefold())
        if again == out:
            break
        out = again
    # A dash joins the words of a name as a space does (``Maria-Garcia``, ``Maria Garcia``).
    return "".join(" " if unicodedata.category(c) == "Pd" else c for c in out)


@dataclass(frozen=True, slots=True)
class _Table:
    """A per-character folding as arrays: ``length[c]`` characters replace code point ``c``;
    one of them is ``single[c]``, several are ``flat[single[c]:single[c] + length[c]]``."""

    single: np.ndarray  # uint32
    length: np.ndarray  # uint8
    flat: np.ndarray  # uint32


def _table(function, changes) -> _Table:  # noqa: ANN001 - str -> str, int -> bool
    single = np.arange(_SIZE, dtype=np.uint32)
    length = np.ones(_SIZE, dtype=np.uint8)
    flat: list[int] = []
    for c in _candidates(changes):
        ch = chr(c)
        out = function(ch)
        if out == ch:
            continue
        length[c] = len(out)
        if len(out) == 1:
            single[c] = ord(out)
        elif out:
            single[c] = len(flat)
            flat += map(ord, out)
    return _Table(single, length, np.array(flat, dtype=np.uint32))


_CHANGED_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Nd"})


def _candidates(changes) -> list[int]:  # noqa: ANN001 - int -> bool
    """The code points a folding may change (a cheap screen: the others fold to themselves)."""
    confusable = _confusables()
    category, decomposition = unicodedata.category, unicodedata.decomposition
    out = [c for c in range(128) if changes(c)]  # ASCII: only case (and, in keys, dashes)
    for lo, hi in _RANGES:
        for c in range(max(lo, 128), hi):
            ch = chr(c)
            cat = category(ch)
            if cat == "Cn":
                if _ignorable(c):
                    out.append(c)
            elif (cat in _CHANGED_CATEGORIES or decomposition(ch) or ch in confusable
                  or changes(c) or 0x3164 == c or 0x115F <= c <= 0x1160 or 0x17B4 <= c <= 0x17B5
                  or 0xFFA0 == c):
                out.append(c)
    return out


def _never(c: int) -> bool:
    return False


def _case_changes(c: int) -> bool:
    ch = chr(c)
    return ch.casefold() != ch or unicodedata.category(ch) == "Pd"


@functools.cache
def _cased_table() -> _Table:
    return _table(_fold_char, _never)


@functools.cache
def _key_table() -> _Table:
    return _table(_key_char, _case_changes)


def fold_string(text: str) -> str:
    """The cased folding of a short string (a term, a test), as :func:`fold` gives it."""
    return fold(text).text


def key_string(text: str) -> str:
    """The key folding of a short string (a deny- or allow-list term), outer spaces stripped."""
    return fold_key(text).text.strip()


@dataclass(frozen=True, slots=True, eq=False)
class Folded:
    """A folded text and the way back to the original.

    Attributes:
        text: the folded text (all documents of a batch, joined).
        bounds: where each document starts and ends in :attr:`text`.
        source: for each folded character, the index of the original character it came from;
            ``None`` where that is its own index (every character folded to one).
        original_bounds: the documents' offsets in the original text.
        identity: whether :attr:`text` is the original text itself (ASCII, for the cased
            folding).
    """

    text: str
    bounds: np.ndarray
    source: np.ndarray | None
    original_bounds: np.ndarray
    identity: bool = False

    def docs(self) -> list[str]:
        """The folded documents."""
        b = self.bounds.tolist()
        return [self.text[x:y] for x, y in zip(b[:-1], b[1:], strict=True)]

    def back(self, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The original spans of folded spans ``[starts, ends)`` (non-empty): from the original
        character of the first folded one to the original character of the last, and the
        characters removed right after it within its document (module docstring)."""
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        if self.source is None or not starts.size:
            return starts, ends
        src = self.source
        a = src.take(starts)
        last = src.take(ends - 1)
        kept = _kept(src)
        n = int(self.original_bounds[-1])
        nxt = np.append(kept, n).take(np.searchsorted(kept, last, "right"))
        doc_end = self.original_bounds.take(
            np.searchsorted(self.original_bounds, last, "right"))
        return a, np.minimum(nxt, doc_end)


def _kept(source: np.ndarray) -> np.ndarray:
    """The original characters that a folded character comes from, ascending and once each."""
    if not source.size:
        return source
    first = np.empty(source.size, dtype=bool)
    first[0] = True
    np.not_equal(source[1:], source[:-1], out=first[1:])
    return source[first]


def _bounds(texts_or_bounds: np.ndarray | None, n: int) -> np.ndarray:
    if texts_or_bounds is None:
        return np.array([0, n], dtype=np.int64)
    return np.asarray(texts_or_bounds, dtype=np.int64)


def _apply(table: _Table, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(folded code points, original index of each, or None where every length is one)."""
    big = codes >= _SIZE
    safe = np.where(big, 0, codes) if big.any() else codes
    length = table.length.take(safe)
    out = table.single.take(safe)
    if big.any():
        length[big] = 1
        out[big] = codes[big]
    if (length == 1).all():
        return out, None
    source = np.repeat(np.arange(codes.size, dtype=np.int64), length)
    out = out.take(source)
    multi = np.flatnonzero(length.take(source) > 1)
    if multi.size:
        first = np.cumsum(length, dtype=np.int64) - length
        within = multi - first.take(source.take(multi))
        out[multi] = table.flat.take(out[multi].astype(np.int64) + within)
    return out, source


def _decode(codes: np.ndarray) -> str:
    return codes.astype("<u4", copy=False).tobytes().decode(_ENC, _ERR)


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)


def fold(text: str, bounds: np.ndarray | None = None, codes: np.ndarray | None = None) -> Folded:
    """The cased folding of ``text`` (one document, or a batch joined with its document
    ``bounds``; ``codes``: its UTF-32 code points, if the caller has them). A function of each
    character, so a batch folds as its documents would one by one."""
    n = len(text)
    original = _bounds(bounds, n)
    if text.isascii():
        return Folded(text, original, None, original, identity=True)
    folded, source = _apply(_cased_table(), _codes(text) if codes is None else codes)
    if source is None:
        out = _decode(folded)
        return Folded(out, original, None, original, identity=out == text)
    return Folded(_decode(folded), np.searchsorted(source, original).astype(np.int64), source,
                  original)


def fold_key(text: str, bounds: np.ndarray | None = None,
             codes: np.ndarray | None = None) -> Folded:
    """The key folding of ``text``: the cased folding case-folded and folded again, every run of
    whitespace one space (a run never crosses a document bound)."""
    n = len(text)
    original = _bounds(bounds, n)
    if text.isascii():
        return _ascii_key(text, original)
    folded, source = _apply(_key_table(), _codes(text) if codes is None else codes)
    space = _is_space(folded)
    if source is None:
        source = np.arange(n, dtype=np.int64)
    keep = _keep(space, np.searchsorted(source, original[:-1]))
    folded = np.where(space, np.uint32(32), folded)[keep]
    source = source[keep]
    return Folded(_decode(folded), np.searchsorted(source, original).astype(np.int64), source,
                  original)


def _keep(space: np.ndarray, doc_start: np.ndarray) -> np.ndarray:
    """The first character of every whitespace run and every other character (a run never
    crosses a document start)."""
    keep = np.ones(space.size, dtype=bool)
    keep[1:] = ~(space[1:] & space[:-1])
    keep[doc_start[doc_start < space.size]] = True
    return keep


_ASCII_SPACE = np.array([chr(c).isspace() or c == 45 for c in range(128)])  # "-" reads as " "


def _ascii_key(text: str, original: np.ndarray) -> Folded:
    """:func:`fold_key` of ASCII text: lower case, dashes and whitespace runs as one space."""
    codes = np.frombuffer(text.lower().encode("ascii"), dtype=np.uint8)
    space = _ASCII_SPACE.take(codes)
    if not (space[1:] & space[:-1]).any():  # no run to collapse: positions are kept
        out = np.where(space, np.uint8(32), codes).tobytes().decode("ascii")
        return Folded(out, original, None, original)
    keep = _keep(space, original[:-1])
    source = np.flatnonzero(keep)
    out = np.where(space, np.uint8(32), codes)[keep].tobytes().decode("ascii")
    return Folded(out, np.searchsorted(source, original).astype(np.int64), source, original)


@functools.cache
def _space_table() -> np.ndarray:
    table = np.zeros(0x3001, dtype=bool)
    for c in range(0x3001):
        table[c] = chr(c).isspace()
    return table


def _is_space(codes: np.ndarray) -> np.ndarray:
    table = _space_table()
    return table.take(np.minimum(codes, table.size - 1)) & (codes < table.size)


class FoldedBatch:
    """A batch of documents (joined, with their bounds) folded once: :attr:`cased` for the
    recognisers that read case (entities, identifiers), :attr:`key` for the term lists, built
    on first use."""

    def __init__(self, text: str, bounds: np.ndarray | None = None,
                 codes: np.ndarray | None = None) -> None:
        self.original = text
        self.original_bounds = _bounds(bounds, len(text))
        self._codes = codes

    @functools.cached_property
    def cased(self) -> Folded:
        return fold(self.original, self.original_bounds, self._codes)

    @functools.cached_property
    def key(self) -> Folded:
        return fold_key(self.original, self.original_bounds, self._codes)
