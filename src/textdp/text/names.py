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
    no ordinary word (Zipf < 4.5: ``thanks ravi``) or among the 200 most common names of a
    country (``thanks mark``), and no term of address or interjection (``thanks bro``, ``thank
    goodness``, ``hey uh``). A greeting that is also a word (``best``, ``love``, ``morning``) is a
    cue only where it opens a line or clause and the name closes one (``morning sean,``; not
    ``morning rush hour``, ``the best lens``); after a
    weaker cue (``with``, ``from``, ``this is``) capitalised and not an ordinary English word
    (Zipf < 4.5) or a very common name that is not a very common word (Zipf < 5.2);
  - it stands next to another name, one space or a hyphen apart, as a given name then a surname:
    both capitalised, the second no function word, and one of them not a common word (Zipf < 4)
    or both among the 200 most common names (``Will Smith``, ``Rose Baker``); in lower case,
    neither a common word (Zipf ≥ 5) and one found a name already or rare (``zanele kim``), or
    after a cue the two too rare together to be words met by chance (Zipf sum < 8.4:
    ``this is kevin wong``; not ``a lyrical tale``, which has no cue); up to Zipf 5.2 where the
    given name was found already (``regards bill novak``) or, after a cue, one of them is rare
    (``for april yamamoto``); a line that is a given name and a surname and nothing else (a
    signature: ``kevin moore`` above ``sent from my iphone``);
  - it names the writer: ``rhys here``, ``Hunter here,`` at the start of a line or clause;
  - it follows an initial (``J. Smith``; in lower case ``j. smith`` for a surname that is no
    common word, Zipf < 5; not after another letter and dot, ``p.s. hill``, ``e.g. smith``: the
    initial joins the span);
  - it ends a line or the document after a line break, a dash or a comma, as a sign-off or a
    vocative does (``-- ana``, ``call me back, ana``);
  - it is joined to another name by ``.`` or ``_`` with no space (``zanele.kim``,
    ``rose_baker``: a user name or an e-mail's local part);
  - it has a possessive and is no function word (``Mark's``, ``emeka's``; not ``He's``); in
    lower case a word below Zipf 4 opening a sentence or after a cue (``fraser's laptop``; not
    ``the tram's cars``);
  - a hyphenated name is one name: a part the list lacks, not common as a word, joins the part
    found (``Seo-yeon``, ``Ji-eun``; not ``All-in-One``);
  - it recurs in the document, with the same case, after being found once.

Calendar words (``Tue``, ``Feb``, ``Monday``) are names only as a given name before a surname
(``Jan Kowalski``, ``Jun Bell``); the cue words themselves are never names.
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

__all__ = ["find_names", "is_top_name", "RARE_ZIPF"]

#: A word of the list whose English Zipf frequency is below this is *rare* as a word.
RARE_ZIPF = 3.3
#: Two words in lower case are read as a name together only if neither is more common than this.
_COMMON_ZIPF = 5.0
_FIRST, _LAST, _TOP_FIRST, _TOP_LAST = 1, 2, 4, 8

_GREETINGS = frozenset(
    "hi hello hey hiya dear thanks thank thx ty tnx cheers regards best sincerely yours "
    "greetings bye morning afternoon evening attn cc love xoxo welcome congrats ta yo heya "
    "howdy "
    "congratulations sorry".split())
_INTRODUCTIONS = frozenset({
    "name is", "names is", "this is", "ask for", "asked for", "speak to",
    "spoke to", "spoke with", "speaking to", "speaking with", "talk to", "talked to",
    "talked with", "named", "called", "contact", "per", "with", "from", "by", "to", "and",
    "for", "signed", "sent by", "cc", "ask", "tell", "told", "met", "call", "email", "emailed",
    "meet", "asked", "thank you", "i'm", "im", "i am"})
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
_NOT_NAMES = (_GREETINGS | _TITLES | _POSSESSIVES | _RELATIONS
              | {w for cue in _INTRODUCTIONS for w in cue.split()})
# Terms of address that some country also uses as a name: after a greeting, in lower case, they
# are the term ("thanks honey", "cheers mate", "hey bro"), not a name; nor an interjection.
_VOCATIVES = frozenset("mate bro bruh dude man girl guys boys buddy pal love luv baby babe "
                       "honey hun sweetie sweets darling dear sis folks fam chief boss goodness "
                       "god heavens lord uh um umm oh ah yo hmm lol omg ok okay".split())
# A word right after a lower-case name that says the name introduced its writer ("rhys here",
# "ana speaking"): the name word after a greeting or at a line's start is a name.
_SELF = frozenset({"here", "speaking"})
# Words that open a line with a colon and are no names ("edit: typo").
_HEADERS = frozenset("edit update note fyi re fwd ps pps tldr summary warning question answer "
                     "problem issue subject topic reason result status".split())
# The last word of "thanks so much", "thank you very much", "thanks again", "thanks a lot".
_INTENSIFIERS = frozenset({"much", "again", "lot", "loads", "heaps", "tons", "lots"})
# "… from accounts": a colleague named by their department.
_DEPARTMENTS = frozenset(
    "accounts accounting billing support sales finance hr marketing legal payroll procurement "
    "purchasing logistics shipping dispatch reception admin management operations ops security "
    "engineering helpdesk returns claims compliance".split())
# Words after a greeting and before a name that say the writer names themself, where the name
# ends the clause ("morning! it's efua.", "hi, i'm rocky, …"; not "It's drab.").
_SELF_CUES = frozenset({"it's", "i'm"})
# Labels of a form's field that hold a name ("account holder: …", "name: …").
_LABELS = frozenset("name holder owner contact customer client attn cc from signed "
                    "recipient sender applicant patient guest passenger employee".split())
# Greetings that are ordinary words too: a cue for lower case only where they open a line, a
# sentence or a clause ("morning rush hour", "the best lens", "love fest" are none).
_AMBIGUOUS_GREETINGS = frozenset(
    "best love morning afternoon evening welcome sorry yours greetings congrats congratulations "
    "bye sincerely regards".split())
#: Two lower-case words of the list, a given name then a surname, are read as a name when the
#: sum of their Zipf frequencies is below this: were they two ordinary words written together
#: by chance, their pair would be that rare (10^(8.4 − 9 − 9) of the words); ``rhys choi``
#: (6.8), ``tyler cohen`` (8.2) are names, ``rose gold`` (10.0), ``jack frost`` (8.8) stay.
_PAIR_ZIPF_SUM = 8.4
_WORD = re.compile(r"[^ ]+")
_SENTENCE_END = re.compile(r"[.!?;:]\s")
_CLOSING = re.compile(r"[\n,—–]|--|(?:^|\s)-\s")


@functools.cache
def _lexicon() -> Lexicon:
    return cached("names", name_lines, packages=("names_dataset",), extra=names_source())


def is_top_name(key: str) -> bool:
    """Whether the folded ``key`` is among the 200 most common first names or surnames of a
    country in the names gazetteer (``mark``, ``rose``)."""
    return bool(_lexicon().get(key) & (_TOP_FIRST | _TOP_LAST))


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


class _Lazy:
    """A truth value computed when first asked for."""

    __slots__ = ("_get", "_value")

    def __init__(self, get: object) -> None:
        self._get, self._value = get, None

    def __bool__(self) -> bool:
        if self._value is None:
            self._value = bool(self._get())  # type: ignore[operator]
        return self._value


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
        for i, key in enumerate(self.keys):  # "o'brien", "d’souza": the list spells "obrien"
            if not self.info[i] and ("'" in key or "’" in key) and len(key) > 4:
                self.info[i] = _lexicon().get(key.replace("'", "").replace("’", "")) & (
                    _LAST | _TOP_LAST)

    def word(self, i: int) -> str:
        return self.text[slice(*self.tokens[i])]

    def gap(self, i: int) -> str:
        """The characters between token i − 1 and token i."""
        return self.text[self.tokens[i - 1][1] if i > 0 else 0:self.tokens[i][0]]

    def cue(self, i: int) -> tuple[bool, bool]:
        """(a cue before token i, a cue strong enough for lower case)."""
        keys = self.keys
        gap = self.gap(i)
        if gap == "-":
            return False, False  # one hyphenated word: "ta-da"
        if i > 0 and gap == ": " and keys[i - 1] in _LABELS:
            return True, True  # "account holder: holly green", "name: ana"
        if i > 0 and self.text[self.tokens[i - 1][0]:self.tokens[i][0]].strip().lower().replace(
                "’", "'") in _SELF_CUES and self.ends(i) and i > 1 and keys[i - 2] in _GREETINGS:
            return True, True  # "it's efua.", "i'm rocky,"
        if i == 0 or _SENTENCE_END.search(gap + " ") and keys[i - 1] not in _TITLES or (
                not gap.isspace() and any(c.isdigit() for c in gap)):  # "best 4-mp"
            return False, False
        one = keys[i - 1]
        two = f"{keys[i - 2]} {one}" if i > 1 else ""
        if one in _INTENSIFIERS and gap == " " and any(
                k in ("thanks", "thank", "thx", "cheers") for k in keys[max(0, i - 4):i - 1]):
            return True, True  # "thanks so much lindiwe", "thank you very much ana"
        if one in _AMBIGUOUS_GREETINGS and not (self.opens(i - 1) and self.ends(i)):
            # "morning rush hour", "best sellers", "we love kevin": no greeting ("morning
            # sean,", "love,\nana" are)
            return False, False
        if one in _TITLES or one in _GREETINGS or two in _STRONG_INTRODUCTIONS:
            return True, True
        if one in _STRONG_INTRODUCTIONS:
            return True, True
        if one in _RELATIONS and i > 1 and keys[i - 2] in _POSSESSIVES:
            return True, True
        return two in _INTRODUCTIONS or one in _INTRODUCTIONS, False

    def joined(self, i: int) -> int:
        """The last token of the hyphenated word that token i begins (``Seo-yeon``, ``Jean-Luc``:
        a part the list lacks is still part of the name)."""
        if i + 1 < len(self.tokens) and self.gap(i + 1) == "-" and self.part(i + 1) and not (
                i + 2 < len(self.tokens) and self.gap(i + 2) == "-"):
            return i + 1
        return i

    def part(self, i: int) -> bool:
        """Token i can be the other part of a hyphenated name: letters, no function word, not
        common as a word (``yeon``, ``Luc``; not ``in``, ``wise``, ``one``), of a compound of
        two parts only (not ``All-in-One``)."""
        from textdp.text._zipf import zipf_at_least

        word = self.word(i)
        return (word.isalpha() and self.keys[i] not in ENGLISH_STOPWORDS
                and not (word.isascii() and zipf_at_least(word, 4.0))
                and not (i > 1 and self.gap(i - 1) == "-"))

    def ends(self, i: int) -> bool:
        """Token i (with a surname after it) ends a clause: punctuation or the end follows."""
        j = i + 1 if i + 1 < len(self.tokens) and self.info[i + 1] and self.gap(i + 1) == " " else i
        rest = self.text[self.tokens[self.joined(j)][1]:]
        return not rest.strip() or rest.lstrip(" ")[:1] in ",.!?;:\n-" or (
            j + 1 < len(self.tokens) and self.keys[j + 1] in _SELF)

    def opens(self, i: int) -> bool:
        """Token i starts the document, a line, a sentence or a clause (after ``,`` or a dash)."""
        return i == 0 or bool(re.search(r"[\n.!?;:,—–(]|(?:^|\s)-", self.gap(i)))

    def introduces(self, i: int) -> bool:
        """Token i names the writer: ``rhys here``, ``ana speaking`` at the start of a line or
        after a greeting or a comma; or someone of a department (``tamar from accounts``)."""
        if (i + 2 < len(self.tokens) and self.keys[i + 1] == "from" and self.gap(i + 1) == " "
                and self.keys[i + 2] in _DEPARTMENTS and self.keys[i] not in ENGLISH_STOPWORDS
                and _zipf(self.keys[i]) < _TOP_ZIPF):
            return True
        if (i + 1 >= len(self.tokens) or self.keys[i + 1] not in _SELF
                or self.gap(i + 1) != " " or self.keys[i] in ENGLISH_STOPWORDS
                or self.keys[i] in ("im", "its") or _zipf(self.keys[i]) >= _TOP_ZIPF):
            return False  # "Still here", "im here"
        if self.opens(i):
            return True
        return self.keys[i - 1] in _GREETINGS or self.keys[i - 1] in ("it's", "its", "im", "i'm")

    def addressed(self, i: int) -> bool:
        """Token i opens a line and a colon follows it (``angel: the account is …``, a name
        addressed or a speaker), or it opens a line and its clause says ``… from … here``
        (``dmitri from acme here,``)."""
        if (not (i == 0 or "\n" in self.gap(i)) or self.keys[i] in ENGLISH_STOPWORDS
                or _zipf(self.keys[i]) >= _ORDINARY_ZIPF or self.keys[i] in _HEADERS
                or len(self.keys[i]) < 3):  # "update:", "note:", "ps:"
            return False
        after = self.text[self.tokens[self.joined(i)][1]:]
        if after[:2] == ": " or after[:1] == ":" and after[1:2] == "\n":
            return True
        return re.match(r"\s+from\s[^,!?;:\n]{1,60}?\shere\b", after, re.IGNORECASE) is not None

    def closes(self, i: int) -> bool:
        """Token i, alone or with the name word after it, ends a line or the document after a
        line break, a dash or a comma: a sign-off or a vocative (``-- Ana``, ``call me, ana``)."""
        j = i + 1 if i + 1 < len(self.tokens) and self.info[i + 1] and self.gap(i + 1) == " " else i
        j = self.joined(j)
        rest = self.text[self.tokens[j][1]:].split("\n", 1)[0]
        if rest.strip(" .!\t\r"):
            return False
        if _CLOSING.search(self.gap(i)):
            return True
        if (i > 0 and j == i == len(self.tokens) - 1 and re.search(r"[.!?] ", self.gap(i))
                and not rest.strip() and len(self.keys[i]) > 3 and _zipf(self.keys[i]) < RARE_ZIPF
                and self.gap(i)[-1:] == " " and _case(self.word(i)) != "upper"):
            return True  # a rare word alone ending the document: "… recommended you. eero"
        # The whole document: a lone capitalised or rare word may be a signature ("Ana"); a
        # lone common word in lower case is a query or a fragment ("green", "mark", "green tea").
        return i == 0 and (_case(self.word(i)) != "lower" or _zipf(self.keys[i]) < RARE_ZIPF)

    def singles(self) -> None:
        """Words that are names by their own rarity or by the words just around them."""
        for i, (a, b) in enumerate(self.tokens):
            f = self.info[i]
            key = self.keys[i]
            if not f or key in _CALENDAR:  # "Jun", "Jan" only before a surname (pairs)
                continue
            case = _case(self.text[a:b])
            stop = key in ENGLISH_STOPWORDS
            z = _zipf(key)
            rare = not stop and z < RARE_ZIPF
            top = bool(f & (_TOP_FIRST | _TOP_LAST))
            before, strong = self.cue(i)
            if case == "lower" and key in _VOCATIVES:
                strong = False
            elif self.introduces(i) or self.addressed(i):
                before = strong = True
            # Not an ordinary English word, or a very common name (Mark, Rose) that is not too
            # common a word (happy, pretty, power).
            namelike = not stop and (z < _ORDINARY_ZIPF or top and z < _TOP_ZIPF)
            titled = case == "title" and not stop and z < _TOP_ZIPF
            self.masked[i] = bool(
                case == "title" and (rare or strong and (not stop or f & _TOP_FIRST) or before and (
                    namelike or self.keys[i - 1] in _TITLES))
                or case == "upper" and strong and rare
                # in lower case, no ordinary word (Zipf < 4.5: rhys, ravi, malik), or a very
                # common name that is not a very common word (thanks mark)
                or case == "lower" and strong and not stop and (
                    z < _ORDINARY_ZIPF or top and z < _TOP_ZIPF)
                # a possessive (no function word: He's, It's): Mark's, emeka's, april's, and in
                # lower case a word no commoner than Zipf 4 opening a sentence or after a cue
                # (rhys's account; not the ape's head, their idol's, world's)
                or self.text[b:b + 2] in ("'s", "’s") and (
                    titled or rare or f & _TOP_FIRST and z < _ORDINARY_ZIPF
                    or case == "lower" and z < 4.0 and not stop and (self.opens(i) or before))
                or (namelike or case == "title" and not stop and z < _TOP_ZIPF)
                and self.closes(i))

    def pairs(self) -> None:
        """A given name then a surname, one space or a hyphen apart; or joined by "." / "_"."""
        keys, info, masked = self.keys, self.info, self.masked
        for i in range(len(self.tokens) - 1):
            j = i + 1
            if not (info[i] & (_FIRST | _TOP_FIRST) and info[j] & (_LAST | _TOP_LAST)) or (
                    keys[j] in _CALENDAR):
                continue
            between = self.text[self.tokens[i][1]:self.tokens[j][0]]
            si, sj = keys[i] in ENGLISH_STOPWORDS, keys[j] in ENGLISH_STOPWORDS
            zs = (_zipf(keys[i]), _zipf(keys[j]))
            both_top = info[i] & _TOP_FIRST and info[j] & _TOP_LAST
            # a cue, or the start of the document or of a line ("rocky ferrari again - …"); read
            # only where the words' frequencies ask for it (a cue costs a few dictionary looks)
            cued = _Lazy(lambda i=i: i == 0 or "\n" in self.gap(i)
                         or keys[i - 1] != "and" and self.cue(i)[0])
            if (between in (" ", "-") and _case(self.word(i)) == "title"
                    and _case(self.word(j)) == "title" and not sj
                    and (not si or info[i] & _TOP_FIRST) and (min(zs) < 4.0 or both_top)):
                # Two capitalised words of the list: one of them no common word (Rose
                # Adeyemi), or a very common given name then a very common surname (Will
                # Smith, Rose Baker) — not "The Sum", "Long Time", "Red Bridge".
                masked[i] = masked[j] = True
            elif between in (" ", "-") and not si and not sj and (
                    max(zs) < _COMMON_ZIPF and (
                        masked[i] or masked[j] or min(len(keys[i]), len(keys[j])) > 2 and (
                            min(zs) < RARE_ZIPF or sum(zs) < _PAIR_ZIPF_SUM and cued))
                    or max(zs) < _TOP_ZIPF and (masked[i] and zs[1] <= zs[0] or masked[j]
                                                or cued and min(zs) < RARE_ZIPF)):
                # In lower case: neither a common word (Zipf ≥ 5), and one of them found a
                # name already, or rare as a word, or after a cue the two too rare together to
                # be words met by chance (zanele kim, ask rhys choi; not "candy bar", "ho hum",
                # "rose gold"; with no cue, adjective and noun are: "a lyrical tale").
                # Up to Zipf 5.2 (a very common word) where the given name was found already
                # and the surname is no commoner (regards bill novak, thx dawn gold), or after
                # a cue where one of them is rare (for april yamamoto).
                masked[i] = masked[j] = True
            elif between == " " and not si and not sj and max(zs) < _TOP_ZIPF and self.alone(i, j):
                # A line that is a given name and a surname and nothing else: a signature
                # ("april jenkins" above "sent from my phone").
                masked[i] = masked[j] = True
            elif between in (".", "_") and not si and not sj and len(keys[i]) > 2 < len(keys[j]):
                masked[i] = masked[j] = True
        for i in range(len(self.tokens) - 1):  # "wu, bilal (omaha)": a surname, then a given name
            j = i + 1
            if (info[i] & (_LAST | _TOP_LAST) and info[j] & (_FIRST | _TOP_FIRST)
                    and self.gap(j) == ", " and (i == 0 or "\n" in self.gap(i))
                    and keys[i] not in ENGLISH_STOPWORDS and keys[j] not in ENGLISH_STOPWORDS
                    and self.text[self.tokens[j][1]:].lstrip(" ")[:1] in ("", "(", "\n", ",", ".")
                    and max(_zipf(keys[i]), _zipf(keys[j])) < _TOP_ZIPF
                    and min(_zipf(keys[i]), _zipf(keys[j])) < _ORDINARY_ZIPF):
                masked[i] = masked[j] = True
        for i in range(len(self.tokens)):  # a hyphenated given name, then a surname
            if not masked[i]:
                continue
            j = self.joined(i) + 1
            if (j - 1 > i and j < len(self.tokens) and info[j] & (_LAST | _TOP_LAST)
                    and self.gap(j) == " " and keys[j] not in ENGLISH_STOPWORDS
                    and _zipf(keys[j]) < _COMMON_ZIPF):
                masked[j] = True

    def alone(self, i: int, j: int) -> bool:
        """Tokens i and j are a line of their own (a signature), and not the whole document."""
        text, (a, _), (_, b) = self.text, self.tokens[i], self.tokens[j]
        start, end = text.rfind("\n", 0, a) + 1, text.find("\n", b)
        end = len(text) if end < 0 else end
        return (start > 0 or end < len(text)) and not text[start:a].strip(" -\t") and not (
            text[b:end].strip(" .!\t\r"))

    def initials(self) -> None:
        """A surname after an initial: "J. Smith", "J Smith", "k. ramirez"."""
        text = self.text
        for i in range(1, len(self.tokens)):
            a = self.tokens[i][0]
            pa, pb = self.tokens[i - 1]
            if (self.info[i] & (_LAST | _TOP_LAST)
                    and (_case(self.word(i)) == "title" or _zipf(self.keys[i]) < _COMMON_ZIPF
                         and text[pb:a] in (". ", "."))
                    and text[pa - 1:pa] not in (".", "'", "’")  # e.g. smith, p.s. hill
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
            b = tokens[self.joined(i)][1]  # the rest of a hyphenated name
            if i > 0 and text[tokens[i - 1][1]:a] == "-" and self.part(i - 1):
                a = tokens[i - 1][0]
            if spans and a < spans[-1][1]:
                spans[-1] = (spans[-1][0], max(b, spans[-1][1]), "person")
            elif spans and text[spans[-1][1]:a] in (" ", "-", ". "):
                spans[-1] = (spans[-1][0], b, "person")
            else:
                spans.append((a, b, "person"))
        return spans
