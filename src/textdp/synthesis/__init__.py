"""DP synthetic text: N documents under (ε, δ)-DP at the dataset level (``textdp synthesize``).

One module per concern:

* :mod:`~textdp.synthesis.histogram` — the DP nearest-neighbour voting histogram and its
  sensitivity (a unit's votes have L2 norm 1);
* :mod:`~textdp.synthesis.accountant` — σ for the asked (ε, δ) over T rounds, by dp-accounting;
  the release's measurement for the ledger;
* :mod:`~textdp.synthesis.evolution` — the Private Evolution loop (selection, variations);
* :mod:`~textdp.synthesis.generation` — the token sampler and the one adapter onto the engine;
* :mod:`~textdp.synthesis.prompts` — the public prompts;
* :mod:`~textdp.synthesis.screen` — entities and identifiers, masked in, screened out;
* :mod:`~textdp.synthesis.report` — the privacy report;
* :mod:`~textdp.synthesis.api` — :func:`synthesize`, the spec, the source and the engine,
  run through :func:`textdp.runner.run_release`;
* :mod:`~textdp.synthesis.dpsgd` and :mod:`~textdp.synthesis.finetune` — the second method
  (``method="finetune"``): LoRA adapters trained by DP-SGD (per-unit clipping, Poisson
  sampling, accounted by dp-accounting), then sampling.
"""

from __future__ import annotations

from textdp.synthesis.api import (
    DEFAULTS,
    DataRefused,
    PrivateEvolutionEngine,
    SynthesisResult,
    SynthesisSpec,
    TextSource,
    synthesize,
)

__all__ = ["DEFAULTS", "DataRefused", "PrivateEvolutionEngine", "SynthesisResult", "SynthesisSpec",
           "TextSource", "synthesize"]
