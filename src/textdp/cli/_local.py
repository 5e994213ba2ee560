"""``textdp privatize`` on this process (the default engine): records streamed from INPUT, through
the spec's Privatizer, to OUTPUT; OUTPUT and the report appear together at the end, or not at all
(with ``--ledger``: recorded as pending before, completed after). The release runs through
:func:`textdp.runner.run_release` (:meth:`textdp.cli._ledger.CommandLedger.run`)."""

from __future__ import annotations

from typing import Any

from textdp.cli._arguments import PrivatizeArguments, say_outcome
from textdp.cli._common import progress_bar
from textdp.cli._ledger import CommandLedger, fingerprint_file
from textdp.io import map_text_file

__all__ = ["FileEngine", "run"]


def run(args: PrivatizeArguments, book: CommandLedger) -> None:
    """Privatise ``args.input`` into ``args.output`` with ``args.spec``; ``book``: the command's
    ledger (built before the spec, so that its errors come first)."""
    spec, input, options, format = args.spec, args.input, args.read_options, args.format
    runner = spec.privatizer()
    source = book.source(lambda: fingerprint_file(input, options=options, format=format))
    with book.files() as files:
        engine = FileEngine(runner, args, files, book, args.batch_size, "privatize")
        outcome = book.run(spec, source, engine, engine.commit)
    say_outcome(outcome.output, args.output, args.report, outcome.report)


class FileEngine:
    """The runner's engine for a text file (:func:`textdp.io.map_text_file`): ``runner.run``
    over INPUT's records into OUTPUT, staged in ``files`` (the command's output group); the
    output is the I/O summary, the report ``runner.report(io=...)``. :meth:`commit` stages the
    report and commits the group."""

    def __init__(self, runner: Any, args: PrivatizeArguments, files: Any, book: CommandLedger,
                 batch_size: int, label: str) -> None:
        self.runner, self.args, self.files, self.book = runner, args, files, book
        self.batch_size, self.label = batch_size, label

    def run(self, spec: Any, source: Any, measurement: Any) -> Any:
        from textdp.runner import Outcome

        args = self.args
        io_summary = map_text_file(args.input, args.output, self.book.watch(self.runner.run),
                                   options=args.read_options, format=args.format,
                                   batch_size=self.batch_size,
                                   progress=progress_bar(self.label), files=self.files)
        return Outcome(io_summary, self.runner.report(io=io_summary))

    def commit(self, outcome: Any, exposed: Any) -> None:
        if self.args.report is not None:
            self.files.write_json(self.args.report, outcome.report)
        self.files.commit()
