"""The installed textdp's version, in a leaf module: it imports nothing from textdp.

Every module that records the version (the report, the ledger, sweeps, ``textdp --version``)
imports it from here, never from the package facade :mod:`textdp`, whose lazy names would
otherwise make the facade and the module import each other (``tests/test_structure.py``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]


def _installed() -> str:
    try:
        return version("textdp")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown"


__version__: str = _installed()
