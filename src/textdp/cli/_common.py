"""What every subcommand shares: the one-line error, stderr messages, the progress bar and the
mechanism options."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from textdp.io.paths import check_distinct, check_target

__all__ = ["CLIError", "PipeClosed", "SectionedCommand", "count", "pipe_message", "say", "warn",
           "progress_bar"]

PROG = "textdp"


class CLIError(Exception):
    """A user error: printed as ``textdp: error: <message>`` on one line, exit code 2."""


class PipeClosed(CLIError):
    """Standard output was closed by its reader before all the output was written (``… | head``):
    one line, exit code 141 (128 + SIGPIPE, the status a shell shows for a process that a closed
    pipe ends), so that ``set -o pipefail`` sees that the output was cut short."""


def pipe_message(exc: BaseException) -> str:
    """The one line for a reader that went away (``BrokenPipeError``): the stream named where the
    write named it (:mod:`textdp.io.atomic`), else standard output."""
    said = getattr(exc, "strerror", None)
    if said and "reader of" in said:
        return f"{said}; the output is incomplete"
    return "standard output was closed before all the output was written"


def one_line(message: object) -> str:
    return " ".join(str(message).split())


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 record``, ``2 records``, ``1,000 records``: a number and its noun, agreeing."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def say(message: str) -> None:
    """A status line on stderr (stdout stays free for data)."""
    print(f"{PROG}: {message}", file=sys.stderr)


def warn(message: str) -> None:
    print(f"{PROG}: warning: {one_line(message)}", file=sys.stderr)


def progress_bar(desc: str) -> Any:
    """A factory ``(total, unit) → tqdm`` for :func:`textdp.io.map_text_file`.

    The bar goes to stderr and is shown only when stderr is a terminal, so logs and pipes get no
    control characters; it disappears when done (the summary line follows it).
    """

    def make(total: int | None, unit: str) -> Any:
        if not sys.stderr.isatty():  # what a disabled tqdm is, without importing tqdm
            return _NoBar(total)
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, unit_scale=unit == "B", desc=desc, file=sys.stderr,
                    leave=False, dynamic_ncols=True)

    return make


class _NoBar:
    """A progress bar that shows nothing: counts like a disabled ``tqdm``, ignores the rest."""

    def __init__(self, total: int | None) -> None:
        self.total, self.n = total, 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:  # close, refresh, set_postfix_str, …
        return lambda *args, **kwargs: None


# Mechanism options shared by every subcommand that builds a word mechanism: one typed flag per
# parameter declared with ``flag=True`` (type and help from the declarations), --param for the rest.
def mechanism_flag(name: str) -> Any:
    """The option ``--name`` (an ``Annotated`` type) for a declared word-mechanism parameter.

    Its type and help come from the declarations of every mechanism that takes it.
    """
    from textdp import mechanisms as registry

    owners = [(m, p) for m in registry.available("word") for p in registry.get(m).PARAMETERS
              if p.name == name and p.flag]
    types = {p.type for _, p in owners}
    if len(types) != 1:
        raise ValueError(f"no single declared type for the flag --{name}: {types}")
    by_text: dict[str, list[str]] = {}  # mechanisms that declare it alike are named together
    for m, p in owners:
        by_text.setdefault(f"{p.help}, {p.describe_range()}", []).append(m)
    uses = "; ".join(f"{', '.join(ms)}: {text}" for text, ms in by_text.items())
    return Annotated[types.pop() | None, typer.Option(
        f"--{name.replace('_', '-')}", show_default=False,
        help=f"Mechanism parameter `{name}`, only for the mechanisms that take it ({uses}).")]


def mechanism_flags() -> set[str]:
    """The names of the parameters declared with their own flag."""
    from textdp import mechanisms as registry

    return {p.name for m in registry.available("word") for p in registry.get(m).PARAMETERS if p.flag}


MethodOption = mechanism_flag("method")
NListsOption = mechanism_flag("n_lists")
BetaOption = mechanism_flag("beta")
NeighborsOption = mechanism_flag("neighbors")
ParamOption = Annotated[list[str] | None, typer.Option(
    "--param", metavar="NAME=VALUE", show_default=False,
    help="Any other mechanism parameter; repeatable. VALUE is read as an integer, else a "
         "number, else true/false, else a string.")]


def option(*flags: str, help: str, metavar: str | None = None, **kwargs: Any) -> Any:
    """A Typer option; one with a ``metavar`` is a value the user names, shown without default."""
    if metavar is not None:
        kwargs.setdefault("show_default", False)
    return typer.Option(*flags, metavar=metavar, help=help, **kwargs)


def check_new_file(path: Path, what: str, *others: tuple[Path, str]) -> None:
    """``path`` can be written (:func:`textdp.io.paths.output_kind`: not a directory, socket or
    block device, its directory exists), and it is none of ``others`` (``(path, name)`` pairs such
    as the input), compared as files (:func:`textdp.io.paths.check_distinct`)."""
    check_distinct({name: other for other, name in others}, {what: path})
    check_target(path, what)



# --help in sections. An option names its section with typer's ``rich_help_panel=PANEL_…``; one
# that does not is placed by its parameter name (HELP_PANELS), and any other under PANEL_OTHER —
# so a new option always shows, and joins its section by one entry here or one argument there.
PANEL_MAIN = "Most used"
PANEL_IO = "Input and output"
PANEL_MECHANISM = "Mechanism"
PANEL_TOKENS = "Token policy"
PANEL_ENTITIES = "Entities and identifiers"
PANEL_LEDGER = "Ledger"
PANEL_ENGINE = "Engine"
PANEL_OTHER = "Other options"
#: Sections in this order; a panel not listed (e.g. DP-Prompt's) comes before PANEL_OTHER.
PANEL_ORDER = (PANEL_MAIN, PANEL_IO, PANEL_MECHANISM, PANEL_TOKENS, PANEL_ENTITIES, PANEL_LEDGER,
               PANEL_ENGINE)
#: The options a first reading needs, in this order, at the top of --help.
MOST_USED = ("output", "mechanism", "epsilon")
HELP_PANELS = {
    **dict.fromkeys(MOST_USED, PANEL_MAIN),
    **dict.fromkeys(("text_field", "format", "delimiter", "on_error", "null", "report",
                     "batch_size"), PANEL_IO),
    **dict.fromkeys(("seed", "vocabulary", "method", "n_lists", "beta", "neighbors", "param",
                     "unchanged_warning", "allocation", "epsilon_document", "epsilon_floor",
                     "epsilon_ceiling"), PANEL_MECHANISM),
    **dict.fromkeys(("oov", "mask_token", "keep_stopwords"), PANEL_TOKENS),
    **dict.fromkeys(("entities", "allow_list", "identifiers", "deny_list", "identifier_label",
                     "identifier_pattern"), PANEL_ENTITIES),
    **dict.fromkeys(("ledger", "ledger_policy", "budget"), PANEL_LEDGER),
    **dict.fromkeys(("engine", "workers", "ray_address", "verbose"), PANEL_ENGINE),
}


class SectionedCommand(TyperCommand):
    """Plain-text help (``rich_markup_mode=None``) with the options in sections.

    Typer draws ``rich_help_panel`` sections only in its rich mode, which would reflow the
    preformatted docstrings; this command keeps click's plain formatter and adds the sections.
    The help reads: usage, the docstring's first paragraph, the arguments, the options by section
    (PANEL_MAIN first: the most used), then the rest of the docstring under "Details".
    """

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.format_usage(ctx, formatter)
        text = inspect.cleandoc(self.help or "").partition("\f")[0]
        lead, _, details = text.partition("\n\n")
        if lead:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(lead)
        self.format_options(ctx, formatter)
        if details.strip():
            with formatter.section("Details"):
                formatter.write_text(details)
        self.format_epilog(ctx, formatter)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, panels = [], {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
                continue
            panel = (getattr(param, "rich_help_panel", None) or HELP_PANELS.get(param.name or "")
                     or PANEL_OTHER)
            panels.setdefault(panel, []).append((param.name, record))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        order = [p for p in PANEL_ORDER if p in panels]
        order += [p for p in panels if p not in order and p != PANEL_OTHER]
        order += [PANEL_OTHER] if PANEL_OTHER in panels else []
        for panel in order:
            rows = panels[panel]
            if panel == PANEL_MAIN:
                rows.sort(key=lambda row: MOST_USED.index(row[0]) if row[0] in MOST_USED else 99)
            with formatter.section(panel):
                formatter.write_dl([record for _, record in rows])
