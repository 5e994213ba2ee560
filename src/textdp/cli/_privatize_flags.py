"""What ``textdp privatize`` is given, typed: the flags' declarations and the frozen objects the
command builds from them, explicitly (no dictionary of its arguments).

:class:`RunFlags` holds the paths, the I/O, ledger and engine options; :class:`ReleaseFlags` the
release (:class:`WordFlags` for a word mechanism, :class:`PromptFlags` for a language-model one,
:class:`PolicyFlags` for identifiers and entities, which both kinds mask). Each says which of its
flags were given, refuses the other kind's, and turns the command-line spellings (``KIND=LABEL``,
files of terms, ``NAME=VALUE`` parameters) into the keywords of :func:`textdp.spec.release_spec`,
which checks every value once (ε where the mechanism is built). Nothing here checks a value the
spec checks: these are the command line's grammar and files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp import mechanisms as registry
from textdp.cli._allocation import check_allocation_flags
from textdp.cli._arguments import DEFAULT_BATCH_SIZE
from textdp.cli._common import CLIError, one_line
from textdp.io import FORMATS, FileError, format_of
from textdp.mechanisms import prompt
from textdp.mechanisms._signature import keyword_parameters
from textdp.spec import DEFAULT_MASK, ReleaseSpec, release_spec

__all__ = ["PolicyFlags", "PromptFlags", "ReleaseFlags", "RunFlags", "WordFlags",
           "check_placeholders", "entity_options", "identifier_options", "mechanism_params",
           "parse_param", "read_deny_list"]

UnchangedWarningOption = Annotated[float, typer.Option(
    "--unchanged-warning", min=0.0, max=1.0,
    help="Warn when the expected fraction of privatised words returned unchanged (the report's "
         "deniability section) exceeds this.")]

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


@dataclass(frozen=True, slots=True)
class RunFlags:
    """Where the records come from and go, how they are read, the ledger and the engine: the
    flags as given (checked by :func:`textdp.cli.privatize.run`, in the order a user meets
    them)."""

    input: list[str]
    output: str
    report: Path | None = None
    format: str | None = None
    text_field: list[str] | None = None
    delimiter: str | None = None
    on_error: str = "fail"
    null: str = "error"
    max_line_bytes: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    ledger: Path | None = None
    ledger_policy: str = "warn"
    budget: float | None = None
    engine: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    verbose: bool = False


@dataclass(frozen=True, slots=True)
class PolicyFlags:
    """Identifiers and entities (masked by both kinds of mechanism): the flags as given; the
    files are read when the release is built, after every path was checked."""

    identifiers: bool = True
    identifier_label: list[str] | None = None
    identifier_pattern: list[str] | None = None
    deny_list: Path | None = None
    phone_regions: str | None = None
    entities: str | None = None
    allow_list: Path | None = None

    def labels(self) -> dict[str, str]:
        return _pairs(self.identifier_label, "--identifier-label")

    def options(self) -> dict[str, Any]:
        """:func:`textdp.spec.release_spec`'s identifier and entity keywords."""
        return {**identifier_options(self.identifiers, self.identifier_label,
                                     self.identifier_pattern, self.deny_list, self.phone_regions),
                **entity_options(self.entities, self.allow_list)}


@dataclass(frozen=True, slots=True)
class WordFlags:
    """The flags of a word mechanism alone (refused with a language-model one)."""

    oov: str = "mask"
    mask_token: str = DEFAULT_MASK
    keep_stopwords: bool = False
    unchanged_warning: float = 0.5
    vocabulary: str | None = None
    method: str | None = None
    n_lists: int | None = None
    beta: float | None = None
    neighbors: str | None = None
    param: list[str] | None = None
    allocation: str | None = None
    epsilon_document: float | None = None
    epsilon_floor: float | None = None
    epsilon_ceiling: float | None = None

    def given(self) -> list[str]:
        """The word-only flags given (``--allocation`` is refused apart, with ``--engine``)."""
        return [flag for key, flag in _WORD_ONLY.items() if getattr(self, key)]


@dataclass(frozen=True, slots=True)
class PromptFlags:
    """The flags of a language-model mechanism alone (refused with a word one)."""

    epsilon_per_token: float | None = None
    temperature: float | None = None
    max_new_tokens: int | None = None
    clip: tuple[float, float] | None = None
    model: Path | None = None
    device: str | None = None
    resume: bool | None = None

    def given(self) -> list[str]:
        return [flag for key, flag in _LM_ONLY.items() if getattr(self, key) is not None]


@dataclass(frozen=True, slots=True)
class ReleaseFlags:
    """The release as the command line gives it: the mechanism, ε and the seed, and the flags
    of each kind. :meth:`spec` builds the one :class:`~textdp.spec.ReleaseSpec` (one-line
    errors); ε goes down to it as given, once."""

    mechanism: str
    epsilon: float | None
    seed: int | None
    word: WordFlags
    prompt: PromptFlags
    policy: PolicyFlags

    def is_prompt(self, engine: str) -> bool:
        """Whether the mechanism rewrites whole documents with a language model (True) or is a
        word mechanism (False), once no flag of the other kind was given (and a word mechanism
        has its ``--epsilon``)."""
        if self.mechanism not in prompt.available():
            given = self.prompt.given()
            if given:
                raise CLIError(f"{', '.join(given)}: only for --mechanism "
                               f"{' or '.join(prompt.available())}")
            if self.epsilon is None and self.word.allocation is None:
                raise CLIError("Missing option '--epsilon'")
            return False
        if engine != "local" or self.word.allocation is not None:
            raise CLIError(f"--engine ray and --allocation: not used by --mechanism "
                           f"{self.mechanism} (local engine; one ε per document)")
        given = self.word.given()
        if given:
            raise CLIError(f"{', '.join(given)}: not used by --mechanism {self.mechanism} "
                           "(it rewrites whole documents with a language model)")
        return True

    def spec(self, prompt_kind: bool) -> ReleaseSpec:
        """The release (a :class:`~textdp.spec.WordSpec` or :class:`~textdp.spec.PromptSpec`),
        every value checked where the spec is built."""
        if prompt_kind:
            return self._prompt_spec()
        w = self.word
        check_allocation_flags(self.epsilon, w.allocation, w.epsilon_document, w.epsilon_floor,
                               w.epsilon_ceiling)
        params = mechanism_params(self.mechanism, {"method": w.method, "n_lists": w.n_lists,
                                                   "beta": w.beta, "neighbors": w.neighbors},
                                  w.param or [])
        # Without --vocabulary the spec says None (every mechanism's default is textdp's
        # default): the recipe a Ray actor receives then stays small, and the actor loads the
        # vocabulary itself.
        from textdp.cli._vocabulary import resolve_vocabulary

        vocabulary = None if w.vocabulary is None else resolve_vocabulary(w.vocabulary)
        return _built(lambda: release_spec(
            self.mechanism, self.epsilon, vocabulary=vocabulary, oov=w.oov,
            mask_token=w.mask_token, keep_stopwords=w.keep_stopwords, seed=self.seed,
            unchanged_warning=w.unchanged_warning, allocation=w.allocation,
            epsilon_document=w.epsilon_document, epsilon_floor=w.epsilon_floor,
            epsilon_ceiling=w.epsilon_ceiling, **self.policy.options(), **params))

    def _prompt_spec(self) -> ReleaseSpec:
        from textdp.cli._prompt import prompt_spec

        p = self.prompt
        return prompt_spec(self.mechanism, seed=self.seed, clip=p.clip,
                           policy=self.policy.options(), epsilon=self.epsilon,
                           epsilon_per_token=p.epsilon_per_token, temperature=p.temperature,
                           max_new_tokens=p.max_new_tokens)


def _built(build: Any) -> ReleaseSpec:
    """The spec ``build()`` returns; its refusal as one line."""
    try:
        return build()
    except (ImportError, TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


# The flags of one kind of mechanism, refused (by flag) for the other.
_LM_ONLY = {"epsilon_per_token": "--epsilon-per-token", "temperature": "--temperature",
            "max_new_tokens": "--max-new-tokens", "clip": "--clip", "model": "--model",
            "device": "--device", "resume": "--resume"}
_WORD_ONLY = {"method": "--method", "n_lists": "--n-lists", "beta": "--beta",
              "neighbors": "--neighbors", "param": "--param", "vocabulary": "--vocabulary",
              "keep_stopwords": "--keep-stopwords"}


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
