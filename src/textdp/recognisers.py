"""The recogniser registry, where users reach it: ``textdp.recognisers.register(...)``.

Everything here is :mod:`textdp.text.recognisers` (the registry, the :class:`Recogniser` type and
its pattern and callable forms); see there and docs/architecture.md ("Recipe: add a recogniser").
"""

from textdp.text.recognisers import (
    CallableRecogniser,
    PatternRecogniser,
    Recogniser,
    available,
    get,
    register,
    resolve,
    unregister,
)

__all__ = ["Recogniser", "PatternRecogniser", "CallableRecogniser", "register", "unregister",
           "get", "available", "resolve"]
