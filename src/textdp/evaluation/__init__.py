"""The papers' measurements as one toolkit: plausible deniability, calibration of ε, utility,
empirical privacy, efficiency, plots and reports (SPEC §5; usage in docs/evaluation.md).

Submodules (imported on demand: scikit-learn and matplotlib load only when used):

* :mod:`~textdp.evaluation.deniability` — :func:`plausible_deniability` (N_w, S_w; exact or Monte Carlo)
* :mod:`~textdp.evaluation.calibration` — :func:`calibrate` (ε from worst-case targets)
* :mod:`~textdp.evaluation.data` — the user's own data: :func:`read_user_data` (documents and
  labels), :func:`data_words` (the words a release privatises, with their counts)
* :mod:`~textdp.evaluation.utility` — downstream classification, SBERT similarity
* :mod:`~textdp.evaluation.attacks` — attribute inference and re-identification
* :mod:`~textdp.evaluation.efficiency` — tokens/s and peak memory per 1,000 words
* :mod:`~textdp.evaluation.plots`, :mod:`~textdp.evaluation.render` — PNGs, Markdown and HTML
* :mod:`~textdp.evaluation.sweep` — :func:`run_sweep`, behind ``textdp evaluate`` (its report:
  :mod:`~textdp.evaluation.sweep_report`)
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["plausible_deniability", "Deniability", "calibrate", "Calibration", "run_sweep",
           "SweepConfig", "measure_efficiency", "UtilityEvaluator", "AttackEvaluator",
           "reidentification", "semantic_similarity", "read_user_data", "data_words"]

_WHERE = {
    "plausible_deniability": "deniability", "Deniability": "deniability",
    "calibrate": "calibration", "Calibration": "calibration",
    "run_sweep": "sweep", "SweepConfig": "sweep",
    "measure_efficiency": "efficiency",
    "UtilityEvaluator": "utility", "semantic_similarity": "utility",
    "AttackEvaluator": "attacks", "reidentification": "attacks",
    "read_user_data": "data", "data_words": "data",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f"textdp.evaluation.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'textdp.evaluation' has no attribute {name!r}")
