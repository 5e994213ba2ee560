"""What a mechanism's constructor accepts, read from its signature (for the CLI and for rebuilding
a mechanism from a report)."""

from __future__ import annotations

import inspect

__all__ = ["keyword_parameters"]


def keyword_parameters(cls: type) -> list[str] | None:
    """The keyword parameters of a mechanism's constructor (None if it takes ``**kwargs``)."""
    params = inspect.signature(cls.__init__).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params
            if p.kind is inspect.Parameter.KEYWORD_ONLY
            or (p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                and p.name not in ("self", "vocabulary"))]
