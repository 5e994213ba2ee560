"""A privacy ledger across releases: an append-only JSON-lines file, one line per release.

Every release of textdp states its guarantee for that release alone; releasing the same input
again spends privacy again. A :class:`Ledger` records each release (input fingerprint,
mechanism, parameters, guarantee, vocabulary fingerprint, record count, time, textdp version,
whether it was seeded) and, before the next release, reads the file back: the release learns how
often its input was released before and what the cumulative guarantee is under sequential
composition (:mod:`textdp.privacy.composition`), and a ``refuse`` policy stops a release whose
cumulative ε would exceed a budget before anything is released.

One small API for every front (CLI, Python API, integrations)::

    ledger = Ledger("releases.jsonl", policy="refuse", budget=20)
    with ledger.release(mechanism=mech, input_fingerprint=fp, records=n, seed=None) as rel:
        output = ...                        # rel.section / rel.warnings go into the report
    # appended here, only if the block succeeded

File format and safety (docs/accounting.md):

* each line is one JSON object (``schema`` ``textdp.ledger/1``) ending in ``\\n``;
* an append is ONE ``write`` of the whole line on a descriptor opened ``O_APPEND``, followed by
  ``os.fsync``, under an exclusive ``fcntl.flock`` (POSIX: Linux, macOS; not Windows; advisory,
  so only textdp's own writers are serialised, and flock over NFS is as reliable as the mount);
* a last line without ``\\n`` or not valid JSON (an append killed midway, a crash) is *torn*: it
  is reported (report warning, ``textdp ledger show``) and kept as it is, never dropped or
  overwritten; the next append starts on a new line, so it never glues onto it. An invalid line
  elsewhere is reported as corrupt and not counted;
* under ``policy="refuse"`` the ledger stays locked from the budget check to the append, so two
  concurrent releases cannot both pass the budget (the second waits for the first).

The ledger lives above the core: it opens files. The core's release functions take a built
:class:`Ledger` (``ledger=``) and only call :meth:`Ledger.release`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textdp.privacy.composition import Composition, Spend, compose
from textdp.privacy.fingerprint import ENCODING

try:  # POSIX only: the ledger's exclusive lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["POLICIES", "SCHEMA", "Contents", "Ledger", "LedgerError", "LedgerRefused", "Release",
           "as_ledger", "iter_inputs", "parse"]

SCHEMA = "textdp.ledger/1"
POLICIES = ("warn", "refuse")


class LedgerError(ValueError):
    """The ledger cannot be used (a directory, no lock support, a bad policy or budget)."""


class LedgerRefused(LedgerError):
    """``policy="refuse"``: the release would exceed the budget; nothing was released or recorded."""


@dataclass
class Contents:
    """What a ledger file holds: valid entries (with their line numbers), and what is wrong."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    #: The last line when it has no trailing newline or is not a valid entry: ``{line, bytes,
    #: counted, why}``; None when the file ends cleanly.
    torn: dict[str, Any] | None = None
    #: Invalid lines before the last: ``{line, why}`` (e.g. an earlier torn line).
    corrupt: list[dict[str, Any]] = field(default_factory=list)
    #: Set when the file was read without its shared lock (a release holds it).
    note: str | None = None

    def problems(self, path: str | os.PathLike) -> list[str]:
        """The torn last line and corrupt lines, as warnings naming the file and line."""
        out = []
        if self.torn is not None:
            t = self.torn
            out.append(f"ledger {os.fspath(path)}: the last line (line {t['line']}, {t['bytes']} "
                       f"bytes) is torn ({t['why']}: an append was interrupted); kept as it is, "
                       + ("counted (it is a whole entry)" if t["counted"] else "not counted")
                       + "; the next append starts on a new line")
        out += [f"ledger {os.fspath(path)}: line {c['line']} is not a valid entry ({c['why']}); "
                "kept as it is, not counted" for c in self.corrupt[:10]]
        if len(self.corrupt) > 10:
            out.append(f"ledger {os.fspath(path)}: {len(self.corrupt) - 10} more invalid lines "
                       "(not counted); is this a textdp ledger?")
        return out

    def of_input(self, fingerprint: str) -> list[dict[str, Any]]:
        return [e for e in self.entries if e["input"]["fingerprint"] == fingerprint]


def _check_entry(line: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        entry = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"not JSON: {str(exc)[:60]}"
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA:
        return None, f"not a {SCHEMA} entry"
    if not isinstance(entry.get("input"), dict) or not isinstance(entry.get("guarantee"), dict) \
            or "fingerprint" not in entry["input"] or "id" not in entry:
        return None, "an entry without id, input fingerprint or guarantee"
    return entry, ""


def parse(data: bytes) -> Contents:
    """The entries of a ledger's bytes, with its torn last line and corrupt lines reported."""
    contents = Contents()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        entry, why = _check_entry(line)
        if entry is None:
            contents.corrupt.append({"line": number, "why": why})
        else:
            contents.entries.append({**entry, "_line": number})
    if contents.corrupt and not tail and contents.corrupt[-1]["line"] == len(lines):
        last = contents.corrupt.pop()  # a last line that ends in \n but is not an entry
        contents.torn = {"line": last["line"], "bytes": len(lines[-1]), "counted": False,
                         "why": last["why"]}
    if tail:
        entry, why = _check_entry(tail)
        contents.torn = {"line": len(lines) + 1, "bytes": len(tail), "counted": entry is not None,
                         "why": "no trailing newline" + (f", {why}" if why else "")}
        if entry is not None:
            contents.entries.append({**entry, "_line": len(lines) + 1})
    return contents


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
    return [Spend.from_guarantee(e["guarantee"], release=e["id"], space=e.get("space", ""))
            for e in entries]


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


class Ledger:
    """An append-only privacy ledger at ``path`` (created on the first release).

    Args:
        path: the JSON-lines file.
        policy: ``"warn"`` (default: earlier releases and an exceeded budget are warned about)
            or ``"refuse"`` (a release whose cumulative ε for its input would exceed ``budget``
            raises :class:`LedgerRefused` before anything is released; needs ``budget``).
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
            budget = float(budget)
            if not (budget > 0 and math.isfinite(budget)):
                raise LedgerError(f"the budget must be a finite ε > 0, got {budget!r}")
        if policy == "refuse" and budget is None:
            raise LedgerError("the refuse policy needs a budget (--budget EPS)")
        self.path = Path(path)
        if self.path.is_dir():
            raise LedgerError(f"ledger {self.path}: is a directory, expected a file")
        if not self.path.absolute().parent.is_dir():
            raise LedgerError(f"ledger {self.path}: directory {str(self.path.parent)!r} does not "
                              "exist")
        self.policy = policy
        self.budget = budget

    def read(self) -> Contents:
        """The entries, under a shared lock; when a release holds the lock (``refuse``), the
        file is read without it and :attr:`Contents.note` says so."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise LedgerError(f"ledger {self.path}: no such file") from None
        try:
            note = None
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                note = "read while a release holds the ledger's lock: its line is not there yet"
            contents = parse(_read_fd(fd))
            contents.note = note
            return contents
        finally:
            os.close(fd)  # closing releases the lock

    def release(self, *, mechanism: Any, input_fingerprint: str, records: int,
                seed: int | None, input_kind: str = "texts", space: str | None = None) -> Release:
        """A :class:`Release` context: checks on entry, appends on a successful exit.

        Args:
            mechanism: the built mechanism (its ``name``, ``parameters``, ``guarantee``; a word
                mechanism's vocabulary fingerprint is its ``space``).
            input_fingerprint: :mod:`textdp.privacy.fingerprint` of the released values.
            records: how many values were released.
            seed: the run's seed (a seeded run is flagged: reproducible, not for production).
            input_kind: ``texts``, ``vectors`` or ``documents`` (the fingerprint's encoding).
            space: what else fixes the metric (vocabulary, encoder, sentence splitter); default:
                the mechanism's vocabulary fingerprint, else "".
        """
        if space is None:
            vocabulary = getattr(mechanism, "vocabulary", None)
            space = f"vocabulary sha256 {vocabulary.fingerprint}" if vocabulary is not None else ""
        entry = _entry(mechanism, input_fingerprint, records, seed, input_kind, space)
        return Release(self, entry)


def _entry(mechanism: Any, fingerprint: str, records: int, seed: int | None, input_kind: str,
           space: str) -> dict[str, Any]:
    """A ledger line's content; its id is the sha256 of the rest (16 hex digits)."""
    from textdp import __version__

    now = time.time()
    entry = {
        "schema": SCHEMA,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z",
        "textdp_version": __version__,
        "input": {"fingerprint": fingerprint, "encoding": f"{ENCODING} {input_kind}",
                  "records": int(records)},
        "mechanism": {"name": mechanism.name, "parameters": _json_value(mechanism.parameters)},
        "guarantee": _json_value({k: v for k, v in mechanism.guarantee.to_dict().items()
                                  if k in ("notion", "epsilon", "delta", "metric", "verified",
                                           "numerics")}),
        "space": space,
        "seeded": seed is not None,
        "pid": os.getpid(),
    }
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode("utf-8")).hexdigest()
    return {"schema": SCHEMA, "id": digest[:16], **{k: v for k, v in entry.items()
                                                     if k != "schema"}}


class Release:
    """One release guarded by a ledger: entering checks it, a successful exit records it.

    After entering: :attr:`earlier` (the earlier entries of the same input), :attr:`composition`
    (cumulative, this release included), :attr:`section` (the report's ``ledger``) and
    :attr:`warnings` (for the report's ``warnings``). Entering raises :class:`LedgerRefused`
    under ``refuse`` when the budget would be exceeded. Leaving the block with an exception
    records nothing; :meth:`commit` records explicitly (once).
    """

    def __init__(self, ledger: Ledger, entry: dict[str, Any]) -> None:
        self.ledger = ledger
        self.entry = entry
        self.earlier: list[dict[str, Any]] = []
        self.composition: Composition | None = None
        self.contents = Contents()
        self.warnings: list[str] = []
        self._fd: int | None = None

    @property
    def id(self) -> str:
        return self.entry["id"]

    def __enter__(self) -> Release:
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        try:
            self._fd = os.open(self.ledger.path, flags, 0o600)
        except OSError as exc:
            raise LedgerError(f"ledger {self.ledger.path}: {exc.strerror or exc}") from None
        refuse = self.ledger.policy == "refuse"
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX if refuse else fcntl.LOCK_SH)
            self.contents = parse(_read_fd(self._fd))
            if not refuse:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._check()
        except BaseException:
            self._close()
            raise
        return self

    def _check(self) -> None:
        fingerprint = self.entry["input"]["fingerprint"]
        self.earlier = self.contents.of_input(fingerprint)
        self.composition = compose(_spends([*self.earlier, self.entry]))
        self.warnings = self.contents.problems(self.ledger.path)
        if self.earlier:
            names = ", ".join(f"{e['id']} ({e['time']}, {e['mechanism']['name']} "
                              f"ε = {e['guarantee'].get('epsilon')})" for e in self.earlier)
            self.warnings.append(
                f"this input (sha256 {fingerprint[:16]}…) was released {len(self.earlier)} "
                f"time(s) before according to ledger {self.ledger.path}: {names}; cumulative "
                f"with this release: {self.composition.summary()}")
        budget = self.ledger.budget
        reasons = self.composition.over_budget(budget) if budget is not None else []
        if reasons and self.ledger.policy == "refuse":
            raise LedgerRefused(f"ledger {self.ledger.path}: refused, the budget ε = {budget:g} "
                                f"for this input would be exceeded: {'; '.join(reasons)}; nothing "
                                "was released or recorded")
        if reasons:
            self.warnings.append(f"budget ε = {budget:g} exceeded for this input (policy warn): "
                                 + "; ".join(reasons))

    @property
    def section(self) -> dict[str, Any]:
        """The report's ``ledger`` section."""
        return {"path": os.fspath(self.ledger.path), "policy": self.ledger.policy,
                "budget": self.ledger.budget, "release_id": self.id,
                "input_fingerprint": self.entry["input"]["fingerprint"],
                "input_encoding": self.entry["input"]["encoding"],
                "earlier_releases": len(self.earlier),
                "earlier": [{"id": e["id"], "time": e["time"], "mechanism": e["mechanism"]["name"],
                             "notion": e["guarantee"].get("notion"),
                             "epsilon": e["guarantee"].get("epsilon"),
                             "delta": e["guarantee"].get("delta")} for e in self.earlier],
                "cumulative": self.composition.to_dict() if self.composition else None,
                "torn_last_line": self.contents.torn, "corrupt_lines": self.contents.corrupt,
                "recorded": "appended after the output is committed"}

    def attach(self, report: dict[str, Any]) -> dict[str, Any]:
        """Add :attr:`section` as ``report["ledger"]`` and :attr:`warnings` to its warnings."""
        report["ledger"] = self.section
        report.setdefault("warnings", []).extend(self.warnings)
        return report

    def commit(self) -> dict[str, Any]:
        """Append this release's line (once); returns the entry."""
        if self._fd is None:
            raise LedgerError("the release was not checked (enter it first) or was already recorded")
        try:
            if self.ledger.policy != "refuse":
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            _append(self._fd, json.dumps(self.entry, ensure_ascii=False, sort_keys=False,
                                         separators=(",", ":"), allow_nan=False).encode("utf-8"))
        except OSError as exc:  # e.g. a full disk: the release happened, say it is not recorded
            raise LedgerError(f"ledger {self.ledger.path}: the release {self.id} succeeded but its "
                              f"line could not be appended ({exc.strerror or exc}): it is NOT "
                              "recorded") from None
        finally:
            self._close()
        return self.entry

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and self._fd is not None:
            self.commit()
        else:
            self._close()


def _append(fd: int, line: bytes) -> None:
    """One whole line in one write (O_APPEND: at the end), then fsync; the caller holds LOCK_EX.

    A file that does not end in ``\\n`` (a torn last line) gets one first, in the same write, so
    the new line never glues onto the torn one.
    """
    size = os.fstat(fd).st_size
    prefix = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
    data = prefix + line + b"\n"
    written = os.write(fd, data)
    while written < len(data):  # a short write (disk full): finish it or raise
        n = os.write(fd, data[written:])
        if n <= 0:
            raise OSError("short write to the ledger")
        written += n
    os.fsync(fd)


def iter_inputs(contents: Contents) -> Iterator[tuple[str, list[dict[str, Any]], Composition]]:
    """Per input fingerprint (first-seen order): its entries and their cumulative guarantee."""
    by_input: dict[str, list[dict[str, Any]]] = {}
    for e in contents.entries:
        by_input.setdefault(e["input"]["fingerprint"], []).append(e)
    for fingerprint, entries in by_input.items():
        yield fingerprint, entries, compose(_spends(entries))


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
    return Ledger(ledger, policy=policy, budget=budget)
