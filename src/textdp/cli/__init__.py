"""The ``textdp`` command line (Typer).

Every subcommand lives in its own module of this package and is registered below with one line,
``app.command("name")(module.function)``; the function's signature (Typer ``Annotated``
options) is its interface and its docstring its ``--help``. A subcommand reports a user error by
raising :class:`~textdp.cli._common.CLIError` or :class:`textdp.io.FileError`: :func:`main`
prints it as one line ``textdp: error: …`` and exits with status 2, never with a traceback —
and so are Typer's own usage errors (a missing option, a value of the wrong type).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["app", "main", "CLIError"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status
    (listed in :func:`textdp.cli._app.main`).

    ``textdp --version`` alone is answered here, before the application (Typer, numpy and every
    subcommand's module) is imported: it costs the interpreter's start-up and ``import textdp``
    (issue 38, Deliver 5).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if list(args) == ["--version"]:
        return _version()
    from textdp.cli._app import main as run

    return run(argv)


def _version() -> int:
    from textdp._guide import installed_extras
    from textdp._version import __version__

    extras = ", ".join(installed_extras()) or "none (core install)"
    try:
        print(f"textdp {__version__} (extras: {extras})", flush=True)
    except BrokenPipeError:  # `textdp --version | true`: nothing to report, as for any command
        return 141
    return 0


def __getattr__(name: str) -> Any:
    # The application and the error type load with the first use, not with ``import
    # textdp.cli`` (the console script imports this module for ``--version`` too).
    if name == "app":
        from textdp.cli._app import app

        return app
    if name == "CLIError":
        from textdp.cli._common import CLIError

        return CLIError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
