"""The settings an assessment measures, and the sample it measures them on.

A :class:`Setting` is one mechanism at one ε with one token policy; :func:`default_grid` gives
the grid :func:`textdp.assess` runs when the user names no ε: for each mechanism the range
where its output moves from mostly noise to mostly the input (docs/word_mechanisms.md,
docs/diffractor.md, docs/custext.md, docs/results/word_mechanisms.md), and for MVC two variants
that change the risk-utility trade-off at the same ε: stop words kept (more fluent, the stop
words unprotected) and a document budget split over the words (docs/allocation.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Setting", "DEFAULT_MECHANISMS", "DEFAULT_EPSILONS", "default_grid", "choose_sample",
           "release_keywords", "command_line"]

#: The mechanisms assessed when none are named: the paper mechanisms of four different kinds
#: (continuous noise, list geometric, per-group exponential, truncated exponential).
DEFAULT_MECHANISMS: tuple[str, ...] = ("mvc", "diffractor", "custext", "tem")

#: ε per mechanism, six values each: from where almost every word is replaced to where most
#: survive. MVC: N_w ≈ 0.002 at ε = 2 to ≈ 0.99 at 20 on the default vocabulary
#: (docs/results/word_mechanisms.md §1); 1-Diffractor: N_w = tanh(ε/2), the paper's range
#: 0.1-10; CusText: the paper's ε of 1-3 and around; TEM and SanText: ε = 3 is the documented
#: example; Gumbel is feasible only above (5 + 2 ln|V|)/Δ₀ ≈ 75.6 on the default vocabulary.
DEFAULT_EPSILONS: Mapping[str, tuple[float, ...]] = {
    "mvc": (2.0, 4.0, 6.0, 8.0, 10.0, 12.0),
    "mahalanobis": (2.0, 4.0, 6.0, 8.0, 10.0, 12.0),
    "vickrey": (2.0, 4.0, 6.0, 8.0, 10.0, 12.0),
    "gumbel": (80.0, 90.0, 100.0, 120.0, 150.0, 200.0),
    "diffractor": (0.25, 0.5, 1.0, 2.0, 3.0, 5.0),
    "custext": (0.5, 1.0, 2.0, 3.0, 5.0, 8.0),
    "custext_plus": (0.5, 1.0, 2.0, 3.0, 5.0, 8.0),
    "tem": (1.0, 2.0, 3.0, 5.0, 8.0, 12.0),
    "santext": (1.0, 2.0, 3.0, 5.0, 8.0, 12.0),
    "santext_plus": (1.0, 2.0, 3.0, 5.0, 8.0, 12.0),
}
#: The MVC variants of the default grid: stop words kept at three ε, and a uniform split of a
#: document budget ε_doc (each word at most ε = 12, the top of MVC's range) at three ε_doc.
STOPWORD_EPSILONS = (4.0, 6.0, 8.0)
ALLOCATION_EPSILONS = (100.0, 200.0, 400.0)
ALLOCATION_CEILING = 12.0


@dataclass(frozen=True, slots=True)
class Setting:
    """One point of the grid.

    Attributes:
        mechanism: a registered mechanism name, or a built word mechanism.
        epsilon: ε of the mechanism, or ε_doc for an allocation variant (None for a built
            mechanism).
        variant: ``""``, ``"keep stop words"`` or ``"allocation uniform"``: how the policy
            differs from the defaults.
        options: further :func:`textdp.spec.release_spec` keywords of this setting, sorted pairs.
    """

    mechanism: Any
    epsilon: float | None
    variant: str = ""
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return self.mechanism if isinstance(self.mechanism, str) else self.mechanism.name

    @property
    def label(self) -> str:
        """``mvc`` or ``mvc (keep stop words)``: the setting's family in tables and plots."""
        return f"{self.name} ({self.variant})" if self.variant else self.name

    def release_options(self, base: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """The :func:`textdp.spec.release_spec` keywords of this setting over ``base``."""
        out = {**base, **dict(self.options), "mechanism": self.mechanism, "seed": seed}
        if "allocation" in out:
            out["epsilon_document"] = self.epsilon
        elif self.epsilon is not None:
            out["epsilon"] = self.epsilon
        return out


def release_keywords(setting: Setting) -> dict[str, Any]:
    """The :func:`textdp.privatize` keywords that release ``setting`` (None for a built
    mechanism: pass the object itself)."""
    if not isinstance(setting.mechanism, str):
        return {}
    out: dict[str, Any] = {"mechanism": setting.mechanism, **dict(setting.options)}
    out["epsilon_document" if "allocation" in out else "epsilon"] = setting.epsilon
    return out


def command_line(keywords: Mapping[str, Any]) -> str:
    """``textdp privatize`` options for :func:`release_keywords` (empty for a built mechanism)."""
    if not keywords:
        return ""
    parts = [f"-m {keywords['mechanism']}"]
    for name, value in keywords.items():
        if name == "mechanism":
            continue
        flag = "--" + name.replace("_", "-")
        if value is False:
            parts.append("--no-" + name.replace("_", "-"))
            continue
        parts.append(flag if value is True else f"{flag} {value:g}" if isinstance(value, float)
                     else f"{flag} {value}")
    return " ".join(parts)


def default_grid(mechanisms: Sequence[Any] | None = None,
                 epsilons: Sequence[float] | Mapping[str, Sequence[float]] | None = None
                 ) -> list[Setting]:
    """The settings to measure: each mechanism at ``epsilons`` (default: its own six,
    :data:`DEFAULT_EPSILONS`), plus the two MVC variants when neither is given.

    ``epsilons`` may map a mechanism name to its own ε list (``{"mvc": [2, 4], "tem": [1]}``):
    a named mechanism it does not list keeps its default grid, and without ``mechanisms`` the
    mechanisms are its keys. A built mechanism (an object) is one setting at its own ε.
    """
    per_mechanism = isinstance(epsilons, Mapping)
    variants = mechanisms is None and epsilons is None
    if mechanisms is None and per_mechanism:
        mechanisms = list(epsilons)
    names = list(DEFAULT_MECHANISMS if mechanisms is None else mechanisms)
    if not names:
        raise ValueError("give at least one mechanism")
    if per_mechanism:
        unknown = [k for k in epsilons if k not in [m for m in names if isinstance(m, str)]]
        if unknown:
            raise ValueError(f"epsilons name mechanisms that are not assessed: "
                             f"{', '.join(map(str, unknown))}")
        table = {k: _check_epsilons(v) for k, v in epsilons.items()}
    elif epsilons is not None:
        table = dict.fromkeys((m for m in names if isinstance(m, str)),
                              _check_epsilons(epsilons))
    else:
        table = {}
    grid: list[Setting] = []
    for m in names:
        if not isinstance(m, str):
            grid.append(Setting(mechanism=m, epsilon=None))
            continue
        if m not in DEFAULT_EPSILONS:
            _check_name(m)
        values = table.get(m, DEFAULT_EPSILONS.get(m))
        if values is None:
            raise ValueError(f"mechanism {m!r} has no default ε grid: give epsilons")
        grid += [Setting(mechanism=m, epsilon=float(e)) for e in values]
    if variants and "mvc" in names:
        grid += [Setting("mvc", e, "keep stop words", (("keep_stopwords", True),))
                 for e in STOPWORD_EPSILONS]
        grid += [Setting("mvc", e, "allocation uniform",
                         (("allocation", "uniform"), ("epsilon_ceiling", ALLOCATION_CEILING)))
                 for e in ALLOCATION_EPSILONS]
    return grid


def _check_epsilons(values: Any) -> list[float]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise ValueError(f"epsilons must be a list of positive numbers, got {values!r}")
    out = [float(e) for e in values]
    if not out or any(not np.isfinite(e) or e <= 0 for e in out):
        raise ValueError(f"epsilons must be positive numbers, got {list(values)}")
    return out


def _check_name(name: str) -> None:
    from textdp import mechanisms as registry
    from textdp._guide import names_listing
    from textdp.spec import PROMPT_MECHANISMS

    names = sorted(set(registry.available()) | PROMPT_MECHANISMS)
    if name not in names:
        raise ValueError(f"unknown mechanism {name!r}; {names_listing(name, names, 'available')}")


def choose_sample(n_documents: int, sample: int | None, *, per_document_seconds: float | None,
                  n_settings: int, time_budget: float, minimum: int = 50,
                  maximum: int = 5000) -> tuple[int, str]:
    """How many documents to assess, and the sentence saying why.

    ``sample`` given: that many (at most all). Otherwise as many as fit ``time_budget`` at
    ``per_document_seconds`` per document and setting (measured on a pilot), within
    [``minimum``, ``maximum``] and never more than there are: the measured rates' intervals
    shrink as 1/√n, and beyond a few thousand documents the linkage attack's n × n comparison
    dominates the time.
    """
    if sample is not None:
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 2:
            raise ValueError(f"sample must be an integer of at least 2, got {sample!r}")
        n = min(sample, n_documents)
        return n, (f"{n} of {n_documents} documents, as asked" if n == sample else
                   f"all {n_documents} documents (fewer than the {sample} asked)")
    if per_document_seconds is None or per_document_seconds <= 0:
        n = min(n_documents, maximum)
        return n, (f"all {n} documents" if n == n_documents else
                   f"{n} of {n_documents} documents (the most assessed without --sample)")
    fit = int(time_budget / (per_document_seconds * max(n_settings, 1) * 1.25))
    n = max(min(fit, maximum), minimum)
    n = min(n, n_documents)
    why = (f"{n} of {n_documents} documents: the number that fits a time budget of "
           f"{time_budget:g} s for {n_settings} settings at the measured "
           f"{per_document_seconds * 1000:.1f} ms per document and setting"
           + (f" (at least {minimum})" if fit < minimum and n == minimum else "")
           + (f" (at most {maximum})" if fit > maximum and n == maximum else ""))
    if n == n_documents and fit >= n_documents:
        why = f"all {n_documents} documents (they fit the time budget of {time_budget:g} s)"
    return n, why
