"""The fast view of a batch: documents as one array of Unicode code points, tokens found by numpy.

:func:`textdp.text.split_batch` splits each document with a C-level regular expression, but it
still creates two Python strings per token and the caller then lowercases, looks up and case-restores
them one call per token. Here a whole batch is concatenated, encoded once to UTF-32 and handled as
a ``uint32`` array; document boundaries are offsets into it, so a document may contain any
character (NUL included):

* every code point gets its class (letter, digit, whitespace, punctuation, other — the same
  definitions as the regular expressions in :mod:`textdp.text`, applied character by character);
  a joining mark takes the class of the letter or digit before it (other if there is none);
  identifier spans (:mod:`textdp.text.identifiers`) are overwritten with one class of their own;
  runs start where the class changes, where a document starts and where an identifier starts;
* a token is looked up in a vocabulary by a polynomial hash of its lowercase code points (prefix
  sums, mod 2^64) and then **verified** code point by code point against the vocabulary key, so
  the lookup is exact (a hash collision only costs a failed match, never a wrong one);
* replacements are copied from pre-encoded pools of the vocabulary words (lower, Title, UPPER),
  the output is assembled by one gather and decoded once.

Only tokens containing non-ASCII code points take a Python call each (their lookup key is
:func:`textdp.text.lookup_key`, their case pattern :func:`textdp.text.case_pattern`); everything
else is array work.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

LETTER, DIGIT, WHITESPACE, PUNCTUATION, OTHER, NON_ASCII, MARK, IDENTIFIER = range(8)
_ENC = "utf-32-le"
_ERR = "surrogatepass"

# Case patterns, as in textdp.text.CasePattern.
LOWER, TITLE, UPPER, MIXED = range(4)

# Base of the polynomial key Σ c_i·129^i (mod 2^64). 129 is odd (invertible mod 2^64, so keys of
# substrings come from prefix sums) and larger than every ASCII code, so for ASCII strings of at
# most _EXACT_LEN code points the key is the exact base-129 number: no two such strings share it.
_P = 129
_P_INV = pow(_P, -1, 2**64)
_EXACT_LEN = 9  # 129^9 · 128 < 2^64
_MASK64 = 2**64 - 1


def _char_class(ch: str) -> int:
    """The class of one character, by the definitions of :mod:`textdp.text` in its order (the
    tests hold this against its regular expressions on every code point)."""
    from textdp.text import _NUMBER, _WORD, _WS_RE, _is_punctuation, is_joining_mark

    if re.fullmatch(_WORD, ch):
        return LETTER
    if re.fullmatch(_NUMBER, ch):
        return DIGIT
    if _WS_RE.fullmatch(ch):
        return WHITESPACE
    if _is_punctuation(ch):
        return PUNCTUATION
    if is_joining_mark(ch):
        return MARK  # resolved by its context: _attach_marks
    return OTHER


def _ascii_table() -> np.ndarray:
    table = np.empty(129, dtype=np.uint8)
    for c in range(128):
        table[c] = _char_class(chr(c))
    table[128] = NON_ASCII
    return table


_TABLE = _ascii_table()
_NON_ASCII_CLASS: dict[int, int] = {}


def _classes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(class of every code point, positions of the joining marks or None when there are none)."""
    cls = _TABLE.take(codes, mode="clip")
    odd = np.flatnonzero(cls == NON_ASCII) if codes.size and int(codes.max()) >= 128 else None
    if odd is None or not odd.size:
        return cls, None
    values = codes[odd]
    uniq, inverse = np.unique(values, return_inverse=True)
    lut = np.empty(uniq.size, dtype=np.uint8)
    for i, c in enumerate(uniq.tolist()):
        k = _NON_ASCII_CLASS.get(c)
        if k is None:
            k = _char_class(chr(c))
            if len(_NON_ASCII_CLASS) < 1_000_000:
                _NON_ASCII_CLASS[c] = k
        lut[i] = k
    odd_cls = lut[inverse]
    cls[odd] = odd_cls
    marks = odd[odd_cls == MARK]
    return cls, (marks if marks.size else None)


def _attach_marks(cls: np.ndarray, marks: np.ndarray, doc_bounds: np.ndarray) -> None:
    """Give each joining mark the class of the letter or digit it follows, within its document
    (a mark continues that token, as ``textdp.text``'s word and number patterns); OTHER if none."""
    marks = marks[cls.take(marks) == MARK]  # identifier spans may have claimed some
    if not marks.size:
        return
    doc_start = doc_bounds.take(np.searchsorted(doc_bounds, marks, "right") - 1)
    first = np.empty(marks.size, dtype=bool)  # the first mark of a stretch of marks
    first[0] = True
    np.not_equal(marks[1:], marks[:-1] + 1, out=first[1:])
    first |= marks == doc_start
    stretch = np.maximum.accumulate(np.where(first, marks, 0))
    before = cls.take(np.maximum(stretch - 1, 0))
    cls[marks] = np.where((stretch > doc_start) & (before <= DIGIT), before, OTHER)


_APOSTROPHES = np.array([0x27, 0x2019], dtype=np.uint32)  # ' and ’ (RIGHT SINGLE QUOTATION MARK)
#: The clitics of English contractions after the apostrophe, lowercase: 's 'd 'm 're 've 'll, and
#: 't of n't (whose n goes with it: "do|n't", as the Penn Treebank and GloVe's corpus split it).
_CLITICS = ("s", "d", "m", "re", "ve", "ll")


def _mark_clitics(codes: np.ndarray, cls: np.ndarray, doc_bounds: np.ndarray) -> int:
    """Reclassify the clitics of English contractions as punctuation, in place; return how many.

    A clitic is not a word of its own: privatised as one, "It's" came back "It'default". Here
    it joins the apostrophe's structure run and is released as it is (the report counts it),
    while the word it leans on is privatised: ``It|'s``, ``we|'re``, ``do|n't``, ``ca|n't``.
    The rule, the same as :mod:`textdp.text`'s patterns (a test holds them together): an
    apostrophe (' or ’) right after a letter (or an identifier span: ``[PERSON]'s``), then one
    of :data:`_CLITICS` (any case), then no letter, digit or combining mark; or ``n't`` (any
    case) followed by no letter, digit or mark — the ``n`` is reclassified too. Runs on the raw
    classes, before joining marks are attached: a mark before the apostrophe is no letter.
    """
    n = codes.size
    apos = np.flatnonzero(np.isin(codes, _APOSTROPHES) & (cls == PUNCTUATION))
    if not apos.size:
        return 0
    doc = np.searchsorted(doc_bounds, apos, "right") - 1
    start, end = doc_bounds.take(doc), doc_bounds.take(doc + 1)
    lower = _lower_ascii(codes)[0]

    def at(offset: np.ndarray) -> np.ndarray:  # the code at apos + offset, 0 outside the doc
        pos = apos + offset
        inside = (pos >= start) & (pos < end)
        return np.where(inside, lower.take(np.clip(pos, 0, n - 1)), 0), \
            np.where(inside, cls.take(np.clip(pos, 0, n - 1)), WHITESPACE)

    before_code, before_cls = at(-1)
    after = [at(k) for k in range(1, 4)]

    def boundary(k: int) -> np.ndarray:  # no letter, digit or mark at apos + k
        return ~np.isin(after[k - 1][1], (LETTER, DIGIT, MARK))

    leans = (before_cls == LETTER) | (before_cls == IDENTIFIER)
    hit_len = np.zeros(apos.size, dtype=np.int64)
    for clitic in _CLITICS:
        k = len(clitic)
        match = leans & boundary(k + 1)
        for j, ch in enumerate(clitic):
            match &= (after[j][0] == ord(ch)) & (after[j][1] == LETTER)
        hit_len[match] = k
    nt = ((before_code == ord("n")) & (before_cls == LETTER) & (after[0][0] == ord("t"))
          & (after[0][1] == LETTER) & boundary(2))
    hit_len[nt] = 1
    hits = np.flatnonzero(hit_len)
    if not hits.size:
        return 0
    cls[_ranges(apos[hits] + 1, hit_len[hits])[0]] = PUNCTUATION
    cls[apos[nt] - 1] = PUNCTUATION
    return int(hits.size)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(every index of the ranges [starts[i], starts[i] + lengths[i]) in order, offset of each
    range in that list)."""
    first = np.cumsum(lengths) - lengths
    step = np.arange(int(lengths.sum()), dtype=np.int64)
    step -= np.repeat(first, lengths)
    return np.repeat(starts, lengths) + step, first


class _Powers:
    """P^i and P^{−i} mod 2^64 for i < size, grown on demand."""

    def __init__(self) -> None:
        self.pow = np.ones(1, dtype=np.uint64)
        self.inv = np.ones(1, dtype=np.uint64)

    def get(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if self.pow.size < size:
            n = max(size, 2 * self.pow.size, 1 << 16)
            with np.errstate(over="ignore"):
                p = np.full(n, _P, dtype=np.uint64)
                p[0] = 1
                q = np.full(n, _P_INV, dtype=np.uint64)
                q[0] = 1
                self.pow = np.cumprod(p, dtype=np.uint64)
                self.inv = np.cumprod(q, dtype=np.uint64)
        return self.pow, self.inv


_POWERS = _Powers()


def _prefix_hash(lower: np.ndarray) -> np.ndarray:
    """H with H[0] = 0 and H[i+1] = Σ_{j≤i} lower[j]·129^j (mod 2^64)."""
    pw, _ = _POWERS.get(lower.size + 1)
    h = np.empty(lower.size + 1, dtype=np.uint64)
    h[0] = 0
    prod = lower.astype(np.uint64)
    prod *= pw[: lower.size]
    np.cumsum(prod, out=h[1:])
    return h


def _segment_hash(prefix: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    _, inv = _POWERS.get(int(starts.max(initial=0)) + 1)
    h = prefix[ends] - prefix[starts]
    h *= inv[starts]
    return h


def _lower_ascii(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ASCII-lowercased codes, is-ASCII-uppercase mask); non-ASCII codes pass unchanged."""
    upper = (codes - np.uint32(65)) < np.uint32(26)
    lower = codes + (upper.view(np.uint8) * np.uint32(32))
    return lower, upper


@dataclass(slots=True)
class CodeBatch:
    """A batch of documents as one code array; see the module docstring.

    Runs partition each document into maximal same-class stretches (a run never crosses a
    document boundary); token runs are the letter and digit runs (exactly the alphanumeric
    tokens of :func:`split_batch`) and the identifier spans, one token each.
    """

    text: str  # the documents concatenated
    codes: np.ndarray  # uint32 code points of ``text``
    doc_bounds: np.ndarray  # int64, n_docs + 1: document d is codes[doc_bounds[d]:doc_bounds[d + 1]]
    doc_runs: np.ndarray  # int64, n_docs + 1: document d is runs doc_runs[d] to doc_runs[d + 1]
    run_starts: np.ndarray  # int64, one per run
    run_lengths: np.ndarray  # int64
    token_runs: np.ndarray  # int64 indices of the token runs, in order
    starts: np.ndarray  # int64 token starts in ``codes``
    ends: np.ndarray  # int64 token ends
    is_digit: np.ndarray  # bool: the token is a number (run of \d)
    doc_of: np.ndarray  # int64 document of each token
    n_docs: int
    whitespace: int  # structure counts, as textdp.text.count_structure
    punctuation: int
    other: int
    identifiers: np.ndarray  # int64 indices of the identifier tokens, in order
    identifier_kinds: np.ndarray  # int64 kind of each (an index into the recogniser's kinds)
    #: Clitics of English contractions ('s, n't, 're, …) kept as structure (:func:`_mark_clitics`).
    clitics: int = 0
    _lower: np.ndarray | None = None
    _upper_mask: np.ndarray | None = None
    _non_ascii: np.ndarray | None = None

    @property
    def _count_dtype(self) -> type:
        """Prefix counts over the code points fit int32 unless the batch has ≥ 2^31 of them."""
        return np.int32 if self.codes.size < 2**31 - 1 else np.int64

    @property
    def n_tokens(self) -> int:
        return int(self.starts.size)

    def token(self, i: int) -> str:
        return self.text[int(self.starts[i]):int(self.ends[i])]

    def _lowercase(self) -> tuple[np.ndarray, np.ndarray]:
        if self._lower is None:
            self._lower, self._upper_mask = _lower_ascii(self.codes)
        return self._lower, self._upper_mask

    def non_ascii(self) -> np.ndarray:
        """Bool per token: the token has a code point ≥ 128."""
        if self._non_ascii is None:
            if self.codes.size and int(self.codes.max()) >= 128:
                c = np.zeros(self.codes.size + 1, dtype=self._count_dtype)
                np.cumsum(self.codes >= 128, out=c[1:])
                self._non_ascii = (c[self.ends] - c[self.starts]) > 0
            else:
                self._non_ascii = np.zeros(self.n_tokens, dtype=bool)
        return self._non_ascii

    def case_patterns(self, tokens: np.ndarray) -> np.ndarray:
        """case_pattern() of the given tokens as LOWER/TITLE/UPPER/MIXED codes (uint8)."""
        _, upper = self._lowercase()
        s, e = self.starts[tokens], self.ends[tokens]
        cu = np.zeros(self.codes.size + 1, dtype=self._count_dtype)
        np.cumsum(upper, out=cu[1:])
        n_up = cu[e] - cu[s]
        length = e - s
        first = upper[s]
        out = np.full(tokens.size, MIXED, dtype=np.uint8)
        out[n_up == 0] = LOWER
        out[(length > 1) & (n_up == length)] = UPPER
        out[first & (n_up == 1)] = TITLE
        # ASCII tokens are all letters or all digits, so the above is exact for them; the others
        # take textdp.text.case_pattern.
        odd = np.flatnonzero(self.non_ascii()[tokens])
        if odd.size:
            from textdp.text import CasePattern, case_pattern

            code = {CasePattern.LOWER: LOWER, CasePattern.TITLE: TITLE,
                    CasePattern.UPPER: UPPER, CasePattern.MIXED: MIXED}
            out[odd] = [code[case_pattern(self.token(int(t)))] for t in tokens[odd].tolist()]
        return out

    def assemble(self, source: np.ndarray, base: int, token_src: np.ndarray,
                 token_len: np.ndarray) -> list[str]:
        """Rebuild the documents with token i replaced by ``source[token_src[i]:][:token_len[i]]``.

        ``source[base : base + len(codes)]`` must hold ``codes``: structure runs are copied from
        there as they are.
        """
        src = self.run_starts + base
        length = self.run_lengths.copy()
        src[self.token_runs] = token_src
        length[self.token_runs] = token_len
        out_end = np.empty(length.size + 1, dtype=np.int64)
        out_end[0] = 0
        np.cumsum(length, out=out_end[1:])
        total = int(out_end[-1])
        shift = np.repeat(src - out_end[:-1], length)
        shift += np.arange(total, dtype=np.int64)
        out = codecs.utf_32_le_decode(source.take(shift), _ERR, True)[0]  # no bytes copy
        bounds = out_end.take(self.doc_runs).tolist()
        return [out[a:b] for a, b in pairwise(bounds)]


def encode_batch(texts: Sequence[str], identifiers: Any = None,
                 spans: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> CodeBatch:
    """The batch as a :class:`CodeBatch`: one code array, documents delimited by offsets.

    ``identifiers`` (a :class:`textdp.text.identifiers.Identifiers`, or None) finds the spans
    that become one identifier token each, each document on its own; or ``spans`` gives them
    (starts, ends, kinds: sorted, disjoint, offsets into the joined batch, none crossing a
    document boundary), found earlier — on whole documents of which ``texts`` are segments.
    """
    text = "".join(texts)
    codes = np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)
    n = codes.size
    # One UTF-32 unit per code point (surrogatepass keeps lone surrogates single), so str
    # lengths are code offsets.
    doc_bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=doc_bounds[1:])
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return CodeBatch(text, codes, doc_bounds, np.zeros_like(doc_bounds), empty, empty,
                         empty, empty, empty, np.empty(0, bool), empty, len(texts), 0, 0, 0,
                         empty, empty)
    cls, marks = _classes(codes)
    span_starts = span_ends = span_kinds = None
    if spans is not None:
        span_starts, span_ends, span_kinds = spans
    elif identifiers is not None:
        span_starts, span_ends, span_kinds = identifiers.find(texts, text, codes, cls, doc_bounds)
    if span_starts is not None and span_starts.size:
        cls[_ranges(span_starts, span_ends - span_starts)[0]] = IDENTIFIER
    clitics = _mark_clitics(codes, cls, doc_bounds)
    if marks is not None:
        _attach_marks(cls, marks, doc_bounds)
    # A run starts where the class changes, where a document starts and where an identifier does.
    is_start = np.empty(n, dtype=bool)
    is_start[0] = True
    np.not_equal(cls[1:], cls[:-1], out=is_start[1:])
    inner = doc_bounds[1:-1]
    is_start[inner[inner < n]] = True  # trailing empty documents start at n
    if span_starts is not None and span_starts.size:
        is_start[span_starts] = True
    batch = _runs(text, codes, doc_bounds, cls, is_start, span_kinds, len(texts))
    batch.clitics = clitics
    return batch


def _runs(text: str, codes: np.ndarray, doc_bounds: np.ndarray, cls: np.ndarray,
          is_start: np.ndarray, span_kinds: np.ndarray | None, n_docs: int) -> CodeBatch:
    """The :class:`CodeBatch` of classified code points whose runs start where ``is_start``."""
    n = codes.size
    run_starts = np.flatnonzero(is_start)
    run_ends = np.empty_like(run_starts)
    run_ends[:-1] = run_starts[1:]
    run_ends[-1] = n
    # Every document boundary is a run start (or the end): document d owns runs
    # doc_runs[d]:doc_runs[d + 1], and a run's document counts the boundaries up to it.
    doc_runs = np.searchsorted(run_starts, doc_bounds)
    run_doc = np.bincount(doc_runs[1:-1], minlength=run_starts.size + 1)[:-1].cumsum()
    run_cls = cls.take(run_starts)
    run_lengths = run_ends - run_starts
    counts = np.bincount(run_cls, minlength=IDENTIFIER + 1)
    if counts[IDENTIFIER]:
        is_token = (run_cls <= DIGIT) | (run_cls == IDENTIFIER)
        token_runs = np.flatnonzero(is_token)
        idents = np.flatnonzero(run_cls.take(token_runs) == IDENTIFIER)
        kinds = np.asarray(span_kinds, dtype=np.int64)
    else:
        token_runs = np.flatnonzero(run_cls <= DIGIT)
        idents = kinds = np.empty(0, dtype=np.int64)
    return CodeBatch(
        text=text, codes=codes, doc_bounds=doc_bounds, doc_runs=doc_runs, run_starts=run_starts,
        run_lengths=run_lengths, token_runs=token_runs, starts=run_starts[token_runs],
        ends=run_ends[token_runs], is_digit=run_cls[token_runs] == DIGIT,
        doc_of=run_doc.take(token_runs), n_docs=n_docs,
        whitespace=int(counts[WHITESPACE]), punctuation=int(counts[PUNCTUATION]),
        other=int(counts[OTHER]), identifiers=idents, identifier_kinds=kinds)


class CodeTable:
    """Exact vocabulary lookup of a :class:`CodeBatch`'s tokens, and encoded replacement pools.

    A token's row is that of the vocabulary word equal to its lowercase form, else of the word
    equal to its key (:func:`textdp.text.lookup_key`: NFKC + case fold), else of the first word
    whose own key is that key (``ﬁne`` finds ``fine``, ``STRASSE`` finds ``straße``).

    Args:
        words: the vocabulary words (lowercase, distinct, as :class:`textdp.vocab.Vocabulary`).
        lookup: word → row (the vocabulary's dict), used for tokens with non-ASCII code points.
    """

    def __init__(self, words: Sequence[str], lookup: dict[str, int]) -> None:
        from textdp.text import lookup_key

        self.lookup = lookup
        self.words = words
        lower = self._encode(words)
        # Words whose key is not themselves (non-ASCII, and only those can differ from their key
        # when lowercase): key → first such row, where no word is that key.
        c = np.zeros(lower[0].size + 1, dtype=np.int64)
        np.cumsum(lower[0] >= 128, out=c[1:])
        non_ascii = c[lower[1] + lower[2]] > c[lower[1]]
        self.folded: dict[str, int] = {}
        for row in np.flatnonzero(non_ascii).tolist():
            key = lookup_key(words[row])
            if key != words[row] and key not in lookup:
                self.folded.setdefault(key, row)
        # The hash table holds the ASCII keys: every ASCII word (an ASCII token's key is ASCII,
        # so it can only equal an ASCII key) and the ASCII keys of non-ASCII words.
        extra = [k for k in self.folded if k.isascii()]
        keys = self._encode([*(words[r] for r in np.flatnonzero(~non_ascii).tolist()), *extra])
        self.key_codes, self.key_off, self.key_len = keys
        self.key_row = np.concatenate([np.flatnonzero(~non_ascii),
                                       np.array([self.folded[k] for k in extra], dtype=np.int64)])
        self._len_or_minus1 = np.append(self.key_len, -1)
        self._row_or_minus1 = np.append(self.key_row, -1)
        prefix = _prefix_hash(self.key_codes)
        h = _segment_hash(prefix, self.key_off, self.key_off + self.key_len)
        # Distinct keys with equal hashes would make the verified lookup miss: rare, and then
        # those keys go to the dict.
        order = np.argsort(h, kind="stable")
        dup = np.flatnonzero(h[order][1:] == h[order][:-1])
        self.collided = set(order[dup].tolist()) | set(order[dup + 1].tolist())
        self._build_slots(h)
        self._build_pools(words, lower)

    def _build_pools(self, words: Sequence[str],
                     lower: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Replacement pools: lower, Title (first letter upper) and UPPER, as restore_case()."""
        title = [w[:1].upper() + w[1:] for w in words]
        upper = [w.upper() for w in words]
        pools = [lower, self._encode(title), self._encode(upper)]
        base = 0
        parts, pool_off, pool_len = [], [], []
        for codes, off, length in pools:
            parts.append(codes)
            pool_off.append(off + base)
            pool_len.append(length)
            base += codes.size
        self.pool = np.concatenate(parts)
        self.pool_off = np.stack(pool_off)  # (3, |V|) by LOWER, TITLE, UPPER
        self.pool_len = np.stack(pool_len)

    def _build_slots(self, h: np.ndarray) -> None:
        """Open addressing with linear probing, load ≤ 1/4: slot = top bits of a mixed key."""
        bits = max(4, int(np.ceil(np.log2(4 * max(h.size, 1)))))
        size = 1 << bits
        self._shift = np.uint64(64 - bits)
        self._mask = np.int64(size - 1)
        keys = np.zeros(size + 1, dtype=np.uint64)
        rows = np.full(size + 1, -1, dtype=np.int64)  # the last slot stays empty: a sentinel
        home = self._slot(h)
        for entry in range(h.size):  # once per vocabulary
            slot = int(home[entry])
            while rows[slot] >= 0:
                slot = (slot + 1) & int(self._mask)
            keys[slot] = h[entry]
            rows[slot] = entry
        # Key and row side by side: one cache line per probe.
        self._slots = np.stack([keys, rows.view(np.uint64)], axis=1)

    def _slot(self, h: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            mixed = h * np.uint64(0xD6E8FEB86659FD93)
        mixed ^= mixed >> np.uint64(32)
        with np.errstate(over="ignore"):
            mixed *= np.uint64(0xD6E8FEB86659FD93)
        return (mixed >> self._shift).astype(np.int64)

    def _probe(self, h: np.ndarray) -> np.ndarray:
        """Key entry whose hash equals h (−1 if none), by vectorised linear probing."""
        slot = self._slot(h)
        pairs = self._slots.take(slot, axis=0)
        rows = pairs[:, 1].view(np.int64)
        occupied = rows >= 0
        out = np.where((pairs[:, 0] == h) & occupied, rows, -1)
        # Keep probing where the home slot held another key (rare at load ≤ 1/4).
        todo = np.flatnonzero(occupied & (out < 0))
        while todo.size:
            slot[todo] = (slot[todo] + 1) & self._mask
            pairs = self._slots.take(slot[todo], axis=0)
            rows = pairs[:, 1].view(np.int64)
            occupied = rows >= 0
            hit = (pairs[:, 0] == h[todo]) & occupied
            out[todo[hit]] = rows[hit]
            todo = todo[occupied & ~hit]
        return out

    @staticmethod
    def _encode(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        codes = np.frombuffer("".join(words).encode(_ENC, _ERR), dtype=np.uint32)
        length = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        off = np.cumsum(length) - length
        return codes, off, length

    def find(self, batch: CodeBatch) -> np.ndarray:
        """Vocabulary row of every token (−1 when absent, and for identifiers); see the class."""
        n_tok = batch.n_tokens
        if n_tok == 0:
            return np.empty(0, dtype=np.int64)
        lower, _ = batch._lowercase()
        prefix = _prefix_hash(lower)
        s, e = batch.starts, batch.ends
        h = _segment_hash(prefix, s, e)
        entries = self._probe(h)
        found = entries >= 0
        length = e - s
        ok = self._len_or_minus1.take(entries) == length  # −1 reads −1: never a length
        # Keys of ASCII strings up to _EXACT_LEN code points are exact; longer matches are
        # verified code point by code point.
        long = np.flatnonzero(ok & (length > _EXACT_LEN))
        if long.size:
            tok, first = _ranges(s[long], length[long])
            key, _ = _ranges(self.key_off[entries[long]], length[long])
            same = lower.take(tok) == self.key_codes.take(key)
            ok[long] = np.logical_and.reduceat(same, first)
        out = np.where(ok, self._row_or_minus1.take(entries), -1)
        # Tokens with non-ASCII code points (and the rare colliding keys) go through the dicts.
        slow = batch.non_ascii() | (~ok & self._maybe_collided(entries, found))
        slow[batch.identifiers] = False
        slow = np.flatnonzero(slow)
        if slow.size:
            out[slow] = [self.row_of(batch.token(t)) for t in slow.tolist()]
        out[batch.identifiers] = -1
        return out

    def row_of(self, token: str) -> int:
        """The vocabulary row of one token (−1 when absent), by the rule of the class docstring."""
        row = self.lookup.get(token.lower())
        if row is None:
            from textdp.text import lookup_key

            key = lookup_key(token)
            row = self.lookup.get(key, self.folded.get(key, -1))
        return row

    def _maybe_collided(self, entries: np.ndarray, found: np.ndarray) -> np.ndarray:
        """Tokens whose hash matched a key that shares its hash with another key."""
        if not self.collided:
            return np.zeros(entries.size, dtype=bool)
        return found & np.isin(entries, np.fromiter(self.collided, dtype=np.int64))
