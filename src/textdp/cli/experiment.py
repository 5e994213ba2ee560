"""``textdp experiment NAME [OPTIONS]``: regenerate a results page under docs/results/."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from textdp.cli._common import CLIError

EXPERIMENTS = {
    "privemb": "PrivEmb (M1 vs M2) experiments → docs/results/privemb.md",
    "deepcandidate": "SentDP DeepCandidate evaluation → docs/results/deepcandidate.md",
    "word_mechanisms": "N_w/S_w, utility and empirical privacy of the word mechanisms "
                       "→ docs/results/word_mechanisms.md",
}


def experiment(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        help="Experiment: " + "; ".join(f"{k} ({v})" for k, v in EXPERIMENTS.items()))],
) -> None:
    """Run one of the papers' experiments; further options go to the experiment
    (`python -m textdp.experiments.NAME --help` lists them). Needs the `experiments` extra;
    long on 2 cores."""
    if name not in EXPERIMENTS:
        raise CLIError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    module = importlib.import_module(f"textdp.experiments.{name}")
    status = module.main(list(ctx.args))
    if status:
        raise typer.Exit(status)
