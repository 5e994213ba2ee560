"""Identifiers as units: e-mail addresses, URLs, IP addresses, IBANs, card and phone numbers.

Word mechanisms privatise words; an identifier is not a word. Split into word runs,
``jsmith@acme.com`` would become ``[MASK]@acme.com`` (``acme`` and ``com`` are in the vocabulary,
so they are privatised as words and the address's shape survives). Here identifiers are found
*before* tokenisation and each becomes a single token of class
:attr:`textdp.text.TokenClass.IDENTIFIER`, which the OOV policy masks with its kind's label
(``[EMAIL]``), keeps, drops, or (``random``) also masks: a random vocabulary word in place of an
address would read as a word and hide that something was removed, and the label depends on
the input no more than the mask does.

**A document is recognised alone.** Its spans are a function of that document only — never of
the other documents of its batch, the batch size or where a long document is cut into segments
(the pipeline finds the spans of a whole document before it cuts it, and never cuts inside
one): :meth:`Identifiers.spans` gives them for one document, :meth:`Identifiers.find` for a
batch, and the two agree. An identifier is never split into an identifier plus leftover word
pieces: a span whose edge touches a letter or digit grows to take the whole run.

**Every recogniser reads the folded text** (:mod:`textdp.text.fold`: compatibility forms,
nonspacing marks and invisible characters removed, digits of every script as ASCII, Unicode
confusables as their ASCII look-alikes), so ``maria＠example.com``, ``ｍａｒｉａ@…`` and a
Cyrillic ``а`` in a domain are read as their plain forms; spans are mapped back to the original
characters. The user's patterns read both the folded and the original text.

Built-in recognisers: a fast regular-expression prefilter proposes candidates, only on the
whitespace-delimited stretches around anchors found by numpy (``@``; ``://`` or a dot between a
letter or digit and a letter; a cluster of ≥ 4 digits or ``::``), and a maintained validator
decides (where matches overlap, the leftmost wins, then the longest, then the kind listed
first: the deny-list, the user's patterns, then the order below). The kinds, their candidates
and validators, are the identifier family of the recogniser registry
(:mod:`textdp.text.recognisers.identifiers`, which describes each): ``email``, ``url``, ``ip``,
``iban``, ``card``, ``phone`` and ``reference`` (a phone-shaped number its context names an
order, invoice, ticket … number: masked as ``[REF]``).

The context decides after the validators (:mod:`textdp.text._context`, the candidate's own
document only): a phone cue right before (``phone no.``, ``call``, ``tel``) keeps a phone number;
a version, section or amount cue (``ver.``, ``build``, ``§``, ``section``, ``EUR``, ``$``; a
currency or ``%`` after) makes a phone or IP candidate no identifier (``ver. 3.2.1.4``,
``§ 10.0.0.1``, ``4155550132 USD``): its digits are then number tokens, which the OOV policy
handles as any number (masked by default). An ``@`` name ending in an image or file extension
that is no top-level domain (``logo@2x.png``) is no address.

A plain run of digits stays a number token (the OOV policy treats it as a number). Users add
their own patterns (name → regular expression, tried before the built-ins, run on each
document) and a deny-list of terms that are always masked, whatever the OOV policy, matched as
whole words on the folding's key form (:mod:`textdp.text.deny`: the folding above, case-folded,
dashes as spaces, any whitespace run as one space). Patterns and validators load on first use, so
importing textdp stays light.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from textdp.text import recognisers
from textdp.text._spelled import spelled_spans
from textdp.text.deny import DenyList
from textdp.text.fold import Folded, FoldedBatch
from textdp.text.recognisers.identifiers import DEFAULT_PHONE_REGIONS, NAMES, is_tld

__all__ = ["Identifiers", "BUILTIN_KINDS", "DEFAULT_LABELS", "DEFAULT_PHONE_REGIONS", "DENIED"]

BUILTIN_KINDS = ("email", "url", "ip", "iban", "card", "phone", "reference")
DENIED = "denied"  # the kind of deny-list terms
DEFAULT_LABELS = {"email": "[EMAIL]", "url": "[URL]", "ip": "[IP]", "iban": "[IBAN]",
                  "card": "[CARD]", "phone": "[PHONE]", "reference": "[REF]",
                  DENIED: "[REDACTED]"}

# The built-in kinds by the anchors of their windows (see _windows), and how far (characters
# before, after) a window reaches past its anchor: a quoted local part may hold spaces, and an
# IBAN may start or end with groups of letters (``LV96 SJHY TFY9 …``, ``… 1497 USD``) and
# have few digits (``QA94-IXOU-W8RZ-…``): it has an anchor of its own, two letters and two digits
# starting a word, whose window reaches over the longest IBAN.
_ANCHORED = ((("email",), 66, 0), (("url",), 0, 0), (("ip", "iban", "card", "phone"), 16, 8),
             (("iban",), 0, 44))
def _merge_words(text: str, starts: np.ndarray, ends: np.ndarray, kinds: np.ndarray,
                 doc_bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grow each span over the letters and digits its edges touch (within its document), so that
    no piece of a word is left beside an identifier; spans that then overlap become one, of the
    first one's kind (``denied`` — kind 0 — if either is)."""
    if not starts.size:
        return starts, ends, kinds
    lo = doc_bounds.take(np.searchsorted(doc_bounds, starts, "right") - 1).tolist()
    hi = doc_bounds.take(np.searchsorted(doc_bounds, starts, "right")).tolist()
    out: list[list[int]] = []
    for a, b, k, first, last in zip(starts.tolist(), ends.tolist(), kinds.tolist(), lo, hi,
                                    strict=True):
        while a > first and text[a - 1].isalnum():
            a -= 1
        while b < last and text[b].isalnum():
            b += 1
        if out and a < out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
            out[-1][2] = 0 if 0 in (k, out[-1][2]) else out[-1][2]
        else:
            out.append([a, b, k])
    arr = np.array(out, dtype=np.int64).reshape(-1, 3)
    return arr[:, 0], arr[:, 1], arr[:, 2]


_CACHED = ("_patterns", "_builtins", "_deny")  # Identifiers' cached properties
#: Identifiers.spans reads a longer document in chunks of about this many characters, each with
#: this much context on either side (see there).
_CHUNK = 1 << 20
_CONTEXT = 1 << 16
_BREAK = re.compile(r"\s(?=\S)")


def _break_at(text: str, position: int) -> int:
    """The first whitespace-to-text boundary at or after ``position`` (the end if none)."""
    if position >= len(text):
        return len(text)
    m = _BREAK.search(text, max(position - 1, 0))
    return m.end() if m is not None else len(text)


@dataclass(frozen=True)
class Identifiers:
    """What counts as an identifier, and the label each kind is masked with.

    Args:
        builtin: recognise the built-in kinds (see the module docstring).
        patterns: extra kinds, name → regular expression (``re`` syntax), listed before the
            built-ins for overlaps; its label defaults to ``[NAME]``. Each is one pass over
            each document.
        labels: kind → placeholder, overriding :data:`DEFAULT_LABELS`.
        deny_list: terms always masked (as kind ``denied``), whatever the OOV policy, matched
            on their lookup keys (:mod:`textdp.text.deny`).
        phone_regions: regions (ISO 3166 alpha-2, as libphonenumber) whose national phone
            formats count; numbers written with ``+`` and a country code count whatever they are.

    Raises:
        ValueError: an invalid pattern, a pattern that matches the empty string, a label for an
            unknown kind, an empty name, or an unknown phone region.
    """

    builtin: bool = True
    patterns: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    deny_list: Sequence[str] = ()
    phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", dict(self.patterns))
        object.__setattr__(self, "labels", dict(self.labels))
        terms = tuple(dict.fromkeys(t.strip() for t in self.deny_list if t.strip()))
        object.__setattr__(self, "deny_list", terms)
        if isinstance(self.phone_regions, str):
            raise TypeError("phone_regions must be a list of region codes, not a single string")
        regions = tuple(dict.fromkeys(str(r).strip().upper() for r in self.phone_regions))
        object.__setattr__(self, "phone_regions", regions)
        if self.builtin:
            import phonenumbers

            unknown = [r for r in regions if r not in phonenumbers.SUPPORTED_REGIONS]
            if unknown or not regions:
                raise ValueError(f"unknown phone region(s) {', '.join(unknown) or '(none given)'}; "
                                 "use ISO 3166 alpha-2 codes such as US, GB, DE")
        for name, regex in self.patterns.items():
            if not isinstance(name, str) or not name.strip() or name in (*BUILTIN_KINDS, DENIED):
                raise ValueError(f"identifier pattern name {name!r} is empty or a built-in kind")
            try:
                compiled = re.compile(regex)
            except (re.error, TypeError) as exc:
                raise ValueError(f"identifier pattern {name!r} is not a valid regular expression: "
                                 f"{exc}") from None
            if compiled.fullmatch(""):
                raise ValueError(f"identifier pattern {name!r} matches the empty string")
        for kind, label in self.labels.items():
            if kind not in self.kinds:
                raise ValueError(f"no identifier kind {kind!r} to label; kinds: {', '.join(self.kinds)}")
            if not isinstance(label, str):
                raise TypeError(f"the label of {kind!r} must be a string")

    def __getstate__(self) -> dict:
        """The options only: what was compiled or cached (validators are closures) is rebuilt
        on first use where the object lands (a Ray worker, a datasets process)."""
        return {k: v for k, v in self.__dict__.items() if k not in _CACHED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every kind, in priority order (the deny-list first — index 0 —, then users', then
        built-ins)."""
        return (DENIED, *self.patterns, *(BUILTIN_KINDS if self.builtin else ()))

    def label(self, kind: str) -> str:
        return self.labels.get(kind) or DEFAULT_LABELS.get(kind) or f"[{kind.upper()}]"

    def describe(self) -> dict:
        out = {"builtin": self.builtin, "patterns": dict(self.patterns),
               "labels": {k: self.label(k) for k in self.kinds},
               "deny_list_terms": len(self.deny_list)}
        if self.builtin:
            out["phone_regions"] = list(self.phone_regions)
        return out

    @cached_property
    def _patterns(self) -> list[tuple[int, str, re.Pattern[str]]]:
        """(kind index, kind, pattern) of the user's patterns, compiled on first use."""
        return [(self.kinds.index(k), k, re.compile(r)) for k, r in self.patterns.items()]

    @cached_property
    def _builtins(self) -> dict[str, tuple[int, re.Pattern[str], Callable, bool]]:
        """kind → (kind index, candidate pattern, validator, whether it takes a prefix): the
        identifier family of the registry (:mod:`textdp.text.recognisers.identifiers`),
        configured for the phone regions on first use."""
        if not self.builtin:
            return {}
        out = {}
        for name in NAMES:
            found = recognisers.get(name).configure(phone_regions=tuple(self.phone_regions))
            out[name] = (self.kinds.index(name), found.compiled, found.validator(),
                         found.prefixed)
        return out

    @cached_property
    def _deny(self) -> DenyList:
        return DenyList(self.deny_list)

    def spans(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The identifier spans of one document: (starts, ends, kind indices into
        :attr:`kinds`), sorted, disjoint and non-empty.

        A document longer than :data:`_CHUNK` characters is read in chunks cut at canonical
        places (a whitespace-to-text boundary), each with :data:`_CONTEXT` characters of the
        text around it, and owns the spans that start in it — so memory stays bounded by the
        chunk (a 30 MB line is not one 120 MB code array), the result is still a function of
        the document alone, and an identifier or term shorter than the context is found as in
        one piece."""
        if len(text) <= _CHUNK:
            return self._whole(text)
        rows = []
        a = 0
        while a < len(text):
            b = _break_at(text, a + _CHUNK)
            lo = _break_at(text, a - _CONTEXT) if a > _CONTEXT else 0
            hi = _break_at(text, b + _CONTEXT)
            s, e, k = self._whole(text[lo:hi])
            own = (s + lo >= a) & (s + lo < b)
            rows.append(np.stack([s[own] + lo, e[own] + lo, k[own]], axis=1))
            a = b
        return _resolve(np.concatenate(rows)[:, [2, 0, 1, 2]])

    def _whole(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from textdp.text._codes import _ENC, _ERR, _classes

        codes = np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)
        cls = _classes(codes)[0] if codes.size else np.empty(0, dtype=np.uint8)
        return self.find([text], text, codes, cls, np.array([0, len(text)], dtype=np.int64))

    def find(self, texts: Sequence[str], text: str, codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray, folded: FoldedBatch | None = None,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The identifier spans of a batch: (starts, ends, kind indices), sorted, disjoint and
        non-empty, as offsets into ``text = "".join(texts)``; the spans of each document are
        exactly :meth:`spans` of that document alone, shifted to its offset.

        ``codes``, ``cls`` and ``doc_bounds`` are ``text``'s code points, their classes and the
        document offsets (:func:`textdp.text._codes.encode_batch`); ``folded``, the batch's
        folding where the caller made it already (:class:`textdp.text.entities.Recognisers`).
        The built-in kinds and the deny-list read the folded text (:mod:`textdp.text.fold`),
        the user's patterns both the folded and the original text; every span is mapped back
        to the original characters. The built-in candidates are sought only on the
        whitespace-delimited stretches around their anchors, found by numpy within each
        document: a regular expression costs ~15 ns per character in ``re``, more than the
        whole privatisation of that character.
        """
        if folded is None:
            folded = FoldedBatch(text, doc_bounds, codes)
        rows = [np.empty((0, 4), dtype=np.int64)]
        if self.builtin and codes.size:
            rows.append(self._folded_builtin_spans(folded, text, codes, cls))
        if self.deny_list:
            found = [s for doc in self._deny.find(folded.key) for s in doc]
            rows.append(np.array([(0, a, b, 0) for a, b in found],
                                 dtype=np.int64).reshape(-1, 4))
        if self.patterns:
            rows.append(self._pattern_spans(texts, doc_bounds))
            view = folded.cased
            if not view.identity:
                rows.append(_back(view, self._pattern_spans(view.docs(), view.bounds)))
        starts, ends, kinds = _resolve(np.concatenate(rows))
        return _merge_words(text, starts, ends, kinds, doc_bounds)

    def _folded_builtin_spans(self, folded: FoldedBatch, text: str, codes: np.ndarray,
                              cls: np.ndarray) -> np.ndarray:
        """The built-in kinds' rows on the folded batch, in original offsets."""
        from textdp.text._codes import _ENC, _ERR, _classes

        view = folded.cased
        if not view.identity:
            text = view.text
            codes = np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)
            cls = _classes(codes)[0] if codes.size else np.empty(0, dtype=np.uint8)
        if not codes.size:
            return np.empty((0, 4), dtype=np.int64)
        found = self._builtin_spans(text, codes, cls, view.bounds)
        email = self.kinds.index("email")
        spelled = spelled_spans(text, codes, view.bounds, is_tld)
        found = np.concatenate([found, np.array([(email, a, b, email) for a, b in spelled],
                                                dtype=np.int64).reshape(-1, 4)])
        if "reference" in self.kinds:  # codes of letters and digits (textdp.text._context)
            from textdp.text._context import reference_spans

            ref = self.kinds.index("reference")
            found = np.concatenate([found, np.array(
                [(ref, a, b, ref) for a, b in reference_spans(text, view.bounds, codes)],
                dtype=np.int64).reshape(-1, 4)])
        return _back(view, found)

    def _builtin_spans(self, text: str, codes: np.ndarray, cls: np.ndarray,
                       doc_bounds: np.ndarray) -> np.ndarray:
        rows = [np.empty((0, 4), dtype=np.int64)]
        for (kinds, _, _), (lo, hi) in zip(_ANCHORED, _windows(codes, cls, doc_bounds),
                                           strict=True):
            if not lo.size:
                continue
            # The windows joined by "\n", which no candidate crosses and whose look-arounds
            # read as whitespace: the window's real neighbour (or a document edge).
            sub = "\n".join([text[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
            sub_start = np.cumsum(hi - lo + 1) - (hi - lo + 1)
            spans = np.array(self._scan(sub, kinds), dtype=np.int64).reshape(-1, 4)
            piece = np.searchsorted(sub_start, spans[:, 1], "right") - 1
            spans[:, 1:3] += (lo - sub_start)[piece][:, None]
            rows.append(spans)
        return self._in_context(text, np.concatenate(rows), doc_bounds)

    def _in_context(self, text: str, rows: np.ndarray, doc_bounds: np.ndarray) -> np.ndarray:
        """The rows as their context reads them (:mod:`textdp.text._context`): a phone number
        after ``order no.`` becomes a ``reference``; a phone or IP candidate after ``version``,
        ``§`` or beside a currency is none. Only the candidate's own document is read."""
        from textdp.text import _context

        phone, ip = self.kinds.index("phone"), self.kinds.index("ip")
        todo = np.flatnonzero((rows[:, 3] == phone) | (rows[:, 3] == ip))
        if not todo.size:
            return rows
        doc = np.searchsorted(doc_bounds, rows[todo, 1], "right") - 1
        keep = np.ones(len(rows), dtype=bool)
        reference = self.kinds.index("reference")
        for i, a, b, k, lo, hi in zip(todo.tolist(), rows[todo, 1].tolist(),
                                      rows[todo, 2].tolist(), rows[todo, 3].tolist(),
                                      doc_bounds.take(doc).tolist(),
                                      doc_bounds.take(doc + 1).tolist(), strict=True):
            verdict = _context.judge(text[max(lo, a - _context.BEFORE):a],
                                     text[b:min(hi, b + _context.AFTER)],
                                     "phone" if k == phone else "ip")
            if verdict == _context.NONE:
                keep[i] = False
            elif verdict == _context.REFERENCE:
                rows[i, 0] = rows[i, 3] = reference
        return rows[keep]

    def _scan(self, window: str, kinds: Iterable[str]) -> list[tuple[int, int, int, int]]:
        """(priority, start, end, kind) of every validated candidate of ``kinds``."""
        out = []
        shaped: list[tuple[int, int]] = []  # IBAN-shaped stretches that are no valid IBAN
        for kind in kinds:
            if kind not in self._builtins:
                continue  # "reference" has no candidates: a phone number its context names
            index, pattern, check, prefixed = self._builtins[kind]
            pos = 0
            while (m := pattern.search(window, pos)) is not None:
                found = [(index, a, b, index) for a, b in check(window, m) if b > a]
                # A card or IBAN is the longest valid prefix of its candidate, which may have
                # run on into the next one ("4012888888881881 4012-8888-…"): read on from
                # where the identifier ends, or, where none was valid, from the next start.
                pos = m.end()
                if prefixed:
                    pos = max(b for _, _, b, _ in found) if found else m.start() + 1
                elif kind == "ip" and not found:
                    # No address: a dotted quad after a colon inside it may still be one
                    # ("cafe2001:db8::10.0.0.1", an IPv6 address glued to a word).
                    pos = m.start() + 1
                if kind == "iban" and not found:
                    shaped.append(m.span())
                if shaped and kind in ("card", "phone"):
                    # The digits of an invalid IBAN ("DE89 3704 0044 …" with a wrong check)
                    # are not a card or phone number of their own.
                    found = [f for f in found if not any(a < f[1] < b for a, b in shaped)]
                out += found
        return out

    def _pattern_spans(self, texts: Sequence[str], doc_bounds: np.ndarray) -> np.ndarray:
        """The user's patterns, one document at a time."""
        out = []
        for d, doc in enumerate(texts):
            base = int(doc_bounds[d])
            for index, _, pattern in self._patterns:
                out += [(index, base + m.start(), base + m.end(), index)
                        for m in pattern.finditer(doc) if m.end() > m.start()]
        return np.array(out, dtype=np.int64).reshape(-1, 4)


def _back(view: Folded, rows: np.ndarray) -> np.ndarray:
    """Rows (priority, start, end, kind) of a folded text in the original's offsets."""
    if view.source is None or not rows.size:
        return rows
    rows = rows.copy()
    rows[:, 1], rows[:, 2] = view.back(rows[:, 1], rows[:, 2])
    return rows


def _windows(codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Merged [lo, hi) windows for each group of :data:`_ANCHORED`: the whitespace-delimited
    stretches, within their document, around the anchors its kinds need — ``@``; ``://`` or a
    dot between a letter or digit and a letter; a cluster of ≥ 4 digits (gaps ≤ 8 characters)
    or ``::``; two letters and two digits starting a word. Every anchor lies within one
    document, so a window is a function of its document."""
    from textdp.text._codes import DIGIT, LETTER, WHITESPACE

    n = codes.size
    doc_start = np.zeros(n + 1, dtype=bool)  # doc_start[i]: a document starts at i
    doc_start[doc_bounds] = True
    digits = np.flatnonzero(cls == DIGIT)
    doc = np.searchsorted(doc_bounds, digits, "right")
    cut = np.flatnonzero((np.diff(digits) > 8) | (np.diff(doc) != 0)) + 1
    first = np.concatenate([np.zeros(min(digits.size, 1), dtype=np.int64), cut])
    size = np.diff(np.append(first, digits.size))
    big = size >= 4
    colon = np.flatnonzero(codes[:-1] == 58)
    colon = colon[~doc_start[colon + 1]]  # the next character is in the same document
    pairs = colon[codes.take(colon + 1) == 58]
    slash = colon[(codes.take(colon + 1) == 47) & (colon + 2 < n)]
    slash = slash[(codes.take(np.minimum(slash + 2, n - 1)) == 47) & ~doc_start[slash + 2]]
    dots = np.flatnonzero(codes[1:-1] == 46) + 1
    dots = dots[~doc_start[dots] & ~doc_start[dots + 1]]
    dots = dots[(cls.take(dots - 1) <= DIGIT) & (cls.take(dots + 1) == LETTER)]
    at = np.flatnonzero(codes == 64)
    # Two ASCII letters and two digits starting a word, within one document: an IBAN's start.
    cc = np.flatnonzero((codes[:-3] | 32) - 97 < 26)
    cc = cc[((codes.take(cc + 1) | 32) - 97 < 26) & (cls.take(cc + 2) == DIGIT)
            & (cls.take(cc + 3) == DIGIT) & (codes.take(cc + 2) < 128) & (codes.take(cc + 3) < 128)]
    cc = cc[~(doc_start[cc + 1] | doc_start[cc + 2] | doc_start[cc + 3])]
    cc = cc[doc_start[cc] | (cls.take(np.maximum(cc - 1, 0)) > DIGIT)]
    groups = [(at, at), (np.concatenate([slash, dots]), np.concatenate([slash + 2, dots + 1])),
              (np.concatenate([digits[first[big]], pairs]),
               np.concatenate([digits[first[big] + size[big] - 1], pairs + 1])), (cc, cc + 3)]
    ws = np.flatnonzero(cls == WHITESPACE)
    return [_stretches(a, b, before, after, ws, doc_bounds, n)
            for (a, b), (_, before, after) in zip(groups, _ANCHORED, strict=True)]


def _stretches(a: np.ndarray, b: np.ndarray, before: int, after: int, ws: np.ndarray,
               doc_bounds: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The merged whitespace-delimited stretches, within the document of a[i], holding
    [a[i] − before, b[i] + after] (clipped to that document)."""
    if not a.size:
        return a, a
    doc = np.searchsorted(doc_bounds, a, "right") - 1
    first, end = doc_bounds.take(doc), doc_bounds.take(doc + 1)
    a = np.maximum(a - before, first)
    b = np.minimum(b + after, end - 1)
    ws = np.concatenate([[-1], ws, [n]])  # sentinels: the text's edges
    lo = np.maximum(ws.take(np.searchsorted(ws, a) - 1) + 1, first)
    hi = np.minimum(ws.take(np.searchsorted(ws, b, "right")), end)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    new = np.ones(lo.size, dtype=bool)
    new[1:] = lo[1:] >= reach[:-1]
    return lo[new], np.maximum.reduceat(hi, np.flatnonzero(new))


def _resolve(spans: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint spans, leftmost first, then longest, then the kind listed first; a match that
    overlaps one taken before is dropped, and an identifier that overlaps a dropped deny-list
    match becomes ``denied`` as a whole (so ``oov=keep`` never releases a denied term)."""
    order = np.lexsort((spans[:, 0], -(spans[:, 2] - spans[:, 1]), spans[:, 1]))
    spans = spans[order]
    taken = np.zeros(len(spans), dtype=bool)
    end = -1
    for i, (start, stop) in enumerate(spans[:, 1:3].tolist()):
        if start >= end:
            taken[i] = True
            end = stop
    out = spans[taken]
    lost = spans[~taken & (spans[:, 3] == 0)]  # kind 0 is DENIED (Identifiers.kinds)
    if lost.size:
        first = np.searchsorted(out[:, 1], lost[:, 1], "right") - 1
        last = np.searchsorted(out[:, 1], lost[:, 2] - 1, "right") - 1
        for a, b in zip(first.tolist(), last.tolist(), strict=True):
            out[max(a, 0):b + 1, 3] = 0
    return out[:, 1], out[:, 2], out[:, 3]
