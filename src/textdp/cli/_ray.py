"""The command line's ``--engine ray`` options (``privatize``, ``embed``, ``docembed``) and
``privatize``'s entry to its Ray engine, :mod:`textdp.engines.ray.text_files` — imported when a
run uses it, so that a local run loads none of the Ray engines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from textdp.cli._arguments import PrivatizeArguments
    from textdp.cli._ledger import CommandLedger

EngineOption = Annotated[str, typer.Option(
    "--engine", metavar="local|ray",
    help="local: this process; ray: a Ray Data actor pool (the 'ray' extra: pip install -e '.[ray]'), "
         "the same output for a seed. INPUT may then be a directory of files, a quoted glob "
         "pattern such as 'data/*.jsonl', several files, or a URI such as s3://bucket/prefix/ "
         "(OUTPUT: a directory or a prefix).")]
WorkersOption = Annotated[int | None, typer.Option(
    "--workers", min=1, show_default=False,
    help="--engine ray: actors in the pool, one CPU each (default: the CPUs of this machine, "
         "or of the cluster with --ray-address).")]
AddressOption = Annotated[str | None, typer.Option(
    "--ray-address", metavar="ADDR", show_default=False,
    help="--engine ray: run on this Ray cluster (e.g. 10.0.0.1:6379 or auto) instead of a "
         "local Ray runtime started for the run.")]
VerboseOption = Annotated[bool, typer.Option(
    "--verbose",
    help="--engine ray: let Ray's own log lines through to stderr (by default they go to Ray's "
         "log directory, and stderr carries textdp's lines only).")]


def run(args: PrivatizeArguments, book: CommandLedger) -> None:
    """``textdp privatize --engine ray`` (:func:`textdp.engines.ray.text_files.run`)."""
    from textdp.engines.ray.text_files import run as run_on_ray

    run_on_ray(args, book)
