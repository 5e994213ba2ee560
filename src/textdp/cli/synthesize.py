"""``textdp synthesize``: N synthetic documents from a file, under (ε, δ)-DP at the dataset level."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textdp.cli._common import CLIError, one_line, say, warn
from textdp.cli._help import synthesize as opt
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt
from textdp.cli._synthesis import label_descriptions, read_records, stage_bar

__all__ = ["synthesize"]


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


def synthesize(input: opt.InputOpt, output: opt.OutputOpt, epsilon: opt.EpsilonOpt, n: opt.NOpt,
               text_field: opt.TextFieldOpt = "text", label_field: opt.LabelFieldOpt = None,
               unit_field: opt.UnitFieldOpt = None, delta: opt.DeltaOpt = None,
               rounds: opt.RoundsOpt = 3, population: opt.PopulationOpt = None,
               document_kind: opt.DocumentKindOpt = "text", prompt: opt.PromptOpt = None,
               max_new_tokens: opt.MaxNewTokensOpt = 64, temperature: opt.TemperatureOpt = 1.0,
               top_p: opt.TopPOpt = 0.95, screen: opt.ScreenOpt = "mask",
               entities: opt.EntitiesOpt = None, identifiers: opt.IdentifiersOpt = True,
               seed: opt.SeedOpt = None, model: opt.ModelOpt = None, device: opt.DeviceOpt = "auto",
               report: opt.ReportOpt = None, format: opt.FormatOpt = None,
               method: opt.MethodOpt = "evolution", epochs: opt.EpochsOpt = 3.0,
               train_batch: opt.TrainBatchOpt = 64, learning_rate: opt.LearningRateOpt = 2e-3,
               ledger: LedgerOpt = None, ledger_policy: LedgerPolicyOpt = "warn",
               budget: BudgetOpt = None, variation_prompt: opt.VariationPromptOpt = None,
               label_description: opt.LabelDescriptionOpt = None,
               variation_temperature: opt.VariationTemperatureOpt = None) -> None:
    _run(Fields(input, output, report, format, text_field, label_field, unit_field),
         (ledger, ledger_policy, budget), SynthesisFlags(
             method=method, epsilon=epsilon, n=n, delta=delta, rounds=rounds,
             population=population, document_kind=document_kind, prompt=prompt,
             max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, screen=screen,
             entities=entities, identifiers=identifiers, seed=seed, model=model, device=device,
             epochs=epochs, train_batch=train_batch, learning_rate=learning_rate,
             variation_prompt=variation_prompt, label_description=tuple(label_description or ()),
             variation_temperature=variation_temperature))


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
    variation_prompt: str | None = None
    label_description: tuple[str, ...] = ()
    variation_temperature: float | None = None

    def spec(self) -> Any:
        from textdp.synthesis import SynthesisSpec
        from textdp.synthesis.prompts import VARIATION, Prompts

        if self.method not in ("evolution", "finetune"):
            raise CLIError(f"--method must be evolution or finetune, got {self.method!r}")
        if self.method == "finetune" and (self.variation_prompt is not None
                                          or self.variation_temperature is not None):
            raise CLIError("--variation-prompt and --variation-temperature are Private "
                           "Evolution's: --method finetune makes no variations")
        shared = {"epsilon": self.epsilon, "n": self.n, "delta": self.delta,
                  "temperature": self.temperature, "top_p": self.top_p,
                  "max_new_tokens": self.max_new_tokens, "screen": self.screen,
                  "seed": self.seed, "identifiers": self.identifiers, "model": self.model,
                  "entities": "default" if self.entities is None else self.entities,
                  "device": self.device}
        try:
            if self.method == "finetune":
                from textdp.synthesis.finetune import FinetuneSpec

                return FinetuneSpec(epochs=self.epochs, train_batch=self.train_batch,
                                    learning_rate=self.learning_rate, **shared,
                                    prompts=Prompts(self.document_kind, self.prompt,
                                                    descriptions=label_descriptions(self.label_description)))
            return SynthesisSpec(rounds=self.rounds, population=self.population, **shared,
                                 variation_temperature=self.variation_temperature,
                                 prompts=Prompts(self.document_kind, self.prompt,
                                                 self.variation_prompt or VARIATION,
                                                 label_descriptions(self.label_description)))
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
    from textdp.synthesis.files import encode_documents

    input, output, report = fields.input, fields.output, fields.report
    _check_paths(input, output, report, ledger[0], fields.label_field, fields.format)
    book = CommandLedger(*ledger, input, output, report)
    spec = flags.spec()
    source = read_records(input, fields.text_field, fields.label_field, fields.unit_field,
                          fields.format)
    if flags.device == "cuda":  # before the ledger: a GPU asked for and absent is refused now
        from textdp.lm import resolve_device

        try:
            resolve_device("cuda")
        except (ValueError, ImportError) as exc:
            raise CLIError(one_line(exc)) from None

    def commit(outcome: Any, exposed: Any) -> None:
        texts, labels = outcome.output
        with AtomicFiles() as files:
            files.write_bytes(output, encode_documents(output, texts, labels, fields.text_field,
                                                       fields.label_field))
            if report is not None:
                files.write_json(report, outcome.report.to_dict())
            exposed()

    try:
        if flags.method == "finetune":
            from textdp.synthesis.finetune import FinetuneEngine

            engine: Any = FinetuneEngine(stage_bar)
        else:
            engine = PrivateEvolutionEngine(stage_bar)
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


synthesize.__doc__ = opt.HELP
