"""What a mechanism accepts, read from its declared parameters (for the CLI and for rebuilding a
mechanism from a report)."""

from __future__ import annotations

__all__ = ["keyword_parameters"]


def keyword_parameters(cls: type) -> list[str] | None:
    """The parameters a mechanism declares (``cls.PARAMETERS``), None if it declares none."""
    declared = getattr(cls, "PARAMETERS", None)
    return None if declared is None else [p.name for p in declared]
