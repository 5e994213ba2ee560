"""``textdp privatize``: privatise the documents of a file, stream them out, report the guarantee.

The command builds its typed flags (:mod:`textdp.cli._privatize_flags`) explicitly, then
:func:`run` checks them in the order a user meets them and hands one
:class:`PrivatizeArguments` to one engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textdp.cli import _allocation, _local, _prompt, _ray
from textdp.cli import _privatize_flags as flag
from textdp.cli._arguments import DEFAULT_BATCH_SIZE, PrivatizeArguments, check_paths, read_options
from textdp.cli._common import BetaOption, CLIError, MethodOption, NeighborsOption, NListsOption, ParamOption
from textdp.cli._help.privatize import HELP
from textdp.cli._inputs import check_engine, resolve_files
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt
from textdp.cli._privatize_flags import (
    PolicyFlags,
    PromptFlags,
    ReleaseFlags,
    RunFlags,
    WordFlags,
    check_placeholders,
)
from textdp.cli._vocabulary import VocabularyOption
from textdp.io.streams import is_stdio
from textdp.pipeline import DEFAULT_MASK, OOVPolicy
from textdp.privacy.unchanged import DEFAULT_UNCHANGED_WARNING

__all__ = ["privatize", "run"]


def privatize(
    input: Annotated[list[str], typer.Argument(
        metavar="INPUT", show_default=False,
        help="Input file: .txt, .jsonl, .csv, .tsv or .parquet (+ .gz / .zst), or - for "
             "standard input. --engine ray also takes a directory, a quoted glob pattern, "
             "several files, or a URI (s3://bucket/prefix/, gs://…, file://…).")],
    output: Annotated[str, typer.Option(
        "--output", "-o", metavar="OUTPUT", show_default=False,
        help="Output file, same format as INPUT (+ .gz / .zst); its directory must exist; - for "
             "standard output. A directory (or URI prefix) for several input files.")],
    epsilon: Annotated[float | None, typer.Option(
        "--epsilon", metavar="EPSILON", show_default=False,
        help="Privacy parameter ε > 0 (per unit of the mechanism's metric; per document for "
             "dp_prompt; smaller = more private).")] = None,
    mechanism: Annotated[str, typer.Option(
        "--mechanism", "-m", help="Mechanism name (see `textdp mechanisms`).")] = "mvc",
    seed: Annotated[int | None, typer.Option(
        "--seed", show_default=False,
        help="Non-negative integer for a reproducible run (the same output for any batch "
             "size). For testing only: anyone who learns the seed can undo the noise. "
             "Default: OS entropy.")] = None,
    text_field: flag.TextFieldOption = None,
    format: flag.FormatOption = None,
    delimiter: flag.DelimiterOption = None,
    on_error: flag.OnErrorOption = "fail", null: flag.NullOption = "error",
    max_line_bytes: flag.MaxLineBytesOption = None,
    oov: Annotated[OOVPolicy, typer.Option(
        "--oov", case_sensitive=False,
        help="What happens to out-of-vocabulary words and numbers (see above).")] = OOVPolicy.MASK,
    mask_token: Annotated[str, typer.Option(
        "--mask-token", help="Placeholder for --oov mask.")] = DEFAULT_MASK,
    keep_stopwords: Annotated[bool, typer.Option(
        "--keep-stopwords", help="Keep English function words unchanged (they are then "
                                 "unprotected, and counted as such).")] = False,
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="PATH", show_default=False,
        help="Write the privacy report (JSON) to PATH.")] = None,
    batch_size: Annotated[int, typer.Option(
        "--batch-size", min=1, help="Documents per batch (memory vs. speed).")]
        = DEFAULT_BATCH_SIZE,
    unchanged_warning: flag.UnchangedWarningOption = DEFAULT_UNCHANGED_WARNING,
    method: MethodOption = None, max_new_tokens: _prompt.MaxNewTokensOption = None,
    n_lists: NListsOption = None,
    beta: BetaOption = None, neighbors: NeighborsOption = None,  # (one line: the 80-line rule)
    param: ParamOption = None, model: _prompt.ModelOption = None, device: _prompt.DeviceOption = None,
    resume: _prompt.ResumeOption = None,
    vocabulary: VocabularyOption = None, clip: _prompt.ClipOption = None,
    epsilon_per_token: _prompt.EpsilonPerTokenOption = None, temperature: _prompt.TemperatureOption = None,
    identifiers: flag.IdentifiersOption = True, deny_list: flag.DenyListOption = None,
    identifier_label: flag.IdentifierLabelOption = None,
    identifier_pattern: flag.IdentifierPatternOption = None,
    phone_regions: flag.PhoneRegionsOption = None,
    entities: flag.EntitiesOption = None, allow_list: flag.AllowListOption = None,
    ledger: LedgerOpt = None, ledger_policy: LedgerPolicyOpt = "warn", budget: BudgetOpt = None,
    engine: _ray.EngineOption = "local", workers: _ray.WorkersOption = None,
    ray_address: _ray.AddressOption = None, verbose: _ray.VerboseOption = False,
    allocation: _allocation.AllocationOption = None,
    epsilon_document: _allocation.EpsilonDocumentOption = None,
    epsilon_floor: _allocation.EpsilonFloorOption = None,
    epsilon_ceiling: _allocation.EpsilonCeilingOption = None,
) -> None:
    run(RunFlags(input=input, output=output, report=report, format=format, text_field=text_field,
                 delimiter=delimiter, on_error=on_error, null=null, max_line_bytes=max_line_bytes,
                 batch_size=batch_size, ledger=ledger, ledger_policy=ledger_policy, budget=budget,
                 engine=engine, workers=workers, ray_address=ray_address, verbose=verbose),
        ReleaseFlags(mechanism=mechanism, epsilon=epsilon, seed=seed, word=WordFlags(
            oov=oov.value, mask_token=mask_token, keep_stopwords=keep_stopwords,
            unchanged_warning=unchanged_warning, vocabulary=vocabulary, method=method,
            n_lists=n_lists, beta=beta, neighbors=neighbors, param=param, allocation=allocation,
            epsilon_document=epsilon_document, epsilon_floor=epsilon_floor,
            epsilon_ceiling=epsilon_ceiling), prompt=PromptFlags(
            epsilon_per_token=epsilon_per_token, temperature=temperature,
            max_new_tokens=max_new_tokens, clip=clip, model=model, device=device, resume=resume),
            policy=PolicyFlags(
            identifiers=identifiers, identifier_label=identifier_label,
            identifier_pattern=identifier_pattern, deny_list=deny_list,
            phone_regions=phone_regions, entities=entities, allow_list=allow_list)))


def run(flags: RunFlags, release: ReleaseFlags) -> None:
    """The command on its typed flags: every check, in the order a user meets them, then one
    :class:`PrivatizeArguments` for the engine that runs it."""
    # INPUT... and OUTPUT: local paths, or URIs (one line each when unusable). 0. No two paths
    #    are the same file (input, output, report, ledger, deny-list), however they are spelled:
    #    before anything is read or written, and before either engine or dp_prompt.
    policy = release.policy
    found = resolve_files(flags.input, flags.output, flags.engine,
                          sources={"deny-list": policy.deny_list, "allow-list": policy.allow_list},
                          targets={"report": flags.report, "ledger": flags.ledger})
    input, output, report, format = found.input, found.output, flags.report, flags.format
    prompt_kind = release.is_prompt(flags.engine)
    # 1. Paths and I/O options, without reading anything: fail before the vocabulary is loaded.
    options = read_options(flags.text_field, flags.delimiter, flags.on_error, flags.null,
                           flags.max_line_bytes)
    if prompt_kind:  # dp_prompt: a language model rewrites whole documents
        check_paths(input, output, report, format)
        if release.prompt.resume and is_stdio(output):
            raise CLIError("--resume needs OUTPUT to be a file (the staged documents are kept "
                           "beside it), not standard output")
        check_placeholders(DEFAULT_MASK, policy.labels(), list(found.inputs), format)
        return _prompt.run(_arguments(flags, found, release, release.spec(True), options, None))
    pairs = check_engine(flags.engine, flags.workers, flags.ray_address, found.inputs, output,
                         report, format)
    book = CommandLedger(flags.ledger, flags.ledger_policy, flags.budget, input, output, report)
    check_placeholders(release.word.mask_token, policy.labels(),
                       [s for s, _ in pairs] if pairs is not None else [input], format)
    # 2. The release: building it validates every parameter, before any input is read.
    args = _arguments(flags, found, release, release.spec(False), options, pairs)
    if pairs is not None:  # --engine ray: the same records, privatised on a Ray actor pool
        return _ray.run(args, book)
    # 3. Stream; OUTPUT and the report appear together at the end, or not at all. 4. Say where
    #    things went and what the guarantee is.
    _local.run(args, book)


def _arguments(flags: RunFlags, found: object, release: ReleaseFlags, spec: object,
               options: object, pairs: list[tuple[Path, Path]] | None) -> PrivatizeArguments:
    lm = release.prompt
    return PrivatizeArguments(
        spec=spec, input=found.input, output=found.output, report=flags.report,  # type: ignore[attr-defined]
        format=flags.format, read_options=options, batch_size=flags.batch_size,
        ledger=flags.ledger, ledger_policy=flags.ledger_policy, budget=flags.budget,
        files=None if pairs is None else tuple(pairs), workers=flags.workers,
        ray_address=flags.ray_address, verbose=flags.verbose, model=lm.model,
        device=lm.device or "auto", resume=bool(lm.resume))


privatize.__doc__ = HELP
