"""Mechanism registry: ``available()`` lists names, ``create(name, ...)`` builds one."""

from __future__ import annotations

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
    cls = get(name)
    try:
        return cls(vocabulary, **params)
    except TypeError as exc:
        if "unexpected keyword" in str(exc) or "required keyword" in str(exc):
            raise ValueError(f"mechanism {name!r}: {exc}") from None
        raise


# Importing the families registers them.
from textdp.mechanisms.word import mvc as _mvc  # noqa: E402,F401
