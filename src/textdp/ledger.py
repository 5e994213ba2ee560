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

:meth:`Ledger.release` is the one guarded release (budget check → release → record) every front
uses; :func:`guarded_release` is the same for a front whose ledger is optional.

Per document (:mod:`textdp.ledger_documents`): a fingerprint computed by
:mod:`textdp.privacy.fingerprint` carries the input's documents, and the pending line records a
keyed 8-byte tag and the size of each (16 base64 characters a document; the key is
``<path>.key``, mode 0600). The budget is then checked for every document across every release
and every input that held it, and one budget is shared across metric groups
(docs/accounting.md, "Per document").

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
import hashlib
import json
import math
import os
import re
import stat
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textdp.ledger_documents import (
    DocumentCheck,
    KeyFileError,
    LedgerKey,
    check_documents,
    check_field,
    document_field,
    worst_document,
)
from textdp.privacy import format_up
from textdp.privacy.composition import Composition, Spend, compose
from textdp.privacy.fingerprint import ENCODING
from textdp.privacy.measurement import legacy_metric_id, measurement_of, space_id

try:  # POSIX only: the ledger's exclusive lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["POLICIES", "SCHEMA", "SCHEMAS", "Contents", "Ledger", "LedgerError", "LedgerRefused",
           "LedgerWarning", "Release", "as_ledger", "documents_summary", "guarded_release",
           "iter_inputs", "parse"]

SCHEMA = "textdp.ledger/2"
#: Every schema the reader validates: ``/1`` lines (written after the output, by textdp before
#: the write-ahead protocol) are complete releases and count as they always did.
SCHEMAS = ("textdp.ledger/1", SCHEMA)
POLICIES = ("warn", "refuse")
#: How long :meth:`Ledger.read` waits for a writer's lock (held for one read and one append)
#: before reading without it.
READ_LOCK_WAIT = 5.0

_HEX16 = re.compile(r"[0-9a-f]{16}\Z")
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


class LedgerError(ValueError):
    """The ledger cannot be used (a directory, no lock support, a bad policy or budget, a pending
    line that cannot be written)."""


class LedgerRefused(LedgerError):
    """``policy="refuse"``: the release would exceed the budget, or the ledger holds a line that
    cannot be validated; nothing was released or recorded."""


class LedgerWarning(UserWarning):
    """A release's completion or void line could not be written (its pending line still counts)."""


@dataclass
class Contents:
    """What a ledger file holds, validated line by line.

    ``entries`` are the releases that count: ``pending`` (no completion yet: running, crashed or
    cut short) and ``complete`` ones, each with ``_line`` (its line number) and ``_state``.
    """

    entries: list[dict[str, Any]] = field(default_factory=list)
    #: Releases whose void line says nothing was released: listed, not counted.
    voided: list[dict[str, Any]] = field(default_factory=list)
    #: Lines that cannot be validated, ``{line, why}``, in file order (a torn last line included).
    invalid: list[dict[str, Any]] = field(default_factory=list)
    #: The last line when the file does not end in a newline: ``{line, bytes, counted, why}``.
    torn: dict[str, Any] | None = None
    #: Set when the file was read without its shared lock (a writer held it too long).
    note: str | None = None

    @property
    def pending(self) -> list[dict[str, Any]]:
        return [e for e in self.entries if e["_state"] == "pending"]

    def problems(self, path: str | os.PathLike) -> list[str]:
        """The invalid lines (at most 10 listed) and a torn last line, as warnings."""
        name = os.fspath(path)
        out = [f"ledger {name}: line {c['line']} cannot be validated ({c['why']}); not counted"
               for c in self.invalid[:10]]
        if len(self.invalid) > 10:
            out.append(f"ledger {name}: {len(self.invalid) - 10} more lines cannot be validated "
                       "(not counted); is this a textdp ledger?")
        if self.torn is not None and self.torn["counted"]:
            out.append(f"ledger {name}: the last line (line {self.torn['line']}) lacks its "
                       "newline; it is a whole entry and counted")
        return out

    def refusal(self, path: str | os.PathLike) -> str | None:
        """Why a ``refuse`` policy cannot trust this ledger (one line), or None."""
        if not self.invalid:
            return None
        first, name = self.invalid[0], os.fspath(path)
        more = f" (and {len(self.invalid) - 1} more)" if len(self.invalid) > 1 else ""
        return (f"ledger {name}: line {first['line']} cannot be validated ({first['why']}){more}; "
                "under the refuse policy such a ledger refuses every release (fail closed): "
                f"'textdp ledger show {name}' lists the invalid lines; repair or remove them (a "
                "removed line no longer counts); nothing was released or recorded")

    def of_input(self, fingerprint: str) -> list[dict[str, Any]]:
        return [e for e in self.entries if e["input"]["fingerprint"] == fingerprint]


# --- validation ----------------------------------------------------------------------------------

class _Invalid(ValueError):
    """Why a line cannot be validated (a short phrase)."""


def _digest(entry: dict[str, Any]) -> str:
    """A release line's id: 16 hex digits of the sha256 of the rest of the line."""
    rest = {k: v for k, v in entry.items() if k != "id"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _get(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    if key not in obj:
        raise _Invalid(f"missing field {where}{key}")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in (
            kind if isinstance(kind, tuple) else (kind,))):
        raise _Invalid(f"{where}{key} has the wrong type ({type(value).__name__})")
    return value


def _epsilon(value: Any) -> float:
    """ε of a line: a number > 0, or ∞ (written as "inf": no bound; it exceeds any budget)."""
    if value in ("inf", "Infinity"):
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"guarantee.epsilon is not a number ({str(value)[:20]!r})")
    try:
        eps = float(value)
    except OverflowError:
        return math.inf  # an integer too large for a float: unbounded, the safe side
    if math.isnan(eps) or not eps > 0:
        raise _Invalid(f"guarantee.epsilon = {value!r}: ε must be > 0 (or inf)")
    return eps


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


def _printed(value: Any) -> str:
    """A recorded ε as a message prints it: rounded up (never below the recorded number); an
    integer too large for a float is ∞."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    try:
        return format_up(float(value))
    except OverflowError:
        return "inf"


def _delta(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"guarantee.delta is not a number ({str(value)[:20]!r})")
    try:
        delta = float(value)
    except OverflowError:
        delta = math.inf
    if not 0 <= delta <= 1:  # NaN and ±∞ fail too
        raise _Invalid(f"guarantee.delta = {value!r}: δ must be in [0, 1]")
    return delta


def _check_release(entry: dict[str, Any]) -> None:
    """A release line (``/1``, or a ``/2`` pending line), validated in full."""
    rid = _get(entry, "id", str)
    if not _HEX16.match(rid):
        raise _Invalid(f"id {rid[:20]!r} is not 16 hex digits")
    _get(entry, "time", str)
    _get(entry, "textdp_version", str)
    _get(entry, "space", str)
    _get(entry, "seeded", bool)
    _get(entry, "pid", int)
    source = _get(entry, "input", dict)
    if not _HEX64.match(_get(source, "fingerprint", str, "input.")):
        raise _Invalid("input.fingerprint is not a sha256 (64 hex digits)")
    _get(source, "encoding", str, "input.")
    if _get(source, "records", int, "input.") < 0:
        raise _Invalid("input.records is negative")
    for key in ("name", "output"):  # optional: recorded since the stable ids
        if source.get(key) is not None:
            _get(source, key, str, "input.")
    if "accounting" in entry:  # dataset-level releases: what the accountant composes
        _check_accounting(_get(entry, "accounting", dict))
    if "measurement" in entry:
        measured = _get(entry, "measurement", dict)
        _get(measured, "notion", str, "measurement.")
        if not _get(measured, "input_metric", str, "measurement."):
            raise _Invalid("measurement.input_metric is empty")
    mechanism = _get(entry, "mechanism", dict)
    _get(mechanism, "name", str, "mechanism.")
    _get(mechanism, "parameters", dict, "mechanism.")
    guarantee = _get(entry, "guarantee", dict)
    _get(guarantee, "notion", str, "guarantee.")
    _epsilon(_get(guarantee, "epsilon", (int, float, str), "guarantee."))
    _delta(_get(guarantee, "delta", (int, float), "guarantee."))
    if guarantee.get("metric") is not None:
        _get(guarantee, "metric", str, "guarantee.")
    if "verified" in guarantee:
        _get(guarantee, "verified", bool, "guarantee.")
    try:
        check_field(entry)
    except ValueError as exc:
        raise _Invalid(str(exc)) from None
    if entry["schema"] == SCHEMA:
        if _get(entry, "policy", str) not in POLICIES:
            raise _Invalid(f"policy {entry['policy'][:20]!r} is not warn or refuse")
        if entry.get("budget") is not None:
            _get(entry, "budget", (int, float))
    if _digest(entry) != rid:
        raise _Invalid(f"id {rid} does not match the line's content (edited?)")


def _check_accounting(accounting: dict[str, Any]) -> None:
    """The ``accounting`` of a dataset-level release: the accountant's name and its events
    (:func:`textdp.privacy.accounting.check_event`)."""
    from textdp.privacy.accounting import AccountingError, check_event

    _get(accounting, "accountant", str, "accounting.")
    events = _get(accounting, "events", list, "accounting.")
    if not events:
        raise _Invalid("accounting.events is empty")
    for event in events:
        try:
            check_event(event)
        except AccountingError as exc:
            raise _Invalid(f"accounting.events: {exc}") from None


def _check_line(line: bytes) -> dict[str, Any]:
    """One line, parsed and validated; raises :class:`_Invalid`."""
    try:
        entry = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:  # RecursionError is no ValueError: below
        raise _Invalid(f"not JSON: {str(exc)[:60]}") from None
    except RecursionError:
        raise _Invalid("not JSON: nested too deeply") from None
    if not isinstance(entry, dict):
        raise _Invalid("not a JSON object")
    schema = entry.get("schema")
    if schema not in SCHEMAS:
        raise _Invalid(f"unknown schema {str(schema)[:40]!r} (this textdp reads "
                       f"{' and '.join(SCHEMAS)}; a newer textdp wrote it?)")
    kind = "complete" if schema == SCHEMAS[0] else _get(entry, "type", str)
    if kind == "pending" or schema == SCHEMAS[0]:
        _check_release(entry)
    elif kind in ("complete", "void"):
        if not _HEX16.match(_get(entry, "release", str)):
            raise _Invalid("release is not 16 hex digits")
        _get(entry, "time", str)
        if kind == "complete":
            if _get(entry, "records", int) < 0:
                raise _Invalid("records is negative")
            _get(entry, "fingerprint", str)
        else:
            _get(entry, "why", str)
    else:
        raise _Invalid(f"unknown line type {kind[:20]!r}")
    return entry


def parse(data: bytes) -> Contents:
    """The releases of a ledger's bytes, every line validated; see :class:`Contents`."""
    contents = Contents()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail:
        lines.append(tail)
    releases: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, start=1):
        last_torn = bool(tail) and number == len(lines)
        if not line.strip():
            continue
        try:
            entry = _check_line(line)
            _place(entry, number, releases)
        except _Invalid as exc:
            why = str(exc)
            if last_torn:
                why = (f"torn: no trailing newline ({why}); an append was cut short (a killed "
                       "process, a crash)")
            contents.invalid.append({"line": number, "why": why})
        if last_torn:
            contents.torn = {"line": number, "bytes": len(line),
                             "counted": not contents.invalid
                             or contents.invalid[-1]["line"] != number,
                             "why": "no trailing newline"}
    for entry in releases.values():
        (contents.voided if entry["_state"] == "void" else contents.entries).append(entry)
    return contents


def _place(entry: dict[str, Any], number: int, releases: dict[str, dict[str, Any]]) -> None:
    """Record a valid line: a release (pending, or complete for ``/1``) or the closing line of an
    earlier pending release (matched by id; raises :class:`_Invalid` when it does not match)."""
    kind = "complete" if entry["schema"] == SCHEMAS[0] else entry["type"]
    if entry["schema"] == SCHEMAS[0] or kind == "pending":  # a release line
        if entry["id"] in releases:
            raise _Invalid(f"release {entry['id']} appears twice (first on line "
                           f"{releases[entry['id']]['_line']})")
        releases[entry["id"]] = {**entry, "_line": number,
                                 "_state": "complete" if kind == "complete" else "pending"}
        return
    target = releases.get(entry["release"])
    if target is None:
        raise _Invalid(f"{kind} line of release {entry['release']}, which no earlier line holds")
    if target["_state"] != "pending":
        raise _Invalid(f"{kind} line of release {entry['release']}, which is already "
                       f"{target['_state']} (line {target['_closed']})")
    if kind == "complete" and (entry["fingerprint"], entry["records"]) != (
            target["input"]["fingerprint"], target["input"]["records"]):
        raise _Invalid(f"complete line of release {entry['release']} names other records than "
                       f"its pending line {target['_line']}")
    target["_state"], target["_closed"] = kind, number


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


def _spends(entries: list[dict[str, Any]]) -> list[Spend]:
    return [_spend(e) for e in entries]


def _spend(entry: dict[str, Any]) -> Spend:
    """A release's spend, keyed on its measurement's stable ids; a line written before they were
    recorded gets the metric id derived from its mechanism, parameters and space."""
    space = entry.get("space", "")
    measured = entry.get("measurement")
    if measured is not None:
        events = tuple((entry.get("accounting") or {}).get("events") or ())
        return Spend.from_guarantee(entry["guarantee"], release=entry["id"], space=space,
                                    metric_id=measured["input_metric"],
                                    notion=measured["notion"], events=events)
    mechanism, guarantee = entry["mechanism"], entry["guarantee"]
    metric_id = legacy_metric_id(mechanism["name"], mechanism["parameters"],
                                 str(guarantee.get("metric") or ""), space)
    return Spend.from_guarantee(guarantee, release=entry["id"], space=space, metric_id=metric_id)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _encode(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, ensure_ascii=False, sort_keys=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


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
                seed: int | None, input_kind: str = "texts", space: str | None = None,
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
            space: what else fixes the metric (vocabulary, encoder, sentence splitter); default:
                the mechanism's vocabulary fingerprint, else "".
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
            space = f"vocabulary sha256 {vocabulary.fingerprint}" if vocabulary is not None else ""
        entry = _entry(mechanism, input_fingerprint, records, seed, input_kind, space,
                       self.policy, self.budget, _name(input_name), _name(output_path))
        if documents is None:
            documents = getattr(input_fingerprint, "documents", None)
        if documents is not None:
            entry = _with_documents(entry, documents, self.key, mechanism, input_kind)
        release = Release(self, entry)
        release.resumes = resumes
        return release


def guarded_release(ledger: Ledger | None, **release: Any) -> contextlib.AbstractContextManager:
    """:meth:`Ledger.release` for a front whose ledger is optional: with no ledger the block runs
    unguarded and gets None; else it gets the entered :class:`Release` (keyword arguments as
    :meth:`Ledger.release`)."""
    if ledger is None:
        return contextlib.nullcontext(None)
    return ledger.release(**release)


def _name(value: str | os.PathLike | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):  # several files released as one corpus
        return ", ".join(os.fspath(v) for v in value)
    return os.fspath(value)


def _measurement(mechanism: Any, space: str) -> dict[str, str] | None:
    """The stable ids of the release's measurement (None for an object that has none: its line
    is then keyed as an old line is)."""
    try:
        measured = measurement_of(mechanism, space_id(space))
    except (TypeError, ValueError, AttributeError):
        return None
    return {"name": measured.name, "notion": measured.notion,
            "input_metric": measured.input_metric}


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


def _entry(mechanism: Any, fingerprint: str, records: int, seed: int | None, input_kind: str,
           space: str, policy: str, budget: float | None, input_name: str | None = None,
           output_path: str | None = None) -> dict[str, Any]:
    """A pending line's content; its id is the sha256 of the rest (16 hex digits)."""
    from textdp._version import __version__

    entry = {
        "schema": SCHEMA,
        "type": "pending",
        "time": _now(),
        "textdp_version": __version__,
        "input": {"fingerprint": fingerprint, "encoding": f"{ENCODING} {input_kind}",
                  "records": int(records), "name": input_name, "output": output_path},
        "mechanism": {"name": mechanism.name, "parameters": _json_value(mechanism.parameters)},
        "guarantee": _json_value({k: v for k, v in mechanism.guarantee.to_dict().items()
                                  if k in ("notion", "epsilon", "delta", "metric", "verified",
                                           "numerics")}),
        "space": space,
        "seeded": seed is not None,
        "policy": policy,
        "budget": budget,
        "pid": os.getpid(),
    }
    measured = _measurement(mechanism, space)
    if measured is not None:
        entry["measurement"] = measured
    accounting = getattr(mechanism, "accounting", None)
    if accounting is not None:  # a dataset-level release: its events, for the accountant
        entry["accounting"] = _json_value(dict(accounting))
    return {"schema": SCHEMA, "id": _digest(entry), **{k: v for k, v in entry.items()
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
        fingerprint = self.entry["input"]["fingerprint"]
        refuse = self.ledger.policy == "refuse"
        if refuse and self.contents.invalid:
            raise LedgerRefused(self.contents.refusal(self.ledger.path))
        self.earlier = self.contents.of_input(fingerprint)
        self.composition = compose(_spends([*self.earlier, self.entry]))
        self.warnings = self.contents.problems(self.ledger.path)
        if self.earlier:
            names = ", ".join(f"{e['id']} ({e['time']}, {e['mechanism']['name']} "
                              f"ε = {_printed(e['guarantee'].get('epsilon'))}"
                              + (f", from {e['input']['name']}" if e["input"].get("name")
                                 else "")
                              + (", pending" if e["_state"] == "pending" else "") + ")"
                              for e in self.earlier)
            self.warnings.append(
                f"this input (sha256 {fingerprint[:16]}…) was released {len(self.earlier)} "
                f"time(s) before according to ledger {self.ledger.path}: {names}; cumulative "
                f"with this release: {self.composition.summary()}")
        budget = self.ledger.budget
        reasons = self.composition.over_budget(budget) if budget is not None else []
        what = "this input"
        self._check_documents(refuse)
        first = self.documents.first_over if self.documents else None
        if budget is not None and first is not None and not reasons:
            reasons = first.composition.over_budget(budget)
            what = (f"{self.documents.over} of this input's documents (the worst: "
                    f"{first.describe()})")
        if reasons and refuse:
            raise LedgerRefused(f"ledger {self.ledger.path}: refused, the budget ε = {budget:g} "
                                f"for {what} would be exceeded: {'; '.join(reasons)}; nothing "
                                "was released or recorded")
        if reasons:
            self.warnings.append(f"budget ε = {budget:g} exceeded for {what} (policy warn): "
                                 + "; ".join(reasons))

    def _check_documents(self, refuse: bool) -> None:
        """Compose the release per document (:func:`textdp.ledger_documents.check_documents`);
        tags made under another key cannot be matched: refused under ``refuse``, else warned."""
        if "documents" not in self.entry:
            return
        self.documents, foreign = check_documents(self.entry, self.contents.entries,
                                                  self.entry["documents"]["key"], _spend,
                                                  self.ledger.budget)
        if foreign:
            message = (f"ledger {self.ledger.path}: release(s) {', '.join(foreign[:5])} recorded "
                       "their documents under another key than the one in "
                       f"{self.ledger.key.path} (replaced or lost?): their documents cannot be "
                       "matched with this release's; restore the key file")
            if refuse:
                raise LedgerRefused(message + "; under the refuse policy nothing was released "
                                    "or recorded")
            self.warnings.append(message)
        if self.documents.before:
            self.warnings.append(
                f"{self.documents.before} of this input's documents were released before (as "
                f"part of this or other inputs) according to ledger {self.ledger.path}; the "
                f"worst: {self.documents.worst.describe()}")

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


def iter_inputs(contents: Contents) -> Iterator[tuple[str, list[dict[str, Any]], Composition]]:
    """Per input fingerprint (first-seen order): its counted releases and their cumulative
    guarantee."""
    by_input: dict[str, list[dict[str, Any]]] = {}
    for e in contents.entries:
        by_input.setdefault(e["input"]["fingerprint"], []).append(e)
    for fingerprint, entries in by_input.items():
        yield fingerprint, entries, compose(_spends(entries))


def documents_summary(contents: Contents, key: str | None) -> dict[str, Any] | None:
    """Per-document totals over the whole ledger (``key``: the id of the ledger's key, None when
    it has none): documents tracked, how many were released more than once, the worst
    document's budget spent and its whole-document guarantee
    (:func:`textdp.ledger_documents.worst_document`); None without per-document lines."""
    return worst_document(contents.entries, key, _spend)


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
