"""textdp: differentially private text.

Word-level metric-DP rewriting (MVC, ...), each release with an honest privacy report.

>>> import textdp
>>> result = textdp.privatize(["The food was great."], mechanism="mvc", epsilon=10)
>>> result.texts, result.report["guarantee"]["per_word"]

``import textdp`` loads nothing else: every name below, and every subpackage
(``textdp.text``, ``textdp.vocab``, ...), is imported on first use, and a mechanism family only
when it is named (:mod:`textdp.mechanisms`). A command-line call or a worker process then pays
only for what it uses.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__all__ = ["__version__", "mechanisms", "privatize", "Privatizer", "PrivatizeResult",
           "PrivEmb", "LaplaceVector", "DeepCandidate", "Ledger", "synthesize"]

# Public name → the module that defines it.
_LAZY = {
    "privatize": "textdp.release",
    "Privatizer": "textdp.pipeline",
    "PrivatizeResult": "textdp.release",
    "PrivEmb": "textdp.mechanisms.embedding",
    "LaplaceVector": "textdp.mechanisms.embedding",
    "DeepCandidate": "textdp.mechanisms.document",
    "Ledger": "textdp.ledger",
    "synthesize": "textdp.synthesis.api",
}

if TYPE_CHECKING:
    from textdp import mechanisms
    from textdp.ledger import Ledger
    from textdp.mechanisms.document import DeepCandidate
    from textdp.mechanisms.embedding import LaplaceVector, PrivEmb
    from textdp.pipeline import Privatizer
    from textdp.release import PrivatizeResult, privatize
    from textdp.synthesis.api import synthesize

    __version__: str


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from textdp._version import __version__ as value
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a subpackage: textdp.text, ...
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
