"""What the words right around an identifier candidate say it is (issue 35, Deliver 3).

libphonenumber answers whether a string *can* be a phone number of a region, not whether it is
one: ``Invoice 4155550132`` and ``order no. 07911 123456`` are valid numbers of the US and GB
plans. The validators stay the first test; this module is the second, the context, read on the
folded text of the candidate's own document only (so a document is still recognised alone):

* a **reference** cue right before the number (``order``, ``invoice``, ``ticket``, ``tracking``,
  ``ref``, ``booking``, ``account``, …, optionally followed by ``no.``, ``#``, ``number``, ``id``;
  a bare ``#`` or ``no.``; a date cue such as ``DOB``) makes a phone candidate a ``reference``
  — still an identifier, masked under its own label, never released: an order number is as
  personal as a phone number, and only the count by kind was wrong;
* a **version** (``v``, ``ver.``, ``version``, ``build``, ``release``), **section** (``section``,
  ``§``, ``chapter``, ``clause``, ``article``, ``fig.``, ``table``, …) or **amount** cue
  (a currency symbol or ISO code before or after, ``%`` after; ``am``/``pm`` after: a time)
  makes a phone or IP candidate no identifier at all: its digits stay number tokens, which the
  OOV policy handles as every number (masked by default);
* a phone cue (``phone``, ``tel``, ``mobile``, ``call``, ``fax``, …) right before wins over all
  of these: ``phone no. 07911 123456`` is a phone number.

Codes of letters and digits (``INV-2231``) have no validator: :func:`reference_spans` finds them
by a reference cue, as ``reference`` identifiers.

Only the words *adjacent* to the candidate count (``.:-–/()`` and spaces between them):
``order form: call 07911 123456`` is a phone number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

#: How many characters before and after a candidate are read.
BEFORE, AFTER = 40, 12

# The words and symbols around a candidate: separators (spaces and ``.:#-–/()``, except ``#``,
# which is a cue of its own) are skipped, any other character is a token that breaks adjacency.
# One findall over a few dozen characters, then set lookups: a search for cues anchored at the
# end tried every start position against every alternative (~20 µs a candidate).
_TOKEN = re.compile(r"[^\W_]+|§+|[#$€£¥₹₺₽%]|[^\s.:\-–/()]")
_PHONE = frozenset({"phone", "ph", "tel", "telephone", "telefon", "mobile", "mob", "cell",
                    "cellphone", "fax", "call", "contact", "whatsapp", "sms", "hotline",
                    "landline"})
_REFERENCE = frozenset({
    "order", "orders", "invoice", "inv", "tracking", "track", "ticket", "tkt", "ref",
    "reference", "booking", "confirmation", "conf", "receipt", "case", "claim", "policy",
    "account", "acct", "acc", "customer", "cust", "member", "membership", "po", "sku", "serial",
    "item", "parcel", "shipment", "consignment", "transaction", "txn", "rma", "reservation",
    "pnr", "dob", "born", "birth", "date", "dated"})
_NUMBER_WORDS = frozenset({"no", "nr", "num", "number", "id", "code", "#"})
_NOT_ID_BEFORE = frozenset({
    "v", "ver", "vers", "version", "release", "rel", "build", "firmware", "fw", "kernel",
    "section", "sec", "chapter", "ch", "clause", "article", "art", "para", "paragraph", "figure",
    "fig", "table", "tab", "rule", "step", "appendix", "usd", "eur", "gbp", "chf", "jpy", "cny",
    "inr", "try", "brl", "cad", "aud", "rs", "tl", "$", "€", "£", "¥", "₹", "₺", "₽"})
_NOT_ID_AFTER = frozenset({
    "$", "€", "£", "¥", "₹", "₺", "₽", "%", "usd", "eur", "gbp", "chf", "jpy", "cny", "inr",
    "try", "brl", "cad", "aud", "am", "pm", "dollar", "dollars", "euro", "euros", "pound",
    "pounds", "lira", "rupee", "rupees"})

KEEP, REFERENCE, NONE = range(3)


def judge(before: str, after: str, kind: str) -> int:
    """What the context says of a ``kind`` (``phone`` or ``ip``) candidate between ``before``
    and ``after`` (up to :data:`BEFORE` / :data:`AFTER` characters of its own document):
    :data:`KEEP` it as it is, make it a :data:`REFERENCE` (phones only), or :data:`NONE`: no
    identifier."""
    words = _TOKEN.findall(before[-BEFORE:])
    last = words[-1].casefold() if words else ""
    second = words[-2].casefold() if len(words) > 1 else ""
    if kind == "phone" and (last in _PHONE or last in _NUMBER_WORDS and second in _PHONE):
        return KEEP
    nxt = _TOKEN.findall(after[:AFTER])
    if (last in _NOT_ID_BEFORE or last.startswith("§")
            or nxt and nxt[0].casefold() in _NOT_ID_AFTER):
        return NONE
    if kind == "phone" and (last in _REFERENCE or last in ("#", "no", "nr")
                            or last in _NUMBER_WORDS and second in _REFERENCE):
        return REFERENCE
    return KEEP


# Order, invoice and ticket codes of letters and digits (``ref INV-2231``, ``order #A-77812``,
# ``invoice no. ORD-55123-X``): no validator knows them, so a code is a reference when a
# reference cue names it. Not by its shape alone: a code with no cue is left to the user's own
# recognisers and allow-list (``TK-123456`` for a ticket kind of theirs), which an identifier
# would overrule. A code needs two digits (``order 2 items`` is no code) and a letter: a number
# alone (``order 4711-0815``, ``invoice 2023-000123``) stays a number token, masked as numbers
# are, and a reference only where it is phone-shaped (:func:`judge`).
_CODE_CUES = (
    "order", "orders", "invoice", "inv", "tracking", "track", "ticket", "tkt", "ref", "reference",
    "booking", "confirmation", "conf", "receipt", "case", "claim", "policy", "account", "acct",
    "customer", "cust", "member", "membership", "po", "sku", "serial", "parcel", "shipment",
    "consignment", "transaction", "txn", "rma", "reservation", "pnr")
_CUE = r"(?:" + "|".join(_CODE_CUES) + r")\b\.?"
_CODES = re.compile(
    rf"(?i:\b{_CUE}(?:\s+{_CUE})*(?:\s*(?:no|nr|num|number|id|code)\b\.?)?"
    r"(?:\s*[:#]\s*|\s+)#?(?P<cued>[a-z0-9]+(?:[-/_.][a-z0-9]+)*))")


def reference_spans(text: str, bounds: Sequence[int],
                    codes: np.ndarray | None = None) -> list[tuple[int, int]]:
    """[start, end) of the order, invoice and ticket codes in ``text`` (documents at ``bounds``;
    no span crosses one) — see :data:`_CODES`. ``codes``: ``text``'s code points, where the
    caller has them (the documents with an ASCII digit are found by numpy, the others skipped)."""
    if codes is None:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    digits = np.flatnonzero((codes >= 48) & (codes <= 57))
    if not digits.size:
        return []
    edges = np.asarray(bounds, dtype=np.int64)
    docs = np.unique(np.searchsorted(edges, digits, "right") - 1).tolist()
    out = []
    for d in docs:
        lo, hi = int(edges[d]), int(edges[d + 1])
        for m in _CODES.finditer(text, lo, hi):  # endpos: no code runs into the next document
            a, b = m.span("cued")
            code = text[a:b]
            if sum(c.isdigit() for c in code) >= 2 and not code.isdigit() and any(
                    c.isalpha() for c in code):
                out.append((a, b))
    return out
