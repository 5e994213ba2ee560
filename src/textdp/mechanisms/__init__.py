"""Mechanism registry: ``available()`` lists names, ``create(name, ...)`` builds one.

A family is imported when it is first named (``get``/``create``), not with this package:
``available()`` reads the names from :data:`_FAMILIES` without importing anything.

Two kinds of mechanism run on text: **word** mechanisms (this registry: ``get``/``create``, a
vocabulary, one word at a time) and **prompt** mechanisms (``dp_prompt``: a language model
rewrites whole documents, :mod:`textdp.mechanisms.prompt`, run by :mod:`textdp.lm`).
``available()`` lists both — every name :func:`textdp.privatize` and ``textdp privatize``
accept; ``available("word")`` only the word mechanisms.
"""

from __future__ import annotations

import importlib
from typing import Any

from textdp._checks import check_names
from textdp.mechanisms.base import WordMechanism

__all__ = ["WordMechanism", "available", "create", "get", "register"]

_REGISTRY: dict[str, type[WordMechanism]] = {}

# Mechanism name → the module whose import registers it (a test checks the map is complete).
_FAMILIES: dict[str, str] = {
    "custext": "textdp.mechanisms.word.custext",
    "custext_plus": "textdp.mechanisms.word.custext",
    "diffractor": "textdp.mechanisms.word.diffractor",
    "gumbel": "textdp.mechanisms.word.gumbel",
    "mahalanobis": "textdp.mechanisms.word.mahalanobis",
    "mvc": "textdp.mechanisms.word.mvc",
    "santext": "textdp.mechanisms.word.santext",
    "santext_plus": "textdp.mechanisms.word.santext",
    "tem": "textdp.mechanisms.word.tem",
    "vickrey": "textdp.mechanisms.word.vickrey",
}


def register(cls: type[WordMechanism]) -> type[WordMechanism]:
    _REGISTRY[cls.name] = cls
    return cls


def _prompt() -> frozenset[str]:
    """The prompt mechanisms' names: :data:`textdp.mechanisms.prompt.MECHANISMS`, the one list
    (that package is pure: it imports no language model)."""
    from textdp.mechanisms.prompt import MECHANISMS

    return frozenset(MECHANISMS)
_KINDS = ("word", "prompt")


def available(kind: str | None = None) -> list[str]:
    """Names accepted by ``textdp.privatize(..., mechanism=NAME)`` and the CLI, sorted.

    ``kind``: None (every name), ``"word"`` (the word mechanisms of this registry, which
    :func:`get` and :func:`create` build) or ``"prompt"`` (the language-model mechanisms).
    """
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)} or None, got {kind!r}")
    word = _REGISTRY.keys() | _FAMILIES.keys()
    prompt = _prompt()
    names = {"word": word, "prompt": prompt, None: word | prompt}[kind]
    return sorted(names)


def _load(name: object) -> None:
    """Import the family of ``name`` if it is known and not registered yet."""
    if isinstance(name, str) and name not in _REGISTRY and name in _FAMILIES:
        importlib.import_module(_FAMILIES[name])


def get(name: str) -> type[WordMechanism]:
    _load(name)
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        if name in _prompt():
            raise ValueError(f"{name} is not a word mechanism: it rewrites whole documents with "
                             "a language model (textdp.privatize or textdp.lm runs it)") from None
        raise ValueError(
            f"unknown mechanism {name!r}; available: {', '.join(available('word'))}"
        ) from None


def create(name: str, vocabulary=None, **params: Any) -> WordMechanism:
    """Build mechanism ``name``; unknown or missing parameters are a ValueError naming them.

    The accepted parameters are the mechanism's declarations (``get(name).PARAMETERS``).
    """
    cls = get(name)
    check_names(cls.PARAMETERS, params, owner=f"mechanism {name!r}")
    return cls(vocabulary, **params)

