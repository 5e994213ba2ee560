"""Reading a privacy ledger: every line validated, the releases that count, their spends.

:func:`parse` turns a ledger's bytes into :class:`Contents` (the releases that count, the voided
ones, the lines that cannot be validated, a torn last line); :func:`_spend` keys a release's
spend on its measurement's stable ids (a line written before they were recorded gets the metric
id derived from its mechanism, parameters and space: :func:`textdp.privacy.measurement.
legacy_metric_id`). :func:`_entry` builds a pending line's content. Writing lines — the pending,
complete and void lines of the write-ahead protocol — is :mod:`textdp.ledger`'s alone; this
module opens no file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from textdp.ledger_documents import check_field
from textdp.privacy import format_up
from textdp.privacy.composition import Spend
from textdp.privacy.fingerprint import ENCODING
from textdp.privacy.measurement import InputSpace, legacy_metric_id, measurement_of, space_id

__all__ = ["POLICIES", "SCHEMA", "SCHEMAS", "Contents", "parse"]

SCHEMA = "textdp.ledger/2"
#: Every schema the reader validates: ``/1`` lines (written after the output, by textdp before
#: the write-ahead protocol) are complete releases and count as they always did.
SCHEMAS = ("textdp.ledger/1", SCHEMA)
POLICIES = ("warn", "refuse")
_HEX16 = re.compile(r"[0-9a-f]{16}\Z")
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


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


# --- building a pending line ----------------------------------------------------------------------

def _measurement(mechanism: Any, space: InputSpace | str) -> dict[str, str] | None:
    """The stable ids of the release's measurement (None for an object that has none: its line
    is then keyed as an old line is)."""
    try:
        measured = measurement_of(mechanism, space.id if isinstance(space, InputSpace)
                                  else space_id(space))
    except (TypeError, ValueError, AttributeError):
        return None
    return {"name": measured.name, "notion": measured.notion,
            "input_metric": measured.input_metric}


def _entry(mechanism: Any, fingerprint: str, records: int, seed: int | None, input_kind: str,
           space: InputSpace | str, policy: str, budget: float | None,
           input_name: str | None = None,
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
        "space": str(space),
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


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
