"""Command-line options of budget allocation (``textdp privatize --allocation RULE ...``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line

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


def allocation_options(epsilon: float | None, rule: str | None, document: float | None,
                       floor: float | None, ceiling: float | None) -> tuple[float, Any]:
    """(ε to build the mechanism with, the Allocation or None), checked (one-line errors)."""
    from textdp.allocation import Allocation

    if rule is None:
        if (document, floor, ceiling) != (None, None, None):
            raise CLIError("--epsilon-document, --epsilon-floor and --epsilon-ceiling need "
                           "--allocation")
        if epsilon is None:
            raise CLIError("Missing option '--epsilon' (or --allocation with --epsilon-document)")
        return epsilon, None
    if epsilon is not None:
        raise CLIError("with --allocation give --epsilon-document, not --epsilon")
    if document is None:
        raise CLIError("--allocation needs --epsilon-document")
    try:
        allocation = Allocation(rule, document, floor, ceiling)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    return allocation.top, allocation
