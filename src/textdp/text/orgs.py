"""Companies by their legal form (Ltd, GmbH, Inc, S.A., Sp. z o.o. …), in lower case too.

The suffixes are ``cleanco`` 2.3's legal forms of companies by type and country, in the
folding's key form (dots read as spaces: ``s.a.`` is ``s a``), matched by Aho–Corasick over the
folded text's words (:mod:`textdp.text._lexicon`). A suffix closes a company name when:

* it is **distinctive** — three letters or more, and no vowel (``ltd``, ``llc``, ``plc``,
  ``gmbh``), or rare as an English word (Zipf frequency < 3.5: ``sarl``, ``bvba``), or ``inc``
  or ``corp`` — in any case; the name is the
  one to three words before it that are capitalised (``Acme Widgets Ltd``) or, in lower case,
  the one or two words before it that are no function words (``acme ltd``);
* or it is written with two dots or more (``s.a.``, ``d.o.o.``, ``sp. z o.o.``), in any case;
* otherwise (``AG``, ``SA``, ``Co.``, ``Limited``) it must be written with capitals and follow a
  capitalised word (``Siemens AG``, ``Banco Santander S.A.``).

What it cannot see: a company named without its legal form (left to the NER model).
"""

from __future__ import annotations

import functools
import re

from textdp.text._lexicon import Lexicon, cached, words_view
from textdp.text.stopwords import ENGLISH_STOPWORDS

__all__ = ["find_orgs", "SUFFIX_PACKAGE", "SUFFIX_VERSION"]

SUFFIX_PACKAGE = "cleanco"
SUFFIX_VERSION = "2.3"
_DISTINCTIVE, _FORMAL = 1, 2
_WORD = re.compile(r"[^ ]+")
_JOINERS = frozenset({"of", "de", "van", "von"})  # inside a name: Bank of Ireland plc


@functools.cache
def _lexicon() -> Lexicon:
    return cached("orgs", _entries, packages=(SUFFIX_PACKAGE,))


def _entries() -> list[tuple[str, int]]:
    try:
        from cleanco import termdata
    except ImportError:
        raise ImportError(f"the company recogniser needs {SUFFIX_PACKAGE}=={SUFFIX_VERSION}: "
                          f"pip install {SUFFIX_PACKAGE}=={SUFFIX_VERSION}") from None
    from wordfreq import zipf_frequency

    from textdp.text.fold import key_string

    terms = {t for group in (termdata.terms_by_type, termdata.terms_by_country)
             for ts in group.values() for t in ts}
    entries = []
    for term in terms:
        key = " ".join(re.sub(r"[^\w']|[\d_]", " ", key_string(term)).split())
        if not key or key == "&":
            continue
        one_word = " " not in key
        # An abbreviation no English word spells (no vowel: ltd, llc, plc, gmbh, srl) or a
        # rare word (sarl, bvba); "inc" and "corp" are read as suffixes in any case too.
        distinctive = one_word and len(key) >= 3 and key not in ENGLISH_STOPWORDS and (
            not set(key) & set("aeiou") or zipf_frequency(key, "en") < 3.5
            or key in ("inc", "corp"))
        entries.append((key, _DISTINCTIVE if distinctive else _FORMAL))
    return entries


def find_orgs(text: str) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, "org")`` of companies named with their legal form in ``text`` (the
    folded, cased form of one document). A pure function of ``text``."""
    view = words_view(text)
    matches = list(_lexicon().find(view))
    if not matches:
        return []
    spans: list[tuple[int, int, str]] = []
    for a, b, flags in matches:
        a, b = a - 1, b - 1
        written = text[a:min(len(text), b + 1)]
        dotted = written.count(".") >= 2  # s.a., d.o.o., sp. z o.o.
        word_before = text[:a].rstrip().rsplit(None, 1)[-1:] or [""]
        if text[a:b].lower() in ENGLISH_STOPWORDS and not word_before[0].istitle():
            continue  # "AS", "AT" after a shouted word: "SICK OF LOOKING AT"
        if not flags & _DISTINCTIVE and not (any(c.isupper() for c in written) or dotted):
            continue
        before = [(m.start() - 1, m.end() - 1) for m in _WORD.finditer(view, max(0, a - 80), a + 1)]
        if before and view[max(0, a - 80)] != " ":
            before = before[1:]  # a word cut by the window's edge
        start = a
        taken = 0
        lower = not text[a:b][:1].isupper()
        for s, e in reversed(before):
            word = text[s:e]
            if re.search(r"[.!?;:,\n]", text[e:start]):
                break
            if word[:1].isupper() and taken < 3 and word.lower() not in ("i",):
                start, taken = s, taken + 1
            elif (lower and (flags & _DISTINCTIVE or dotted) and taken < 2
                  and word.lower() not in ENGLISH_STOPWORDS):
                start, taken = s, taken + 1
            elif word.lower() in _JOINERS and taken and taken < 3:
                continue
            else:
                break
        if taken:
            if spans and start < spans[-1][1]:
                spans[-1] = (spans[-1][0], max(b, spans[-1][1]), "org")
            else:
                spans.append((start, b, "org"))
    return spans
