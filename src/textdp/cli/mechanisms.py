"""``textdp mechanisms``: the names ``--mechanism`` accepts."""

from __future__ import annotations

import inspect

import typer

from textdp import mechanisms as registry
from textdp.mechanisms._signature import keyword_parameters

__all__ = ["keyword_parameters", "mechanisms"]


def mechanisms() -> None:
    """List the available mechanisms.

    One line per mechanism: its name (the value of --mechanism), a summary, and the parameters
    its constructor takes (pass them with --param NAME=VALUE or their own flags).
    """
    for name in registry.available():
        cls = registry.get(name)
        summary = (inspect.getdoc(cls) or "").split("\n", 1)[0]
        params = keyword_parameters(cls)
        shown = ", ".join(params) if params is not None else "any"
        typer.echo(f"{name}\t{summary} (parameters: {shown})")
