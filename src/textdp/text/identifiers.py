"""Identifiers as units: e-mail addresses, URLs, IP addresses, IBANs, card and phone numbers.

Word mechanisms privatise words; an identifier is not a word. Split into word runs,
``jsmith@acme.com`` would become ``[MASK]@acme.com`` (``acme`` and ``com`` are in the vocabulary,
so they are privatised as words and the address's shape survives). Here identifiers are found
*before* tokenisation, by offline regular expressions over the whole batch (one pass per pattern,
not per token), and each becomes a single token of class
:attr:`textdp.text.TokenClass.IDENTIFIER`, which the OOV policy masks with its kind's label
(``[EMAIL]``), keeps, drops, or (``random``) also masks: a random vocabulary word in place of an
address would read as a word and hide that something was removed, and the label depends on
the input no more than the mask does.

Built-in recognisers (where matches overlap, the leftmost wins, then the longest, then the
kind listed first: the deny-list, the user's patterns, then this order):

========  =======================================================================================
email     ``local@domain.tld``: local part of letters, digits and ``. _ % + -``; dotted domain
url       ``http://``, ``https://``, ``ftp://`` or ``www.`` up to whitespace, minus trailing ``.,;:!?)]}'"``
ip        IPv4 dotted quads (each part ≤ 255) and IPv6 (full, ``::``-compressed, IPv4-mapped)
iban      two capital letters, two digits, then 11–30 letters/digits, optionally in groups of 4
card      13–19 digits in groups of 4 (``4111 1111 1111 1111``, Amex 4-6-5), or contiguous and
          passing the Luhn check
phone     7–15 digits in ≥ 3 groups separated by space, ``.`` or ``-``, or starting with ``+CC``
          or an area code in parentheses (``+44 20 7946 0958``, ``(555) 123-4567``); not ISO dates
========  =======================================================================================

A plain run of digits stays a number token (the OOV policy treats it as a number). Users add
their own patterns (name → regular expression, tried before the built-ins) and a deny-list of
terms that are always masked, whatever the OOV policy, matched case-insensitively as whole
words (not after NFKC normalisation: list the variants you need). Patterns are compiled on
first use, so importing textdp stays light.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["Identifiers", "BUILTIN_KINDS", "DEFAULT_LABELS", "DENIED"]

BUILTIN_KINDS = ("email", "url", "ip", "iban", "card", "phone")
DENIED = "denied"  # the kind of deny-list terms
DEFAULT_LABELS = {"email": "[EMAIL]", "url": "[URL]", "ip": "[IP]", "iban": "[IBAN]",
                  "card": "[CARD]", "phone": "[PHONE]", DENIED: "[REDACTED]"}

_H4 = r"[0-9A-Fa-f]{1,4}"
_IPV4 = r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV6 = "|".join([
    rf"(?:{_H4}:){{7}}{_H4}",
    rf"(?:{_H4}:){{1,4}}:{_IPV4}", rf"::(?:[Ff]{{4}}:)?{_IPV4}",
    *(rf"(?:{_H4}:){{{k}}}(?::{_H4}){{1,{7 - k}}}" for k in range(1, 7)),
    rf"(?:{_H4}:){{1,7}}:", rf"::(?:{_H4}:){{0,6}}{_H4}", "::",
])
_BUILTIN_PATTERNS = {
    "email": r"(?<![\w.%+-])[\w.%+-]+@[^\W_](?:[\w-]*[^\W_])?(?:\.[^\W_](?:[\w-]*[^\W_])?)+",
    "url": r"(?i)(?<![\w/.])(?:(?:https?|ftp)://|www\.)[^\s<>\"]*[^\s<>\".,;:!?)\]}'`]",
    # IPv6 before IPv4: the longest alternatives first, so a partial match cannot win.
    "ip": rf"(?<![\w:.])(?:{_IPV6}|{_IPV4})(?![\w:]|\.\d)",
    "iban": r"(?<![^\W_])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![^\W_])",
    "card": r"(?<![\w-])(?:\d{4}(?:[ -]\d{4}){3}(?:[ -]?\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{5}|\d{13,19})"
            r"(?![\w-])",
    "phone": r"(?<![\w+])(?!\d{4}-\d\d-\d\d(?!\d))(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?"
             r"\d{1,4}(?:[ .-]\d{1,8}){1,5}(?![\w-]|[.]\d)",
}
# The built-in kinds by the anchors of their windows (see _windows).
_ANCHORED = (("email",), ("url",), ("ip", "iban", "card", "phone"))


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _accept(kind: str, text: str) -> bool:
    """Checks a regular expression cannot make: digit counts, the Luhn sum of a bare card."""
    if kind == "card" and text.isdigit():
        return _luhn(text)
    if kind == "phone":  # two groups ("1024-1280", "10 000") need a "+CC" or "(area)" to count
        n = sum(c.isdigit() for c in text)
        groups = len(re.findall(r"\d+", text))
        return 7 <= n <= 15 and (groups >= 3 or text[0] in "+(")
    return True


def _term_regex(terms: Iterable[str]) -> str:
    """One alternation of ``terms`` as a trie (shared prefixes once), so the pass stays linear in
    the text whatever the list's length; case-insensitive, whole words only."""
    trie: dict = {}
    for term in terms:
        node = trie
        for ch in term.casefold():
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        end = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if end else body

    return rf"(?i)(?<!\w)(?:{emit(trie)})(?!\w)"


@dataclass(frozen=True)
class Identifiers:
    """What counts as an identifier, and the label each kind is masked with.

    Args:
        builtin: recognise the built-in kinds (see the module docstring).
        patterns: extra kinds, name → regular expression (``re`` syntax), listed before the
            built-ins for overlaps; its label defaults to ``[NAME]``. They and the deny-list
            are one pass over the whole text each (~15 ns per character).
        labels: kind → placeholder, overriding :data:`DEFAULT_LABELS`.
        deny_list: terms always masked (as kind ``denied``), whatever the OOV policy.

    Raises:
        ValueError: an invalid pattern, a pattern that matches the empty string, a label for an
            unknown kind, or an empty name.
    """

    builtin: bool = True
    patterns: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    deny_list: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", dict(self.patterns))
        object.__setattr__(self, "labels", dict(self.labels))
        terms = tuple(dict.fromkeys(t.strip() for t in self.deny_list if t.strip()))
        object.__setattr__(self, "deny_list", terms)
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

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every kind, in priority order (the deny-list first — index 0 —, then users', then
        built-ins)."""
        return (DENIED, *self.patterns, *(BUILTIN_KINDS if self.builtin else ()))

    def label(self, kind: str) -> str:
        return self.labels.get(kind) or DEFAULT_LABELS.get(kind) or f"[{kind.upper()}]"

    def describe(self) -> dict:
        return {"builtin": self.builtin, "patterns": dict(self.patterns),
                "labels": {k: self.label(k) for k in self.kinds},
                "deny_list_terms": len(self.deny_list)}

    @cached_property
    def _compiled(self) -> list[tuple[int, str, re.Pattern[str]]]:
        """(kind index, kind, pattern) for every kind that can match, compiled on first use."""
        regexes = {DENIED: _term_regex(self.deny_list) if self.deny_list else None,
                   **self.patterns, **(_BUILTIN_PATTERNS if self.builtin else {})}
        return [(i, kind, re.compile(regexes[kind])) for i, kind in enumerate(self.kinds)
                if regexes[kind] is not None]

    def find(self, texts: Sequence[str], text: str, codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The identifier spans of a batch: (starts, ends, kind indices), sorted, disjoint and
        non-empty, as offsets into ``text = "".join(texts)``; no span crosses a document boundary.

        ``codes``, ``cls`` and ``doc_bounds`` are ``text``'s code points, their classes and the
        document offsets (:func:`textdp.text._codes.encode_batch`). The built-in patterns run
        only on the whitespace-delimited stretches around their anchors (digit clusters, ``@``,
        ``::``, ``://``, ``www.``), found by numpy: a regular expression costs ~15 ns per
        character in ``re``, more than the whole privatisation of that character.
        """
        rows = []
        if self.builtin:
            rows.append(self._builtin_spans(text, codes, cls, doc_bounds))
        if self.deny_list or self.patterns:
            rows.append(self._scanned_spans(texts))
        spans = np.concatenate(rows) if rows else np.empty((0, 4), dtype=np.int64)
        return _resolve(spans)

    def _builtin_spans(self, text: str, codes: np.ndarray, cls: np.ndarray,
                       doc_bounds: np.ndarray) -> np.ndarray:
        rows = [np.empty((0, 4), dtype=np.int64)]
        for kinds, (lo, hi) in zip(_ANCHORED, _windows(text, codes, cls, doc_bounds), strict=True):
            if not lo.size:
                continue
            # The stretches joined by "\n", which no built-in pattern crosses and whose
            # look-arounds read as whitespace: the stretch's real neighbour (or a document edge).
            sub = "\n".join([text[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
            sub_start = np.cumsum(hi - lo + 1) - (hi - lo + 1)
            spans = np.array(self._matches(sub, kinds), dtype=np.int64).reshape(-1, 4)
            piece = np.searchsorted(sub_start, spans[:, 1], "right") - 1
            spans[:, 1:3] += (lo - sub_start)[piece][:, None]
            rows.append(spans)
        return np.concatenate(rows)

    def _scanned_spans(self, texts: Sequence[str]) -> np.ndarray:
        """The deny-list and the user's patterns, over the whole batch."""
        # The documents joined by "\n"; a user pattern may match across it: those documents
        # are scanned again, one by one.
        joined = "\n".join(texts)
        bounds = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1,
                  out=bounds[1:])  # document d starts at bounds[d] in ``joined``
        spans = np.array(self._matches(joined, self._scanned_kinds),
                         dtype=np.int64).reshape(-1, 4)
        doc = np.searchsorted(bounds, spans[:, 1], "right") - 1
        crossing = spans[:, 2] > bounds[doc + 1] - 1
        if crossing.any():
            spans, doc = self._rescan(texts, spans, doc, crossing, bounds)
        spans[:, 1:3] -= doc[:, None]  # one "\n" per document before this one
        return spans

    @property
    def _scanned_kinds(self) -> tuple[str, ...]:
        return (DENIED, *self.patterns)

    def _matches(self, text: str, kinds: Sequence[str]) -> list[tuple[int, int, int, int]]:
        """(priority, start, end, kind) of every accepted match of ``kinds`` in ``text``."""
        out = []
        for index, kind, pattern in self._compiled:
            if kind not in kinds:
                continue
            check = kind in ("card", "phone")
            for m in pattern.finditer(text):
                start, end = m.span()
                if end > start and (not check or _accept(kind, m.group())):
                    out.append((index, start, end, index))
        return out

    def _rescan(self, texts: Sequence[str], spans: np.ndarray, doc: np.ndarray,
                crossing: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Drop every match in a document a crossing match touched; scan those documents alone."""
        last = np.searchsorted(bounds, spans[:, 2] - 1, "right") - 1
        redo = np.unique(np.concatenate([np.arange(a, b + 1) for a, b in
                                         zip(doc[crossing].tolist(), last[crossing].tolist(),
                                             strict=True)]))
        keep = ~(np.isin(doc, redo) | np.isin(last, redo))
        rows = [spans[keep]]
        for d in redo.tolist():
            again = np.array(self._matches(texts[d], self._scanned_kinds), dtype=np.int64)
            again = again.reshape(-1, 4)
            again[:, 1:3] += bounds[d]
            rows.append(again)
        spans = np.concatenate(rows)
        return spans, np.searchsorted(bounds, spans[:, 1], "right") - 1


def _windows(text: str, codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Merged [lo, hi) windows for each group of :data:`_ANCHORED`: the whitespace-delimited
    stretches (within their document) around the anchors its kinds need — ``@``; ``://`` or
    ``www.``; a cluster of ≥ 4 digits (gaps ≤ 8 characters) or ``::``."""
    from textdp.text._codes import DIGIT, WHITESPACE

    del text  # the anchors are found in the code array, a few vectorised passes
    digits = np.flatnonzero(cls == DIGIT)
    doc = np.searchsorted(doc_bounds, digits, "right")
    cut = np.flatnonzero((np.diff(digits) > 8) | (np.diff(doc) != 0)) + 1
    first = np.concatenate([np.zeros(min(digits.size, 1), dtype=np.int64), cut])
    size = np.diff(np.append(first, digits.size))
    big = size >= 4
    colon = np.flatnonzero(codes[:-1] == 58)
    pairs = colon[codes.take(colon + 1) == 58]
    url = colon[codes.take(np.minimum(colon + 2, codes.size - 1)) == 47]
    url = url[codes.take(url + 1) == 47]
    dots = np.flatnonzero(codes[3:] == 46) + 3
    www = np.ones(dots.size, dtype=bool)
    for back in (1, 2, 3):
        www &= (codes.take(dots - back) | 32) == 119  # "www." in any case
    at = np.flatnonzero(codes == 64)
    groups = [(at, at), (np.concatenate([url, dots[www] - 3]), np.concatenate([url + 2, dots[www]])),
              (np.concatenate([digits[first[big]], pairs]),
               np.concatenate([digits[first[big] + size[big] - 1], pairs + 1]))]
    ws = np.flatnonzero(cls == WHITESPACE)
    return [_stretches(a, b, ws, doc_bounds, codes.size) for a, b in groups]


def _stretches(a: np.ndarray, b: np.ndarray, ws: np.ndarray, doc_bounds: np.ndarray,
               n: int) -> tuple[np.ndarray, np.ndarray]:
    """The merged whitespace-delimited stretches, within a document, holding [a[i], b[i]]."""
    if not a.size:
        return a, a
    ws = np.concatenate([[-1], ws, [n]])  # sentinels: the text's edges
    lo = ws.take(np.searchsorted(ws, a) - 1) + 1
    lo = np.maximum(lo, doc_bounds.take(np.searchsorted(doc_bounds, a, "right") - 1))
    hi = ws.take(np.searchsorted(ws, b, "right"))
    hi = np.minimum(hi, doc_bounds.take(np.searchsorted(doc_bounds, b, "right")))
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
