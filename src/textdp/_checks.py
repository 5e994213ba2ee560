"""Parameter checks and declarations: TypeError for a wrong type, ValueError for a wrong range.

A mechanism declares each of its parameters once, as a :class:`Parameter` (name, type, range or
choices, default, help). That one declaration validates the constructor's arguments, names the
parameters of ``mechanisms.create`` and of the CLI, and is listed by ``textdp mechanisms``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["REQUIRED", "Parameter", "check_epsilon", "check_names", "check_nonnegative_int",
           "check_parameters", "check_positive",
           "check_probability", "check_real", "check_rng", "check_seed", "check_size",
           "check_texts"]


def check_texts(texts: object, name: str = "texts") -> list[str]:
    """``texts`` as a list of documents, decided here for every front (``textdp.privatize``,
    the engines, assess, synthesize, the encoders): an iterable of strings — not one string
    (its characters would be the documents), not a mapping (its keys would be privatised and its
    values dropped), no item that is not a ``str``."""
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a list of strings, not one string (wrap it in a list)")
    if isinstance(texts, Mapping):
        raise TypeError(f"{name} must be a list of strings, not a dict (iterating it gives its "
                        "keys): pass list(d.values()) to privatise the values")
    out = list(texts)  # type: ignore[call-overload]
    if set(map(type, out)) - {str}:  # C-level screen; the loop names the culprit
        for i, t in enumerate(out):
            if not isinstance(t, str):
                raise TypeError(f"{name}[{i}] is {type(t).__name__}, expected str")
    return out


def check_real(value: object, name: str) -> float:
    """A real number as a float (TypeError otherwise); an integer beyond the largest float is
    ±∞, never an OverflowError."""
    return _check_real(value, name)


def _check_real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:  # an integer beyond the largest float (10**400): out of every range
        return math.inf if value > 0 else -math.inf


def check_positive(value: object, name: str) -> float:
    """A finite real number > 0."""
    v = _check_real(value, name)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_epsilon(epsilon: object, name: str = "epsilon", *,
                  floor: tuple[float, str] | None = None) -> float:
    """ε as a float: a real number (TypeError otherwise), finite and > 0 (ValueError).

    The one place ε's range is checked (tests/test_options.py holds every other module to it):
    a release's options object builds its mechanism, whose declaration (:data:`EPSILON`, or a
    mechanism's own) calls this once; no layer above or below checks ε again.

    ``floor``: ``(lowest, why)``, a lowest ε a mechanism accepts, and the sentence saying why a
    smaller one is refused as a likely mistake (:data:`textdp.mechanisms.base.MIN_EPSILON`).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    v = _check_real(epsilon, name)
    if not math.isfinite(v):
        # 10**400 is refused here in one sentence, not by an OverflowError deep in a mechanism.
        raise ValueError(f"{name} must be a finite number > 0, got {_short(epsilon)}")
    if v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    if floor is not None and v < floor[0]:
        raise ValueError(f"{name}={v:g} is below {floor[0]:g}: {floor[1]}")
    return v


def _short(value: object) -> str:
    """``value`` as a message shows it: an integer of hundreds of digits by its size."""
    text = repr(value)
    return text if len(text) <= 40 else f"a number of {len(text)} digits ({text[:12]}…)"


def check_probability(value: object, name: str, *, open_low: bool = True,
                      open_high: bool = True) -> float:
    v = _check_real(value, name)
    low_ok = v > 0 if open_low else v >= 0
    high_ok = v < 1 if open_high else v <= 1
    if not (math.isfinite(v) and low_ok and high_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value!r}")
    return v


def check_size(size: object, name: str = "size") -> int:
    """An integer ≥ 0 (a number of draws)."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(size).__name__}")
    if int(size) < 0:
        raise ValueError(f"{name} must be ≥ 0, got {size!r}")
    return int(size)


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


def check_seed(seed: object, name: str = "seed") -> int | None:
    """None, or a non-negative integer; anything else is a ValueError (a seed is a value, not a type)."""
    return None if seed is None else check_nonnegative_int(seed, name)


def check_nonnegative_int(value: object, name: str) -> int:
    """A non-negative integer, else a ValueError (a seed is a value, not a type)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a parameter that must be given.
REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of a mechanism, declared once.

    Attributes:
        name: the keyword (``epsilon``, ``beta``, …), in the papers' words.
        type: ``float``, ``int``, ``bool`` or ``str`` for values the command line can give;
            ``object`` for Python-only values (arrays, vocabularies, callables).
        help: one line for a user: what it is, in the paper's terms.
        default: the value when not given; :data:`REQUIRED` when it must be given.
        low, high: the range of a number (None: unbounded on that side).
        low_open, high_open: whether the range excludes that end.
        choices: the accepted strings of a ``str`` parameter.
        nullable: None is accepted (and means "not set": see the mechanism's docstring).
        check: a custom check ``value → value`` for what the fields above cannot say; it raises
            TypeError or ValueError itself.
        flag: the command line has a flag ``--name`` for it (others go through ``--param``).
    """

    name: str
    type: type
    help: str
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    nullable: bool = False
    check: Callable[[Any], Any] | None = None
    flag: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def command_line(self) -> bool:
        """Whether the command line can give it (a number, an integer, a flag or a string)."""
        return self.type in (float, int, bool, str)

    def describe_range(self) -> str:
        """The accepted values in a few symbols: ``(0, 1)``, ``≥ 1``, ``geometric | tem``, …"""
        if self.choices:
            text = " | ".join(self.choices)
        elif self.type is bool:
            text = "true | false"
        elif self.low is not None and self.high is not None:
            text = (f"{'(' if self.low_open else '['}{self.low:g}, "
                    f"{self.high:g}{')' if self.high_open else ']'}")
        elif self.low is not None:
            text = f"{'>' if self.low_open else '≥'} {self.low:g}"
        elif self.high is not None:
            text = f"{'<' if self.high_open else '≤'} {self.high:g}"
        else:
            text = {float: "real", int: "integer", str: "string"}.get(self.type, "see help")
        return text + (" or none" if self.nullable else "")

    def validate(self, value: Any) -> Any:
        """The checked value: TypeError for a wrong type, ValueError for a value out of range."""
        if value is None and self.nullable:
            return None
        if self.check is not None:
            return self.check(value)
        if self.type is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{self.name} must be True or False, got {value!r}")
            return bool(value)
        if self.type is str:
            if not isinstance(value, str):
                raise TypeError(f"{self.name} must be a string, got {type(value).__name__}")
            if self.choices and value not in self.choices:
                raise ValueError(f"unknown {self.name} {value!r}; choose one of: "
                                 f"{', '.join(self.choices)}")
            return value
        if self.type is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{self.name} must be an integer, got {type(value).__name__}")
            value = int(value)
        elif self.type is float:
            value = _check_real(value, self.name)
        else:
            return value
        self._check_range(value)
        return value

    def _check_range(self, v: float) -> None:
        lo_ok = self.low is None or (v > self.low if self.low_open else v >= self.low)
        hi_ok = self.high is None or (v < self.high if self.high_open else v <= self.high)
        finite = self.type is int or math.isfinite(v)
        if lo_ok and hi_ok and finite:
            return
        if self.low is not None and self.high is not None:
            must = f"lie in {self.describe_range()}"
        elif self.type is float:
            must = "be a finite number" + ("" if self.low is None and self.high is None
                                            else f" {self.describe_range()}")
        else:
            must = f"be {self.describe_range()}"
        raise ValueError(f"{self.name} must {must}, got {v!r}")


def check_names(declared: Iterable[Parameter], given: Iterable[str], *, owner: str) -> None:
    """ValueError naming the parameters in ``given`` that are not declared, or the required ones
    missing from it, with the accepted names."""
    declared = tuple(declared)
    given = list(given)
    names = [p.name for p in declared]
    unknown = [k for k in given if k not in names]
    missing = [p.name for p in declared if p.required and p.name not in given]
    if unknown or missing:
        what = (f"unknown parameter(s) {', '.join(map(repr, unknown))}" if unknown else
                f"missing required parameter(s) {', '.join(map(repr, missing))}")
        raise ValueError(f"{owner}: {what}; it accepts: {', '.join(names)}")


def check_parameters(declared: Iterable[Parameter], given: Mapping[str, Any], *,
                     owner: str) -> dict[str, Any]:
    """Every declared parameter's checked value, defaults filled in, in declaration order.

    Raises:
        ValueError: a parameter that is not declared, or a required one that is missing
            (:func:`check_names`).
        TypeError, ValueError: from :meth:`Parameter.validate`.
    """
    declared = tuple(declared)
    check_names(declared, given, owner=owner)
    return {p.name: p.validate(given[p.name] if p.name in given else p.default) for p in declared}


# Declarations shared by several families (the papers' names and ranges).
#: Below this ε a word mechanism's noise is more than 10^12 times the vocabulary's scale: its output
#: is (to float precision) independent of the input word, and float32 noise overflows (NaN queries
#: at ε = 1e-37). Such an ε is refused as a likely mistake.
MIN_EPSILON = 1e-12
_WORD_FLOOR = (MIN_EPSILON, "at such ε the output no longer depends on the input word (the noise "
               "is over 10^12 times the vocabulary's scale) and the float arithmetic overflows; "
               "use a larger ε")
#: A word mechanism's ε, checked by :func:`check_epsilon` (with the floor :data:`MIN_EPSILON`).
EPSILON = Parameter("epsilon", float, "privacy parameter ε (per unit of the mechanism's metric)",
                    low=0.0, low_open=True,
                    check=lambda value: check_epsilon(value, floor=_WORD_FLOOR))
DELTA = Parameter("delta", float, "δ of an (ε, δ) guarantee", low=0.0, high=1.0, low_open=True,
                  high_open=True)
