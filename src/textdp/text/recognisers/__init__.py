"""Recognisers, registered by name: one type for everything the stage before the mechanism finds.

A **recogniser** finds spans of its *kinds* in documents and names the label each kind is masked
with. It may be a regular expression with a validator (:class:`PatternRecogniser`), a function
(:class:`CallableRecogniser`), a term list matched by Aho–Corasick, or a statistical model — what
matters is :meth:`Recogniser.find`: per document, spans ``(start, end, kind)`` in that document's
offsets, a function of that document alone. The shape follows Presidio's ``RecognizerRegistry``
(one recogniser per family module, each a pattern plus a validator; Presidio, ``presidio-analyzer``
2.2, ``recognizer_registry.py``).

The built-in recognisers are two families, one module each, imported when first named:

=================  ==============================================================================
identifiers        ``email``, ``url``, ``ip``, ``iban``, ``card``, ``phone`` (its ``reference``
                   kind: an order number by its context) — :mod:`.identifiers`: a candidate
                   pattern and a maintained validator each; run by
                   :class:`textdp.text.identifiers.Identifiers` on the windows around their anchors
entities           ``address`` (:mod:`.addresses`: street-address patterns), ``ner`` (:mod:`.ner`:
                   spaCy's model on the windows around capitalised words), ``names``, ``places``,
                   ``orgs`` (:mod:`.names`, :mod:`.places`, :mod:`.orgs`: the gazetteers) — run by
                   :class:`textdp.text.entities.Entities` for the kinds it is asked for
=================  ==============================================================================

**Adding one** (docs/architecture.md, "Recipe: add a recogniser"): register it by name —
a :class:`Recogniser` subclass or instance, a function ``text → spans`` or a regular expression —

>>> from textdp.text import recognisers
>>> recognisers.register(r"TK-\\d{6}", name="ticket", label="[TICKET]")  # doctest: +SKIP
>>> textdp.privatize(texts, "mvc", 8, entities="default,ticket")          # doctest: +SKIP

or pass it, unregistered, as ``Entities(recognisers=[...])``. A user's recogniser runs with the
entities: it reads the folded, cased documents (:mod:`textdp.text.fold`; its spans are mapped back
to the original characters), its spans are widened to whole words, and **the allow-list wins
over it** (an allow-listed term inside its match is released, the rest of the match is masked);
identifiers and deny-list terms win over it as over any entity. A recogniser used in other
processes (Ray, ``datasets`` workers) travels there by pickle: a module-level class or function
does, a lambda does not.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

__all__ = ["Recogniser", "PatternRecogniser", "CallableRecogniser", "Span", "register",
           "unregister", "get", "available", "resolve", "user_names", "RESERVED_KINDS", "ALLOWED"]

Span = tuple[int, int, str]
ALLOWED = "allowed"  # the kind of allow-list terms: released as they are

#: Kinds the built-in stages own (identifier kinds, ``denied``, entity kinds, ``allowed``): a
#: user's recogniser may not claim them (tests/text/test_recognisers.py checks the list).
RESERVED_KINDS = frozenset({"email", "url", "ip", "iban", "card", "phone", "reference", "denied",
                            "person", "location", "org", "address", "allowed"})

# Built-in recogniser name → the family module whose import registers it.
_FAMILIES: dict[str, str] = {
    "email": "identifiers", "url": "identifiers", "ip": "identifiers", "iban": "identifiers",
    "card": "identifiers", "phone": "identifiers",
    "address": "addresses", "ner": "ner", "names": "names", "places": "places", "orgs": "orgs",
}
_REGISTRY: dict[str, Recogniser] = {}
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Recogniser:
    """Finds spans of its :attr:`kinds` in documents.

    Subclasses set :attr:`name` and :attr:`kinds` and implement :meth:`find_one` (one document)
    or, to work on a batch at once (a model), :meth:`find`. Both must be pure functions of each
    document: its spans never depend on the other documents of a batch.
    """

    #: The registry name.
    name: str = ""
    #: The kinds of span it finds (each becomes one token, masked with :meth:`label`).
    kinds: tuple[str, ...] = ()
    #: ``"identifiers"`` or ``"entities"``: the stage that runs it.
    family: str = "entities"
    #: kind → label; a kind not listed is masked as ``[KIND]``.
    labels: dict[str, str] = {}

    def label(self, kind: str) -> str:
        return self.labels.get(kind) or f"[{kind.upper()}]"

    def configure(self, **options: Any) -> Recogniser:
        """The recogniser for a stage's options (the NER model's screen margin, the phone
        regions); one that takes none returns itself."""
        return self

    def find(self, docs: Sequence[str], kinds: Collection[str] | None = None) -> list[list[Span]]:
        """Per document, its spans ``(start, end, kind)`` of ``kinds`` (default: all of
        :attr:`kinds`), in the document's offsets; they may overlap (the stage resolves them)."""
        wanted = self.kinds if kinds is None else tuple(k for k in self.kinds if k in kinds)
        return [[s for s in self.find_one(doc) if s[2] in wanted] for doc in docs]

    def find_one(self, text: str) -> Iterable[Span]:
        raise NotImplementedError(f"{type(self).__name__} implements neither find nor find_one")

    def describe(self) -> dict[str, Any]:
        """What the privacy report says of it."""
        return {"name": self.name, "kinds": list(self.kinds),
                "labels": {k: self.label(k) for k in self.kinds}, "type": type(self).__name__}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, kinds={self.kinds!r})"


class PatternRecogniser(Recogniser):
    """A regular expression proposes candidates, an optional validator decides.

    Args:
        pattern: a regular expression (``re`` syntax) or a compiled one; it must not match the
            empty string.
        name: the registry name (also the kind unless ``kind`` says otherwise).
        kind: the kind of its spans.
        label: what a span is masked with (default ``[KIND]``).
        validate: ``match → bool``; the match's ``string`` is the whole document, so a validator
            may read the context around ``match.span()``.
    """

    def __init__(self, pattern: str | re.Pattern[str], *, name: str, kind: str | None = None,
                 label: str | None = None,
                 validate: Callable[[re.Match[str]], bool] | None = None) -> None:
        try:
            compiled = re.compile(pattern)
        except (re.error, TypeError) as exc:
            raise ValueError(f"recogniser {name!r}: not a valid regular expression: {exc}") from None
        if compiled.fullmatch(""):
            raise ValueError(f"recogniser {name!r}: its pattern matches the empty string")
        if validate is not None and not callable(validate):
            raise TypeError(f"recogniser {name!r}: validate must be callable")
        self.name, self.kinds = name, (kind or name,)
        self.labels = {self.kinds[0]: label} if label else {}
        self.pattern, self.validate = compiled, validate

    def find_one(self, text: str) -> list[Span]:
        kind, ok = self.kinds[0], self.validate
        return [(m.start(), m.end(), kind) for m in self.pattern.finditer(text)
                if m.end() > m.start() and (ok is None or ok(m))]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "pattern": self.pattern.pattern}

    def __reduce__(self) -> tuple[Any, ...]:  # compiled patterns pickle; keep the arguments
        return (_pattern, (self.pattern.pattern, self.name, self.kinds[0],
                           self.labels.get(self.kinds[0]), self.validate))


def _pattern(pattern: str, name: str, kind: str, label: str | None,
             validate: Callable[[re.Match[str]], bool] | None) -> PatternRecogniser:
    return PatternRecogniser(pattern, name=name, kind=kind, label=label, validate=validate)


class CallableRecogniser(Recogniser):
    """A function ``text → spans``: each span ``(start, end)`` (of ``kind``) or
    ``(start, end, kind)`` (one of ``kinds``)."""

    def __init__(self, function: Callable[[str], Iterable[tuple[Any, ...]]], *, name: str,
                 kinds: Sequence[str] | None = None, labels: dict[str, str] | None = None) -> None:
        if not callable(function):
            raise TypeError(f"recogniser {name!r}: not callable")
        self.function, self.name = function, name
        self.kinds = tuple(kinds) if kinds else (name,)
        self.labels = dict(labels or {})

    def find_one(self, text: str) -> list[Span]:
        out = []
        n = len(text)
        for span in self.function(text):
            a, b, kind = (*span, self.kinds[0]) if len(span) == 2 else span
            if kind not in self.kinds:
                raise ValueError(f"recogniser {self.name!r} returned kind {kind!r}, not one of "
                                 f"{', '.join(self.kinds)}")
            if not (isinstance(a, int) and isinstance(b, int) and 0 <= a <= b <= n):
                raise ValueError(f"recogniser {self.name!r} returned span ({a!r}, {b!r}) outside "
                                 f"a document of {n} characters")
            if b > a:
                out.append((a, b, kind))
        return out


def _checked(recogniser: Recogniser) -> Recogniser:
    name = recogniser.name
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"recogniser name {name!r}: lower-case letters, digits and _ "
                         "(starting with a letter)")
    kinds = recogniser.kinds
    if not kinds or any(not isinstance(k, str) or not _NAME.fullmatch(k) for k in kinds):
        raise ValueError(f"recogniser {name!r}: its kinds {kinds!r} must be names such as 'ticket'")
    if recogniser.family != "entities":
        raise ValueError(f"recogniser {name!r}: a user's recogniser runs with the entities "
                         f"(family 'entities'), not {recogniser.family!r}")
    taken = RESERVED_KINDS.intersection(kinds)
    if taken:
        raise ValueError(f"recogniser {name!r}: kind {sorted(taken)[0]!r} is a built-in kind")
    for k in kinds:
        if not isinstance(recogniser.label(k), str):
            raise TypeError(f"recogniser {name!r}: the label of {k!r} must be a string")
    return recogniser


def resolve(obj: Any, *, name: str | None = None, kind: str | None = None,
            label: str | None = None) -> Recogniser:
    """A user's recogniser from what they give: a :class:`Recogniser` (instance, or a subclass
    built with no arguments), a registered name, a regular expression (``name`` needed) or a
    function ``text → spans`` (named after itself unless ``name`` says otherwise). Checked: a
    name, kinds that are no built-in kind (:data:`RESERVED_KINDS`), string labels.

    Raises:
        ValueError: an unknown name, a bad pattern, a built-in kind. TypeError: anything else.
    """
    if isinstance(obj, type) and issubclass(obj, Recogniser):
        obj = obj()
    if isinstance(obj, Recogniser):
        if name is not None or kind is not None or label is not None:
            raise ValueError("name, kind and label belong to the Recogniser object itself")
        return _checked(obj)
    if isinstance(obj, re.Pattern) or isinstance(obj, str) and name is not None:
        if name is None:
            raise ValueError("a pattern recogniser needs a name")
        return _checked(PatternRecogniser(obj, name=name, kind=kind, label=label))
    if isinstance(obj, str):
        return _checked(get(obj))
    if callable(obj):
        own = name or getattr(obj, "__name__", "")
        return _checked(CallableRecogniser(obj, name=own, kinds=(kind,) if kind else None,
                                           labels={kind or own: label} if label else None))
    raise TypeError("a recogniser is a Recogniser, a registered name, a regular expression or "
                    f"a function text → spans, not {type(obj).__name__}")


def register(obj: Any = None, /, *, name: str | None = None, kind: str | None = None,
             label: str | None = None, replace: bool = False) -> Any:
    """Register a user's recogniser by name (see :func:`resolve` for what it may be); returns
    ``obj`` unchanged, so it also decorates a class or a function::

        @register(label="[TICKET]")
        def ticket(text):
            return [m.span() for m in re.finditer(r"TK-\\d{6}", text)]

    Raises:
        ValueError: the name is taken (by a built-in, or by another recogniser unless
            ``replace``), or :func:`resolve` refuses it.
    """
    if obj is None:
        return lambda o: register(o, name=name, kind=kind, label=label, replace=replace)
    recogniser = resolve(obj, name=name, kind=kind, label=label)
    if recogniser.name in _FAMILIES or recogniser.name in _REGISTRY and not replace:
        raise ValueError(f"a recogniser named {recogniser.name!r} is registered already"
                         + ("" if recogniser.name in _FAMILIES else " (replace=True replaces it)"))
    _REGISTRY[recogniser.name] = recogniser
    return obj


def _register_builtin(recogniser: Recogniser) -> Recogniser:
    """For the family modules: a built-in recogniser, under its name."""
    _REGISTRY[recogniser.name] = recogniser
    return recogniser


def unregister(name: str) -> None:
    """Remove a user's recogniser (a built-in stays)."""
    if name in _FAMILIES:
        raise ValueError(f"{name!r} is a built-in recogniser")
    _REGISTRY.pop(name, None)


def get(name: str) -> Recogniser:
    """The recogniser registered as ``name`` (a built-in family is imported on first use).

    Raises:
        ValueError: no recogniser has that name (the message lists them).
    """
    if name not in _REGISTRY and name in _FAMILIES:
        importlib.import_module(f"{__name__}.{_FAMILIES[name]}")
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"no recogniser named {name!r}; registered: "
                         f"{', '.join(available())}") from None


def user_names() -> frozenset[str]:
    """The names of the user's registered recognisers."""
    return frozenset(n for n in _REGISTRY if n not in _FAMILIES)


def available(family: str | None = None) -> list[str]:
    """The registered names, sorted (the built-ins without importing them); ``family``:
    ``"identifiers"`` or ``"entities"`` only."""
    builtin = {n: "identifiers" if m == "identifiers" else "entities"
               for n, m in _FAMILIES.items()}
    users = {n: r.family for n, r in _REGISTRY.items() if n not in _FAMILIES}
    return sorted(n for n, f in {**builtin, **users}.items() if family in (None, f))
