"""The ledger options every releasing command shares (``--ledger``, ``--ledger-policy``,
``--budget``) and the step that checks a release against the ledger and records it.

A command builds :class:`CommandLedger` with the paths, before reading anything (bad options fail
first), and wraps its release and its atomic output in :meth:`CommandLedger.check`::

    with book.check(mech, fingerprint, seed=seed), AtomicFiles() as files:
        ...                                  # book.attach(report) before writing the report

``check`` computes the input's fingerprint (a first pass over a text file), reads the ledger and
applies the policy before any output; the line is appended after ``AtomicFiles`` committed the
output. Standard input cannot be fingerprinted before the output streams, so ``--ledger`` refuses
it (docs/accounting.md).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from textdp.cli._common import CLIError, option
from textdp.io import FileError, ReadOptions, open_records
from textdp.io.paths import check_distinct, check_target, is_stream
from textdp.io.streams import is_stdio

__all__ = ["BudgetOpt", "CommandLedger", "LedgerOpt", "LedgerPolicyOpt", "embed_input",
           "encoder_space", "fingerprint_file"]

LedgerOpt = Annotated[Path | None, option(
    "--ledger", metavar="PATH",
    help="Privacy ledger (JSON lines): the release is checked against the earlier releases of "
         "the same input recorded there (the report gains 'ledger') and appended once the output "
         "is written. INPUT must be a file (not standard input).")]
LedgerPolicyOpt = Annotated[str, option(
    "--ledger-policy", metavar="warn|refuse",
    help="warn: earlier releases and an exceeded --budget are warned about; refuse: a release "
         "whose cumulative ε for this input would exceed --budget fails with status 2 before "
         "any output.")]
BudgetOpt = Annotated[float | None, option(
    "--budget", metavar="EPS",
    help="ε budget per input for --ledger (metric DP: per unit of the metric; compared with "
         "each composition group's cumulative ε).")]


def fingerprint_file(path: Path | list[Path], *, options: ReadOptions | None = None,
                     format: str | None = None, text_field: str = "text") -> tuple[str, int]:
    """(fingerprint, count) of the texts a command will release from ``path`` (or from several
    files, in order, as one corpus): a first pass with the same reader and options
    (:mod:`textdp.privacy.fingerprint`, ``texts``)."""
    from textdp.privacy.fingerprint import InputHash

    h = InputHash("texts")
    for one in path if isinstance(path, list) else [path]:
        with open_records(one, text_field=text_field, format=format, options=options) as reader:
            for batch in reader.batches(4096):
                h.texts(batch.texts)
    return h.hexdigest(), h.count


def encoder_space(encoder: Any) -> str:
    """What fixes the metric of embeddings of texts: the encoder's name and its fingerprint."""
    d = encoder.describe()
    fp = (d.get("vocabulary") or {}).get("fingerprint") or d.get("weights_sha256") or ""
    return f"encoder {d.get('name')} {fp}".strip()


def embed_input(input: Path, X: Any, encoder: Any, text_field: str,
                ) -> tuple[Callable[[], tuple[str, int]], str, str]:
    """``textdp embed``'s (fingerprint, input kind, space): the texts and the encoder when it
    encoded texts (a first pass over the file), else the vectors as read."""
    if encoder is not None:
        return (lambda: fingerprint_file(input, text_field=text_field)), "texts", \
            encoder_space(encoder)
    from textdp.privacy.fingerprint import fingerprint_vectors

    return (lambda: fingerprint_vectors(X)), "vectors", \
        f"the input vectors themselves (R^{X.shape[1]})"


class CommandLedger:
    """``--ledger`` / ``--ledger-policy`` / ``--budget`` of one command (no-op without --ledger)."""

    def __init__(self, path: Path | None, policy: str, budget: float | None, input: Path,
                 *others: Path | None) -> None:
        from textdp.ledger import LedgerError, as_ledger

        self.release: Any = None
        if path is None and budget is not None:
            raise CLIError("--budget needs --ledger PATH")
        if path is not None and is_stream(input):
            raise CLIError("--ledger needs INPUT to be a file, not standard input or a pipe: the "
                           "input's fingerprint is computed in a first pass before any output is "
                           "written (save the input to a file first)")
        if path is not None and is_stdio(path):
            raise FileError(path, None, "the ledger must be its own file (not -, the input, the "
                                        "output or the report)")
        if path is not None:  # compared as files (inode), not as names; a regular file
            named = dict(zip(("output", "report"), others, strict=False))
            check_distinct({"input": input}, {"ledger": path, **named})
            check_target(path, "ledger", stream=False)
        try:
            self.book = as_ledger(path, policy, budget) if path is not None else None
            if path is None and policy != "warn":
                raise LedgerError("--ledger-policy needs --ledger PATH")
        except ValueError as exc:
            raise CLIError(str(exc)) from None

    @contextlib.contextmanager
    def check(self, mechanism: Any, fingerprint: Callable[[], tuple[str, int]],
              input_kind: str = "texts", space: str | None = None, *,
              seed: int | None) -> Iterator[CommandLedger]:
        """Check before the block (exit 2 when refused), append after it succeeded."""
        if self.book is None:
            yield self
            return
        from textdp.ledger import LedgerError

        fp, count = fingerprint()
        guard = self.book.release(mechanism=mechanism, input_fingerprint=fp, records=count,
                                  seed=seed, input_kind=input_kind, space=space)
        try:
            self.release = guard.__enter__()
        except LedgerError as exc:
            raise CLIError(str(exc)) from None
        try:
            yield self
        except BaseException:
            guard.__exit__(*sys.exc_info())
            raise
        try:
            guard.__exit__(None, None, None)
        except LedgerError as exc:
            raise CLIError(str(exc)) from None

    def attach(self, report: dict[str, Any]) -> dict[str, Any]:
        """The report with its ``ledger`` section and warnings (unchanged without --ledger)."""
        return self.release.attach(report) if self.release is not None else report
