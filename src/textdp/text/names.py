"""People's names from a maintained name list, in every form users write them, decided by context.

The NER model (:mod:`textdp.text.entities`) misses names it has little context for: in lower
case (``thx, zanele kim``), names that are also words (Rose, Will, Mark, Hope, Baker), names
after ``my colleague``, in sign-offs, in user names. This recogniser adds what a name list and
the words around a name tell:

* **the list**: the first names and surnames of ``names-dataset`` 3.3.1 (105 countries) ranked
  among the 2,000 most common of at least one country (:mod:`textdp.text._lexicon`), matched by
  Aho–Corasick over the folded text's words (case, accents, look-alike letters ignored).
* **a word of the list is a name** when:

  - it is capitalised and *rare as an English word* (Zipf frequency < 3.3 in ``wordfreq``, not
    a function word): ``Zanele``, ``Okafor``, ``Wiśniewska``;
  - it follows a **cue** — a greeting or sign-off (``hi``, ``dear``, ``thanks``, ``thx``,
    ``cheers``, ``regards``, ``best``), an introduction (``my name is``, ``spoke to``,
    ``ask for``), a title (``Mr``, ``Dr``), or a relation after a possessive (``my colleague``,
    ``our manager``, ``his son``) — capitalised; in lower case when it is no function word and
    rare as a word or among the 200 most common names of a country (``thanks mark``); after a
    weaker cue (``with``, ``from``, ``this is``) capitalised and not an ordinary English word
    (Zipf < 4.5) or a very common name that is not a very common word (Zipf < 5.2);
  - it stands next to another name, one space or a hyphen apart, as a given name then a surname:
    both capitalised, the second no function word, and one of them not a common word (Zipf < 4)
    or both among the 200 most common names (``Will Smith``, ``Rose Baker``); in lower case,
    neither a common word (Zipf ≥ 5) and one found a name already or rare (``zanele kim``);
  - it follows an initial (``J. Smith``; ``k. ramirez`` for a surname that is no ordinary word:
    the initial joins the span);
  - it ends a line or the document after a line break, a dash or a comma, as a sign-off or a
    vocative does (``-- ana``, ``call me back, ana``);
  - it is joined to another name by ``.`` or ``_`` with no space (``zanele.kim``,
    ``rose_baker``: a user name or an e-mail's local part);
  - it has a possessive and is no function word (``Mark's``, ``emeka's``; not ``He's``);
  - it recurs in the document, with the same case, after being found once.

Calendar words (``Tue``, ``Feb``, ``Monday``) and the cue words themselves are never names.
A capitalised function word (``Will``, ``May``) is a name only after a cue or title or before a
surname; in lower case never. Everything else of the list is left to the NER model.

What it cannot see: a name not in the list (a rare spelling, a transliteration); a name that is a
common word written in lower case with no cue (``ask mark about it``); a name that is a function
word written in lower case (``will``). False positives: a capitalised rare word that some
country uses as a name. Measured on held-out text and on the VADER sentences in docs/entities.md.
"""

from __future__ import annotations

import functools
import re

from textdp.text._lexicon import Lexicon, cached, name_lines, names_source, words_view
from textdp.text.stopwords import ENGLISH_STOPWORDS

__all__ = ["find_names", "RARE_ZIPF"]

#: A word of the list whose English Zipf frequency is below this is *rare* as a word.
RARE_ZIPF = 3.3
#: Two words in lower case are read as a name together only if neither is more common than this.
_COMMON_ZIPF = 5.0
_FIRST, _LAST, _TOP_FIRST, _TOP_LAST = 1, 2, 4, 8

_GREETINGS = frozenset(
    "hi hello hey hiya dear thanks thank thx ty tnx cheers regards best sincerely yours "
    "greetings bye morning afternoon evening attn cc love xoxo welcome congrats "
    "congratulations sorry".split())
_INTRODUCTIONS = frozenset({
    "name is", "names is", "this is", "ask for", "asked for", "speak to",
    "spoke to", "spoke with", "speaking to", "speaking with", "talk to", "talked to",
    "talked with", "named", "called", "contact", "per", "with", "from", "by", "to", "and",
    "for", "signed", "sent by", "cc", "ask", "tell", "told", "met", "call", "email", "emailed",
    "meet", "asked", "thank you"})
_TITLES = frozenset("mr mrs ms miss mx dr prof sir madam mister dame lord lady".split())
_POSSESSIVES = frozenset("my our your his her their".split())
_RELATIONS = frozenset(
    "colleague colleagues coworker co-worker workmate manager boss supervisor assistant "
    "teammate partner husband wife son daughter child kid brother sister mother father mom "
    "mum mommy dad daddy uncle aunt auntie cousin nephew niece grandson granddaughter grandma "
    "grandpa grandmother grandfather friend buddy neighbour neighbor landlord landlady tenant "
    "roommate flatmate fiance fiancee girlfriend boyfriend doctor dentist lawyer accountant "
    "advisor adviser agent rep representative contact engineer technician teacher tutor "
    "coach nanny client customer stepson stepdaughter baby".split())
# Introductions that name a person in lower case too (the short prepositions do not).
_STRONG_INTRODUCTIONS = frozenset({
    "name is", "names is", "ask for", "asked for", "speak to", "spoke to", "spoke with",
    "speaking to", "speaking with", "talk to", "talked to", "talked with", "named", "sent by",
    "thank you"})
#: Words ordinary in English (Zipf ≥ 4.5) are names in lower case, or after a short preposition,
#: only if among the 200 most common names of a country and below this (``thanks mark``).
_ORDINARY_ZIPF = 4.5
_TOP_ZIPF = 5.2
# Calendar words are no names (May, April, June are, and stay in the list).
_CALENDAR = frozenset("jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur "
                      "thurs fri sat sun monday tuesday wednesday thursday friday saturday "
                      "sunday".split())
_NOT_NAMES = (_GREETINGS | _TITLES | _POSSESSIVES | _RELATIONS | _CALENDAR
              | {w for cue in _INTRODUCTIONS for w in cue.split()})
_WORD = re.compile(r"[^ ]+")
_SENTENCE_END = re.compile(r"[.!?;:]\s")
_CLOSING = re.compile(r"[\n,—–]|--|(?:^|\s)-\s")


@functools.cache
def _lexicon() -> Lexicon:
    return cached("names", name_lines, packages=("names_dataset",), extra=names_source())


@functools.cache
def _zipf(key: str) -> float:
    return _lexicon().zipf(key)  # wordfreq's, stored with the key


def _case(word: str) -> str:
    if word[:1].isupper():
        return "upper" if len(word) > 1 and word.isupper() else "title"
    return "lower"


def _initial(text: str, a: int, b: int, next_start: int) -> bool:
    """Whether ``text[a:b]`` is an initial before the word at ``next_start`` (``J. Smith``,
    ``J Smith``; not the words ``A`` and ``I``)."""
    if b - a != 1 or not text[a].isalpha():
        return False
    between = text[b:next_start]
    return between in (". ", ".") or between == " " and text[a].isupper() and text[a] not in "AI"


def find_names(text: str) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, "person")`` of the names in ``text`` (the folded, cased form of one
    document), adjacent name words merged into one span. A pure function of ``text``."""
    view = words_view(text)
    flags_at = {a - 1: (b - 1, f) for a, b, f in _lexicon().find(view)}
    if not flags_at:
        return []
    doc = _Document(text, view, flags_at)
    doc.singles()
    doc.pairs()
    doc.initials()
    doc.recurrences()
    return doc.spans()


class _Document:
    """One document's words, their flags in the name list, and which of them are names."""

    def __init__(self, text: str, view: str, flags_at: dict[int, tuple[int, int]]) -> None:
        self.text = text
        self.tokens = [(m.start() - 1, m.end() - 1) for m in _WORD.finditer(view)]
        self.keys = [view[a + 1:b + 1] for a, b in self.tokens]
        self.masked = [False] * len(self.tokens)
        # A cue word is never a name itself ("Hi Rose": "Hi" is a name in some country).
        self.info = [flags_at.get(a, (0, 0))[1] if flags_at.get(a, (0, 0))[0] == b
                     and self.keys[i] not in _NOT_NAMES else 0
                     for i, (a, b) in enumerate(self.tokens)]

    def word(self, i: int) -> str:
        return self.text[slice(*self.tokens[i])]

    def gap(self, i: int) -> str:
        """The characters between token i − 1 and token i."""
        return self.text[self.tokens[i - 1][1] if i > 0 else 0:self.tokens[i][0]]

    def cue(self, i: int) -> tuple[bool, bool]:
        """(a cue before token i, a cue strong enough for lower case)."""
        keys = self.keys
        if i == 0 or _SENTENCE_END.search(self.gap(i) + " ") and keys[i - 1] not in _TITLES:
            return False, False
        one = keys[i - 1]
        two = f"{keys[i - 2]} {one}" if i > 1 else ""
        if one in _TITLES or one in _GREETINGS or two in _STRONG_INTRODUCTIONS:
            return True, True
        if one in _STRONG_INTRODUCTIONS:
            return True, True
        if one in _RELATIONS and i > 1 and keys[i - 2] in _POSSESSIVES:
            return True, True
        return two in _INTRODUCTIONS or one in _INTRODUCTIONS, False

    def closes(self, i: int) -> bool:
        """Token i, alone or with the name word after it, ends a line or the document after a
        line break, a dash or a comma: a sign-off or a vocative (``-- Ana``, ``call me, ana``)."""
        j = i + 1 if i + 1 < len(self.tokens) and self.info[i + 1] and self.gap(i + 1) == " " else i
        rest = self.text[self.tokens[j][1]:].split("\n", 1)[0]
        if rest.strip(" .!\t\r"):
            return False
        if _CLOSING.search(self.gap(i)):
            return True
        # The whole document: a lone capitalised or rare word may be a signature ("Ana"); a
        # lone common word in lower case is a query or a fragment ("green", "mark", "green tea").
        return i == 0 and (_case(self.word(i)) != "lower" or _zipf(self.keys[i]) < RARE_ZIPF)

    def singles(self) -> None:
        """Words that are names by their own rarity or by the words just around them."""
        for i, (a, b) in enumerate(self.tokens):
            f = self.info[i]
            if not f:
                continue
            key = self.keys[i]
            case = _case(self.text[a:b])
            stop = key in ENGLISH_STOPWORDS
            z = _zipf(key)
            rare = not stop and z < RARE_ZIPF
            top = bool(f & (_TOP_FIRST | _TOP_LAST))
            before, strong = self.cue(i)
            # Not an ordinary English word, or a very common name (Mark, Rose) that is not too
            # common a word (happy, pretty, power).
            namelike = not stop and (z < _ORDINARY_ZIPF or top and z < _TOP_ZIPF)
            titled = case == "title" and not stop and z < _TOP_ZIPF
            self.masked[i] = bool(
                case == "title" and (rare or strong and (not stop or f & _TOP_FIRST) or before and (
                    namelike or self.keys[i - 1] in _TITLES))
                or case == "upper" and strong and rare
                or case == "lower" and strong and not stop and (rare or top and z < _TOP_ZIPF)
                # a possessive (no function word: He's, It's): Mark's, emeka's, april's
                or self.text[b:b + 2] in ("'s", "’s") and (
                    titled or rare or f & _TOP_FIRST and z < _ORDINARY_ZIPF)
                or (namelike or case == "title" and not stop and z < _TOP_ZIPF)
                and self.closes(i))

    def pairs(self) -> None:
        """A given name then a surname, one space or a hyphen apart; or joined by "." / "_"."""
        keys, info, masked = self.keys, self.info, self.masked
        for i in range(len(self.tokens) - 1):
            j = i + 1
            if not (info[i] & (_FIRST | _TOP_FIRST) and info[j] & (_LAST | _TOP_LAST)):
                continue
            between = self.text[self.tokens[i][1]:self.tokens[j][0]]
            si, sj = keys[i] in ENGLISH_STOPWORDS, keys[j] in ENGLISH_STOPWORDS
            zs = (_zipf(keys[i]), _zipf(keys[j]))
            both_top = info[i] & _TOP_FIRST and info[j] & _TOP_LAST
            if (between in (" ", "-") and _case(self.word(i)) == "title"
                    and _case(self.word(j)) == "title" and not sj
                    and (not si or info[i] & _TOP_FIRST) and (min(zs) < 4.0 or both_top)):
                # Two capitalised words of the list: one of them no common word (Rose
                # Adeyemi), or a very common given name then a very common surname (Will
                # Smith, Rose Baker) — not "The Sum", "Long Time", "Red Bridge".
                masked[i] = masked[j] = True
            elif between in (" ", "-") and not si and not sj and max(zs) < _COMMON_ZIPF and (
                    masked[i] or masked[j] or min(zs) < RARE_ZIPF and min(
                        len(keys[i]), len(keys[j])) > 2):
                # In lower case: neither a common word (Zipf ≥ 5), and one of them found a
                # name already or rare as a word (zanele kim; not "candy bar", "ho hum").
                masked[i] = masked[j] = True
            elif between in (".", "_") and not si and not sj and len(keys[i]) > 2 < len(keys[j]):
                masked[i] = masked[j] = True

    def initials(self) -> None:
        """A surname after an initial: "J. Smith", "J Smith", "k. ramirez"."""
        text = self.text
        for i in range(1, len(self.tokens)):
            a = self.tokens[i][0]
            pa, pb = self.tokens[i - 1]
            if (self.info[i] & (_LAST | _TOP_LAST)
                    and (_case(self.word(i)) == "title" or _zipf(self.keys[i]) < _ORDINARY_ZIPF
                         and text[pb:a] in (". ", "."))
                    and _initial(text, pa, pb, a) and self.keys[i] not in ENGLISH_STOPWORDS):
                self.masked[i] = True

    def recurrences(self) -> None:
        """Every other occurrence, with the same case, of a word found a name."""
        found = {(self.keys[i], _case(self.word(i))) for i in range(len(self.tokens))
                 if self.masked[i] and self.keys[i] not in ENGLISH_STOPWORDS}
        if found:
            for i in range(len(self.tokens)):
                if not self.masked[i] and self.info[i] and (
                        self.keys[i], _case(self.word(i))) in found:
                    self.masked[i] = True

    def spans(self) -> list[tuple[int, int, str]]:
        """The names found, an initial joined to its name and adjacent names merged."""
        text, tokens = self.text, self.tokens
        spans: list[tuple[int, int, str]] = []
        for i, (a, b) in enumerate(tokens):
            if not self.masked[i]:
                continue
            if i > 0 and _initial(text, *tokens[i - 1], a):
                a = tokens[i - 1][0]  # the initial
            if spans and text[spans[-1][1]:a] in (" ", "-", ". "):
                spans[-1] = (spans[-1][0], b, "person")
            else:
                spans.append((a, b, "person"))
        return spans
