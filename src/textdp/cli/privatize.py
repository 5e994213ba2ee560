"""``textdp privatize``: privatise the documents of a file, stream them out, report the guarantee."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from textdp import mechanisms as registry
from textdp.cli import _local, _prompt, _ray
from textdp.cli._allocation import (
    AllocationOption,
    EpsilonCeilingOption,
    EpsilonDocumentOption,
    EpsilonFloorOption,
    allocation_options,
)
from textdp.cli._arguments import (
    DEFAULT_BATCH_SIZE,
    PrivatizeArguments,
    check_paths,
    check_report_path,
    read_options,
    say_outcome,
    say_written,
)
from textdp.cli._common import (
    BetaOption,
    CLIError,
    MethodOption,
    NeighborsOption,
    NListsOption,
    ParamOption,
    one_line,
)
from textdp.cli._inputs import check_engine, resolve_files
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt
from textdp.cli._prompt import (
    ClipOption,
    DeviceOption,
    EpsilonPerTokenOption,
    MaxNewTokensOption,
    ModelOption,
    ResumeOption,
    TemperatureOption,
    prompt_spec,
)
from textdp.cli._ray import AddressOption, EngineOption, VerboseOption, WorkersOption
from textdp.cli._vocabulary import VocabularyOption, resolve_vocabulary
from textdp.io import FORMATS, FileError, format_of
from textdp.io.streams import is_stdio
from textdp.mechanisms import prompt
from textdp.mechanisms._signature import keyword_parameters
from textdp.pipeline import DEFAULT_MASK, OOVPolicy
from textdp.privacy.unchanged import DEFAULT_UNCHANGED_WARNING
from textdp.spec import ReleaseSpec, release_spec

# Re-exported: the checks and messages the engines share live in cli/_arguments.py.
__all__ = ["privatize", "mechanism_params", "parse_param", "PrivatizeArguments",
           "DEFAULT_BATCH_SIZE", "check_paths", "check_report_path", "read_options",
           "say_outcome", "say_written"]

UnchangedWarningOption = Annotated[float, typer.Option(
    "--unchanged-warning", min=0.0, max=1.0,
    help="Warn when the expected fraction of privatised words returned unchanged (the report's "
         "deniability section) exceeds this.")]

HELP = """Privatise every document of INPUT and write them to OUTPUT.

\b
INPUT formats, by extension (OUTPUT must have the same one):
  .txt      one document per line; every line, empty ones included, gives one line out,
            with its own line ending
  .jsonl    one JSON object per line; the document is the string field --text-field
            (a dotted path such as meta.text reaches into nested objects); every other
            byte of the line (fields, numbers as written, escapes) is copied unchanged
  .csv      header row; the document is the column --text-field; other columns pass
  .tsv      through; quoted fields may span lines; --delimiter sets the separator
  .parquet  the document is the string column --text-field; other columns pass through
  + .gz or .zst (reviews.jsonl.gz): compressed; '-': standard input/output (--format)
Repeat --text-field to privatise several fields of each record, each as its own document.
With --engine ray, INPUT may also be a directory, a quoted glob pattern ('data/*.jsonl'),
several files, or a URI (s3://bucket/prefix/, gs://..., file://...; credentials from the
environment); OUTPUT is then a directory (or prefix) with one file per input, of the same name.

N records in give N records out, in order. The file is read in batches of --batch-size
documents (memory stays bounded), with a progress bar when stderr is a terminal. OUTPUT
(and the report) appear only when everything succeeded: they are written to a temporary
file and renamed at the end, so an error leaves no partial output.

\b
Token policy: words in the vocabulary are privatised by the mechanism; whitespace and
punctuation are kept. Out-of-vocabulary words and numbers follow --oov:
  mask    replace by --mask-token (default [MASK])
  keep    release unchanged: UNPROTECTED (counted in the report, and warned)
  drop    remove the token
  random  a uniformly random vocabulary word, independent of the input

\b
Identifiers (on by default; --no-identifiers turns them off) are found before
tokenisation and handled as one token each: e-mail addresses, URLs, IPv4/IPv6
addresses, IBANs (checksum), card numbers (Luhn), phone numbers (libphonenumber:
international, or national in --phone-regions), bare domains (Public Suffix List),
--identifier-pattern kinds and --deny-list terms; each document on its own.
mask and random replace one by its label ([EMAIL], [URL], [IP],
[IBAN], [CARD], [PHONE], [NAME]; --identifier-label KIND=LABEL), keep releases it
(UNPROTECTED, counted), drop removes it. Deny-list terms are always masked ([REDACTED]).

\b
Entities (on by default; --entities none turns them off) are found next, offline (spaCy
en_core_web_sm 3.8.0 on the windows around capitalised words; patterns for street
addresses) and replaced by [PERSON], [LOCATION], [ORG] or [ADDRESS] (removed under
--oov drop). Word-level DP protects the choice of words, not who a text names: without
this stage names often come back unchanged. --allow-list terms are kept as they are.

\b
The report (--report PATH, JSON; schema in README.md) states the mechanism and its
parameters, the guarantee per word and its composition over a document, token counts by
class and by policy, the expected fraction of privatised words returned unchanged
("deniability", with the method and a 95% interval; warned above --unchanged-warning), what
was released unprotected, warnings, the randomness (seeded or not), the vocabulary
fingerprint, textdp version, timing, and an "io" entry (input, output, format, records in
and out). Without --report a one-line summary goes to stderr.

Errors (bad parameters, a malformed record) print one line, naming file and line, and exit
with status 2; parameters are checked before any input is read. --on-error skip leaves a
malformed record out instead (counted and listed by line in the report's "io" entry), and
--null pass lets a null text field pass through as null. Interrupted (Ctrl-C, SIGTERM): exit
130, no output and no temporary file left.

\b
DP-Prompt (--mechanism dp_prompt, extra 'lm'): a local language model paraphrases each
whole document, every token sampled from its clipped, temperature-scaled logits: pure
ε-DP per document for any two documents (docs/dp_prompt.md). Give one of --epsilon (per
document), --epsilon-per-token or --temperature; --batch-size is then the documents per
generation batch (16 unless given). The token options above do not apply.

\b
Example:
  textdp privatize reviews.txt -o reviews.private.txt --mechanism mvc --epsilon 10
  textdp privatize reviews.txt -o out.txt --mechanism dp_prompt --epsilon 2000 --max-new-tokens 48
"""


def parse_param(item: str) -> tuple[str, Any]:
    """``"name=value"`` → (name, value), the value read as int, else float, else string.

    ``true`` / ``false`` (any case) are booleans: passed on as the string "false", a flag would be
    truthy and silently do the opposite of what was asked.
    """
    name, sep, raw = item.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise CLIError(f"--param expects NAME=VALUE, got {item!r}")
    if raw.lower() in ("true", "false"):
        return name, raw.lower() == "true"
    for convert in (int, float):
        try:
            return name, convert(raw)
        except ValueError:
            pass
    return name, raw


def mechanism_params(name: str, flags: dict[str, Any], items: list[str]) -> dict[str, Any]:
    """The parameters to pass to the mechanism: the flags that were given, then ``--param``s.

    Raises:
        CLIError: a malformed ``--param``, a parameter given twice, ``epsilon`` given as a
            ``--param``, or a parameter the mechanism does not take (before building it).
    """
    params = {k: v for k, v in flags.items() if v is not None}
    for item in items:
        key, value = parse_param(item)
        if key == "epsilon":
            raise CLIError("give epsilon with --epsilon, not --param")
        if key in params:
            raise CLIError(f"parameter {key!r} is given twice")
        params[key] = value
    try:
        cls = registry.get(name)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    accepted = keyword_parameters(cls)
    if accepted is not None:
        for key in params:
            if key not in accepted:
                flag = f" (--{key.replace('_', '-')})" if key in flags else ""
                raise CLIError(f"mechanism {name!r} takes no parameter {key!r}{flag}; "
                               f"its parameters: {', '.join(accepted)}")
    return params


# The I/O options (issue 12): what inputs people have.
TextFieldOption = Annotated[list[str] | None, typer.Option(
    "--text-field", metavar="NAME", show_default=False,
    help="JSON field (dotted path for nested objects), CSV/TSV column or Parquet column "
         "holding the document; repeatable (default: text; ignored for .txt).")]
FormatOption = Annotated[str | None, typer.Option(
    "--format", metavar="FORMAT", show_default=False,
    help=f"Format of '-' (standard input/output), or instead of the extensions: "
         f"{', '.join(FORMATS)}.")]
DelimiterOption = Annotated[str | None, typer.Option(
    "--delimiter", metavar="CHAR", show_default=False,
    help="CSV/TSV field separator, one character (default: ',' for .csv, tab for .tsv; "
         "'\\t' for a tab).")]
OnErrorOption = Annotated[str, typer.Option(
    "--on-error", metavar="fail|skip",
    help="fail: a malformed record stops the run, no output; skip: leave it out, counted and "
         "listed by line in the report.")]
MaxLineBytesOption = Annotated[int | None, typer.Option(
    "--max-line-bytes", metavar="N", min=1, show_default=False,
    help="The longest line a .txt/.jsonl/.csv/.tsv input may hold, in bytes (default 64 MiB, "
         "or TEXTDP_MAX_LINE_BYTES): a longer line stops the run in one line, so an endless "
         "line (/dev/zero) cannot fill the memory.")]
NullOption = Annotated[str, typer.Option(
    "--null", metavar="error|pass",
    help="error: a null text field is an error; pass: it stays null in the output.")]
IdentifiersOption = Annotated[bool, typer.Option(
    "--identifiers/--no-identifiers",
    help="Recognise e-mail addresses, URLs, IP addresses, IBANs, card and phone numbers as one "
         "token each (masked with their label under --oov mask).")]
IdentifierLabelOption = Annotated[list[str] | None, typer.Option(
    "--identifier-label", metavar="KIND=LABEL", show_default=False,
    help="Placeholder for an identifier kind, e.g. email=<EMAIL> (repeatable).")]
IdentifierPatternOption = Annotated[list[str] | None, typer.Option(
    "--identifier-pattern", metavar="NAME=REGEX", show_default=False,
    help="An extra identifier kind, e.g. 'ticket=TK-\\d{6}' (Python re syntax; repeatable); "
         "labelled [NAME] unless --identifier-label says otherwise.")]
DenyListOption = Annotated[Path | None, typer.Option(
    "--deny-list", metavar="FILE", show_default=False,
    help="Terms always masked as [REDACTED], whatever --oov: one per line (UTF-8), "
         "whole words, matched on an NFKC case-folded key (soft hyphens, zero-width and "
         "fullwidth forms do not hide a term; any whitespace run matches one space); blank "
         "lines and lines starting with # skipped.")]
PhoneRegionsOption = Annotated[str | None, typer.Option(
    "--phone-regions", metavar="CC,CC,...", show_default=False,
    help="Regions whose national phone formats count (ISO 3166 codes, comma-separated; "
         "default: US,GB,DE,FR,ES,IT,NL,TR,IN,BR). Numbers written with + and a country code "
         "count whatever the regions.")]

EntitiesOption = Annotated[str | None, typer.Option(
    "--entities", metavar="KINDS|none", show_default=False,
    help="Entities replaced by labels before the mechanism: person, location, org, address "
         "(comma-separated; default: all four), or none (then names and places may pass "
         "through, and the report says so).")]
AllowListOption = Annotated[Path | None, typer.Option(
    "--allow-list", metavar="FILE", show_default=False,
    help="Public terms (product names, your company) released as they are, UNPROTECTED and "
         "counted: one per line (UTF-8), case-insensitive, whole words; blank lines and lines "
         "starting with # skipped.")]


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
    text_field: TextFieldOption = None,
    format: FormatOption = None,
    delimiter: DelimiterOption = None,
    on_error: OnErrorOption = "fail", null: NullOption = "error",
    max_line_bytes: MaxLineBytesOption = None,
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
    unchanged_warning: UnchangedWarningOption = DEFAULT_UNCHANGED_WARNING,
    method: MethodOption = None, max_new_tokens: MaxNewTokensOption = None,
    n_lists: NListsOption = None,
    beta: BetaOption = None, neighbors: NeighborsOption = None,  # (one line: the 80-line rule)
    param: ParamOption = None, model: ModelOption = None, device: DeviceOption = None,
    resume: ResumeOption = None,
    vocabulary: VocabularyOption = None, clip: ClipOption = None,
    epsilon_per_token: EpsilonPerTokenOption = None, temperature: TemperatureOption = None,
    identifiers: IdentifiersOption = True, deny_list: DenyListOption = None,
    identifier_label: IdentifierLabelOption = None, identifier_pattern: IdentifierPatternOption = None,
    phone_regions: PhoneRegionsOption = None,
    entities: EntitiesOption = None, allow_list: AllowListOption = None,
    ledger: LedgerOpt = None, ledger_policy: LedgerPolicyOpt = "warn", budget: BudgetOpt = None,
    engine: EngineOption = "local", workers: WorkersOption = None, ray_address: AddressOption = None,
    verbose: VerboseOption = False,
    allocation: AllocationOption = None, epsilon_document: EpsilonDocumentOption = None,
    epsilon_floor: EpsilonFloorOption = None, epsilon_ceiling: EpsilonCeilingOption = None,
) -> None:
    _run(dict(locals()))


def _run(a: dict[str, Any]) -> None:
    """The command's body on its parsed options ``a`` (the 80-line rule keeps it apart from the
    signature): every check, in the order a user meets them, then one typed
    :class:`PrivatizeArguments` for the engine that runs it."""
    # INPUT... and OUTPUT: local paths, or URIs (one line each when unusable). 0. No two paths
    #    are the same file (input, output, report, ledger, deny-list), however they are spelled:
    #    before anything is read or written, and before either engine or dp_prompt.
    found = resolve_files(a["input"], a["output"], a["engine"],
                          sources={"deny-list": a["deny_list"], "allow-list": a["allow_list"]},
                          targets={"report": a["report"], "ledger": a["ledger"]})
    a["inputs"], a["input"], a["output"] = found.inputs, found.input, found.output
    if check_mechanism_flags(a):  # dp_prompt: a language model rewrites whole documents
        options = read_options(a["text_field"], a["delimiter"], a["on_error"], a["null"],
                               a["max_line_bytes"])
        check_paths(a["input"], a["output"], a["report"], a["format"])
        if a.get("resume") and is_stdio(a["output"]):
            raise CLIError("--resume needs OUTPUT to be a file (the staged documents are kept "
                           "beside it), not standard output")
        check_placeholders(DEFAULT_MASK, _pairs(a["identifier_label"], "--identifier-label"),
                           list(a["inputs"]), a["format"])
        spec = prompt_spec(a["mechanism"], seed=a["seed"], clip=a["clip"],
                           policy={**identifier_options(a["identifiers"], a["identifier_label"],
                                                        a["identifier_pattern"], a["deny_list"],
                                                        a["phone_regions"]),
                                   **entity_options(a["entities"], a["allow_list"])},
                           **{k: a[k] for k in ("epsilon", "epsilon_per_token", "temperature",
                                                "max_new_tokens")})
        return _prompt.run(_arguments(a, spec, options, None))
    # 1. Paths and I/O options, without reading anything: fail before the vocabulary is loaded.
    input, output, report, format = a["input"], a["output"], a["report"], a["format"]
    options = read_options(a["text_field"], a["delimiter"], a["on_error"], a["null"],
                           a["max_line_bytes"])
    pairs = check_engine(a["engine"], a["workers"], a["ray_address"], a["inputs"], output,
                         report, format)
    book = CommandLedger(a["ledger"], a["ledger_policy"], a["budget"], input, output, report)
    check_placeholders(a["mask_token"], _pairs(a["identifier_label"], "--identifier-label"),
                       [s for s, _ in pairs] if pairs is not None else [input], format)
    # 2. The release: building it validates every parameter, before any input is read.
    args = _arguments(a, word_spec(a), options, pairs)
    if pairs is not None:  # --engine ray: the same records, privatised on a Ray actor pool
        return _ray.run(args, book)
    # 3. Stream; OUTPUT and the report appear together at the end, or not at all. 4. Say where
    #    things went and what the guarantee is.
    _local.run(args, book)


def word_spec(a: dict[str, Any]) -> ReleaseSpec:
    """The release of a word mechanism from the command's options (one-line errors)."""
    epsilon, allocated = allocation_options(a["epsilon"], a["allocation"], a["epsilon_document"],
                                            a["epsilon_floor"], a["epsilon_ceiling"])
    params = mechanism_params(a["mechanism"], {k: a[k] for k in ("method", "n_lists", "beta",
                                                                  "neighbors")}, a["param"] or [])
    # Without --vocabulary the spec says None (every mechanism's default is textdp's default):
    # the recipe a Ray actor receives then stays small, and the actor loads the vocabulary itself.
    vocabulary = None if a["vocabulary"] is None else resolve_vocabulary(a["vocabulary"])
    try:
        return release_spec(a["mechanism"], epsilon, vocabulary=vocabulary,
                            oov=a["oov"].value, mask_token=a["mask_token"],
                            keep_stopwords=a["keep_stopwords"], seed=a["seed"],
                            unchanged_warning=a["unchanged_warning"], allocation=allocated,
                            **identifier_options(a["identifiers"], a["identifier_label"],
                                                 a["identifier_pattern"], a["deny_list"],
                                                 a["phone_regions"]),
                            **entity_options(a["entities"], a["allow_list"]), **params)
    except (ImportError, TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def _arguments(a: dict[str, Any], spec: ReleaseSpec, options: Any,
               pairs: list[tuple[Path, Path]] | None) -> PrivatizeArguments:
    return PrivatizeArguments(
        spec=spec, input=a["input"], output=a["output"], report=a["report"], format=a["format"],
        read_options=options, batch_size=a["batch_size"], ledger=a["ledger"],
        ledger_policy=a["ledger_policy"], budget=a["budget"],
        files=None if pairs is None else tuple(pairs), workers=a["workers"],
        ray_address=a["ray_address"], verbose=a["verbose"], model=a["model"],
        device=a.get("device") or "auto", resume=bool(a.get("resume")))


# The options of one kind of mechanism, refused (by flag) for the other.
_LM_ONLY = {"epsilon_per_token": "--epsilon-per-token", "temperature": "--temperature",
            "max_new_tokens": "--max-new-tokens", "clip": "--clip", "model": "--model",
            "device": "--device", "resume": "--resume"}
_WORD_ONLY = {"method": "--method", "n_lists": "--n-lists", "beta": "--beta",
              "neighbors": "--neighbors", "param": "--param", "vocabulary": "--vocabulary",
              "keep_stopwords": "--keep-stopwords"}


def check_mechanism_flags(a: dict[str, Any]) -> bool:
    """Whether the mechanism rewrites whole documents with a language model (True) or is a word
    mechanism (False), once no option of the other kind was given (and a word mechanism has its
    ``--epsilon``)."""
    if a["mechanism"] not in prompt.available():
        given = [flag for key, flag in _LM_ONLY.items() if a.get(key) is not None]
        if given:
            raise CLIError(f"{', '.join(given)}: only for --mechanism "
                           f"{' or '.join(prompt.available())}")
        if a["epsilon"] is None and a.get("allocation") is None:
            raise CLIError("Missing option '--epsilon'")
        return False
    if a.get("engine", "local") != "local" or a.get("allocation") is not None:
        raise CLIError(f"--engine ray and --allocation: not used by --mechanism "
                       f"{a['mechanism']} (local engine; one ε per document)")
    given = [flag for key, flag in _WORD_ONLY.items() if a.get(key)]
    if given:
        raise CLIError(f"{', '.join(given)}: not used by --mechanism {a['mechanism']} "
                       "(it rewrites whole documents with a language model)")
    return True


def identifier_options(on: bool, labels: list[str] | None, patterns: list[str] | None,
                       deny_list: Path | None, phone_regions: str | None = None) -> dict[str, Any]:
    """The Privatizer's identifier keywords from the CLI's options."""
    regions = None if phone_regions is None else [r for r in phone_regions.split(",") if r.strip()]
    return {"identifiers": on, "identifier_labels": _pairs(labels, "--identifier-label"),
            "identifier_patterns": _pairs(patterns, "--identifier-pattern"),
            "deny_list": read_deny_list(deny_list), "phone_regions": regions}


def check_placeholders(mask_token: str, labels: dict[str, str], inputs: list[Path],
                       format: str | None) -> None:
    """A placeholder (--mask-token, --identifier-label) with a line break would cut a ``.txt``
    document into two lines (N lines in, N+1 out): refused before anything is read."""
    if not any(format_of(path, format) == "txt" for path in inputs):
        return
    for flag, value in [("--mask-token", mask_token),
                        *((f"--identifier-label {k}", v) for k, v in labels.items())]:
        if "\n" in value:
            raise CLIError(f"{flag} {value!r} contains a line break; a .txt file holds one "
                           "document per line")


def entity_options(kinds: str | None, allow_list: Path | None) -> dict[str, Any]:
    """The Privatizer's entity keywords from the CLI's options."""
    return {"entities": "default" if kinds is None else kinds,
            "allow_list": read_deny_list(allow_list)}


def _pairs(items: list[str] | None, flag: str) -> dict[str, str]:
    """``["k=v", …]`` → {k: v} (the value may contain ``=``)."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"{flag} expects NAME=VALUE, got {item!r}")
        if key.strip() in out:
            raise CLIError(f"{flag} gives {key.strip()!r} twice")
        out[key.strip()] = value
    return out


def read_deny_list(path: Path | None) -> list[str]:
    """The terms of a deny-list (or allow-list) file: one per line, blank lines and ``#``
    comments skipped."""
    if path is None:
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise FileError(path, None, f"is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise FileError(path, None, one_line(exc)) from None
    return [t.strip() for t in lines if t.strip() and not t.lstrip().startswith("#")]




privatize.__doc__ = HELP
