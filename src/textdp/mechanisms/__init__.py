"""Mechanism registry: ``available()`` lists names, ``create(name, ...)`` builds one."""

from __future__ import annotations

import inspect
from typing import Any

from textdp.mechanisms.base import WordMechanism

__all__ = ["WordMechanism", "available", "create", "register"]

_REGISTRY: dict[str, type[WordMechanism]] = {}


def register(cls: type[WordMechanism]) -> type[WordMechanism]:
    _REGISTRY[cls.name] = cls
    return cls


def available() -> list[str]:
    """Names accepted by ``textdp.privatize(..., mechanism=NAME)`` and the CLI."""
    return sorted(_REGISTRY)


def get(name: str) -> type[WordMechanism]:
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown mechanism {name!r}; available: {', '.join(available())}"
        ) from None


def create(name: str, vocabulary=None, **params: Any) -> WordMechanism:
    """Build mechanism ``name``; unknown or missing parameters are a ValueError naming them."""
    cls = get(name)
    try:
        inspect.signature(cls).bind(vocabulary, **params)
    except TypeError as exc:
        accepted = [p for p in inspect.signature(cls).parameters if p != "vocabulary"]
        raise ValueError(
            f"mechanism {name!r}: {exc}; it accepts: {', '.join(accepted)}") from None
    return cls(vocabulary, **params)


# Importing the families registers them.
from textdp.mechanisms.word import diffractor as _diffractor  # noqa: E402,F401
from textdp.mechanisms.word import gumbel as _gumbel  # noqa: E402,F401
from textdp.mechanisms.word import mahalanobis as _mahalanobis  # noqa: E402,F401
from textdp.mechanisms.word import mvc as _mvc  # noqa: E402,F401
from textdp.mechanisms.word import santext as _santext  # noqa: E402,F401
from textdp.mechanisms.word import tem as _tem  # noqa: E402,F401
from textdp.mechanisms.word import vickrey as _vickrey  # noqa: E402,F401
