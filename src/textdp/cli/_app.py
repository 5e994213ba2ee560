"""The ``textdp`` application: its Typer app, its subcommands and how errors become exit
statuses (:func:`main`); imported by :func:`textdp.cli.main` for any command but ``--version``.
A command line that names a subcommand builds the application with that one only (its module
alone is imported); ``app`` holds them all.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

try:  # recent typer vendors click; older versions use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException

from textdp.cli._common import (
    PROG,
    CLIError,
    PipeClosed,
    SectionedCommand,
    one_line,
    pipe_message,
)
from textdp.io import FileError
from textdp.io.atomic import sigterm_as_interrupt, write_errors_name
from textdp.io.paths import protecting_inputs, release_fifos

__all__ = ["application", "main"]  # and `app`, every subcommand, built on first use

_SETTINGS: dict[str, Any] = dict(
    name=PROG,
    help="Differentially private text: privatise documents word by word, with a privacy report.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,          # plain help: option texts may contain brackets like [MASK]
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        from textdp._guide import installed_extras
        from textdp._version import __version__

        extras = ", ".join(installed_extras()) or "none (core install)"
        typer.echo(f"{PROG} {__version__} (extras: {extras})")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print the version and the optional extras installed, and exit.")] = False,
) -> None:
    """Differentially private text: privatise documents word by word, with a privacy report."""
    from textdp._loading import quiet

    quiet()  # the library's "loading …" notices: a command's stderr is its own status lines


def _sub(help_text: str, command: str, module: str, function: str) -> typer.Typer:
    """A group of one subcommand (``textdp candidates build``)."""
    group = typer.Typer(help=help_text, no_args_is_help=True)
    group.command(command)(getattr(_module(module), function))
    return group


def _module(name: str) -> Any:
    return importlib.import_module(f"textdp.cli.{name}")


# Subcommands: one module each, one line each, in the order `textdp --help` lists them. A
# command is (module, function, options of app.command); a group is built by a function. Only
# the module of the command named on the command line is imported (issue 38, Deliver 5).
_COMMANDS: dict[str, tuple[str, str, dict[str, Any]] | Callable[[], typer.Typer]] = {
    "privatize": ("privatize", "privatize", {"cls": SectionedCommand}),
    "mechanisms": ("mechanisms", "mechanisms", {}),
    "embed": ("embed", "embed", {}),
    "docembed": ("docembed", "docembed", {}),
    "calibrate": ("calibrate", "calibrate", {}),
    "evaluate": ("evaluate", "evaluate", {}),
    "report": ("report", "report", {}),
    "audit": ("audit", "audit", {}),
    "assess": ("assess", "assess", {}),
    "synthesize": ("synthesize", "synthesize", {}),
    "audit-synthesize": ("audit_synthesize", "audit_synthesize", {}),
    "candidates": lambda: _sub("DeepCandidate's candidate set F, built from public documents.",
                               "build", "candidates", "build_candidates_command"),
    "recoder": lambda: _sub("DeepCandidate's recoder H, trained on public documents.",
                            "train", "candidates", "train_recoder_command"),
    "vocab": lambda: _module("vocab").app,
    "ledger": lambda: _module("ledger").app,
    "experiment": ("experiment", "experiment", {"context_settings": {
        "allow_extra_args": True, "ignore_unknown_options": True}}),
}


def application(only: str | None = None) -> typer.Typer:
    """The Typer application with every subcommand, or with only ``only`` (what a command line
    that names it needs: the same command, its help and its errors)."""
    app = typer.Typer(**_SETTINGS)
    app.callback()(_root)
    for name, entry in _COMMANDS.items():
        if only is not None and name != only:
            continue
        if callable(entry):
            app.add_typer(entry(), name=name)
        else:
            module, function, options = entry
            app.command(name, **options)(getattr(_module(module), function))
    return app


@functools.cache
def _full() -> typer.Typer:
    return application()


def __getattr__(name: str) -> Any:
    if name == "app":  # every subcommand: imported on first use (tests, `textdp --help`)
        return _full()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _error(message: object) -> int:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return 2


def _pipe_closed(message: object) -> int:
    """Exit status 141 (see :class:`PipeClosed`); standard output is pointed at /dev/null so that
    the interpreter's final flush does not fail on the closed pipe once more."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return 141


def _log_to_stderr() -> None:
    """Progress the library reports on the ``textdp`` logger (INFO: e.g. 1-Diffractor building
    its word lists the first time) goes to stderr as ``textdp: …`` lines."""
    import logging

    class Stderr(logging.Handler):  # the current sys.stderr, as say() and warn() use
        def emit(self, record: logging.LogRecord) -> None:
            print(f"{PROG}: {record.getMessage()}", file=sys.stderr, flush=True)

    logger = logging.getLogger("textdp")
    if not any(type(h).__name__ == "Stderr" for h in logger.handlers):
        logger.addHandler(Stderr())
    logger.setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Exit status: 0 on success, 2 for any user error (one line on stderr, no traceback, no output
    file; a stream output that cannot be written in full, such as ``/dev/full``, included),
    3 when ``calibrate`` finds no ε meeting its targets, 130 when interrupted (SIGINT or
    SIGTERM; temporary files removed), 141 when standard output (or a FIFO output) was closed
    by its reader before it read everything (``… | head``; no file output is renamed into
    place; a ledger keeps such a release counted, or voids it when no byte was delivered), 1 for
    an internal error (a bug: one line too; the environment variable TEXTDP_TRACEBACK=1 shows
    its traceback).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    named = args[0] if args and args[0] in _COMMANDS else None
    command = typer.main.get_command(_full() if named is None else application(named))
    _log_to_stderr()
    try:
        return _main(command, argv)
    finally:  # a FIFO named as an output and not written (the run failed): its reader sees the end
        release_fifos()


def _main(command: Any, argv: Sequence[str] | None) -> int:
    try:
        # SIGTERM unwinds like Ctrl-C (temporary files are removed); no output replaces an input.
        with sigterm_as_interrupt(), protecting_inputs():
            status = command.main(args=list(argv) if argv is not None else None, prog_name=PROG,
                                  standalone_mode=False)
            # What a command printed (a listing, a table) reaches standard output here, where a
            # full disk or a closed pipe is one line and a status, not a message at exit.
            with write_errors_name("<stdout>"):
                sys.stdout.flush()
    except PipeClosed as exc:
        return _pipe_closed(exc)
    except BrokenPipeError as exc:
        return _pipe_closed(pipe_message(exc))
    except SystemExit as exc:  # click turns a BrokenPipeError into a silent exit(1): ours is 141
        if isinstance(exc.__context__, BrokenPipeError):
            return _pipe_closed(pipe_message(exc.__context__))
        raise
    except (CLIError, FileError) as exc:
        return _error(exc)
    except OSError as exc:  # permission denied, disk full, …: the user's environment, not a bug
        name = f"{exc.filename}: " if exc.filename else ""
        return _error(f"{name}{exc.strerror or exc}")
    except ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `textdp`: the help is the message
            print(exc.format_message(), file=sys.stderr)
            return 2
        hint = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) else ""
        return _error(exc.format_message() + hint)
    except (typer.Abort, KeyboardInterrupt) as exc:
        if isinstance(exc.__context__, EOFError):  # click turns an EOFError into Abort
            return _error(f"unexpected end of input ({one_line(exc.__context__) or 'EOF'})")
        status = 130
    except Exception as exc:  # a bug: still one line, never a traceback (unless asked for)
        if os.environ.get("TEXTDP_TRACEBACK"):
            raise
        print(f"{PROG}: internal error (please report it; TEXTDP_TRACEBACK=1 shows the "
              f"traceback): {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 1
    if status == 130:  # typer turns KeyboardInterrupt into a silent Exit(130)
        print(f"{PROG}: interrupted", file=sys.stderr)
    return status if isinstance(status, int) else 0
