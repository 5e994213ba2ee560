"""``textdp assess``: privacy risk and utility of each mechanism × ε on the user's own file,
and a recommendation under the user's targets (:func:`textdp.assess`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, say
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
    entity_options,
    identifier_options,
)
from textdp.io import (
    AtomicFiles,
    FileError,
    ReadOptions,
    format_of,
    open_records,
)

__all__ = ["assess"]


def _floats(value: str, what: str) -> list[float]:
    try:
        return [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"{what} must be comma-separated numbers, got {value!r}") from None


def _names(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


def _epsilons(values: list[str] | None) -> list[float] | dict[str, list[float]] | None:
    """``--epsilons 2,4,8`` (every mechanism) or, repeated, ``--epsilons mvc=2,4,8``."""
    if not values:
        return None
    common: list[float] | None = None
    per: dict[str, list[float]] = {}
    for value in values:
        name, sep, numbers = value.partition("=")
        if not sep:
            if common is not None:
                raise CLIError("--epsilons without a mechanism name is given once")
            common = _floats(value, "--epsilons")
        elif name.strip() in per:
            raise CLIError(f"--epsilons gives {name.strip()!r} twice")
        else:
            per[name.strip()] = _floats(numbers, f"--epsilons {name.strip()}")
    if common is not None and per:
        raise CLIError("--epsilons: give one list for every mechanism, or NAME=LIST per "
                       "mechanism, not both")
    return per or common


def _read(path: Path, text_field: str, fields: dict[str, str | None], format: str | None
          ) -> tuple[list[str], dict[str, list[str] | None]]:
    """The texts and, per named option, its field's values (labels, persons, sensitive
    values: strings, integers or booleans, read as text)."""
    named = {k: v for k, v in fields.items() if v is not None}
    if named and format_of(path, format) == "txt":
        raise CLIError(f"{', '.join(named)}: a .txt line is one document with no fields; use "
                       ".jsonl, .csv, .tsv or .parquet")
    for option, field in named.items():
        if field == text_field:
            raise CLIError(f"{option} must differ from --text-field")
    columns = list(dict.fromkeys([text_field, *named.values()]))
    texts: list[str] = []
    options = ReadOptions(text_fields=tuple(columns), scalar_fields=tuple(columns[1:]))
    with open_records(path, format=format, options=options) as reader:
        for batch in reader.batches(4096):
            texts += batch.texts
    k = len(columns)  # each record yields its fields in the order given
    return texts[0::k], {option: (None if field is None else texts[columns.index(field)::k])
                         for option, field in fields.items()}


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


def assess(
    input: Annotated[Path, typer.Argument(
        metavar="INPUT", show_default=False,
        help="Documents: .txt (one per line), .jsonl, .csv, .tsv or .parquet (.gz/.zst too).")],
    text_field: TextFieldOpt = "text",
    label_field: LabelFieldOpt = None,
    format: FormatOpt = None,
    mechanisms: MechanismsOpt = None,
    epsilons: EpsilonsOpt = None,
    forms: FormsOpt = None, candidates: CandidatesOpt = None, recoder: RecoderOpt = None,
    model: ModelOpt = None, document_kind: DocumentKindOpt = "text",
    unit_field: UnitFieldOpt = None,
    sensitive_field: SensitiveFieldOpt = None,
    max_author_linkage: MaxAuthorLinkageOpt = "5x",
    max_attribute: MaxAttributeOpt = None,
    plot_privacy: PlotPrivacyOpt = "linkage",
    oov: OovOpt = None,
    keep_stopwords: KeepStopwordsOpt = False,
    entities: EntitiesOption = None, allow_list: AllowListOption = None,
    identifiers: IdentifiersOption = True, deny_list: DenyListOption = None,
    identifier_label: IdentifierLabelOption = None,
    identifier_pattern: IdentifierPatternOption = None,
    phone_regions: PhoneRegionsOption = None,
    max_linkage: MaxLinkageOpt = "5x",
    max_entities: MaxEntitiesOpt = 0,
    min_utility: MinUtilityOpt = None,
    sample: SampleOpt = None,
    time_budget: TimeBudgetOpt = 300.0,
    seed: SeedOpt = None,
    out: OutOpt = None,
    json_path: JsonPathOpt = None,
    markdown_path: MarkdownPathOpt = None,
    html_path: HtmlPathOpt = None,
) -> None:
    from textdp.assess import assess as run_assessment
    from textdp.assess.render import PRIVACY_AXES
    from textdp.privacy import format_up
    from textdp.text.entities import EntityModelError

    targets = _outputs(out, json_path, markdown_path, html_path)
    check_single(input, targets, read=False)  # read below: its own errors, as they were
    if plot_privacy not in PRIVACY_AXES:
        raise CLIError(f"--plot-privacy must be one of {', '.join(PRIVACY_AXES)}, got "
                       f"{plot_privacy!r}")
    release, flags = _release_options(oov, keep_stopwords, entities, allow_list, identifiers,
                                      deny_list, identifier_label, identifier_pattern,
                                      phone_regions)
    _check_files(candidates, recoder)
    texts, fields = _read(input, text_field, {"--label-field": label_field,
                                              "--unit-field": unit_field,
                                              "--sensitive-field": sensitive_field}, format)
    try:
        result = run_assessment(
            texts, fields["--label-field"], sample=sample, seed=seed, time_budget=time_budget,
            max_linkage=max_linkage, max_entities=max_entities, min_utility=min_utility,
            progress=_bar, mechanisms=_names(mechanisms) if mechanisms is not None else None,
            epsilons=_epsilons(epsilons), units=fields["--unit-field"],
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
    _write(result, targets, out)
    rec = result.recommended
    say(f"assessed {len(result.rows)} settings on {result.meta['sample']['documents']} "
        "documents; " + (f"recommended: {rec['label']} at ε = {format_up(rec['epsilon'])}" if rec
                         else "no setting meets the targets (see the report)"))
    say("wrote " + ", ".join(str(p) for p in targets.values()))


def _check_files(*paths: Path | None) -> None:
    """The candidates and the recoder exist (a one-line error before the data is read)."""
    for path in paths:
        if path is not None and not path.is_file():
            raise FileError(path, None, "does not exist or is not a file")


def _release_options(oov: str | None, keep_stopwords: bool, entities: str | None,
                     allow_list: Path | None, identifiers: bool, deny_list: Path | None,
                     labels: list[str] | None, patterns: list[str] | None,
                     phone_regions: str | None) -> tuple[dict[str, Any], str]:
    """The release options every setting gets (only those given: the defaults stay the
    release's own), and the ``textdp privatize`` flags of those a row's options cannot spell
    (lists and files)."""
    import shlex

    options: dict[str, Any] = {}
    if oov is not None:
        if oov not in ("mask", "keep", "drop", "random"):
            raise CLIError(f"--oov must be mask, keep, drop or random, got {oov!r}")
        options["oov"] = oov
    if keep_stopwords:
        options["keep_stopwords"] = True
    ident = identifier_options(identifiers, labels, patterns, deny_list, phone_regions)
    ents = entity_options(entities, allow_list)
    if not identifiers:
        options["identifiers"] = False
    if entities is not None:
        options["entities"] = ents["entities"]
    for key, value in (("identifier_labels", ident["identifier_labels"]),
                       ("identifier_patterns", ident["identifier_patterns"]),
                       ("deny_list", ident["deny_list"]), ("phone_regions", ident["phone_regions"]),
                       ("allow_list", ents["allow_list"])):
        if value:
            options[key] = value
    flags = [f"--identifier-label {shlex.quote(x)}" for x in labels or []]
    flags += [f"--identifier-pattern {shlex.quote(x)}" for x in patterns or []]
    flags += [f"--{name} {shlex.quote(str(path))}" for name, path in
              (("deny-list", deny_list), ("allow-list", allow_list)) if path is not None]
    if phone_regions is not None:
        flags.append(f"--phone-regions {shlex.quote(phone_regions)}")
    return options, " ".join(flags)


def _outputs(out: Path | None, json_path: Path | None, markdown_path: Path | None,
             html_path: Path | None) -> dict[str, Path]:
    """What to write where: -o DIR's four files, or the files named one by one."""
    targets: dict[str, Path] = {}
    if out is not None:
        if out.exists() and not out.is_dir():
            raise FileError(out, None, "exists and is not a directory")
        if not out.absolute().parent.is_dir():
            raise FileError(out, None, f"directory {str(out.parent)!r} does not exist")
        targets = {"JSON report": out / "report.json", "Markdown report": out / "report.md",
                   "HTML report": out / "report.html", "plot": out / "frontier.png"}
    for what, path in (("JSON report", json_path), ("Markdown report", markdown_path),
                       ("HTML report", html_path)):
        if path is not None:
            if what in targets:
                raise CLIError(f"give either -o DIR or --{what.split()[0].lower()}, not both")
            targets[what] = path
    return targets


def _write(result: Any, targets: dict[str, Path], out: Path | None) -> None:
    from textdp.assess.render import frontier_png

    with AtomicFiles() as files:  # all the reports appear together, or none
        if out is not None:
            out.mkdir(exist_ok=True)
        for what, path in targets.items():
            if what == "JSON report":
                data = result.to_json().encode("utf-8")
            elif what == "Markdown report":
                image = "frontier.png" if out is not None else None
                data = result.to_markdown(image=image).encode("utf-8")
            elif what == "HTML report":
                data = result.to_html().encode("utf-8")
            else:
                data = frontier_png(result, result.meta.get("plot_privacy", "linkage"))
            files.write_bytes(path, data)


def _bar(description: str, total: int) -> Any:
    """Per-setting progress on stderr: a bar on a terminal, else one line per setting when it
    ends (a log or a CI job sees the run advance too)."""
    if not sys.stderr.isatty():
        return _Line(description, total)
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", desc=description, file=sys.stderr, leave=False,
                dynamic_ncols=True)


class _Line:
    """The progress of one setting as one stderr line, written when the setting is done."""

    def __init__(self, description: str, total: int) -> None:
        self.description, self.total, self.done = description, total, 0
        self.started = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n

    def close(self) -> None:
        seconds = time.perf_counter() - self.started
        say(f"assess: {self.description}: {self.done} of {self.total} documents privatised "
            f"in {seconds:.1f} s")


assess.__doc__ = HELP
