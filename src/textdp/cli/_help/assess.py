"""``textdp assess --help``: its long help text and its own options (see
:mod:`textdp.cli._help`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = """Measure, on a sample of INPUT, what each mechanism and ε leaks and what it keeps,
and recommend the best setting that meets your targets. Nothing is released.

\b
Release forms (--forms): words (mvc, diffractor, custext, tem at six ε each, and MVC
with stop words kept and with a document budget), embeddings (PrivEmb on the MiniLM
sentence embeddings, ε 10-1000) and documents (DeepCandidate, ε 1-30 per sentence,
with --candidates); baseline (with --label-field: a reference row, the language model
writing from the label names alone, ε = 0, its classifier tested on held-out originals);
prompt (DP-Prompt paraphrases with the language model of --model: text, measured as the
word mechanisms; slow, give --sample); synthetic (with --label-field: textdp synthesize on
the training part of the split, its classifier tested on the held-out originals; slow).
Vector forms release no text: leakage does not apply to them; their linkage attack is a
nearest neighbour between released and original vectors, their classifier logistic
regression on the vectors.

\b
Per setting:
  leakage      names, places, organisations, addresses and identifiers of the
               originals (textdp's own recognisers) surviving verbatim; words unchanged
  linkage      an attacker holding the originals links private documents back
               (TF-IDF and MiniLM nearest neighbour, top-1 and top-5, against chance)
  author       with --unit-field (the person of each document): an attacker holding
  linkage      each person's other documents names the author (TF-IDF, character n-gram
               and MiniLM nearest neighbour, top-1 and top-5, against chance)
  attribute    with --sensitive-field: an attacker who knows the field for some people
               infers it for the others from the private text (against the majority guess)
  guarantee    the ε (δ) a whole document of your data's median and 90th-percentile
               length gets, by the ledger's own code; with --unit-field, per person
  utility      MiniLM similarity with the original; with --label-field, the accuracy of
               a TF-IDF + logistic-regression classifier (train private / test private,
               train clean / test private) against the originals and chance
  cost         words per second

The report is computed on your private data and is NOT private: it is for the data
owner only. No private text is written and no ledger budget is spent.

\b
Writes (-o DIR): DIR/report.json, report.md, report.html (self-contained) and
frontier.png; or only the files named by --json, --markdown, --html; or, with none of
these, the Markdown report on standard output.

\b
Example:
  textdp assess tickets.jsonl --text-field text --label-field issue -o assessment
  textdp assess tickets.jsonl --unit-field customer --max-author-linkage 5x -o assessment
  textdp privatize tickets.jsonl --text-field text -o private.jsonl -m mvc --epsilon 4
"""

TextFieldOpt = Annotated[str, typer.Option(
    "--text-field", help="The field or column holding the text (ignored for .txt).")]

LabelFieldOpt = Annotated[str | None, typer.Option(
    "--label-field", show_default=False,
    help="A field or column holding a task label (strings, integers or booleans): "
         "adds task accuracy.")]

FormatOpt = Annotated[str | None, typer.Option(
    "--format", show_default=False, help="The input format, when not by extension.")]

MechanismsOpt = Annotated[str | None, typer.Option(
    "--mechanisms", "-m", metavar="NAMES", show_default=False,
    help="Comma-separated mechanisms (default: mvc,diffractor,custext,tem + MVC variants).")]

EpsilonsOpt = Annotated[list[str] | None, typer.Option(
    "--epsilons", metavar="[NAME=]E1,E2,…", show_default=False,
    help="Comma-separated ε for every mechanism, or NAME=E1,E2 for one (repeatable; "
         "default: each mechanism's own six).")]

UnitFieldOpt = Annotated[str | None, typer.Option(
    "--unit-field", show_default=False,
    help="A field naming the person each document is by or about (a customer id): adds "
         "author linkage and the guarantee per person.")]

SensitiveFieldOpt = Annotated[str | None, typer.Option(
    "--sensitive-field", show_default=False,
    help="A field holding an attribute to protect: adds attribute inference.")]

MaxAuthorLinkageOpt = Annotated[str, typer.Option(
    "--max-author-linkage", metavar="X",
    help="Target with --unit-field: top-1 author linkage at most X (0.05, 5%, 5x chance).")]

MaxAttributeOpt = Annotated[str | None, typer.Option(
    "--max-attribute", metavar="X", show_default=False,
    help="Target with --sensitive-field: attribute-inference accuracy at most X (a "
         "fraction, or 1.2x the majority guess).")]

PlotPrivacyOpt = Annotated[str, typer.Option(
    "--plot-privacy", metavar="AXIS",
    help="The frontier plot's privacy axis: linkage, author-linkage, document (the ε of a "
         "median whole document) or person.")]

OovOpt = Annotated[str | None, typer.Option(
    "--oov", metavar="mask|keep|drop|random", show_default=False,
    help="Out-of-vocabulary policy of every setting (as textdp privatize; default mask).")]

KeepStopwordsOpt = Annotated[bool, typer.Option(
    "--keep-stopwords", help="Keep English function words in every setting.")]

MaxLinkageOpt = Annotated[str, typer.Option(
    "--max-linkage", metavar="X",
    help="Target: top-1 linkage at most X (0.05, 5%, or 5x chance).")]

MaxEntitiesOpt = Annotated[int, typer.Option(
    "--max-entities", metavar="N", min=0,
    help="Target: at most N entities/identifiers of the sample surviving.")]

MinUtilityOpt = Annotated[float | None, typer.Option(
    "--min-utility", metavar="U", min=0.0, max=1.0, show_default=False,
    help="Target: mean MiniLM similarity (or task accuracy) at least U, in [0, 1].")]

SampleOpt = Annotated[int | None, typer.Option(
    "--sample", metavar="N", min=2, show_default=False,
    help="Documents to assess (default: what fits --time-budget).")]

TimeBudgetOpt = Annotated[float, typer.Option(
    "--time-budget", metavar="SECONDS", min=1.0,
    help="Time the measurements should take when --sample is not given.")]

SeedOpt = Annotated[int | None, typer.Option(
    "--seed", min=0, show_default=False,
    help="Seed of the sample, the split and the noise (default: random, recorded).")]

OutOpt = Annotated[Path | None, typer.Option(
    "--out", "-o", metavar="DIR", show_default=False,
    help="Write report.json, report.md, report.html and frontier.png into DIR.")]

JsonPathOpt = Annotated[Path | None, typer.Option(
    "--json", metavar="FILE", show_default=False, help="Write the JSON report here.")]

MarkdownPathOpt = Annotated[Path | None, typer.Option(
    "--markdown", metavar="FILE", show_default=False,
    help="Write the Markdown report here.")]

FormsOpt = Annotated[str | None, typer.Option(
    "--forms", metavar="FORMS", show_default=False,
    help="Comma-separated release forms: words (word mechanisms), embeddings (PrivEmb on "
         "MiniLM sentence embeddings), documents (DeepCandidate; needs --candidates), baseline "
         "(a language model writing from the label names alone, ε = 0; needs --label-field), "
         "prompt (DP-Prompt paraphrases: slow), synthetic (synthesize on the training split, "
         "with --label-field: slow). "
         "Default: words,embeddings (+ documents with --candidates); with -m, words.")]

CandidatesOpt = Annotated[Path | None, typer.Option(
    "--candidates", metavar="FILE", show_default=False,
    help="DeepCandidate's public candidates (.npz, `textdp candidates build` on public "
         "documents, with the MiniLM encoder).")]

RecoderOpt = Annotated[Path | None, typer.Option(
    "--recoder", metavar="FILE", show_default=False,
    help="The recoder (.npz, `textdp recoder train`) the candidates were built with.")]

ModelOpt = Annotated[Path | None, typer.Option(
    "--model", metavar="PATH", show_default=False,
    help="The language model of the baseline, prompt and synthetic forms (default "
         "textdp's own).")]

DocumentKindOpt = Annotated[str, typer.Option(
    "--document-kind", metavar="WORDS",
    help="What the documents are, for the baseline's prompts (e.g. 'support ticket').")]

HtmlPathOpt = Annotated[Path | None, typer.Option(
    "--html", metavar="FILE", show_default=False, help="Write the HTML report here.")]
