"""Parameter checks shared by every mechanism: TypeError for a wrong type, ValueError for a range."""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    value = float(epsilon)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {epsilon!r}")
    return value


def check_probability(value: object, name: str, *, open_low: bool = True,
                      open_high: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    low_ok = v > 0 if open_low else v >= 0
    high_ok = v < 1 if open_high else v <= 1
    if not (math.isfinite(v) and low_ok and high_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value!r}")
    return v


def check_rng(rng: object) -> np.random.Generator:
    """None → a cryptographically secure Generator keyed from OS entropy
    (:func:`textdp._random.secure_generator`); a Generator passes; anything else is an error."""
    if rng is None:
        from textdp import _random

        return _random.secure_generator()
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(
        f"rng must be a numpy.random.Generator or None, got {type(rng).__name__} "
        "(use numpy.random.default_rng(seed) for a reproducible run)"
    )


def check_seed(seed: object) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)
