"""What a Private Evolution run spends: T rounds of the Gaussian mechanism, accounted by
``dp-accounting`` (:mod:`textdp.privacy.accounting`), as a measurement the ledger records.

Each round releases one noisy histogram H + N(0, σ²I) of L2 sensitivity 1
(:mod:`textdp.synthesis.histogram`); everything else a round does — thresholding, selection,
the language model's variations, the next round's candidates, the output — is post-processing
of the noisy histograms released so far. So a run of T rounds is the adaptive composition of T
Gaussian mechanisms with noise multiplier σ (Lin et al., ICLR 2024, Theorem 1; Xie et al., ICML
2024, §3). Its (ε, δ) is computed by the PLD accountant of ``dp-accounting`` and σ is calibrated
to the asked ε by that accountant's own binary search (``calibrate_dp_mechanism``).

The ε reported is min(asked ε, the accountant's ε for the σ used rounded up to 6 significant
digits): never below the accountant's ε, never above what was asked.

δ defaults to the largest power of ten ≤ 1/n^1.1 for n units (a δ near 1/n allows a mechanism
that releases one unit's data outright with probability δ·n); δ ≥ 1/n is refused. The number of
units n is treated as public, as in the papers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from textdp.privacy import Budget, Guarantee, Notion, check_distance, format_up
from textdp.privacy.accounting import (
    ACCOUNTANT,
    calibrate_noise_multiplier,
    epsilon_of,
    gaussian_event,
)

__all__ = ["UNITS", "DataRefused", "DatasetLevel", "SynthesisMeasurement", "default_delta", "plan",
           "resolve_delta"]

#: The units a guarantee protects: one document, or every document of one person.
UNITS = ("document", "person")
REFERENCE = ("Xie et al., ICML 2024 (Aug-PE), §3 and Algorithm 1; Lin et al., ICLR 2024 (PE), "
             "Algorithm 2 and Theorem 1; Gaussian mechanism composed by dp-accounting's PLD "
             "accountant (Doroshenko et al., PETS 2022)")


class DataRefused(ValueError):
    """The data cannot be released as asked (no documents, a label with one unit, δ ≥ 1/n, too
    few units for the ε): raised before the ledger is touched and before anything is generated."""


def default_delta(units: int) -> float:
    """The largest power of ten ≤ 1/n^1.1 (n = ``units``)."""
    if units < 2:
        raise ValueError("δ needs at least two units")
    exponent = math.floor(-1.1 * math.log10(units))
    delta = 10.0 ** exponent
    while delta > units ** -1.1:  # float rounding of the logarithm: stay below the bound
        exponent -= 1
        delta = 10.0 ** exponent
    return delta


class DatasetLevel:
    """The notion and input metric of a dataset-level (ε, δ) release of ``unit``s, shared by
    Private Evolution and DP fine-tuning: the ledger composes their releases of one input."""

    __slots__ = ()
    unit: str

    @property
    def notion(self) -> Notion:
        return Notion.APPROXIMATE_DP

    @property
    def input_metric(self) -> str:
        return f"dataset-add-remove:{self.unit}"

    @property
    def metric(self) -> str:
        return (f"datasets that differ by adding or removing one {self.unit}"
                + (" (all of one person's documents)" if self.unit == "person" else ""))


@dataclass(frozen=True, slots=True)
class SynthesisMeasurement(DatasetLevel):
    """A Private Evolution release as a measurement: notion, input metric, privacy map, and the
    events the ledger's accountant composes.

    Attributes:
        epsilon: the ε reported (see the module docstring).
        delta: δ.
        rounds: T, the Gaussian mechanisms composed.
        noise_multiplier: σ (the noise's standard deviation per count; sensitivity 1).
        unit: ``"document"`` or ``"person"``.
        units: n, the number of units in the input.
        asked_epsilon: the ε the release was calibrated for.
        accountant_epsilon: the accountant's ε for σ (unrounded).
    """

    epsilon: float
    delta: float
    rounds: int
    noise_multiplier: float
    unit: str
    units: int
    asked_epsilon: float
    accountant_epsilon: float
    extra: tuple[tuple[str, Any], ...] = field(default=())

    name = "private_evolution"

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "rounds": self.rounds,
                "noise_multiplier": self.noise_multiplier, "sensitivity": 1.0,
                "unit": self.unit, **dict(self.extra)}

    @property
    def accounting(self) -> dict[str, Any]:
        """What the ledger records for its accountant (:mod:`textdp.privacy.accounting`)."""
        return {"accountant": ACCOUNTANT,
                "events": [gaussian_event(self.noise_multiplier, self.rounds)]}

    @property
    def guarantee(self) -> Guarantee:
        per_unit = (f"for any two datasets that differ by one {self.unit}, every set of outputs "
                    f"(the synthetic documents and their labels) has probability at most "
                    f"e^{format_up(self.epsilon)}·P' + {self.delta:.3g}")
        return Guarantee(
            notion=Notion.APPROXIMATE_DP, epsilon=self.epsilon, delta=self.delta,
            metric=self.metric, per_word=per_unit,
            per_document=(f"the whole release: {self.rounds} noisy histograms (Gaussian, σ = "
                          f"{self.noise_multiplier:.6g}, L2 sensitivity 1), composed by "
                          f"{ACCOUNTANT}; everything else is post-processing"),
            assumptions=("the language model, the encoder and the prompts are public (their "
                         "pretraining data is not protected by this guarantee)",
                         "label names and the number of units are treated as public",
                         "idealised floating-point Gaussian noise"),
            reference=REFERENCE)

    def privacy_map(self, d_in: Any) -> Budget:
        """(ε, δ) for datasets ``d_in`` units apart: d units change H by at most d in L2 per
        round, i.e. noise multiplier σ/d (group privacy of the Gaussian mechanism)."""
        d = check_distance(d_in)
        if not isinstance(d, float):
            raise ValueError("the dataset-level map takes one distance")
        if d == 0:
            return Budget(0.0, 0.0)
        if d <= 1:
            return Budget(self.epsilon, self.delta)
        eps = epsilon_of([gaussian_event(self.noise_multiplier / math.ceil(d), self.rounds)],
                         self.delta)
        return Budget(float(format_up(eps)), self.delta)


def resolve_delta(delta: float | None, units: int, unit: str = "document") -> float:
    """δ as given (checked: in (0, 1/n)) or its default for ``units`` units.

    Raises:
        ValueError: fewer than 2 units; δ not in (0, 1); δ ≥ 1/n.
    """
    if units < 2:
        raise ValueError(f"{units} {unit}(s): a dataset-level release needs at least 2")
    if delta is None:
        return default_delta(units)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"δ must be in (0, 1), got {delta!r}")
    if delta >= 1 / units:
        raise ValueError(f"δ = {delta:g} ≥ 1/n = {1 / units:.3g} for n = {units} {unit}s: such "
                         "a δ allows releasing one unit's data outright; use δ < 1/n (the "
                         f"default is ≤ 1/n^1.1 = {units ** -1.1:.3g})")
    return float(delta)


def plan(*, epsilon: float, delta: float | None, rounds: int, units: int,
         unit: str = "document") -> SynthesisMeasurement:
    """The noise multiplier σ for ``rounds`` Gaussian histograms to meet (ε, δ) over ``units``
    units, and the measurement of the release.

    ε is the spec's, checked when it was built (:class:`textdp.synthesis.SynthesisSpec`); the
    accountant's calibration refuses one that is not (:mod:`textdp.privacy.accounting`).

    Raises:
        ValueError: δ not in (0, 1/n); fewer than 2 units; rounds < 1.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer ≥ 1, got {rounds!r}")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    delta = resolve_delta(delta, units, unit)
    sigma = calibrate_noise_multiplier(float(epsilon), float(delta), rounds)
    accounted = epsilon_of([gaussian_event(sigma, rounds)], float(delta))
    reported = min(float(epsilon), float(format_up(accounted)))
    return SynthesisMeasurement(epsilon=reported, delta=float(delta), rounds=rounds,
                                noise_multiplier=sigma, unit=unit, units=int(units),
                                asked_epsilon=float(epsilon), accountant_epsilon=accounted)
