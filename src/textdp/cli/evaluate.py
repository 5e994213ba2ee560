"""``textdp evaluate``: privacy, utility and efficiency of mechanisms × ε, with a report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, say, warn
from textdp.cli._help.evaluate import HELP
from textdp.cli._options import DataTextFieldOpt, parse_floats
from textdp.cli._privatize_flags import EntitiesOption, FormatOption
from textdp.cli._vocabulary import VocabularyOption, resolve_vocabulary
from textdp.io import FileError
from textdp.io.atomic import staged_directory

if TYPE_CHECKING:
    from textdp.evaluation.sweep import SweepConfig

__all__ = ["evaluate"]


def _mechanism_params(mechanisms: list[str], items: list[str]) -> dict[str, dict[str, Any]]:
    from textdp.cli._privatize_flags import mechanism_params

    raw: dict[str, list[str]] = {m: [] for m in mechanisms}
    for item in items:
        mech, sep, rest = item.partition(":")
        if not sep or "=" not in rest:
            raise CLIError(f"--param expects MECHANISM:NAME=VALUE, got {item!r}")
        if mech not in raw:
            raise CLIError(f"--param {item!r}: {mech!r} is not one of --mechanisms")
        raw[mech].append(rest)
    return {m: mechanism_params(m, {}, items_m) for m, items_m in raw.items()}


InputArg = Annotated[Path | None, typer.Argument(
    metavar="INPUT", show_default=False,
    help="Evaluate on this file (JSONL, CSV/TSV, Parquet, text) instead of the built-in sets.")]
LabelFieldOpt = Annotated[str | None, typer.Option(
    "--label-field", metavar="NAME", show_default=False,
    help="JSON field, CSV/TSV or Parquet column of each document's label: adds the task "
         "accuracy (utility) on your labels.")]


def evaluate(
    mechanisms: Annotated[str, typer.Option(
        "--mechanisms", "-m", metavar="M1,M2,...", help="Mechanism names, comma-separated.")],
    epsilons: Annotated[str, typer.Option(
        "--epsilons", "-e", metavar="E1,E2,...", help="ε values, comma-separated.")],
    out: Annotated[Path, typer.Option(
        "--out", "-o", metavar="DIR", help="Output directory (created if missing; its parent "
                                           "must exist).")],
    input: InputArg = None,
    text_field: DataTextFieldOpt = "text",
    label_field: LabelFieldOpt = None,
    format: FormatOption = None,
    entities: EntitiesOption = None,
    words: Annotated[int, typer.Option("--words", min=1, help="Words for N_w / S_w.")] = 100,
    draws: Annotated[int, typer.Option("--draws", min=1, help="Draws per word.")] = 1000,
    docs: Annotated[int, typer.Option(
        "--docs", min=20, help="Documents per classification task (balanced); with INPUT, the "
                               "most documents of INPUT used.")] = 2000,
    similarity_docs: Annotated[int, typer.Option(
        "--similarity-docs", min=1, help="Sentences for the SBERT similarity.")] = 300,
    tasks: Annotated[str | None, typer.Option(
        "--tasks", metavar="T1,T2,...", show_default=False,
        help="Subset of: sentiment, topic, source, author, reidentification, similarity "
             "(default: all); with INPUT of: label, reidentification, similarity.")] = None,
    features: Annotated[str, typer.Option(
        "--features", help="Utility classifier features: glove-mean or sbert.")] = "glove-mean",
    attack_features: Annotated[str, typer.Option(
        "--attack-features", help="Adversary features: tfidf, glove-mean or sbert.")] = "tfidf",
    efficiency: Annotated[bool, typer.Option(
        "--efficiency/--no-efficiency", help="Measure speed and memory.")] = True,
    efficiency_tokens: Annotated[int, typer.Option(
        "--efficiency-tokens", min=100, help="Words per timing run of the efficiency "
                                             "measurement.")] = 20_000,
    oov: Annotated[str, typer.Option(
        "--oov", help="Out-of-vocabulary policy while privatising: mask, keep, drop, "
                      "random.")] = "mask",
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the whole run.")] = 0,
    vocabulary_size: Annotated[int | None, typer.Option(
        "--vocabulary-size", min=2, show_default=False,
        help="Default GloVe vocabulary restricted to wordfreq's top N words.")] = None,
    vocabulary: VocabularyOption = None,
    include_text: Annotated[bool, typer.Option(
        "--include-text", help="Put a few original/private example sentences in the report.")]
        = False,
    param: Annotated[list[str] | None, typer.Option(
        "--param", metavar="MECHANISM:NAME=VALUE", show_default=False,
        help="A mechanism parameter; repeatable.")] = None,
) -> None:
    from textdp.evaluation.sweep import SweepConfig, run_sweep

    names = [m.strip() for m in mechanisms.split(",") if m.strip()]
    if not names:
        raise CLIError("--mechanisms: give at least one mechanism")
    eps = parse_floats(epsilons, "--epsilons")
    task_list = _tasks(tasks, input, label_field)
    _check_flags(features, attack_features, oov, out)
    params = _mechanism_params(names, param or [])
    config = SweepConfig(mechanisms=names, epsilons=eps, params=params, words=words, draws=draws,
                         docs=docs, tasks=task_list, features=features,
                         attack_features=attack_features, similarity_docs=similarity_docs,
                         efficiency=efficiency, efficiency_tokens=efficiency_tokens, oov=oov,
                         seed=seed, include_text=include_text, vocabulary_size=vocabulary_size,
                         vocabulary=vocabulary,
                         input=None if input is None else str(input), text_field=text_field,
                         label_field=label_field, format=format,
                         entities="default" if entities is None else entities)
    _check_config(config)
    data = None if input is None else _read_data(input, out, config)
    say(f"evaluating {', '.join(names)} at ε = {', '.join(f'{e:g}' for e in eps)} → {out}/")
    # Into a hidden directory beside OUT, moved in when every file is written: results, figures
    # and report appear together, or (an error, an interrupt) not at all.
    with staged_directory(out) as stage:
        results = run_sweep(config, stage, log=lambda msg: say(msg), data=data)
    for note in results.get("notes", []):
        warn(note)
    say(f"wrote {out / 'results.json'}, {out / 'report.md'}, {out / 'report.html'} and "
        f"{len(results.get('figures', {}))} PNG figures ({results['seconds']:.0f} s)")


def _tasks(tasks: str | None, input: Path | None, label_field: str | None) -> list[str]:
    """The tasks asked for, or the default: every built-in task, or without them the tasks on
    INPUT (the label task when there is a label field)."""
    from textdp.evaluation.sweep import DATA_TASKS, TASKS

    if input is None and label_field is not None:
        raise CLIError("--label-field needs INPUT (the built-in sets have their own labels)")
    if tasks is not None:
        return [t.strip() for t in tasks.split(",") if t.strip()]
    if input is not None:
        return [t for t in DATA_TASKS if t != "label" or label_field is not None]
    return list(TASKS)


def _check_flags(features: str, attack_features: str, oov: str, out: Path) -> None:
    """The choices and the output directory, checked before anything is read."""
    if features not in ("glove-mean", "sbert"):
        raise CLIError(f"--features must be glove-mean or sbert, got {features!r}")
    if attack_features not in ("tfidf", "glove-mean", "sbert"):
        raise CLIError(f"--attack-features must be tfidf, glove-mean or sbert, got {attack_features!r}")
    if oov not in ("mask", "keep", "drop", "random"):
        raise CLIError(f"--oov must be mask, keep, drop or random, got {oov!r}")
    if out.exists() and not out.is_dir():
        raise FileError(out, None, "exists and is not a directory")
    if not out.absolute().parent.is_dir():
        raise FileError(out, None, f"directory {str(out.parent)!r} does not exist")


def _read_data(input: Path, out: Path, config: SweepConfig) -> Any:
    """INPUT read and checked before any long work: not one of the files the run writes, its
    fields present, its labels usable for a classification."""
    from textdp.evaluation.data import read_user_data
    from textdp.io import check_distinct, check_input
    from textdp.io.paths import directory_outputs

    check_input(input, config.format)
    written = ["results.json", "report.md", "report.html", "deniability_curves.png",
               "utility.png", "privacy.png", "tradeoff.png", "efficiency.png",
               *(f"deniability_{m}.png" for m in config.mechanisms)]
    check_distinct({"input": input}, directory_outputs(out, written, "--out"))
    data = read_user_data(input, text_field=config.text_field, label_field=config.label_field,
                          format=config.format)
    if config.label_field is not None and "label" in config.tasks:
        try:
            data.task()
        except ValueError as exc:
            raise CLIError(one_line(exc)) from None
    return data


def _check_config(config: SweepConfig) -> None:
    """Check ``config`` and build each mechanism once: bad parameters fail before any long work."""
    try:
        config.check()
        from textdp import mechanisms as registry
        vocab = resolve_vocabulary(config.vocabulary, config.vocabulary_size)
        for m in config.mechanisms:
            if config.input is None:
                registry.create(m, vocab, epsilon=config.epsilons[0], **config.params[m])
            else:  # the release as the sweep builds it, policy included (--entities)
                from textdp.spec import release_spec

                release_spec(m, config.epsilons[0], vocabulary=vocab, oov=config.oov,
                             entities=config.entities, **config.params[m])
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


evaluate.__doc__ = HELP
