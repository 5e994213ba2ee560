"""A privacy ledger across releases: an append-only JSON-lines file, written ahead of each release.

Every release of textdp states its guarantee for that release alone; releasing the same input
again spends privacy again. A :class:`Ledger` records each release (input fingerprint,
the input's name and the output's path where the front knows them, mechanism, parameters,
guarantee, its measurement's stable ids, vocabulary fingerprint, record count, time, textdp
version, whether it was seeded) and, before the next release, reads the file back: the release learns how
often its input was released before and what the cumulative guarantee is under sequential
composition (:mod:`textdp.privacy.composition`, keyed on the stable ids of the release's
measurement, :mod:`textdp.privacy.measurement`), and a ``refuse`` policy stops a release whose
cumulative ε would exceed a budget before anything is released.

One small API for every front (CLI, Python API, integrations)::

    ledger = Ledger("releases.jsonl", policy="refuse", budget=20)
    with ledger.release(mechanism=mech, input_fingerprint=fp, records=n, seed=None,
                        input_name="notes.txt", output_path="notes.private.txt") as rel:
        output = ...                        # rel.section / rel.warnings go into the report
    # completed here if the block succeeded, voided if it raised

:meth:`Ledger.release` is the one guarded release (budget check → release → record); every front
reaches it through :func:`textdp.runner.run_release` (the runner's :func:`textdp.runner.guard` is
its only caller: tests/test_runner.py).

Per document (:mod:`textdp.ledger_documents`): a fingerprint computed by
:mod:`textdp.privacy.fingerprint` carries the input's documents, and the pending line records a
keyed 8-byte tag and the size of each (16 base64 characters a document; the key is
``<path>.key``, mode 0600). The budget is then checked for every document across every release
and every input that held it, and one budget is shared across metric groups
(docs/accounting.md, "Per document"). That policy — earlier releases, cumulative guarantee,
per-document composition, refusal — is :func:`textdp.ledger_budget.assess`; the lines are read
and validated by :mod:`textdp.ledger_lines`.

Lines of schema ``textdp.ledger/2`` written before the stable ids carry no ``measurement``: their
metric id is derived from the mechanism's name, parameters and input space
(:func:`textdp.privacy.measurement.legacy_metric_id`), so they read with the same totals and
compose with new releases of the same metric. The new fields (``measurement``, ``input.name``,
``input.output``) are additive: a textdp that predates them reads such lines as before.

Write-ahead protocol (docs/accounting.md, "The ledger file"):

1. entering the block takes the exclusive lock (every policy), reads and validates the whole
   file, applies the policy and appends a ``pending`` line (one write, fsync), then unlocks;
2. the block makes the output visible (the CLI's atomic rename, a function's return);
3. leaving the block appends a ``complete`` line naming the pending one, or a ``void`` line when
   the block raised before anything became visible (see :meth:`Release.exposed`).

A pending line counts against the budget exactly as a complete one does, so a crash, a signal or
a failed write at any point leaves the ledger counting every release that may be visible; the
worst case is a release counted that did not happen. The lock is not held while the output is
produced: the pending line is already what every later reader counts, so a concurrent ``refuse``
run sees it whether the release is still running, finished or crashed.

Reading fails closed: every line is validated in full (schema, types, ranges, the id against the
line's content, completions against their pending line); a line that cannot be validated is
reported with its number, and under ``refuse`` a ledger with such a line refuses every release.

The ledger lives above the core: it opens files. The core's release functions take a built
:class:`Ledger` (``ledger=``) and only call :meth:`Ledger.release`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
import time
import warnings
from pathlib import Path
from typing import Any

from textdp.ledger_budget import assess, documents_summary, iter_inputs
from textdp.ledger_documents import DocumentCheck, KeyFileError, LedgerKey, document_field
from textdp.ledger_lines import POLICIES, SCHEMA, SCHEMAS, Contents, _digest, _entry, _now, parse
from textdp.privacy.composition import Composition
from textdp.privacy.measurement import InputSpace

try:  # POSIX only: the ledger's exclusive lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["POLICIES", "SCHEMA", "SCHEMAS", "Contents", "Ledger", "LedgerError", "LedgerRefused",
           "LedgerWarning", "Release", "as_ledger", "documents_summary",
           "iter_inputs", "parse"]

#: How long :meth:`Ledger.read` waits for a writer's lock (held for one read and one append)
#: before reading without it.
READ_LOCK_WAIT = 5.0


class LedgerError(ValueError):
    """The ledger cannot be used (a directory, no lock support, a bad policy or budget, a pending
    line that cannot be written)."""


class LedgerRefused(LedgerError):
    """``policy="refuse"``: the release would exceed the budget, or the ledger holds a line that
    cannot be validated; nothing was released or recorded."""


class LedgerWarning(UserWarning):
    """A release's completion or void line could not be written (its pending line still counts)."""


def _open_regular(path: Path, flags: int) -> int:
    """``os.open`` that never blocks on a FIFO and refuses anything but a regular file (a FIFO
    put where the ledger was would hang every run; the check is on the descriptor, so a file
    replaced by a FIFO after the path was checked is caught too)."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "is not a regular file (a FIFO, a socket or a device), "
                                        "expected a file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_fd(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    parts, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, min(size - offset, 1 << 24), offset)
        if not chunk:
            break
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _encode(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, ensure_ascii=False, sort_keys=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


class Ledger:
    """An append-only privacy ledger at ``path`` (created on the first release).

    Args:
        path: the JSON-lines file.
        policy: ``"warn"`` (default: earlier releases, an exceeded budget and invalid lines are
            warned about) or ``"refuse"`` (a release whose cumulative ε for its input would
            exceed ``budget``, or any release while the ledger holds a line that cannot be
            validated, raises :class:`LedgerRefused` before anything is released; needs
            ``budget``).
        budget: ε budget per input, compared with every composition group's cumulative ε (in
            that group's units: per unit of the metric for metric DP). A release without a
            composable guarantee makes the total unbounded, which exceeds any budget.
    """

    def __init__(self, path: str | os.PathLike, *, policy: str = "warn",
                 budget: float | None = None) -> None:
        if fcntl is None:  # pragma: no cover - Windows
            raise LedgerError("the ledger needs POSIX file locks (fcntl.flock: Linux, macOS)")
        if policy not in POLICIES:
            raise LedgerError(f"ledger policy must be warn or refuse, got {policy!r}")
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, (int, float)):
                # True would read as ε = 1 and "abc" fail inside float(): say what is wanted.
                raise TypeError(f"the budget must be a number (a finite ε > 0), got "
                                f"{type(budget).__name__} {str(budget)[:40]!r}")
            try:
                budget = float(budget)
            except OverflowError:
                budget = math.inf
            if not (budget > 0 and math.isfinite(budget)):
                raise LedgerError(f"the budget must be a finite ε > 0, got {budget!r}")
        if policy == "refuse" and budget is None:
            raise LedgerError("the refuse policy needs a budget (--budget EPS)")
        self.path = Path(path)
        if self.path.is_dir():
            raise LedgerError(f"ledger {self.path}: is a directory, expected a file")
        if self.path.exists() and not self.path.is_file():
            # A FIFO would block the first read forever; a device has no ledger lines.
            raise LedgerError(f"ledger {self.path}: is not a regular file (a FIFO, a socket or "
                              "a device), expected a file")
        if not self.path.absolute().parent.is_dir():
            raise LedgerError(f"ledger {self.path}: directory {str(self.path.parent)!r} does not "
                              "exist")
        self.policy = policy
        self.budget = budget
        #: The secret the document tags are keyed with: ``<path>.key`` (textdp.ledger_documents).
        self.key = LedgerKey(self.path)

    def read(self) -> Contents:
        """The validated contents, under a shared lock. Writers hold the lock only to read and
        append one line; if it stays held for :data:`READ_LOCK_WAIT` seconds (a stopped
        process), the file is read without it and :attr:`Contents.note` says so."""
        try:
            fd = _open_regular(self.path, os.O_RDONLY)
        except FileNotFoundError:
            raise LedgerError(f"ledger {self.path}: no such file") from None
        except OSError as exc:
            raise LedgerError(f"ledger {self.path}: {exc.strerror or exc}") from None
        try:
            note = None
            deadline = time.monotonic() + READ_LOCK_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        note = ("read while another process holds the ledger's lock: a line it "
                                "is appending may be missing or cut short")
                        break
                    time.sleep(0.05)
            contents = parse(_read_fd(fd))
            contents.note = note
            return contents
        finally:
            os.close(fd)  # closing releases the lock

    def release(self, *, mechanism: Any, input_fingerprint: str, records: int,
                seed: int | None, input_kind: str = "texts",
                space: InputSpace | str | None = None,
                input_name: str | os.PathLike | None = None,
                output_path: str | os.PathLike | None = None,
                documents: Any = None, resumes: str | None = None) -> Release:
        """The guarded release every front uses: a :class:`Release` context whose entering
        checks the budget and writes the pending line, and whose leaving completes it (or voids
        it when the block raised).

        Args:
            mechanism: the built mechanism (its ``name``, ``parameters``, ``guarantee``; a word
                mechanism's vocabulary fingerprint is its ``space``).
            input_fingerprint: :mod:`textdp.privacy.fingerprint` of the released values.
            records: how many values are released.
            seed: the run's seed (a seeded run is flagged: reproducible, not for production).
            input_kind: ``texts``, ``vectors`` or ``documents`` (the fingerprint's encoding).
            space: what else fixes the metric (vocabulary, encoder, sentence splitter), an
                :class:`textdp.privacy.measurement.InputSpace` (its prose is recorded as the
                line's ``space``, its id completes the measurement's metric id); default: the
                mechanism's vocabulary, else none. A string is read as the words of an old
                line's space (:func:`textdp.privacy.measurement.space_id`).
            input_name: what a person finds the input by: a file path, ``column 'text'`` of a
                DataFrame or dataset; None when the front has no name for it.
            output_path: where the output was written, when it is a file.
            documents: the input's documents (:class:`textdp.privacy.documents.DocumentRecords`)
                for per-document accounting; default: those carried by ``input_fingerprint``
                when :mod:`textdp.privacy.fingerprint` computed it. Without them the release is
                composed per input only (docs/accounting.md, "Per document").
            resumes: the id of a pending release this one continues (a resumed job: ``textdp
                privatize -m dp_prompt --resume``): entering checks that it is pending, for the
                same input, mechanism and guarantee, and appends nothing — the job is one
                release, counted once by its pending line — and leaving completes it.
        """
        if space is None:
            vocabulary = getattr(mechanism, "vocabulary", None)
            space = InputSpace.vocabulary(vocabulary.fingerprint) if vocabulary is not None \
                else InputSpace()
        entry = _entry(mechanism, input_fingerprint, records, seed, input_kind, space,
                       self.policy, self.budget, _name(input_name), _name(output_path))
        if documents is None:
            documents = getattr(input_fingerprint, "documents", None)
        if documents is not None:
            entry = _with_documents(entry, documents, self.key, mechanism, input_kind)
        release = Release(self, entry)
        release.resumes = resumes
        return release


def _name(value: str | os.PathLike | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):  # several files released as one corpus
        return ", ".join(os.fspath(v) for v in value)
    return os.fspath(value)


def _with_documents(entry: dict[str, Any], documents: Any, key: LedgerKey, mechanism: Any,
                    input_kind: str) -> dict[str, Any]:
    """``entry`` with its documents' tags (under the ledger's key) and what one unit of a
    document gets; its id recomputed over them."""
    from textdp.privacy.documents import unit_guarantee

    try:
        secret = key.load()
    except KeyFileError as exc:
        raise LedgerError(f"{exc}; nothing was released") from None
    rest = {k: v for k, v in entry.items() if k != "id"}
    rest["documents"] = document_field(documents, secret)
    try:
        rest["document_guarantee"] = unit_guarantee(mechanism, input_kind).to_dict()
    except (AttributeError, TypeError, ValueError):
        pass  # an object without a usable privacy map: no whole-document ε is stated
    return {"schema": SCHEMA, "id": _digest(rest), **{k: v for k, v in rest.items()
                                                      if k != "schema"}}


class Release:
    """One release guarded by a ledger, written ahead (see the module docstring).

    Entering takes the lock, reads and validates the ledger, applies the policy (raising
    :class:`LedgerRefused` under ``refuse``), appends the pending line and unlocks; a pending line
    that cannot be written raises :class:`LedgerError` (nothing released). After entering:
    :attr:`earlier` (the earlier counted releases of the same input, pending ones included),
    :attr:`composition` (cumulative, this release included), :attr:`section` (the report's
    ``ledger``) and :attr:`warnings`.

    Leaving the block normally appends the ``complete`` line; leaving it with an exception appends
    a ``void`` line, unless :meth:`exposed` was called (then the pending line stays and counts).
    A completion or void line that cannot be written leaves the pending line, which still counts:
    :meth:`complete` and :meth:`void` return that as a one-line message, and the context manager
    issues it as a :class:`LedgerWarning`.
    """

    def __init__(self, ledger: Ledger, entry: dict[str, Any]) -> None:
        self.ledger = ledger
        self.entry = entry
        self.earlier: list[dict[str, Any]] = []
        self.composition: Composition | None = None
        self.contents = Contents()
        self.warnings: list[str] = []
        #: Per document: this release's documents composed with every release that held them
        #: (None without documents).
        self.documents: DocumentCheck | None = None
        #: ``None`` before entering, then ``pending``, ``complete`` or ``void``.
        self.state: str | None = None
        self._fd: int | None = None
        self._exposed = False
        #: The pending release this one continues (:meth:`Ledger.release`'s ``resumes``).
        self.resumes: str | None = None

    @property
    def id(self) -> str:
        return self.entry["id"]

    def __enter__(self) -> Release:
        if self._fd is not None or self.state is not None:
            raise LedgerError("a release is entered once")
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
        try:
            self._fd = _open_regular(self.ledger.path, flags)
        except OSError as exc:
            raise LedgerError(f"ledger {self.ledger.path}: {exc.strerror or exc}") from None
        try:
            # Every policy takes the exclusive lock: a warn run's pending line must be in the
            # file before a concurrent refuse run reads it.
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            self.contents = parse(_read_fd(self._fd))
            if self.resumes is not None:
                self._adopt()
            self._check()
            try:
                if self.resumes is None:
                    _append(self._fd, _encode(self.entry))
            except OSError as exc:
                raise LedgerError(
                    f"ledger {self.ledger.path}: the release could not be recorded before it "
                    f"happens ({exc.strerror or exc}); refused, nothing was released") from None
            self.state = "pending"
            # The pending line is what every later reader counts: no need to hold the lock
            # while the release runs (a refuse run started now counts this one).
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        except BaseException:
            self._close()
            raise
        return self

    def _adopt(self) -> None:
        """Continue the pending release :attr:`resumes`: it becomes this release's entry, and
        leaves the entries it is checked against (it is this release, not an earlier one)."""
        found = [e for e in self.contents.entries if e["id"] == self.resumes]
        if not found or found[0]["_state"] != "pending":
            state = found[0]["_state"] if found else ("voided" if any(
                e["id"] == self.resumes for e in self.contents.voided) else "not recorded")
            raise LedgerError(f"ledger {self.ledger.path}: release {self.resumes}, which the "
                              f"staged job continues, is {state}, not pending; the staged "
                              "documents cannot be resumed under this ledger")
        old = found[0]
        same = all(old[k] == self.entry[k] for k in ("mechanism", "guarantee")) and \
            old["input"]["fingerprint"] == self.entry["input"]["fingerprint"]
        if not same:
            raise LedgerError(f"ledger {self.ledger.path}: release {self.resumes} was recorded "
                              "for another input, mechanism or guarantee than this job's")
        self.entry = {k: v for k, v in old.items() if not k.startswith("_")}
        self.contents.entries = [e for e in self.contents.entries if e["id"] != self.resumes]

    def _check(self) -> None:
        """Apply the ledger's policy (:func:`textdp.ledger_budget.assess`): raises
        :class:`LedgerRefused` under ``refuse``, else sets :attr:`earlier`, :attr:`composition`,
        :attr:`documents` and :attr:`warnings`."""
        found = assess(self.contents, self.entry, path=self.ledger.path,
                       policy=self.ledger.policy, budget=self.ledger.budget,
                       key_path=self.ledger.key.path)
        self.earlier, self.composition = found.earlier, found.composition
        self.warnings, self.documents = found.warnings, found.documents
        if found.refusal is not None:
            raise LedgerRefused(found.refusal)

    @property
    def section(self) -> dict[str, Any]:
        """The report's ``ledger`` section."""
        return {"path": os.fspath(self.ledger.path), "policy": self.ledger.policy,
                "budget": self.ledger.budget, "release_id": self.id,
                "input_fingerprint": self.entry["input"]["fingerprint"],
                "input_encoding": self.entry["input"]["encoding"],
                "earlier_releases": len(self.earlier),
                "earlier": [{"id": e["id"], "time": e["time"], "mechanism": e["mechanism"]["name"],
                             "state": e["_state"], "notion": e["guarantee"].get("notion"),
                             "epsilon": e["guarantee"].get("epsilon"),
                             "delta": e["guarantee"].get("delta"),
                             "input_name": e["input"].get("name"),
                             "output": e["input"].get("output")} for e in self.earlier],
                "cumulative": self.composition.to_dict() if self.composition else None,
                "documents": self._documents_section(),
                "torn_last_line": self.contents.torn, "invalid_lines": self.contents.invalid,
                "recorded": "write-ahead: a pending line before the output, completed after it "
                            "is committed"}

    def _documents_section(self) -> dict[str, Any] | None:
        """Per-document accounting of this release: its documents, how many were released
        before, and the worst document's totals (None when the release recorded no documents)."""
        docs = self.entry.get("documents")
        if docs is None:
            return None
        check = self.documents
        worst = check.worst if check is not None else None
        return {"count": docs["count"], "key": docs["key"],
                "released_before": check.before if check is not None else 0,
                "over_budget": check.over if check is not None else 0,
                "worst": worst.to_dict() if worst is not None else None,
                "document_guarantee": self.entry.get("document_guarantee")}

    def attach(self, report: Any) -> Any:
        """``report`` built again with :attr:`section` as its ``ledger`` and :attr:`warnings`
        among its warnings (a new :class:`textdp.privacy.report.Report`; reports are never
        edited). A plain mapping gives a new dict, the argument left as it is."""
        if hasattr(report, "with_context"):
            return report.with_context(ledger=self)
        return {**report, "ledger": self.section,
                "warnings": [*report.get("warnings", ()), *self.warnings]}

    def exposed(self) -> None:
        """Say that the output may be visible from now on (a rename began, bytes went to a
        pipe): a later failure leaves the pending line (counted) instead of voiding it."""
        self._exposed = True

    def complete(self) -> str | None:
        """Append the ``complete`` line (the release happened). Returns None, or a one-line
        message when it could not be written (the pending line stays and counts)."""
        return self._close_with({"type": "complete", "release": self.id, "time": _now(),
                                 "records": self.entry["input"]["records"],
                                 "fingerprint": self.entry["input"]["fingerprint"],
                                 "pid": os.getpid()})

    def void(self, why: str) -> str | None:
        """Append a ``void`` line: nothing of this release became visible, it no longer counts.
        After :meth:`exposed` it appends nothing (the pending line stays). Returns None, or a
        one-line message when the pending line stays."""
        if self._exposed:
            state = self.state
            self._close()
            return (None if state != "pending" else
                    f"ledger {self.ledger.path}: release {self.id} failed after its output may "
                    "have become visible; its pending line stays and counts against the budget")
        return self._close_with({"type": "void", "release": self.id, "time": _now(),
                                 "why": why[:200], "pid": os.getpid()})

    def _close_with(self, line: dict[str, Any]) -> str | None:
        if self.state != "pending" or self._fd is None:
            raise LedgerError("the release was not entered, or was already completed or voided")
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            _append(self._fd, _encode({"schema": SCHEMA, **line}))
            self.state = line["type"]
        except OSError as exc:
            return (f"ledger {self.ledger.path}: the {line['type']} line of release {self.id} "
                    f"could not be written ({exc.strerror or exc}); its pending line stays and "
                    "counts against the budget")
        finally:
            self._close()
        return None

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.state != "pending" or self._fd is None:
            self._close()
            return
        if exc_type is None:
            message = self.complete()
        else:
            message = self.void(f"{exc_type.__name__}: {exc}" if exc is not None
                                else exc_type.__name__)
        if message:
            warnings.warn(message, LedgerWarning, stacklevel=2)


def _write_all(fd: int, data: bytes) -> None:
    written = 0
    while written < len(data):  # a short write (disk full): finish it or raise
        n = os.write(fd, data[written:])
        if n <= 0:
            raise OSError("short write to the ledger")
        written += n


def _append(fd: int, line: bytes) -> None:
    """One whole line in one write (O_APPEND: at the end), then fsync; the caller holds LOCK_EX.

    A file that does not end in ``\\n`` (a torn last line) gets one first, in the same write, so
    the new line never glues onto it. A write or fsync that fails (a full disk, a signal) is rolled
    back: the file is cut to its length before this append. Under the exclusive lock the bytes
    after that length are this append's own, so no other line is touched; without the rollback a
    cut-short line would stay, invalid, and make a ``refuse`` ledger refuse.
    """
    size = os.fstat(fd).st_size
    prefix = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
    try:
        _write_all(fd, prefix + line + b"\n")
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


def as_ledger(ledger: str | os.PathLike | Ledger | None, policy: str = "warn",
              budget: float | None = None) -> Ledger | None:
    """What a front's ``ledger=`` / ``ledger_policy=`` / ``budget=`` arguments mean: None (no
    ledger), a path (a :class:`Ledger` with that policy and budget) or a built :class:`Ledger`
    (which carries its own policy and budget)."""
    if ledger is None:
        if budget is not None or policy != "warn":
            raise LedgerError("a ledger policy or budget needs a ledger (ledger=PATH)")
        return None
    if isinstance(ledger, Ledger):
        if budget is not None or policy != "warn":
            raise LedgerError("give the policy and budget to the Ledger object, not here")
        return ledger
    if not isinstance(ledger, (str, os.PathLike)):
        raise TypeError(f"ledger must be a path (str or os.PathLike) or a textdp.ledger.Ledger, "
                        f"got {type(ledger).__name__}")
    if not os.fspath(ledger):
        raise LedgerError("ledger must be a file path, got an empty string")
    return Ledger(ledger, policy=policy, budget=budget)
