"""What every subcommand shares: the one-line error, stderr messages, the progress bar."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["CLIError", "say", "warn", "progress_bar"]

PROG = "textdp"


class CLIError(Exception):
    """A user error: printed as ``textdp: error: <message>`` on one line, exit code 2."""


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
