"""Mechanism registry: ``available()`` lists names, ``create(name, ...)`` builds one."""

from __future__ import annotations

from typing import Any

from textdp._checks import check_names
from textdp.mechanisms.base import WordMechanism

__all__ = ["WordMechanism", "available", "create", "get", "register"]

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
    """Build mechanism ``name``; unknown or missing parameters are a ValueError naming them.

    The accepted parameters are the mechanism's declarations (``get(name).PARAMETERS``).
    """
    cls = get(name)
    check_names(cls.PARAMETERS, params, owner=f"mechanism {name!r}")
    return cls(vocabulary, **params)


# Importing the families registers them.
from textdp.mechanisms.word import diffractor as _diffractor  # noqa: E402,F401
from textdp.mechanisms.word import gumbel as _gumbel  # noqa: E402,F401
from textdp.mechanisms.word import mahalanobis as _mahalanobis  # noqa: E402,F401
from textdp.mechanisms.word import mvc as _mvc  # noqa: E402,F401
from textdp.mechanisms.word import santext as _santext  # noqa: E402,F401
from textdp.mechanisms.word import tem as _tem  # noqa: E402,F401
from textdp.mechanisms.word import vickrey as _vickrey  # noqa: E402,F401
