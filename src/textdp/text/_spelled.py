"""E-mail addresses written to dodge a recogniser: ``maria at example dot com``,
``maria [at] example [dot] com``, ``maria(at)example.com``, ``maria @ example.com``.

Read on the folded text (:mod:`textdp.text.fold`), so ``＠`` and ``﹫`` are ``@`` already. The
forms recognised, where ``AT`` and ``DOT`` separate a local part and the labels of a domain whose
last label is a top-level domain of the Public Suffix List:

* ``AT``: ``@`` with or without spaces around it, ``at`` between spaces, or ``at`` or ``@`` in
  brackets (``[at]``, ``(at)``, ``{at}``, ``<at>``, spaces allowed inside);
* ``DOT``: ``.``, ``dot`` between spaces, or ``dot`` or ``.`` in brackets.

A plain ``at`` needs a spelled or bracketed ``DOT`` somewhere after it (``I work at acme.com`` and
``I stayed at home. It was …`` are sentences, not addresses). Candidates are sought only around
anchors that numpy finds (``@``, the word ``dot``, ``at`` right after an opening bracket), so
text without them costs one pass of array comparisons.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

_LOCAL = r"[\w!#$%&'*+/=?^`{|}~-]"
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_OPEN, _CLOSE = r"[\[({<]", r"[\])}>]"
_AT = rf"(?P<at>\s*{_OPEN}\s*(?:at|@)\s*{_CLOSE}\s*|\s+at\s+|\s*@\s*)"
_DOT = rf"(?:\s*{_OPEN}\s*(?:dot|\.)\s*{_CLOSE}\s*|\s+dot\s+|\.)"
SPELLED = re.compile(
    rf"(?<![\w.@-])(?P<local>{_LOCAL}+(?:\.{_LOCAL}+)*){_AT}"
    rf"(?P<domain>{_LABEL}(?:{_DOT}{_LABEL})*{_DOT}(?P<tld>[^\W\d_]{{2,63}}))(?![\w@-])",
    re.IGNORECASE)
_SPELLED_DOT = re.compile(rf"(?i)(?<![^\W_])dot(?![^\W_])|{_OPEN}")
#: Characters a window reaches before and after its anchor: the longest local part (64) and
#: some spelled labels.
_REACH = 120


def _anchors(codes: np.ndarray) -> np.ndarray:
    """Positions of ``@``, of a ``dot`` (any case), and of an ``at`` right after an opening
    bracket (perhaps one space between)."""
    n = codes.size
    at = np.flatnonzero(codes == 64)
    if n < 3:
        return at
    low = codes | 32
    dot = np.flatnonzero((low[:-2] == ord("d")) & (low[1:-1] == ord("o")) & (low[2:] == ord("t")))
    pair = np.flatnonzero((low[:-1] == ord("a")) & (low[1:] == ord("t")))
    opening = (codes == 91) | (codes == 40) | (codes == 123) | (codes == 60)  # [ ( { <
    before = pair[pair >= 1]
    bracketed = before[opening[before - 1]
                       | ((codes[before - 1] == 32) & opening[np.maximum(before - 2, 0)]
                          & (before >= 2))]
    return np.concatenate([at, dot, bracketed])


def _maybe(text: str) -> bool:
    """Whether ``text`` may hold an anchor (substring tests at C speed: most text holds none)."""
    if "@" in text:
        return True
    low = text.lower()
    return "dot" in low or ("at" in low and any(f"{b}at" in low or f"{b} at" in low
                                                for b in "[({<"))


def spelled_spans(text: str, codes: np.ndarray, bounds: np.ndarray,
                  is_tld: Callable[[str], bool]) -> list[tuple[int, int]]:
    """[start, end) of every spelled-out address in ``text`` (documents at ``bounds``; no
    span crosses one), for a top-level-domain test ``is_tld`` on a case-folded label."""
    if not _maybe(text):
        return []
    anchors = _anchors(codes)
    if not anchors.size:
        return []
    anchors.sort()
    doc = np.searchsorted(bounds, anchors, "right") - 1
    lo = np.maximum(anchors - _REACH, bounds.take(doc))
    hi = np.minimum(anchors + _REACH, bounds.take(doc + 1))
    out: set[tuple[int, int]] = set()
    start = end = -1
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        if a < end:  # overlapping windows (of one document: windows stop at its bounds)
            end = max(end, b)
            continue
        if end > start:
            out |= _scan(text, start, end, is_tld)
        start, end = a, b
    if end > start:
        out |= _scan(text, start, end, is_tld)
    return sorted(out)


def _scan(text: str, lo: int, hi: int, is_tld: Callable[[str], bool]) -> set[tuple[int, int]]:
    """The window is cut out of the text, so that no look-around reads another document."""
    out = set()
    for m in SPELLED.finditer(text[lo:hi]):
        if not is_tld(m.group("tld").casefold()):
            continue
        if m.group("at").strip().lower() == "at" and not _SPELLED_DOT.search(m.group("domain")):
            continue  # "I work at acme.com": a sentence
        out.add((lo + m.start(), lo + m.end()))
    return out
