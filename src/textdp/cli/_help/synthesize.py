"""``textdp synthesize --help``: its long help text and its options (see
:mod:`textdp.cli._help`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import option

HELP = """Write N synthetic documents that follow INPUT, under (ε, δ)-DP at the dataset level.

\b
Private Evolution (Xie et al., ICML 2024): a local language model (SmolLM2-135M-Instruct)
writes a first population from public prompts (per label with --label-field); each round,
every private unit votes for its nearest synthetic document in MiniLM space, the vote
counts get Gaussian noise, and the documents drawn in proportion to the noisy counts are
kept or rewritten by the model. The private documents are never shown to the model; they
are embedded once, after their entities and identifiers are masked.

\b
The guarantee: any two inputs that differ by one document — or, with --unit-field, by all
documents of one person (each person's votes split one vote) — give every output with
probabilities within e^ε and δ. ε is accounted over the rounds by dp-accounting's PLD
accountant; δ defaults to the largest power of ten ≤ 1/n^1.1 (n units). Label names and the
number of units are treated as public; the model's pretraining data is not covered.

\b
OUT: .jsonl (one object per document: the text field, and the label field with labels),
.csv, .parquet, or .txt (one document per line; no labels). OUT and --report appear
together at the end, or not at all. Refused with exit status 2 and nothing written: an
empty input, a label with one unit, δ ≥ 1/n, fewer units than the asked ε needs (the noise
would drown every label's votes: the message says how many are needed), a budget the
ledger refuses. The synthetic output is screened by the same recognisers (counted in the
report; masked unless --screen keep).

\b
--method finetune: DP fine-tuning then sampling (Yue et al., ACL 2023): LoRA adapters on the
same model are trained by DP-SGD on the masked documents (Poisson sampling of units, each
unit's gradient clipped to L2 norm 1 — a person's documents together — Gaussian noise), with
the label prompt as context; then N documents are sampled from the tuned model, in equal
numbers per label. ε is accounted over the steps by the same accountant.

\b
Example:
  textdp synthesize tickets.jsonl --text-field text --label-field issue \\
      --unit-field customer --epsilon 4 -n 200 -o synthetic.jsonl --report report.json
"""


InputOpt = Annotated[Path, typer.Argument(metavar="INPUT", show_default=False, help=(
    "The private documents: .txt (one per line), .jsonl, .csv, .tsv or .parquet."))]
OutputOpt = Annotated[Path, option("--output", "-o", metavar="OUT",
                                   help="Where the synthetic documents go (see below).")]
EpsilonOpt = Annotated[float, option("--epsilon", metavar="E",
                                     help="ε of the whole release (dataset level).")]
NOpt = Annotated[int, option("-n", metavar="N", min=1, help="Synthetic documents to write.")]
TextFieldOpt = Annotated[str, option("--text-field", help="The field holding the text.")]
LabelFieldOpt = Annotated[str | None, option(
    "--label-field", metavar="L", help="A field holding a label (strings, integers or "
    "booleans): label-"
    "conditional generation; label names are treated as public.")]
UnitFieldOpt = Annotated[str | None, option(
    "--unit-field", metavar="PERSON", help="A field naming who wrote each document "
    "(strings or integers): the guarantee then protects all documents of a person.")]
DeltaOpt = Annotated[float | None, option(
    "--delta", metavar="D", help="δ (default: the largest power of ten ≤ 1/n^1.1).")]
RoundsOpt = Annotated[int, option("--rounds", metavar="T", min=1,
                                  help="Rounds of private voting.")]
PopulationOpt = Annotated[int | None, option(
    "--population", metavar="P", min=1, help="Candidates per label and round "
    "(default ⌈N / labels⌉).")]
DocumentKindOpt = Annotated[str, option(
    "--document-kind", metavar="WORDS", help="What the documents are, for the public "
    "prompts (e.g. 'customer support ticket').")]
PromptOpt = Annotated[str | None, option(
    "--prompt", metavar="TEMPLATE", help="The first population's prompt ({label}, "
    "{kind}).")]
VariationPromptOpt = Annotated[str | None, option(
    "--variation-prompt", metavar="TEMPLATE", help="The variations' prompt ({document}, "
    "{label}, {kind}, {description}).")]
LabelDescriptionOpt = Annotated[list[str] | None, option(
    "--label-description", metavar="LABEL=TEXT", help="Public text about a label (a "
    "definition or an invented example sentence) for its first prompt; repeat per label.")]
VariationTemperatureOpt = Annotated[float | None, option(
    "--variation-temperature", metavar="T", help="The variations' sampling temperature "
    "(default: --temperature).")]
MaxNewTokensOpt = Annotated[int, option("--max-new-tokens", metavar="K", min=1,
                                        help="Tokens per generated document.")]
TemperatureOpt = Annotated[float, option("--temperature", metavar="T",
                                         help="Sampling temperature.")]
TopPOpt = Annotated[float, option("--top-p", metavar="P", help="Nucleus sampling mass.")]
ScreenOpt = Annotated[str, option("--screen", metavar="mask|keep", help=(
    "Entities and identifiers found in the output: masked (default) or kept; counted "
    "either way."))]
EntitiesOpt = Annotated[str | None, option(
    "--entities", metavar="KINDS|none", help="Entity kinds masked in the private input "
    "(default: person, location, org, address).")]
IdentifiersOpt = Annotated[bool, option("--identifiers/--no-identifiers",
                                        help="Mask identifiers in the private input.")]
SeedOpt = Annotated[int | None, option("--seed", metavar="S", min=0, help=(
    "Reproducible run (not for production: the noise can be recomputed)."))]
ModelOpt = Annotated[Path | None, option("--model", metavar="PATH", help=(
    "A local causal LM (directory or .gguf; default SmolLM2-135M-Instruct)."))]
DeviceOpt = Annotated[str, option(
    "--device", metavar="auto|cpu|cuda", help="Where the language model runs, and with "
    "finetune where it trains (auto: a GPU when one is available).")]
ReportOpt = Annotated[Path | None, option("--report", metavar="PATH",
                                          help="Write the privacy report (JSON) here.")]
FormatOpt = Annotated[str | None, option("--format", metavar="FMT",
                                         help="INPUT's format when not by extension.")]
MethodOpt = Annotated[str, option("--method", metavar="evolution|finetune", help=(
    "Private Evolution (default), or DP fine-tuning (LoRA adapters trained by DP-SGD, "
    "then sampling)."))]
EpochsOpt = Annotated[float, option("--epochs", metavar="E", help=(
    "finetune: expected passes over the units."))]
TrainBatchOpt = Annotated[int, option("--train-batch", metavar="B", min=1, help=(
    "finetune: expected units per DP-SGD step."))]
LearningRateOpt = Annotated[float, option("--learning-rate", metavar="LR", help=(
    "finetune: Adam's step size."))]
