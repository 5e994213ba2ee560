"""Small helpers shared by the evaluation modules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["jsonable", "derive_seed"]


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays, tuples and odd objects turned into JSON types."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)


def derive_seed(rng: np.random.Generator) -> int:
    """A non-negative seed drawn from ``rng`` (for APIs that take an integer seed)."""
    return int(rng.integers(2**63 - 1))
