"""The NER family: spaCy's English model on the windows around capitalised words.

* **the model**: spaCy's English pipeline ``en_core_web_sm`` 3.8.0 (MIT, Explosion), loaded and
  checked by :func:`textdp.text.entities.load_model` (its metadata against the official release,
  its weight files against the wheel's). Its ``ner`` component finds the entities (it has a
  token-vector layer of its own); its shared ``tok2vec`` and the ``tagger`` run only on the
  windows that hold a one-word entity of a common English word (Zipf frequency ≥ 3.5 in
  ``wordfreq``). PERSON → person; GPE, LOC and FAC → location; ORG → org. An entity must contain
  an upper-case letter, an organisation must not be one shouted common word (``LOL``), and a
  one-word entity of a common word must be read as a noun by the tagger (``Smart, sassy and
  funny``: an adjective, no name) unless it is a person not shouted (``Thanks, Sunny``: given
  names are adjectives too): lower-case or capitalised common words taken for names are false
  positives, and destroy utility. A leading article is not part of the name (``the [ORG]``),
  nor is a closing possessive (``[PERSON]'s``).
* **the cascade**: the model is the last and dearest recogniser of the stage (≈ 100 µs a token
  here; 90% of the stage's time before the cascade). It reads only the candidate words nothing
  before it decided:

  - a candidate masked whole already by the gazetteers or the address patterns (``Maria
    Garcia`` after ``Hi``, ``Durban``) is not read again (``covered``): the model could only
    relabel it;
  - a word that begins the document, a line or a sentence and is a common English word (Zipf
    ≥ 4, the threshold of the neighbours rule below: ``Great``, ``Still``, ``Anger``) is
    capitalised for its position: no candidate — unless the names gazetteer holds it among the
    200 most common names of a country (``Mark``, ``Rose``, ``Love``) or the places gazetteer
    holds it (``Paris``), where the model may be needed to read it. What this gives up: a
    common-word company or famous name opening a sentence (``Google is down``, ``Twitter has``)
    — public names, counted in BENCHMARKS.md; the held-out survivors are unchanged;
  - weekdays and the months that are no given names are no candidates (dates to the model);
  - so a document whose candidates the gazetteers all mask never loads spaCy. The model reads
    24% of the VADER words (was 32%), 17% of generated tickets' (was 75%), 2–4% of the held-out
    messages' of ``experiments/heldout_names.py`` (was 40–44%).

* **the screen**: the model runs only on *windows* around candidate tokens — words that start
  with an upper-case letter and are not English function words, less the cascade's — each
  widened by the margin
  (:attr:`textdp.text.entities.Entities.margin` characters, to whitespace) on both sides,
  overlapping windows merged. The model's token vectors see ±4 tokens (the ``ner`` component's
  own: window 1, depth 4) and its entity parser reads features of nearby tokens only, so a
  window with a margin of several tokens gives the model what the whole document would, at the
  cost of the candidates' neighbourhoods only.
* **neighbours**: an entity takes in one capitalised, uncommon word (Zipf frequency < 4 in
  ``wordfreq``) just before or after it: the model often tags only the surname when the given
  name is unusual to it (``Ji-woo Müller``).
* **recurrences**: a word of an entity found in a document (``Maria`` of ``Maria Garcia``) is
  masked, with that entity's kind, wherever it recurs in the same document with the same case
  (``Thanks, Maria``): the model, seeing a shorter context there, misses some of them.

Each document is recognised alone: the windows are cut per document and the model runs on each
window alone, its convolutions padded per window.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from textdp.text._zipf import zipf_at_least
from textdp.text.recognisers import Recogniser, Span, _register_builtin

__all__ = ["NER", "windows"]

_SPACY_KINDS = {"PERSON": "person", "GPE": "location", "LOC": "location", "FAC": "location",
                "ORG": "org"}


def _upper_class() -> str:
    """A regular-expression class of every upper- and title-case letter of the BMP."""
    ranges: list[list[int]] = []
    for c in range(0x10000):
        if unicodedata.category(chr(c)) in ("Lu", "Lt"):
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                   for a, b in ranges)


@functools.cache
def _candidate_regex() -> re.Pattern[str]:
    """Words that start with an upper-case letter (apostrophes and hyphens inside)."""
    return re.compile(rf"(?<!\w)[{_upper_class()}](?:[\w'’-]*\w)?")


def _not_candidates() -> frozenset[str]:
    from textdp.text.stopwords import ENGLISH_STOPWORDS

    # Days of the week and the months that are no given names are dates to the model (DATE, a
    # kind not asked for): no window for them (``ships Monday`` loaded spaCy for nothing).
    calendar = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                "january", "february", "september", "october", "november", "december"}
    return (ENGLISH_STOPWORDS | calendar
            | {"i'm", "i’m", "i've", "i’ve", "i'll", "i’ll", "i'd", "i’d"})


_NOT_CANDIDATES = _not_candidates()
_DIGIT = re.compile(r"\d")
#: At most this many characters a window is widened by, on each side, to reach whitespace: a
#: window stays bounded on text without spaces (a long URL, a base64 blob, a CJK line).
_WIDEN = 64
#: Overlapping windows are merged into one while it stays this short (characters); past it, the
#: next window starts on its own (overlapping the last), so no window grows with the document:
#: each candidate still has its whole margin on both sides in a window of its own.
_MAX_WINDOW = 4096
_TO_LAST_SPACE = re.compile(r"(?s:.*)\s")
_NON_SPACE = re.compile(r"\S*")


def _windows(texts: Sequence[str], margin: int,
             covered: Sequence[Sequence[tuple[int, int, str]]] | None = None,
             kinds: Collection[str] = ("person", "location", "org")) -> list[tuple[int, int, int]]:
    """The model's windows ``(d, start, end)`` over documents ``texts`` (module docstring): each
    candidate word that needs the model (:func:`_needs_model`; ``covered``: per document, the
    spans the recognisers before the model found, in its offsets) with ``margin`` characters
    each side, widened to whitespace (at most :data:`_WIDEN` characters more), overlapping or
    touching windows of a document merged (up to :data:`_MAX_WINDOW` characters). Linear in the
    text: the scans are compiled regular expressions, the Python work is per candidate word,
    never per character."""
    out: list[tuple[int, int, int]] = []
    candidates = _candidate_regex()
    for d, text in enumerate(texts):
        n = len(text)
        last = len(out) - 1  # this document's windows start after it
        spans = _merged_spans(covered[d]) if covered is not None else []
        k = 0  # the first covered span that may still hold a candidate
        for m in candidates.finditer(text):
            if m.group().lower() in _NOT_CANDIDATES:
                continue
            while k < len(spans) and spans[k][1] < m.end():
                k += 1
            if k < len(spans) and spans[k][0] <= m.start():
                continue  # masked already, whole: the model would add nothing to this word
            if not _needs_model(text, m, kinds):
                continue
            # A word longer than a window (a blob of letters) is read from its start only: the
            # span found is widened to the whole word later (Recognisers._merged).
            a, b = m.start() - margin, min(m.end(), m.start() + _MAX_WINDOW) + margin
            if a <= 0:
                a = 0
            else:
                lo = max(0, a - _WIDEN)
                back = _TO_LAST_SPACE.match(text, lo, a)
                a = back.end() if back is not None else lo
            if b >= n:
                b = n
            else:
                b = _NON_SPACE.match(text, b, min(n, b + _WIDEN)).end()
            if len(out) - 1 > last and a <= out[-1][2] and b - out[-1][1] <= _MAX_WINDOW:
                out[-1] = (d, out[-1][1], max(b, out[-1][2]))
            else:
                out.append((d, a, b))
    return out


def _merged_spans(spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping or touching ones merged."""
    out: list[list[int]] = []
    for a, b, _ in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


#: What may stand between the end of a sentence (or a line break) and the first word of the next:
#: closing quotes and brackets, whitespace, opening quotes and brackets.
_SENTENCE_START = re.compile(r"(?:[.!?…]['\"”’)\]]*[^\S\n]+|\n\s*)['\"“‘(\[]*")
_OPENERS = re.compile(r"\s*['\"“‘(\[]*")
#: A sentence-initial word at least this common in English (Zipf, wordfreq) is capitalised for
#: its position, not as a name: the threshold :func:`_uncommon_candidate` reads names by.
_COMMON_ZIPF = 4.0


def _sentence_initial(text: str, start: int) -> bool:
    """Whether the word at ``start`` begins the document, a line or a sentence."""
    lo = max(0, start - 12)
    if lo == 0 and _OPENERS.fullmatch(text, 0, start):
        return True
    return any(m.end() == start for m in _SENTENCE_START.finditer(text, lo, start))


def _needs_model(text: str, m: re.Match[str], kinds: Collection[str]) -> bool:
    """Whether candidate ``m`` needs the model: not when it begins a sentence or a line and is a
    common English word (Zipf ≥ 4: ``Great``, ``Love``, ``Still``), capitalised for its position
    — unless the gazetteers know it as one of the 200 most common names of a country (``Mark``,
    ``Rose``) or as a place (``Paris``), which the model may be needed to read there."""
    word = _stem(m.group())
    if not zipf_at_least(word, _COMMON_ZIPF) or not _sentence_initial(text, m.start()):
        return True
    key = word.lower() if word.isascii() else _key(word)
    if "person" in kinds:
        from textdp.text.names import is_top_name

        if is_top_name(key):
            return True
    if "location" in kinds:
        from textdp.text.places import is_place

        if is_place(key):
            return True
    return False


def _key(word: str) -> str:
    from textdp.text.fold import key_string

    return key_string(word)


def windows(text: str, margin: int, covered: Sequence[tuple[int, int, str]] | None = None,
            kinds: Collection[str] = ("person", "location", "org")) -> list[tuple[int, int]]:
    """The merged windows of ``text`` the model reads (see the module docstring)."""
    return [(a, b) for _, a, b in _windows([text], margin,
                                           None if covered is None else [covered], kinds)]


@dataclass(frozen=True, eq=True)
class NER(Recogniser):
    """People, places and organisations by spaCy's model, on the screen's windows."""

    margin: int = 16
    name = "ner"
    kinds = ("person", "location", "org")

    def configure(self, **options: Any) -> NER:
        margin = options.get("margin", self.margin)
        return self if margin == self.margin else NER(margin=margin)

    def label(self, kind: str) -> str:
        return f"[{kind.upper()}]"

    def windows(self, text: str, covered: Sequence[tuple[int, int, str]] | None = None,
                kinds: Collection[str] = ("person", "location", "org")) -> list[tuple[int, int]]:
        """The merged windows of ``text`` the model reads (see the module docstring)."""
        return windows(text, self.margin, covered, kinds)

    def find(self, docs: Sequence[str], kinds: Collection[str] | None = None,
             covered: Sequence[Sequence[Span]] | None = None) -> list[list[Span]]:
        """Per document, the model's entity spans of ``kinds`` (default all three), their
        recurrences in the document and their neighbouring names (module docstring).
        ``covered``: per document, the spans found before the model (the gazetteers'), whose
        whole words the model need not read again."""
        wanted_kinds = self.kinds if kinds is None else tuple(k for k in self.kinds if k in kinds)
        out: list[list[Span]] = [[] for _ in docs]
        if wanted_kinds:
            self._model_spans(docs, wanted_kinds, out, covered)
        return out

    def _model_spans(self, texts: Sequence[str], kinds: Collection[str],
                     out: list[list[Span]], covered: Sequence[Sequence[Span]] | None) -> None:
        owners: list[tuple[int, int]] = []
        pieces: list[str] = []
        for d, a, b in _windows(texts, self.margin, covered, kinds):
            owners.append((d, a))
            pieces.append(texts[d][a:b])
        named: dict[int, dict[str, str]] = {}  # document → word of a found entity → its kind
        if covered is not None:
            # The words the model skipped because the recognisers before it masked them are
            # looked for again as its own are (recurrences): the model, reading them, would
            # have masked their other occurrences (``from Bristol`` … a sign-off's ``Bristol``).
            for d, spans in enumerate(covered):
                for a, b, kind in spans:
                    if kind in kinds:
                        _name_words(texts[d], a, b, kind, named.setdefault(d, {}))
        if pieces and not _utf8("".join(pieces)):
            # spaCy's strings are UTF-8: a lone surrogate becomes U+FFFD (one code point for
            # one, so offsets are kept).
            pieces = [p if _utf8(p) else _SURROGATE.sub("\ufffd", p) for p in pieces]
        if not pieces:
            _recurrences(texts, named, out)
            return
        from textdp.text.entities import load_model

        nlp = load_model()
        wanted = {label: kind for label, kind in _SPACY_KINDS.items() if kind in kinds}
        from textdp._loading import one_blas_thread

        with one_blas_thread():  # small matrices: a second BLAS thread costs more than it saves
            docs = list(nlp.pipe(pieces, batch_size=256, disable=["tok2vec", "tagger"]))
            _tag_where_needed(nlp, docs, wanted)
        for (d, a), doc in zip(owners, docs, strict=True):
            for ent in doc.ents:
                kind = wanted.get(ent.label_)
                if kind is not None and _plausible(ent.text, kind) and not _not_a_name(ent):
                    start, end = a + ent.start_char, a + ent.end_char
                    # A leading article is not part of the name ("the Transit Authority",
                    # "The Smithsonian Institution"): it stays a word.
                    article = _ARTICLE.match(texts[d], start, end)
                    if article is not None and article.end() < end:
                        start = article.end()
                    start, end = _adjacent_names(texts[d], start, end)
                    end = _without_possessive(texts[d], start, end)
                    out[d].append((start, end, kind))
                    _name_words(texts[d], start, end, kind, named.setdefault(d, {}))
        _recurrences(texts, named, out)


def _name_words(text: str, start: int, end: int, kind: str, words: dict[str, str]) -> None:
    """The candidate words of an entity ``text[start:end]`` (its recurrences are looked for)."""
    for w in _candidate_regex().findall(text[start:end]):
        w = _stem(w)
        if len(w) > 1 and w.lower() not in _NOT_CANDIDATES:
            words.setdefault(w, kind)


def _recurrences(texts: Sequence[str], named: Mapping[int, Mapping[str, str]],
                 out: list[list[Span]]) -> None:
    for d, words in named.items():
        if words:  # an entity such as "U.S." has no word to look for
            out[d] += _occurrences(texts[d], words)



_ARTICLE = re.compile(r"(?i:the)\s+(?=\w)")
_POSSESSIVE = ("'s", "’s", "'S", "’S")
#: Penn Treebank tags of nouns: a one-word entity tagged otherwise (an adjective, adverb, verb or
#: interjection) that is also a common English word is not taken for a name.
_NOUN_TAGS = frozenset({"NNP", "NNPS", "NN", "NNS"})


def _stem(word: str) -> str:
    """A candidate word without its possessive ``'s``."""
    return word[:-2] if len(word) > 2 and word[-2:] in _POSSESSIVE else word


def _without_possessive(text: str, start: int, end: int) -> int:
    """The end of an entity without a possessive ``'s`` that closes it: ``Maria's`` names
    ``Maria`` (``[PERSON]'s``), and the clitic is a word of the sentence, not of the name."""
    if (end - start > 2 and text[end - 2:end] in _POSSESSIVE
            and (end == len(text) or not text[end].isalnum())):
        return end - 2
    return end


def _common_one_word(ent: Any) -> bool:
    """A one-word entity whose word is common in English (Zipf frequency ≥ 3.5, wordfreq)."""
    if len(ent) != 1 or not any(c.isalpha() for c in ent.text):
        return False
    return zipf_at_least(ent.text, 3.5)


def _tag_where_needed(nlp: Any, docs: list[Any], wanted: Mapping[str, str]) -> None:
    """Part-of-speech tags (the model's own ``tagger``, over its shared ``tok2vec``) for the
    windows holding a one-word entity of a common word that :func:`_not_a_name` may drop, and
    only those: the rest need none."""
    need = [doc for doc in docs
            if any(e.label_ in wanted and (e.label_ != "PERSON" or e.text.isupper())
                   and _common_one_word(e) for e in doc.ents)]
    if need:
        tok2vec, tagger = nlp.get_pipe("tok2vec"), nlp.get_pipe("tagger")
        for _ in tagger.pipe(tok2vec.pipe(need)):  # annotates the docs in place
            pass


def _not_a_name(ent: Any) -> bool:
    """A one-word entity of a common English word that the tagger does not read as a noun
    (``Nice mix``, ``Smart stuff``, ``DAMN``): the model took a capitalised adjective, adverb,
    verb or interjection for an organisation or a place. A name the tagger reads as a noun
    (``Bond``, ``Leeds``) or an uncommon word (``Tarantino``) stays an entity, and so does a
    person unless shouted (``NERVOUS as …``): given names are also adjectives and verbs
    (``Thanks, Sunny``, tagged JJ), and a missed name leaks while a false positive costs a
    word."""
    if not _common_one_word(ent) or ent[0].tag_ in _NOUN_TAGS:
        return False
    return ent.label_ != "PERSON" or ent.text.isupper()


def _occurrences(text: str, words: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """Every whole-word, same-case occurrence in ``text`` of the words of the entities found in
    it: a name the model recognised once (``Hi, I am Maria Garcia``) is masked wherever it
    recurs in the document (``Thanks, Maria``), where the model, with less context, may miss
    it. Still a function of the document alone."""
    # The words are candidate words (whole matches of the candidate pattern), so their
    # occurrences are the candidate matches equal to one of them with no hyphen or apostrophe
    # just before: one precompiled scan instead of a pattern compiled for each document.
    out = []
    for m in _candidate_regex().finditer(text):
        word = _stem(m.group())  # "Maria's" is an occurrence of "Maria"
        kind = words.get(word)
        if kind is not None and text[m.start() - 1:m.start()] not in _JOINING:
            if text[m.end():m.end() + 1] not in _JOINING:
                out.append((m.start(), m.start() + len(word), kind))
    return out


_JOINING = ("'", "’", "-")  # characters that join a word to the next (O'Brien, Ji-woo)


def _uncommon_candidate(word: str) -> bool:
    return word.lower() not in _NOT_CANDIDATES and not zipf_at_least(word, 4.0)


def _adjacent_names(text: str, start: int, end: int) -> tuple[int, int]:
    """An entity's span widened over one capitalised, uncommon word (Zipf frequency < 4) just
    before or after it, one space apart: the model often tags the surname alone (as a person,
    or even as a place) when the given name is unusual to it (``Ji-woo Müller``,
    ``María Wiśniewska``)."""
    before = _candidate_regex().search(text, max(0, start - 40), max(0, start - 1))
    while before is not None and before.end() != start - 1:
        before = _candidate_regex().search(text, before.end(), max(0, start - 1))
    if (before is not None and text[start - 1] == " "
            and _uncommon_candidate(before.group())):
        start = before.start()
    after = _candidate_regex().match(text, end + 1) if text[end:end + 1] == " " else None
    if after is not None and _uncommon_candidate(after.group()):
        end = after.end()
    return start, end


def _plausible(text: str, kind: str) -> bool:
    """Not an entity: no upper-case letter (lower-case "entities" in tweets are mostly false
    positives), or an organisation that is one shouted common word (``LOL``, ``DAMN``,
    ``GREAT``: Zipf frequency ≥ 3, wordfreq). A false positive costs a word of utility, a miss
    leaks a name: only these two clear cases are dropped (a shouted PERSON stays masked)."""
    if not any(c.isupper() for c in text):
        return False
    if kind == "org" and text.isupper() and text.isalpha() and len(text) > 1:
        return not zipf_at_least(text.lower(), 3.0)
    return True


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True



_register_builtin(NER())
