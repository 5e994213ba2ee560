"""``textdp synthesize``: N synthetic documents from a file, under (ε, δ)-DP at the dataset level."""

from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, option, say, warn
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt

__all__ = ["synthesize"]

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


def _read(path: Path, text_field: str, label_field: str | None, unit_field: str | None,
          format: str | None) -> Any:
    from textdp.io import ReadOptions, open_records
    from textdp.synthesis import TextSource

    fields = [text_field] + [f for f in (label_field, unit_field) if f is not None]
    if len(set(fields)) != len(fields):
        raise CLIError("--text-field, --label-field and --unit-field must be different fields")
    values: list[str] = []
    # Labels and persons may be integers or booleans (as most sets store them): read as text.
    options = ReadOptions(text_fields=tuple(fields), scalar_fields=tuple(fields[1:]))
    with open_records(path, format=format, options=options) as r:
        for batch in r.batches(4096):
            values += batch.texts
    k = len(fields)
    columns = [values[i::k] for i in range(k)]  # each record yields its fields in order
    labels = columns[1] if label_field is not None else None
    units = columns[-1] if unit_field is not None else None
    return TextSource.build(columns[0], labels, units, name=str(path))


def _encode(path: Path, texts: list[str], labels: list[str] | None, text_field: str,
            label_field: str | None) -> bytes:
    from textdp.io import format_of

    fmt = format_of(path)
    rows = [{text_field: t, **({label_field: lab} if labels is not None else {})}
            for t, lab in zip(texts, labels if labels is not None else [None] * len(texts),
                              strict=True)]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if fmt in ("csv", "tsv"):
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else [text_field],
                                delimiter="," if fmt == "csv" else "\t")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().encode("utf-8")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        sink = io.BytesIO()
        columns = {text_field: texts, **({label_field: labels} if labels is not None else {})}
        pq.write_table(pa.table(columns), sink)
        return sink.getvalue()
    return "".join(" ".join(t.split()) + "\n" for t in texts).encode("utf-8")


def _check_paths(input: Path, output: Path, report: Path | None, ledger: Path | None,
                 label_field: str | None, format: str | None) -> None:
    from textdp.cli._inputs import check_single
    from textdp.io import FileError, check_target, format_of
    from textdp.io.streams import compression_of

    check_single(input, {"output": output, "report": report, "ledger": ledger}, format)
    if format_of(output) == "txt" and label_field is not None:
        raise FileError(output, None, "a .txt output holds no labels: write .jsonl, .csv or "
                                      ".parquet with --label-field")
    if compression_of(output):
        raise FileError(output, None, "write the synthetic documents uncompressed")
    check_target(output, "output")
    if report is not None:
        check_target(report, "report")


def _bar(description: str, total: int) -> Any:
    """A bar on a terminal; elsewhere (a log, a pipe) one line when a stage starts and one when
    it ends, so that a long run shows its progress on any standard error."""
    if sys.stderr.isatty():
        from tqdm import tqdm

        return tqdm(total=total, desc=description, unit="doc", file=sys.stderr, leave=False,
                    dynamic_ncols=True)
    return _Lines(description, total)


class _Lines:
    """The progress of one stage as two status lines (see :func:`_bar`)."""

    def __init__(self, description: str, total: int) -> None:
        import time

        self.description, self.total, self.done = description, total, 0
        self.t0 = time.perf_counter()
        say(f"{description}: generating {total:,} documents")

    def update(self, k: int) -> None:
        self.done += k

    def close(self) -> None:
        import time

        say(f"{self.description}: {self.done:,} of {self.total:,} documents generated in "
            f"{time.perf_counter() - self.t0:.1f} s")


def synthesize(
    input: Annotated[Path, typer.Argument(metavar="INPUT", show_default=False, help=(
        "The private documents: .txt (one per line), .jsonl, .csv, .tsv or .parquet."))],
    output: Annotated[Path, option("--output", "-o", metavar="OUT",
                                   help="Where the synthetic documents go (see below).")],
    epsilon: Annotated[float, option("--epsilon", metavar="E",
                                     help="ε of the whole release (dataset level).")],
    n: Annotated[int, option("-n", metavar="N", min=1, help="Synthetic documents to write.")],
    text_field: Annotated[str, option("--text-field", help="The field holding the text.")]
        = "text",
    label_field: Annotated[str | None, option(
        "--label-field", metavar="L", help="A field holding a label (strings, integers or "
        "booleans): label-"
        "conditional generation; label names are treated as public.")] = None,
    unit_field: Annotated[str | None, option(
        "--unit-field", metavar="PERSON", help="A field naming who wrote each document "
        "(strings or integers): the guarantee then protects all documents of a person.")] = None,
    delta: Annotated[float | None, option(
        "--delta", metavar="D", help="δ (default: the largest power of ten ≤ 1/n^1.1).")] = None,
    rounds: Annotated[int, option("--rounds", metavar="T", min=1,
                                  help="Rounds of private voting.")] = 3,
    population: Annotated[int | None, option(
        "--population", metavar="P", min=1, help="Candidates per label and round "
        "(default ⌈N / labels⌉).")] = None,
    document_kind: Annotated[str, option(
        "--document-kind", metavar="WORDS", help="What the documents are, for the public "
        "prompts (e.g. 'customer support ticket').")] = "text",
    prompt: Annotated[str | None, option(
        "--prompt", metavar="TEMPLATE", help="The first population's prompt ({label}, "
        "{kind}).")] = None,
    max_new_tokens: Annotated[int, option("--max-new-tokens", metavar="K", min=1,
                                          help="Tokens per generated document.")] = 64,
    temperature: Annotated[float, option("--temperature", metavar="T",
                                         help="Sampling temperature.")] = 1.0,
    top_p: Annotated[float, option("--top-p", metavar="P", help="Nucleus sampling mass.")]
        = 0.95,
    screen: Annotated[str, option("--screen", metavar="mask|keep", help=(
        "Entities and identifiers found in the output: masked (default) or kept; counted "
        "either way."))] = "mask",
    entities: Annotated[str | None, option(
        "--entities", metavar="KINDS|none", help="Entity kinds masked in the private input "
        "(default: person, location, org, address).")] = None,
    identifiers: Annotated[bool, option("--identifiers/--no-identifiers",
                                        help="Mask identifiers in the private input.")] = True,
    seed: Annotated[int | None, option("--seed", metavar="S", min=0, help=(
        "Reproducible run (not for production: the noise can be recomputed)."))] = None,
    model: Annotated[Path | None, option("--model", metavar="PATH", help=(
        "A local causal LM (directory or .gguf; default SmolLM2-135M-Instruct)."))] = None,
    device: Annotated[str, option(
        "--device", metavar="auto|cpu|cuda", help="Where the language model runs, and with "
        "finetune where it trains (auto: a GPU when one is available).")] = "auto",
    report: Annotated[Path | None, option("--report", metavar="PATH",
                                          help="Write the privacy report (JSON) here.")] = None,
    format: Annotated[str | None, option("--format", metavar="FMT",
                                         help="INPUT's format when not by extension.")] = None,
    method: Annotated[str, option("--method", metavar="evolution|finetune", help=(
        "Private Evolution (default), or DP fine-tuning (LoRA adapters trained by DP-SGD, "
        "then sampling)."))] = "evolution",
    epochs: Annotated[float, option("--epochs", metavar="E", help=(
        "finetune: expected passes over the units."))] = 3.0,
    train_batch: Annotated[int, option("--train-batch", metavar="B", min=1, help=(
        "finetune: expected units per DP-SGD step."))] = 64,
    learning_rate: Annotated[float, option("--learning-rate", metavar="LR", help=(
        "finetune: Adam's step size."))] = 2e-3,
    ledger: LedgerOpt = None, ledger_policy: LedgerPolicyOpt = "warn", budget: BudgetOpt = None,
) -> None:
    _run(Fields(input, output, report, format, text_field, label_field, unit_field),
         (ledger, ledger_policy, budget), SynthesisFlags(
             method=method, epsilon=epsilon, n=n, delta=delta, rounds=rounds,
             population=population, document_kind=document_kind, prompt=prompt,
             max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, screen=screen,
             entities=entities, identifiers=identifiers, seed=seed, model=model, device=device,
             epochs=epochs, train_batch=train_batch, learning_rate=learning_rate))


@dataclass(frozen=True, slots=True)
class Fields:
    """INPUT, OUT, --report and --format, and the fields of each record."""

    input: Path
    output: Path
    report: Path | None
    format: str | None
    text_field: str
    label_field: str | None
    unit_field: str | None


@dataclass(frozen=True, slots=True)
class SynthesisFlags:
    """The release's flags as given; :meth:`spec` builds the one spec of the method
    (:class:`textdp.synthesis.SynthesisSpec` or :class:`textdp.synthesis.finetune.FinetuneSpec`),
    which checks every value once, at construction."""

    method: str
    epsilon: float
    n: int
    delta: float | None
    rounds: int
    population: int | None
    document_kind: str
    prompt: str | None
    max_new_tokens: int
    temperature: float
    top_p: float
    screen: str
    entities: str | None
    identifiers: bool
    seed: int | None
    model: Path | None
    device: str
    epochs: float
    train_batch: int
    learning_rate: float

    def spec(self) -> Any:
        from textdp.synthesis import SynthesisSpec
        from textdp.synthesis.prompts import Prompts

        if self.method not in ("evolution", "finetune"):
            raise CLIError(f"--method must be evolution or finetune, got {self.method!r}")
        shared = {"epsilon": self.epsilon, "n": self.n, "delta": self.delta,
                  "prompts": Prompts(self.document_kind, self.prompt),
                  "temperature": self.temperature, "top_p": self.top_p,
                  "max_new_tokens": self.max_new_tokens, "screen": self.screen,
                  "seed": self.seed, "identifiers": self.identifiers, "model": self.model,
                  "entities": "default" if self.entities is None else self.entities,
                  "device": self.device}
        try:
            if self.method == "finetune":
                from textdp.synthesis.finetune import FinetuneSpec

                return FinetuneSpec(epochs=self.epochs, train_batch=self.train_batch,
                                    learning_rate=self.learning_rate, **shared)
            return SynthesisSpec(rounds=self.rounds, population=self.population, **shared)
        except (ValueError, TypeError) as exc:
            raise CLIError(one_line(exc)) from None


def _run(fields: Fields, ledger: tuple[Path | None, str, float | None],
         flags: SynthesisFlags) -> None:
    """Checks in the order a user meets them (paths, ledger options, release options, the
    input), then the one guarded release (:func:`textdp.runner.run_release`)."""
    from textdp.io import AtomicFiles
    from textdp.ledger import LedgerError
    from textdp.runner import run_release
    from textdp.synthesis import DataRefused, PrivateEvolutionEngine

    input, output, report = fields.input, fields.output, fields.report
    _check_paths(input, output, report, ledger[0], fields.label_field, fields.format)
    book = CommandLedger(*ledger, input, output, report)
    spec = flags.spec()
    source = _read(input, fields.text_field, fields.label_field, fields.unit_field, fields.format)
    if flags.device == "cuda":  # before the ledger: a GPU asked for and absent is refused now
        from textdp.lm import resolve_device

        try:
            resolve_device("cuda")
        except (ValueError, ImportError) as exc:
            raise CLIError(one_line(exc)) from None

    def commit(outcome: Any, exposed: Any) -> None:
        texts, labels = outcome.output
        with AtomicFiles() as files:
            files.write_bytes(output, _encode(output, texts, labels, fields.text_field,
                                              fields.label_field))
            if report is not None:
                files.write_json(report, outcome.report.to_dict())
            exposed()

    try:
        if flags.method == "finetune":
            from textdp.synthesis.finetune import FinetuneEngine

            engine: Any = FinetuneEngine(_bar)
        else:
            engine = PrivateEvolutionEngine(_bar)
        outcome = run_release(spec, source, engine, ledger=book.book, output_path=output,
                              commit=commit)
    except (DataRefused, LedgerError) as exc:
        raise CLIError(one_line(exc)) from None
    except ImportError as exc:  # a missing extra or entity model: its message says what to do
        raise CLIError(one_line(exc)) from None
    _outcome(outcome, output, report)


def _outcome(outcome: Any, output: Path, report: Path | None) -> None:
    from textdp.privacy.report import summary_line

    texts, _ = outcome.output
    say(f"{len(texts)} synthetic documents written to {output}"
        + (f"; report: {report}" if report is not None else ""))
    say(summary_line(outcome.report))
    for message in outcome.report["warnings"]:
        warn(message)


synthesize.__doc__ = HELP
