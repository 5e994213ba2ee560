"""The tasks of a sweep (:mod:`textdp.evaluation.sweep`): their names and the titles its report
gives them (:mod:`textdp.evaluation.sweep_report`), shared by the configuration's checks, the
measurements and the report.
"""

from __future__ import annotations

__all__ = ["ATTACK_TASKS", "DATA_TASKS", "REPORTED_UTILITY", "TASKS", "TASK_TITLES",
           "UTILITY_TASKS"]

UTILITY_TASKS = ("sentiment", "topic")
ATTACK_TASKS = ("source", "author")
TASKS = (*UTILITY_TASKS, *ATTACK_TASKS, "reidentification", "similarity")
#: The tasks on the user's data (``config.input``): "label" needs ``config.label_field``.
DATA_TASKS = ("label", "reidentification", "similarity")
#: Utility tasks a report may hold (the built-in ones, then the user's labels).
REPORTED_UTILITY = (*UTILITY_TASKS, "label")

TASK_TITLES = {
    "sentiment": "VADER sentiment (binary)",
    "topic": "fortunes topics",
    "source": "source attribution (VADER sets)",
    "author": "author attribution (fortunes)",
    "reidentification": "re-identification (nearest clean text)",
    "similarity": "SBERT cosine similarity",
    "label": "your labels",
}
