"""Command-line options of budget allocation (``textdp privatize --allocation RULE ...``)."""

from __future__ import annotations

from typing import Annotated

import typer

from textdp.cli._common import CLIError

AllocationOption = Annotated[str | None, typer.Option(
    "--allocation", metavar="RULE", show_default=False,
    help="Split a document budget over its privatised words: uniform | position (public rules, "
         "exact composition) | frequency (data-dependent, custext/custext_plus only, worst-case "
         "guarantee). Needs --epsilon-document instead of --epsilon; see docs/allocation.md.")]
EpsilonDocumentOption = Annotated[float | None, typer.Option(
    "--epsilon-document", metavar="E", show_default=False,
    help="With --allocation: ε_doc, the budget of one document (Σ of its per-word ε).")]
EpsilonFloorOption = Annotated[float | None, typer.Option(
    "--epsilon-floor", metavar="F", show_default=False,
    help="With --allocation: per-word minimum ε, when the document's budget allows it.")]
EpsilonCeilingOption = Annotated[float | None, typer.Option(
    "--epsilon-ceiling", metavar="C", show_default=False,
    help="With --allocation: per-word maximum ε.")]


def check_allocation_flags(epsilon: float | None, rule: str | None, document: float | None,
                           floor: float | None, ceiling: float | None) -> None:
    """Which of --epsilon, --allocation, --epsilon-document, --epsilon-floor and
    --epsilon-ceiling go together (one-line errors). Their values go down to the release spec
    as given, which checks them once (:func:`textdp.allocation.resolve_allocation`)."""
    if rule is None:
        if (document, floor, ceiling) != (None, None, None):
            raise CLIError("--epsilon-document, --epsilon-floor and --epsilon-ceiling need "
                           "--allocation")
        if epsilon is None:
            raise CLIError("Missing option '--epsilon' (or --allocation with --epsilon-document)")
    elif epsilon is not None:
        raise CLIError("with --allocation give --epsilon-document, not --epsilon")
    elif document is None:
        raise CLIError("--allocation needs --epsilon-document")
