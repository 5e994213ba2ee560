"""``textdp calibrate --help``: its long help text and its own options (see
:mod:`textdp.cli._help`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = """Find the ε values at which a mechanism meets worst-case plausible deniability targets.

\b
The method of Feyisetan et al. (WSDM 2020, §3-4): sample --words vocabulary words,
measure N_w = Pr[M(w) = w] and S_w (distinct outputs in --draws draws) for each, at
every ε of a log-spaced grid, and keep the ε where
    max over words of N_w <= --max-nw   and   min over words of S_w >= --min-sw.
Mechanisms with an exact output law (1-Diffractor, TEM, SanText) are measured exactly;
the others (MVC, ...) by Monte Carlo, with every ε seeing the same random numbers, and a
target then counts as met only with a margin of --margin standard errors. Monotonicity is
not assumed: every ε interval meeting the targets is reported, and each boundary is
refined by bisection.

\b
With INPUT (JSONL, CSV/TSV, Parquet or text; --text-field names the field or column),
N_w and S_w are measured on the words of that data instead of a vocabulary sample: the
documents go through the release's own tokeniser, stop-word, identifier and entity
stage (--entities, --keep-stopwords), and each privatised word weighs its count (a word
that occurs 100 times counts 100 times in the means and in the share of the data's
words failing a target). Up to --words distinct words are measured: all of them, or the
most frequent half and a uniform sample of the rest. Out-of-vocabulary words, numbers,
identifiers and entity spans never reach the mechanism: they are counted and reported
apart. The worst cases (the targets) are over the measured words.

\b
Output: a table of the measured ε on stdout, then the range(s) and the recommended ε
(the largest one meeting the targets: the least noise with the privacy asked for);
with --json a JSON object instead (schema in docs/evaluation.md). --plot PATH writes a
PNG of N_w and S_w against ε with the targets, after the results are printed (a failing
plot cannot lose them). Exit status 0 when some ε meets the targets, 3 when none in the
grid does, 2 on a user error, 130 when interrupted.

\b
Example:
  textdp calibrate --mechanism mvc --max-nw 0.5 --min-sw 50 --words 200
  textdp calibrate --mechanism diffractor --method tem --max-nw 0.2 --json
  textdp calibrate tickets.jsonl --text-field body --mechanism mvc --max-nw 0.5
"""


# The options whose declarations would not fit the signature on one line.
InputArg = Annotated[Path | None, typer.Argument(
    metavar="INPUT", show_default=False,
    help="Measure on the words of this file (JSONL, CSV/TSV, Parquet, text; '-' is standard "
         "input with --format) instead of a vocabulary sample.")]
KeepStopwordsOpt = Annotated[bool, typer.Option(
    "--keep-stopwords", help="With INPUT: English function words are kept as the release "
                             "would keep them (not measured).")]
MaxNwOpt = Annotated[float | None, typer.Option(
    "--max-nw", show_default=False,
    help="Target: max over words of N_w = Pr[M(w)=w] must be at most this (1 disables it).")]
MinSwOpt = Annotated[float | None, typer.Option(
    "--min-sw", show_default=False,
    help="Target: min over words of S_w must be at least this (1 disables it).")]
WordsOpt = Annotated[int, typer.Option(
    "--words", min=1, help="Vocabulary words sampled uniformly (worst case over them); with "
                           "INPUT, the most distinct words of INPUT measured.")]
GridOpt = Annotated[str | None, typer.Option(
    "--grid", metavar="E1,E2,...", show_default=False,
    help="The ε values to search (default: 4 per decade from --grid-min to --grid-max).")]
MarginOpt = Annotated[float | None, typer.Option(
    "--margin", min=0, show_default=False,
    help="Monte Carlo only: standard errors an estimate must beat a target by (default 3; 0 = "
         "plain point estimates, as in the paper).")]
SupportOpt = Annotated[str, typer.Option(
    "--support", help="S_w statistic: 'distinct' (outputs seen in --draws draws, the paper's) "
                      "or 'mass' (smallest set holding 1-η of the mass; exact laws only).")]
PlotOpt = Annotated[Path | None, typer.Option(
    "--plot", metavar="PATH.png", show_default=False,
    help="Write a PNG of N_w and S_w against ε with the targets.")]
MechanismOpt = Annotated[str, typer.Option(
    "--mechanism", "-m", help="Mechanism name (see `textdp mechanisms`).")]
DrawsOpt = Annotated[int, typer.Option(
    "--draws", min=1, help="Draws per word per ε (the MVC paper uses 1000).")]
GridMinOpt = Annotated[float, typer.Option("--grid-min", help="Smallest ε of the default grid.")]
GridMaxOpt = Annotated[float, typer.Option("--grid-max", help="Largest ε of the default grid.")]
RefineOpt = Annotated[int, typer.Option(
    "--refine", min=0, help="Bisection steps per boundary (each halves it in log ε).")]
EtaOpt = Annotated[float, typer.Option("--eta", help="η of --support mass.")]
VocabularySizeOpt = Annotated[int | None, typer.Option(
    "--vocabulary-size", min=2, show_default=False,
    help="Restrict the default vocabulary, glove-6b-50d, to wordfreq's top N words.")]
SeedOpt = Annotated[int | None, typer.Option(
    "--seed", min=0, show_default=False,
    help="Seed for the word sample and the draws (default: OS entropy).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
