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
  capitalised word (``Siemens AG``, ``Banco Santander S.A.``); in lower case, ``ag``, ``bv``,
  ``nv``, ``kg``, ``lp``, ``kk``, ``oy``, ``gk`` or ``hf`` after one or two words that are no
  function words, one of them rare in English (Zipf < 3: ``hanse metall ag``, ``tidewater
  partners lp``; ``as``, ``sa``, ``da``, ``ab`` are words too often, here and in other languages).

A dotted form is also matched written with spaces (``Sp. z o.o.``, ``Pty. Ltd.``,
``S.A. de C.V.``), and a form of two dotted letters written without its dots (``bv``, ``kk``).

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
        if len(key) == 3 and key[1] == " " and key.replace(" ", "") not in ENGLISH_STOPWORDS:
            # "b.v." written "bv", "k.k." written "kk"
            entries.append((key.replace(" ", ""), _FORMAL))
    return entries


# Legal forms written with dots and spaces ("sp. z o.o.", "s.a. de c.v.", "pty. ltd."): the
# words view reads ". " as two spaces, which no key spans, so these are matched on the text.
@functools.cache
def _spaced_pattern() -> re.Pattern[str]:
    from cleanco import termdata

    terms = {t for group in (termdata.terms_by_type, termdata.terms_by_country)
             for ts in group.values() for t in ts if "." in t and " " in t and t.isascii()}
    parts = [r"\.?\s*".join(re.escape(w) for w in re.split(r"[.\s]+", t.strip(". ")))
             + (r"\." if t.endswith(".") else "")
             for t in sorted(terms, key=len, reverse=True)]
    return re.compile(rf"(?<![^\W_])(?:{'|'.join(parts)})(?![^\W_])", re.IGNORECASE)


@functools.cache
def _spaced_hints() -> tuple[str, ...]:
    """Each spaced form up to its first dot (``sp.``, ``pty.``, ``a spol.``, ``gmbh & co.``):
    a document holding none of them holds no spaced form, found by ``in`` (no regex)."""
    from cleanco import termdata

    terms = {t for group in (termdata.terms_by_type, termdata.terms_by_country)
             for ts in group.values() for t in ts if "." in t and " " in t and t.isascii()}
    return tuple(sorted({t.strip(". ").split(".", 1)[0] + "." for t in terms}))


def _spaced(text: str) -> list[tuple[int, int, int]]:
    """Matches of the dotted, spaced legal forms, as the lexicon's (view offsets, flags)."""
    if "." not in text:
        return []
    lowered = text.lower()
    if not any(hint in lowered for hint in _spaced_hints()):
        return []
    out = []
    for m in _spaced_pattern().finditer(text):
        end = m.end() - 1 if text[m.end() - 1] == "." else m.end()
        out.append((m.start() + 1, end + 1, _FORMAL))
    return out


# Two-letter legal forms in lower case ("hanse metall ag", "vantor bv") are also words and
# abbreviations ("ag policy", "lp record"): one closes a company only after a word that is no
# function word, one of the two words before being rare in English (Zipf < 3). Only these: "as",
# "sa", "da" are words of English or of other languages ("camouflaged as", "geleden da").
_SHORT_LOWER = frozenset({"ag", "ab", "bv", "nv", "kg", "lp", "kk", "oy", "gk", "hf"})


def _short_suffix(text: str, a: int, b: int) -> bool:
    from textdp.text._zipf import zipf_at_least

    words = text[max(0, a - 60):a].split()[-2:]
    if not words or re.search(r"[^\w\s]", text[a - len(words[-1]) - 1:a]) or any(
            not w.isalpha() or w.lower() in ENGLISH_STOPWORDS for w in words[-1:]):
        return False
    # A word of other letters than ASCII reads as rare here: wordfreq itself (0.6 CPU-s and
    # 49 MiB to import) is not loaded for it.
    if all(w.isascii() and zipf_at_least(w, 3.0) for w in words if w.isalpha()):
        return False  # "tidewater partners lp": one of the two words before is rare
    return True


def find_orgs(text: str) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, "org")`` of companies named with their legal form in ``text`` (the
    folded, cased form of one document). A pure function of ``text``."""
    view = words_view(text)
    matches = sorted([*_lexicon().find(view), *_spaced(text)])
    if not matches:
        return []
    spans: list[tuple[int, int, str]] = []
    for a, b, flags in matches:
        a, b = a - 1, b - 1
        written = text[a:min(len(text), b + 1)]
        dotted = written.count(".") >= 2  # s.a., d.o.o., sp. z o.o.
        word_before = text[:a].rstrip().rsplit(None, 1)[-1:] or [""]
        short_lower = (not flags & _DISTINCTIVE and not dotted and b - a == 2
                       and text[a:b] in _SHORT_LOWER and _short_suffix(text, a, b))
        if text[a:b].lower() in ENGLISH_STOPWORDS and not (word_before[0].istitle()
                                                           or short_lower):
            continue  # "AS", "AT" after a shouted word: "SICK OF LOOKING AT"
        if not flags & _DISTINCTIVE and not (any(c.isupper() for c in written) or dotted
                                             or short_lower):
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
            elif (lower and (flags & _DISTINCTIVE or dotted or short_lower) and taken < 2
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
