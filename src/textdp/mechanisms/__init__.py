"""Mechanism registry: ``available()`` lists names, ``create(name, ...)`` builds one.

A family is imported when it is first named (``get``/``create``), not with this package:
``available()`` reads the names from :data:`_FAMILIES` without importing anything.
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


def available() -> list[str]:
    """Names accepted by ``textdp.privatize(..., mechanism=NAME)`` and the CLI."""
    return sorted(_REGISTRY.keys() | _FAMILIES.keys())


def _load(name: object) -> None:
    """Import the family of ``name`` if it is known and not registered yet."""
    if isinstance(name, str) and name not in _REGISTRY and name in _FAMILIES:
        importlib.import_module(_FAMILIES[name])


def get(name: str) -> type[WordMechanism]:
    _load(name)
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown mechanism {name!r}; available: {', '.join(available())}"
        ) from None


def create(name: str, vocabulary=None, **params: Any) -> WordMechanism:
    """Build mechanism ``name``; unknown or missing parameters are a ValueError naming them.

    The accepted parameters are the mechanism's declarations (``get(name).PARAMETERS``).
    """
    cls = get(name)
    check_names(cls.PARAMETERS, params, owner=f"mechanism {name!r}")
    return cls(vocabulary, **params)

