"""``textdp privatize`` on this process (the default engine): records streamed from INPUT, through
the spec's Privatizer, to OUTPUT; OUTPUT and the report appear together at the end, or not at all
(with ``--ledger``: recorded as pending before, completed after)."""

from __future__ import annotations

from textdp.cli._arguments import PrivatizeArguments, say_outcome
from textdp.cli._common import progress_bar
from textdp.cli._ledger import CommandLedger, fingerprint_file
from textdp.io import map_text_file

__all__ = ["run"]


def run(args: PrivatizeArguments, book: CommandLedger) -> None:
    """Privatise ``args.input`` into ``args.output`` with ``args.spec``; ``book``: the command's
    ledger (built before the spec, so that its errors come first)."""
    spec, input, options, format = args.spec, args.input, args.read_options, args.format
    runner = spec.privatizer()
    with book.check(spec.mechanism_object(),
                    lambda: fingerprint_file(input, options=options, format=format),
                    seed=spec.seed), book.files() as files:
        io_summary = map_text_file(input, args.output, book.watch(runner.run), options=options,
                                   format=format, batch_size=args.batch_size,
                                   progress=progress_bar("privatize"), files=files)
        result = book.attach(runner.report(io=io_summary))
        if args.report is not None:
            files.write_json(args.report, result)
    say_outcome(io_summary, args.output, args.report, result)
