"""Choose a release by measurement: privacy risk and utility of each mechanism × ε on the
user's own documents (:func:`assess`), and its reports (:mod:`textdp.assess.render`).

``textdp.assess(texts, ...)`` calls :func:`assess`: this package is itself callable, so that the
name works whether or not ``textdp.assess`` was imported as a module first.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from textdp.assess.core import HONESTY, Assessment, assess
from textdp.assess.grid import DEFAULT_EPSILONS, DEFAULT_MECHANISMS, Setting, default_grid
from textdp.assess.recommend import Targets

__all__ = ["assess", "Assessment", "HONESTY", "Setting", "Targets", "default_grid",
           "DEFAULT_MECHANISMS", "DEFAULT_EPSILONS"]


class _CallableModule(types.ModuleType):
    # `import textdp.assess` binds the package as textdp.assess; this keeps
    # `textdp.assess(texts)` meaning the function either way.
    def __call__(self, *args: Any, **kwargs: Any) -> Assessment:
        return assess(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
