"""``textdp report``: render the privacy report of a release (word, embedding or document) as
Markdown and HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import CLIError, one_line, say
from textdp.io import FileError, check_distinct
from textdp.io.atomic import staged_directory
from textdp.io.paths import directory_outputs

__all__ = ["report"]

HELP = """Render RUN.json, the privacy report of `textdp privatize`, `textdp embed` or
`textdp docembed` (--report), for people.

\b
Writes into --out (default: a directory RUN-report next to RUN.json, "report" said once:
run.report.json and run-report.json → run-report/, report.json → report/):
  report.md    Markdown: the guarantee, the mechanism and its parameters, its inputs
               (vocabulary and policy; encoder; candidates and recoder), what was released
               and what was released unprotected and why, warnings, randomness and timing
  report.html  the same page, self-contained (PNG figures embedded), no scripts
  tokens.png   word reports: tokens by class and by policy
With --deniability N (word reports) the mechanism is rebuilt from the report (when its
vocabulary is one of textdp's named vocabularies and its parameters are plain
values) and N_w / S_w are measured on N random words (deniability.png). The report holds no
text, so neither does the rendering.

\b
Example:
  textdp privatize reviews.txt -o private.txt --epsilon 10 --report run.json
  textdp report run.json --deniability 200
"""


def report(
    run: Annotated[Path, typer.Argument(
        metavar="RUN.json", show_default=False,
        help="A report written by `textdp privatize|embed|docembed --report`.")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="DIR", show_default=False,
        help="Output directory (created if missing; its parent must exist).")] = None,
    deniability: Annotated[int | None, typer.Option(
        "--deniability", metavar="N", min=1, show_default=False,
        help="Also measure N_w / S_w of the run's mechanism on N random words.")] = None,
    draws: Annotated[int, typer.Option("--draws", min=1, help="Draws per word for --deniability.")]
        = 1000,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, show_default=False, help="Seed for --deniability.")] = None,
) -> None:

    from textdp import _random
    from textdp.evaluation.render import run_report_document, write_report

    if not run.is_file():
        raise FileError(run, None, "no such file" if not run.exists() else "is not a file")
    try:
        data = json.loads(run.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FileError(run, None, f"not a JSON file ({exc})") from None
    except RecursionError:  # json's parser recurses: a hostile file nests 100,000 deep
        raise FileError(run, None, "not a textdp privacy report (JSON nested too deeply)") from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("textdp.report/"):
        raise CLIError(f"{run}: not a textdp privacy report (no \"schema\": \"textdp.report/1\"); "
                       "write one with `textdp privatize|embed|docembed ... --report RUN.json`")
    for key in ("mechanism", "guarantee"):
        if not isinstance(data.get(key), dict):
            raise CLIError(f"{run}: the report has no {key!r} section")
    out = out if out is not None else default_directory(run)
    # File by file: RUN.json inside OUT under one of the names written is never replaced.
    written = ["report.md", "report.html", "tokens.png", *(["deniability.png"] if deniability
                                                           else [])]
    check_distinct({"report": run}, {"output directory": out,
                                     **directory_outputs(out, written, "--out")})
    if out.exists() and not out.is_dir():
        raise FileError(out, None, "exists and is not a directory")
    if not out.absolute().parent.is_dir():
        raise FileError(out, None, f"directory {str(out.parent)!r} does not exist")
    # Rendered into a staging directory beside OUT and moved in at the end: a report that cannot
    # be rendered (a section of the wrong type) leaves no partial directory behind.
    with staged_directory(out) as stage:
        try:
            doc = run_report_document(data, stage, deniability_words=deniability, draws=draws,
                                      rng=_random.generator(seed))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, FileError):
                raise
            # The report is the user's file: a section of the wrong shape is bad input, not a bug.
            raise CLIError(f"{run}: not a valid textdp privacy report ({type(exc).__name__}: "
                           f"{one_line(exc)})") from None
        write_report(doc, stage)
    say(f"wrote {out / 'report.md'} and {out / 'report.html'}")


def default_directory(run: Path) -> Path:
    """Where ``textdp report RUN.json`` renders without ``--out``: ``RUN-report`` beside it,
    without saying "report" twice (``run.report.json`` → ``run-report``, ``report.json`` →
    ``report``; a directory never takes the name of the file it renders)."""
    stem = run.stem
    base = re.sub(r"[-_.]?report$", "", stem, flags=re.IGNORECASE)
    name = f"{base}-report" if base else "report"
    return run.with_name(name if name != run.name else f"{name}-rendered")


report.__doc__ = HELP
