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

Only the words *adjacent* to the candidate count (separators ``.:#-`` and spaces between):
``order form: call 07911 123456`` is a phone number.
"""

from __future__ import annotations

import re

#: How many characters before and after a candidate are read.
BEFORE, AFTER = 48, 12

_SEP = r"[\s.:#\-–/()]*"
_PHONE = re.compile(rf"\b(?:phone|ph|tel|telephone|telefon|mobile|mob|cell|cellphone|fax|call|"
                    rf"contact|whatsapp|sms|hotline|landline){_SEP}(?:no\b\.?|nr\b\.?|num\b\.?|"
                    rf"number|#)?{_SEP}$", re.IGNORECASE)
_REFERENCE = re.compile(
    rf"(?:\b(?:order|orders|invoice|inv|tracking|track|ticket|tkt|ref|reference|booking|"
    rf"confirmation|conf|receipt|case|claim|policy|account|acct|acc|customer|cust|member|"
    rf"membership|po|sku|serial|item|parcel|shipment|consignment|transaction|txn|rma|"
    rf"reservation|pnr|dob|born|birth|date|dated){_SEP}(?:(?:no|nr|num|number|id|code)\b\.?"
    rf"{_SEP})?|(?:^|[\s(])(?:#|no\.|nr\.?){_SEP})$", re.IGNORECASE)
_NOT_ID_BEFORE = re.compile(
    r"(?:\b(?:v|ver|vers|version|release|rel|build|firmware|fw|kernel|section|sec|chapter|"
    r"ch|clause|article|art|para|paragraph|figure|fig|table|tab|rule|step|appendix|"
    r"usd|eur|gbp|chf|jpy|cny|inr|try|brl|cad|aud|rs|tl)\.?|§+|[$€£¥₹₺₽])[\s:]*$",
    re.IGNORECASE)
_NOT_ID_AFTER = re.compile(r"^\s*(?:[$€£¥₹₺₽%]|(?:usd|eur|gbp|chf|jpy|cny|inr|try|brl|cad|aud|"
                           r"am|pm|a\.m|p\.m|dollars?|euros?|pounds?|lira|rupees?)\b)",
                           re.IGNORECASE)

KEEP, REFERENCE, NONE = range(3)


def judge(before: str, after: str, kind: str) -> int:
    """What the context says of a ``kind`` (``phone`` or ``ip``) candidate between ``before``
    and ``after`` (up to :data:`BEFORE` / :data:`AFTER` characters of its own document):
    :data:`KEEP` it as it is, make it a :data:`REFERENCE` (phones only), or :data:`NONE`: no
    identifier."""
    if kind == "phone" and _PHONE.search(before):
        return KEEP
    if _NOT_ID_BEFORE.search(before) or _NOT_ID_AFTER.search(after):
        return NONE
    if kind == "phone" and _REFERENCE.search(before):
        return REFERENCE
    return KEEP
