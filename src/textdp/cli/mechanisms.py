"""``textdp mechanisms``: the names ``--mechanism`` accepts, with their declared parameters."""

from __future__ import annotations

import inspect

import typer

from textdp import mechanisms as registry
from textdp._checks import Parameter
from textdp.mechanisms._signature import keyword_parameters

__all__ = ["describe_parameter", "keyword_parameters", "mechanisms"]


def describe_parameter(p: Parameter) -> str:
    """``name range, default`` (or ``required``); ``name (Python only)`` for an array, a model or a
    callable, which the command line cannot give."""
    if not p.command_line:
        return f"{p.name} (Python only)"
    default = "required" if p.required else f"default {str(p.default).lower()}"
    return f"{p.name} {p.describe_range()}, {default}"


def mechanisms() -> None:
    """List the available mechanisms.

    One line per mechanism: its name (the value of --mechanism), a summary, and each parameter
    it declares with its range and default (pass them with --param NAME=VALUE or their own flags;
    epsilon with --epsilon).
    """
    for name in registry.available("word"):
        cls = registry.get(name)
        summary = (inspect.getdoc(cls) or "").split("\n", 1)[0]
        params = "; ".join(describe_parameter(p) for p in cls.PARAMETERS)
        typer.echo(f"{name}\t{summary} (parameters: {params})")
    from textdp.mechanisms import prompt  # whole-document rewriting with a language model

    for name in prompt.available():
        cls = prompt.MECHANISMS[name]
        summary = (inspect.getdoc(cls) or "").split("\n", 1)[0]
        params = "; ".join(describe_parameter(p) for p in cls.PARAMETERS if p.name != "template")
        typer.echo(f"{name}\t{summary} (parameters: {params}; needs the 'lm' extra)")
