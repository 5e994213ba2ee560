"""``--vocabulary NAME``: the one declaration every command that takes a vocabulary shares."""

from __future__ import annotations

from typing import Annotated

import typer

from textdp.cli._common import CLIError, one_line
from textdp.vocab import Vocabulary

__all__ = ["VocabularyOption", "resolve_vocabulary"]

VocabularyOption = Annotated[str | None, typer.Option(
    "--vocabulary", metavar="NAME", show_default=False,
    help="Named vocabulary: glove-6b-50d (default), glove-6b-50d-400k or glove-840b-300d "
         "(fetched on first use); see `textdp vocab list`.")]


def resolve_vocabulary(name: str | None, size: int | None = None) -> Vocabulary:
    """The vocabulary a command was given (textdp's default, glove-6b-50d, when neither option was).

    ``size`` is ``--vocabulary-size``: it restricts only glove-6b-50d (to wordfreq's top N words).

    Raises:
        CLIError: an unknown name, ``--vocabulary-size`` with another vocabulary, or a vocabulary
            that cannot be fetched (one line, saying what to do offline).
    """
    from textdp.vocab import DEFAULT, load

    if size is not None and name not in (None, DEFAULT):
        raise CLIError(f"--vocabulary-size restricts only {DEFAULT}, not {name!r}")
    try:
        return load(name or DEFAULT, size=size)
    except (ValueError, RuntimeError, OSError) as exc:
        raise CLIError(one_line(exc)) from None
