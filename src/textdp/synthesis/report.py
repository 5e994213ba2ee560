"""The privacy report of a synthetic-text release (kind ``synthesis``), built by the one builder
of :mod:`textdp.privacy.report`.

What it states: the method and its parameters; the guarantee (notion, ε, δ, the unit, what is
assumed public) and the accounting (σ, T, the accountant, ε asked and ε accounted); per round
what was released (noisy label totals: post-processing of the noisy histogram) and done; the
entities and identifiers found in the synthetic output (counted; masked by default) and in the
private input (masked before anything saw them).

The counts of the private input (documents, units, entities masked) are exact, not private: the
report is for the data owner; it warns so. The synthetic documents themselves and everything
under ``rounds`` are DP outputs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from textdp.privacy import format_up
from textdp.privacy.accounting import ACCOUNTANT

__all__ = ["outcome_sections", "output_counts", "synthesis_report"]

NOT_PRIVATE = ("this report holds exact counts of the private input (documents, units, "
               "entities masked): it is for the data owner, not for publication with the "
               "synthetic data")


def outcome_sections(spec: Any, output_found: list, labels: list[str] | None, epsilon: float,
                     units_why: str) -> tuple[Counter | None, dict[str, Any], list, list[str]]:
    """What every synthesis report says of its output, whatever the method: the labels' counts,
    the screening section, what is released unprotected, the warnings."""
    found = Counter(kind for spans in output_found for _, _, kind in spans)
    by_label = Counter(labels) if labels is not None else None
    screening = {"action": spec.screen, "found_by_kind": dict(sorted(found.items())),
                 "documents_with_findings": sum(1 for spans in output_found if spans),
                 "note": "found by the recognisers that masked the input; "
                         + ("replaced by their labels" if spec.screen == "mask"
                            else "kept as generated (--screen keep)")}
    unprotected = [{"kind": "label names", "count": len(by_label) if by_label else 0,
                    "why": "label names are treated as public (they appear in the output)"},
                   {"kind": "number of units", "count": 1, "why": units_why}]
    warnings = [NOT_PRIVATE]
    if found and spec.screen == "keep":
        warnings.append(f"{sum(found.values())} entities or identifiers found in the synthetic "
                        "output were kept (screen=keep)")
    if epsilon > 10:
        warnings.append(f"ε = {format_up(epsilon)} at the dataset level is a weak guarantee")
    return by_label, screening, unprotected, warnings


def output_counts(source: Any, units: int, by_label: Counter | None, texts: list[str],
                  generated_tokens: int, private_found: Counter,
                  generations: int | None = None) -> dict[str, Any]:
    """The report's ``counts`` of a synthesis run, whatever the method (``generations``: Private
    Evolution's number of model calls, when it has one)."""
    counts = {"input_documents": len(source.texts), "units": units,
              "labels": len(by_label) if by_label is not None else None,
              "synthetic_documents": len(texts),
              "synthetic_by_label": dict(sorted(by_label.items())) if by_label else None,
              "empty_synthetic_documents": sum(1 for t in texts if not t)}
    if generations is not None:
        counts["generations"] = generations
    return counts | {"generated_tokens": generated_tokens,
                     "masked_in_private_input": dict(sorted(private_found.items()))}


def _accounting(spec: Any, measurement: Any) -> dict[str, Any]:
    return {"accountant": ACCOUNTANT, "mechanism": "Gaussian, L2 sensitivity 1 per round",
            "rounds": measurement.rounds, "noise_multiplier": measurement.noise_multiplier,
            "epsilon_asked": measurement.asked_epsilon,
            "epsilon_accountant": measurement.accountant_epsilon,
            "epsilon_reported": measurement.epsilon,
            "epsilon_rule": "min(asked ε, the accountant's ε for σ rounded up to 6 significant "
                            "digits): never below the accountant's ε",
            "delta": measurement.delta,
            "delta_rule": ("given" if spec.delta is not None else
                           "default: the largest power of ten ≤ 1/n^1.1"),
            "units": measurement.units, "unit": measurement.unit,
            "sensitivity": "each unit's votes are scaled to L2 norm 1 over all candidates of all "
                           "labels (a person's documents split one vote): adding or removing "
                           "one unit moves the histogram by exactly 1 in L2",
            "events": measurement.accounting["events"]}


def synthesis_report(spec: Any, source: Any, measurement: Any, *, evolution: Any, masker: Any,
                     private_found: Counter, output_found: list, texts: list[str],
                     labels: list[str] | None, model: dict[str, Any], encoder: dict[str, Any],
                     seconds: float, generated_tokens: int = 0) -> Any:
    """The report (a :class:`textdp.privacy.report.Report`) of one Private Evolution run."""
    from textdp.privacy.report import release_report

    by_label, screening, unprotected, warnings = outcome_sections(
        spec, output_found, labels, measurement.epsilon,
        "n sets the default δ and is treated as public")
    mechanism = {"name": measurement.name, "parameters": measurement.parameters,
                 "method": "Private Evolution (Aug-PE; Xie et al., ICML 2024)",
                 "rounds": [r.to_dict() for r in evolution.records]}
    inputs = {"model": model, "encoder": encoder, "prompts": spec.prompts.describe(),
              "generation": {"temperature": spec.temperature,
                             "variation_temperature": spec.temperature_of(1),
                             "top_p": spec.top_p, "max_new_tokens": spec.max_new_tokens},
              "masking": masker.description}
    counts = output_counts(source, measurement.units, by_label, texts, generated_tokens,
                           private_found, generations=evolution.generated)
    return release_report(
        "synthesis", mechanism, measurement.guarantee.to_dict(), inputs, counts, unprotected,
        warnings, spec.seed, seconds, (("synthetic_documents", len(texts)),
                                       ("generated_tokens", generated_tokens)),
        unit="prompt i of stage s", sections={"accounting": _accounting(spec, measurement),
                                              "screening": screening})
