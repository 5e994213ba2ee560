"""Options shared by several commands (those that release vectors and document embeddings;
calibrate and evaluate), and their parsing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import CLIError, option

__all__ = ["DataTextFieldOpt", "ReportOpt", "SeedOpt", "TextFieldOpt", "parse_floats"]

SeedOpt = Annotated[int | None, option(
    "--seed", metavar="SEED", help="Non-negative integer for a reproducible run. For testing only: "
    "anyone who learns the seed can undo the noise. Default: the secure random source.")]
ReportOpt = Annotated[Path | None, option(
    "--report", metavar="PATH", help="Write the privacy report (JSON) to PATH.")]
TextFieldOpt = Annotated[str, option(
    "--text-field", help="JSON field, CSV or Parquet column of the text (not for .txt).")]
DataTextFieldOpt = Annotated[str, typer.Option(
    "--text-field", metavar="NAME",
    help="JSON field (dotted path), CSV/TSV or Parquet column of the documents of INPUT "
         "(ignored for .txt).")]


def parse_floats(text: str, what: str) -> list[float]:
    """``"0.1,1,10"`` → [0.1, 1.0, 10.0]; every value finite and > 0."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            value = float(item)
        except ValueError:
            raise CLIError(f"{what}: {item!r} is not a number") from None
        if not (math.isfinite(value) and value > 0):
            raise CLIError(f"{what}: every value must be a finite number > 0, got {item}")
        out.append(value)
    if not out:
        raise CLIError(f"{what}: give at least one number")
    return out
