"""Options shared by the commands that release vectors and document embeddings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from textdp.cli._common import option

__all__ = ["ReportOpt", "SeedOpt", "TextFieldOpt"]

SeedOpt = Annotated[int | None, option(
    "--seed", metavar="SEED", help="Non-negative integer for a reproducible run. For testing only: "
    "anyone who learns the seed can undo the noise. Default: the secure random source.")]
ReportOpt = Annotated[Path | None, option(
    "--report", metavar="PATH", help="Write the privacy report (JSON) to PATH.")]
TextFieldOpt = Annotated[str, option(
    "--text-field", help="JSON field, CSV or Parquet column of the text (not for .txt).")]
