"""``textdp assess``: privacy risk and utility of each mechanism × ε on the user's own file,
and a recommendation under the user's targets (:func:`textdp.assess`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._assess_files import (
    check_files,
    epsilons_option,
    names,
    outputs,
    progress,
    read_fields,
    release_options,
    write_reports,
)
from textdp.cli._common import CLIError, one_line, say
from textdp.cli._help import assess as opt
from textdp.cli._help.assess import HELP
from textdp.cli._inputs import check_single
from textdp.cli._privatize_flags import (
    AllowListOption,
    DenyListOption,
    EntitiesOption,
    IdentifierLabelOption,
    IdentifierPatternOption,
    IdentifiersOption,
    PhoneRegionsOption,
)
from textdp.io import AtomicFiles, FileError

__all__ = ["assess"]



def assess(
    input: Annotated[Path, typer.Argument(
        metavar="INPUT", show_default=False,
        help="Documents: .txt (one per line), .jsonl, .csv, .tsv or .parquet (.gz/.zst too).")],
    text_field: opt.TextFieldOpt = "text",
    label_field: opt.LabelFieldOpt = None,
    format: opt.FormatOpt = None,
    mechanisms: opt.MechanismsOpt = None,
    epsilons: opt.EpsilonsOpt = None,
    forms: opt.FormsOpt = None, candidates: opt.CandidatesOpt = None, recoder: opt.RecoderOpt = None,
    model: opt.ModelOpt = None, document_kind: opt.DocumentKindOpt = "text",
    unit_field: opt.UnitFieldOpt = None,
    sensitive_field: opt.SensitiveFieldOpt = None,
    max_author_linkage: opt.MaxAuthorLinkageOpt = "5x",
    max_attribute: opt.MaxAttributeOpt = None,
    plot_privacy: opt.PlotPrivacyOpt = "linkage",
    oov: opt.OovOpt = None,
    keep_stopwords: opt.KeepStopwordsOpt = False,
    entities: EntitiesOption = None, allow_list: AllowListOption = None,
    identifiers: IdentifiersOption = True, deny_list: DenyListOption = None,
    identifier_label: IdentifierLabelOption = None,
    identifier_pattern: IdentifierPatternOption = None,
    phone_regions: PhoneRegionsOption = None,
    max_linkage: opt.MaxLinkageOpt = "5x",
    max_entities: opt.MaxEntitiesOpt = 0,
    min_utility: opt.MinUtilityOpt = None,
    sample: opt.SampleOpt = None,
    time_budget: opt.TimeBudgetOpt = 300.0,
    seed: opt.SeedOpt = None,
    out: opt.OutOpt = None,
    json_path: opt.JsonPathOpt = None,
    markdown_path: opt.MarkdownPathOpt = None,
    html_path: opt.HtmlPathOpt = None,
) -> None:
    from textdp.assess import assess as run_assessment
    from textdp.assess.render import PRIVACY_AXES
    from textdp.privacy import format_up
    from textdp.text.entities import EntityModelError

    targets = outputs(out, json_path, markdown_path, html_path)
    check_single(input, targets, read=False)  # read below: its own errors, as they were
    if plot_privacy not in PRIVACY_AXES:
        raise CLIError(f"--plot-privacy must be one of {', '.join(PRIVACY_AXES)}, got "
                       f"{plot_privacy!r}")
    release, flags = release_options(oov, keep_stopwords, entities, allow_list, identifiers,
                                      deny_list, identifier_label, identifier_pattern,
                                      phone_regions)
    check_files(candidates, recoder)
    texts, fields = read_fields(input, text_field, {"--label-field": label_field,
                                              "--unit-field": unit_field,
                                              "--sensitive-field": sensitive_field}, format)
    try:
        result = run_assessment(
            texts, fields["--label-field"], sample=sample, seed=seed, time_budget=time_budget,
            max_linkage=max_linkage, max_entities=max_entities, min_utility=min_utility,
            progress=progress, mechanisms=names(mechanisms) if mechanisms is not None else None,
            epsilons=epsilons_option(epsilons), units=fields["--unit-field"],
            sensitive=fields["--sensitive-field"], max_author_linkage=max_author_linkage,
            max_attribute=max_attribute, forms=forms, candidates=candidates, recoder=recoder,
            model=model, document_kind=document_kind, **release)
    except (ValueError, TypeError, EntityModelError) as exc:
        if isinstance(exc, FileError):
            raise
        raise CLIError(one_line(exc)) from None
    result.meta["sensitive_field"] = sensitive_field
    result.meta["plot_privacy"] = plot_privacy
    for row in result.rows:
        if row.get("privatize_options") and flags:
            row["privatize_options"] += " " + flags
    if not targets:  # through a group: a closed pipe or a full disk is an error, not a crash
        with AtomicFiles() as files:
            files.write_bytes("-", result.to_markdown().encode("utf-8"))
        return
    write_reports(result, targets, out)
    rec = result.recommended
    say(f"assessed {len(result.rows)} settings on {result.meta['sample']['documents']} "
        "documents; " + (f"recommended: {rec['label']} at ε = {format_up(rec['epsilon'])}" if rec
                         else "no setting meets the targets (see the report)"))
    say("wrote " + ", ".join(str(p) for p in targets.values()))


assess.__doc__ = HELP
