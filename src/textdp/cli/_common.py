"""What every subcommand shares: the one-line error, stderr messages, the progress bar and the
mechanism options."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.io.paths import check_distinct, check_target

__all__ = ["CLIError", "PipeClosed", "say", "warn", "progress_bar"]

PROG = "textdp"


class CLIError(Exception):
    """A user error: printed as ``textdp: error: <message>`` on one line, exit code 2."""


class PipeClosed(CLIError):
    """Standard output was closed by its reader before all the output was written (``… | head``):
    one line, exit code 141 (128 + SIGPIPE, the status a shell shows for a process that a closed
    pipe ends), so that ``set -o pipefail`` sees that the output was cut short."""


def one_line(message: object) -> str:
    return " ".join(str(message).split())


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
    from tqdm import tqdm

    def make(total: int | None, unit: str) -> Any:
        return tqdm(total=total, unit=unit, unit_scale=unit == "B", desc=desc, file=sys.stderr,
                    disable=not sys.stderr.isatty(), leave=False, dynamic_ncols=True)

    return make


# Mechanism options shared by every subcommand that builds a word mechanism: one typed flag per
# parameter declared with ``flag=True`` (type and help from the declarations), --param for the rest.
def mechanism_flag(name: str) -> Any:
    """The option ``--name`` (an ``Annotated`` type) for a declared word-mechanism parameter.

    Its type and help come from the declarations of every mechanism that takes it.
    """
    from textdp import mechanisms as registry

    owners = [(m, p) for m in registry.available() for p in registry.get(m).PARAMETERS
              if p.name == name and p.flag]
    types = {p.type for _, p in owners}
    if len(types) != 1:
        raise ValueError(f"no single declared type for the flag --{name}: {types}")
    uses = "; ".join(f"{m}: {p.help}, {p.describe_range()}" for m, p in owners)
    return Annotated[types.pop() | None, typer.Option(
        f"--{name.replace('_', '-')}", show_default=False,
        help=f"Mechanism parameter `{name}`, only for the mechanisms that take it ({uses}).")]


def mechanism_flags() -> set[str]:
    """The names of the parameters declared with their own flag."""
    from textdp import mechanisms as registry

    return {p.name for m in registry.available() for p in registry.get(m).PARAMETERS if p.flag}


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

