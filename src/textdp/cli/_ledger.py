"""The ledger options every releasing command shares (``--ledger``, ``--ledger-policy``,
``--budget``) and the step that checks a release against the ledger and records it.

A command builds :class:`CommandLedger` with the paths, before reading anything (bad options fail
first), and runs its release through :meth:`CommandLedger.run` (:func:`textdp.runner.run_release`),
with its INPUT as the source and an engine that stages its output in the group from
:meth:`CommandLedger.files`::

    source = book.source(lambda: fingerprint_file(input))   # the first pass, with --ledger only
    with book.files() as files:
        outcome = book.run(spec, source, engine, commit)     # commit stages the report, commits

The runner computes the input's fingerprint (a first pass over a text file), reads the ledger,
applies the policy and writes the pending line before any output (write-ahead, see
:mod:`textdp.ledger`). Committing the group first checks that the input released is the input
fingerprinted (else exit 2, "INPUT changed while it was read", and the pending line is voided),
then writes the group (:meth:`textdp.io.AtomicFiles.commit`: files flushed to the disk, stream
targets written in full and read by their readers, the renames, the directories flushed); only
after the block — every output durably committed — is the release completed. A failure before any
output became visible (a full ``/dev/full``, a pipe closed before its first byte) voids it; a
failure once something may be visible (bytes in a pipe its reader closed, a rename begun) leaves
the pending line, which counts, and is never completed. Standard input cannot be fingerprinted
before the output streams, so ``--ledger`` refuses it (docs/accounting.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from textdp.cli._common import CLIError, PipeClosed, option, pipe_message, warn
from textdp.io import AtomicFiles, FileError, ReadOptions, open_records
from textdp.io.paths import check_distinct, check_target, is_stream
from textdp.io.streams import is_stdio

__all__ = ["BudgetOpt", "CommandLedger", "CommandSource", "LedgerOpt", "LedgerPolicyOpt", "embed_input",
           "encoder_space", "fingerprint_file"]

LedgerOpt = Annotated[Path | None, option(
    "--ledger", metavar="PATH",
    help="Privacy ledger (JSON lines): the release is checked against the earlier releases of "
         "the same input recorded there (the report gains 'ledger'), recorded as pending before "
         "any output and completed once the output is written. INPUT must be a file (not "
         "standard input).")]
LedgerPolicyOpt = Annotated[str, option(
    "--ledger-policy", metavar="warn|refuse",
    help="warn: earlier releases and an exceeded --budget are warned about; refuse: a release "
         "whose cumulative ε for this input would exceed --budget, or any release while the ledger "
         "holds a line that cannot be validated, fails with status 2 before any output.")]
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


def encoder_space(encoder: Any) -> Any:
    """What fixes the metric of embeddings of texts: the encoder's name and its fingerprint (an
    :class:`textdp.privacy.measurement.InputSpace`)."""
    from textdp.privacy.measurement import InputSpace

    d = encoder.describe()
    fp = (d.get("vocabulary") or {}).get("fingerprint") or d.get("weights_sha256") or ""
    return InputSpace.encoder(d.get("name"), fp)


def embed_input(input: Path, X: Any, encoder: Any, text_field: str,
                ) -> tuple[Callable[[], tuple[str, int]], str, Any]:
    """``textdp embed``'s (fingerprint, input kind, space): the texts and the encoder when it
    encoded texts (a first pass over the file), else the vectors as read."""
    if encoder is not None:
        return (lambda: fingerprint_file(input, text_field=text_field)), "texts", \
            encoder_space(encoder)
    from textdp.privacy.fingerprint import fingerprint_vectors
    from textdp.privacy.measurement import InputSpace

    return (lambda: fingerprint_vectors(X)), "vectors", InputSpace.vectors(X.shape[1])


class _LedgerFiles(AtomicFiles):
    """The command's output group: its commit first asks the ledger (input unchanged); its
    :attr:`exposed` tells the ledger whether a failure may have left something visible."""

    def __init__(self, book: CommandLedger) -> None:
        super().__init__()
        self._book = book

    def commit(self) -> None:
        if not self._done:
            try:
                self._book.before_commit()
            except BaseException:
                self.abort()
                raise
        super().commit()


class CommandLedger:
    """``--ledger`` / ``--ledger-policy`` / ``--budget`` of one command (no-op without --ledger)."""

    def __init__(self, path: Path | None, policy: str, budget: float | None, input: Path,
                 *others: Path | None) -> None:
        from textdp.ledger import LedgerError, as_ledger

        self.release: Any = None
        self.input = input
        #: Where the output goes (recorded in the ledger so the release can be found again).
        self.output = others[0] if others else None
        self._fingerprint: Callable[[], tuple[str, int]] | None = None
        self._expected: tuple[str, int] | None = None
        self._hash: Any = None
        self._released: tuple[str, int] | None = None
        self._groups: list[_LedgerFiles] = []
        if path is None and budget is not None:
            raise CLIError("--budget needs --ledger PATH")
        several = isinstance(input, (list, tuple))  # --engine ray over several INPUT files
        if path is not None and not several and is_stream(input):
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

    def source(self, fingerprint: Callable[[], tuple[str, int]], input_kind: str = "texts",
               space: Any = None) -> CommandSource:
        """The runner's source for this command's INPUT: ``fingerprint()`` is its first pass
        (run only with --ledger), compared again at commit (:meth:`before_commit`)."""
        return CommandSource(self, fingerprint, input_kind, space)

    def run(self, spec: Any, source: CommandSource, engine: Any,
            commit: Callable[[Any, Callable[[], None]], None] | None = None) -> Any:
        """The command's release through :func:`textdp.runner.run_release`: checked and written
        ahead before ``engine`` runs (exit 2 when refused or when the pending line cannot be
        written); completed after ``commit`` (which commits the output group from
        :meth:`files`), voided when the release failed before its output group committed, kept
        (counted) when it failed later. Returns the :class:`textdp.runner.Outcome`."""
        from textdp.runner import run_release

        output = self.output
        messages: list[str] = []
        try:
            outcome = run_release(spec, source, engine, ledger=self.book,
                                  output_path=("standard output" if output is not None
                                               and is_stdio(output) else output),
                                  commit=commit, exposure=self._exposed, notify=messages.append,
                                  entered=self._entered)
        except BaseException as exc:
            self._failed(exc, messages)
            raise
        for message in messages:
            warn(message)
        return outcome

    def _failed(self, exc: BaseException, messages: list[str]) -> None:
        """A release that raised: a LedgerError before it was entered is exit 2; a closed pipe
        says whether the release stays pending (that line replaces the ledger's own message);
        otherwise the ledger's messages are warned and the error goes on."""
        from textdp.ledger import LedgerError

        if isinstance(exc, LedgerError) and self.release is None:
            raise CLIError(str(exc)) from None
        if isinstance(exc, BrokenPipeError) and self.release is not None:
            guard = self.release
            what = (f"release {guard.id} stays pending and counts against the budget (part of "
                    "the output was delivered)" if guard.state == "pending" else
                    f"release {guard.id} is voided (nothing was delivered)")
            raise PipeClosed(f"{pipe_message(exc)}; ledger {self.book.path}: {what}") from None
        for message in messages:
            warn(message)

    def _entered(self, release: Any) -> None:
        self.release = release

    def _exposed(self) -> bool:
        return any(g.exposed for g in self._groups)

    @contextlib.contextmanager
    def check(self, mechanism: Any, fingerprint: Callable[[], tuple[str, int]],
              input_kind: str = "texts", space: Any = None, *,
              seed: int | None, resumes: str | None = None) -> Iterator[CommandLedger]:
        """The guarded release around a block, for the engines not yet moved onto
        :meth:`run` (``--engine ray``: :mod:`textdp.engines.ray`; ``-m dp_prompt``, whose
        resumable staging the file engine does not have yet): :func:`textdp.runner.guard` with
        this command's policy on failures (as :meth:`run`). ``resumes``: the pending release a
        resumed job continues (no new pending line)."""
        if self.book is None:
            yield self
            return
        from textdp.runner import guard

        source = self.source(fingerprint, input_kind, space)
        output = self.output
        messages: list[str] = []
        try:
            with guard(self.book, mechanism, source, source.fingerprint(), seed=seed,
                       space=space, exposure=self._exposed, notify=messages.append,
                       resumes=resumes,
                       output_path=("standard output" if output is not None
                                    and is_stdio(output) else output)) as release:
                self.release = release
                yield self
        except BaseException as exc:
            self._failed(exc, messages)
            raise
        for message in messages:
            warn(message)

    def files(self) -> AtomicFiles:
        """The command's output group (an :class:`AtomicFiles`): with a ledger, committing it
        first checks that the input did not change since it was fingerprinted, and from then on
        a failure keeps the release counted."""
        group = _LedgerFiles(self)
        self._groups.append(group)
        return group

    def watch(self, transform: Callable[[list[str], int], Any]) -> Callable[[list[str], int], Any]:
        """``transform(texts, start)`` of :func:`textdp.io.map_text_file`, hashing the texts it is
        given: the release pass's own fingerprint, compared with the first pass's at commit
        (without it, the commit reads the input once more to compare)."""
        if self.book is None:
            return transform
        from textdp.privacy.fingerprint import InputHash

        self._hash = digest = InputHash("texts", documents=False)

        def watched(texts: list[str], start: int) -> Any:
            digest.texts(texts)
            return transform(texts, start)

        return watched

    def released(self, fingerprint: tuple[str, int]) -> None:
        """The (fingerprint, count) of the records released, where the release pass computed it
        outside this process (the Ray engine's workers): compared at commit instead of reading
        the input once more."""
        self._released = fingerprint

    def before_commit(self) -> None:
        """Refuse (exit 2) when the records released are not those fingerprinted before the
        release (an input that grew or changed while it was read); the caller aborts its output
        and the pending line is voided."""
        if self.release is None or self._expected is None or self._fingerprint is None:
            return
        if self._released is not None:
            seen = self._released
        elif self._hash is not None:
            seen = (self._hash.hexdigest(), self._hash.count)
        else:
            seen = self._fingerprint()
        if seen != self._expected:
            name = ", ".join(map(str, self.input)) if isinstance(self.input, (list, tuple)) \
                else self.input
            raise CLIError(f"{name}: INPUT changed while it was read ({self._expected[1]} "
                           f"records fingerprinted, {seen[1]} released, or other content); "
                           "nothing was released (the ledger's pending line is voided)")

    def attach(self, report: dict[str, Any]) -> dict[str, Any]:
        """The report with its ``ledger`` section and warnings (unchanged without --ledger)."""
        return self.release.attach(report) if self.release is not None else report


class CommandSource:
    """A command's INPUT as the runner's source (:class:`textdp.runner.Source`): its name, the
    encoding and space the ledger records, and its first-pass fingerprint (kept by the command's
    ledger to compare at commit)."""

    def __init__(self, book: CommandLedger, fingerprint: Callable[[], tuple[str, int]],
                 input_kind: str = "texts", space: Any = None) -> None:
        self.name = book.input
        self.input_kind = input_kind
        self.space = space
        self._book = book
        self._fingerprint = fingerprint

    def fingerprint(self) -> tuple[str, int]:
        seen = self._fingerprint()
        self._book._fingerprint, self._book._expected = self._fingerprint, seen
        return seen
