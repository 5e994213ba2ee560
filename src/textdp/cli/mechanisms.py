"""``textdp mechanisms``: the names ``--mechanism`` accepts."""

from __future__ import annotations

import inspect

import typer

from textdp import mechanisms as registry


def keyword_parameters(cls: type) -> list[str] | None:
    """The keyword parameters of a mechanism's constructor (None if it takes ``**kwargs``)."""
    params = inspect.signature(cls.__init__).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params
            if p.kind is inspect.Parameter.KEYWORD_ONLY
            or (p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                and p.name not in ("self", "vocabulary"))]


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
