"""``textdp ledger show``: the releases a privacy ledger recorded, and the totals per input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, option, warn

__all__ = ["app", "show"]

app = typer.Typer(help="The privacy ledger (--ledger): releases recorded across runs.",
                  no_args_is_help=True)

SHOW_HELP = """Print the releases recorded in the ledger PATH and the cumulative guarantee per input.

\b
One block per input (its sha256 fingerprint), in the order first seen: every release (id,
time, mechanism, notion, ε, δ, records, seeded or not; the input's name, a file or a column,
and the output's path where the release recorded them), then the total under sequential
composition: metric DP ε's add for the same metric and vocabulary, (ε, δ) add for
PrivEmb/LaplaceVector, SentDP ε's add, dataset-level (ε, δ)-DP releases (textdp synthesize)
compose by dp-accounting's accountant over their recorded events; different metrics are listed
side by side, with the budget they spend together; utility-optimised and unverified releases are
stated as not composable (docs/accounting.md). Then the documents: how many the ledger tracks by
keyed tag, how many were released more than once (in any input), the worst document's total (the
budget it spent, per group and across groups, and its whole-document guarantee) and the largest
whole-document guarantee. Pending releases (recorded before their output, not yet completed:
running, crashed or cut short) count like complete ones; voided releases (failed before any
output) are listed and not counted. Lines that cannot be validated (a torn last line, an
unknown schema, a wrong type, ε or δ out of range, an id that does not match) are listed with
their line numbers and not counted; under --ledger-policy refuse such a ledger refuses every
release until they are repaired or removed. --json prints the same as one JSON document.
Reading never modifies the ledger.
"""


def _eps(value: Any) -> str:
    from textdp.privacy import format_up

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    try:
        return format_up(float(value))  # printed ε is never below the recorded one
    except OverflowError:  # an integer beyond the largest float: no finite bound
        return "inf"


def _document(path: Path, contents: Any) -> dict[str, Any]:
    from textdp.ledger import iter_inputs

    inputs = [{"fingerprint": fp, "encoding": entries[0]["input"].get("encoding"),
               "names": sorted({e["input"]["name"] for e in entries
                                if e["input"].get("name") is not None}),
               "releases": [e["id"] for e in entries], "cumulative": composition.to_dict()}
              for fp, entries, composition in iter_inputs(contents)]
    def plain(e: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in e.items() if not k.startswith("_") and k != "documents"},
                **({"documents": {k: v for k, v in e["documents"].items() if k != "records"}}
                   if "documents" in e else {}),
                "line": e["_line"],
                "state": e["_state"]}

    return {"path": os.fspath(path), "releases": [plain(e) for e in contents.entries],
            "inputs": inputs, "documents": _documents(path, contents),
            "voided": [plain(e) for e in contents.voided],
            "invalid_lines": contents.invalid, "torn_last_line": contents.torn,
            "warnings": contents.problems(path) + ([contents.note] if contents.note else [])}


def _documents(path: Path, contents: Any) -> dict[str, Any] | None:
    """Per-document totals (:func:`textdp.ledger.documents_summary`) under the ledger's key."""
    from textdp.ledger import Ledger, documents_summary
    from textdp.ledger_documents import KeyFileError

    try:
        key = Ledger(path).key.id
    except KeyFileError as exc:
        warn(str(exc))
        key = None
    summary = documents_summary(contents, key)
    if summary is not None:
        summary["key"] = key
    return summary


def _document_lines(docs: dict[str, Any] | None) -> list[str]:
    if docs is None:
        return []
    lines = [f"documents: {docs['documents']} tracked by keyed tag (key {docs['key']}), "
             f"{docs.get('released_more_than_once', 0)} released more than once"]
    if docs.get("worst_summary"):
        lines.append(f"  worst document: {docs['worst_summary']}")
    whole = docs.get("worst_whole_document")
    if whole and whole != docs.get("worst"):
        eps = whole["epsilon_document"]
        lines.append(f"  largest whole-document guarantee: ε = {_up(eps)} ({whole['documents']} "
                     f"document(s) of ≤ {whole['size']} unit(s), releases "
                     + ", ".join(r["id"] for r in whole["releases"]) + ")")
    if docs.get("foreign_key"):
        lines.append(f"  releases with tags under another key (not matched): "
                     f"{', '.join(docs['foreign_key'])}")
    return lines


def _up(value: Any) -> str:
    from textdp.privacy import format_up

    return format_up(value) if isinstance(value, (int, float)) else str(value)


def _where(release: dict[str, Any]) -> str:
    """What a person finds the release by: the input's name, its record count and the output's
    path (recorded by textdp since the stable ids; "" for an older line)."""
    source = release["input"]
    name, output = source.get("name"), source.get("output")
    if name is None and output is None:
        return ""
    return (f"input {name if name is not None else '(unnamed)'}, "
            f"{source.get('records')} record(s)"
            + (f" → output {output}" if output is not None else ""))


def _text(doc: dict[str, Any]) -> list[str]:
    by_id = {r["id"]: r for r in doc["releases"]}
    lines = [f"ledger {doc['path']}: {len(doc['releases'])} release(s) of "
             f"{len(doc['inputs'])} input(s)"]
    for item in doc["inputs"]:
        first = by_id[item["releases"][0]]
        lines.append(f"input sha256 {item['fingerprint'][:16]}… ({item['encoding']}, "
                     f"{first['input'].get('records')} record(s)): "
                     f"{len(item['releases'])} release(s)")
        for rid in item["releases"]:
            r = by_id[rid]
            g = r["guarantee"]
            lines.append(f"  {rid}  {r['time']}  {r['mechanism']['name']}  {g.get('notion')}  "
                         f"ε = {_eps(g.get('epsilon'))}  δ = {_eps(g.get('delta'))}"
                         + ("  pending (counted)" if r["state"] == "pending" else "")
                         + ("  seeded (not for production)" if r.get("seeded") else ""))
            where = _where(r)
            if where:
                lines.append(f"      {where}")
        lines.append(f"  total: {item['cumulative']['summary']}")
    lines += _document_lines(doc.get("documents"))
    for r in doc["voided"]:
        where = _where(r)
        lines.append(f"voided (not counted): {r['id']}  {r['time']}  {r['mechanism']['name']}  "
                     f"line {r['line']}" + (f"  ({where})" if where else ""))
    for bad in doc["invalid_lines"]:
        lines.append(f"invalid line {bad['line']} (not counted): {bad['why']}")
    return lines


def show(
    path: Annotated[Path, typer.Argument(metavar="PATH", show_default=False,
                                         help="The ledger file (JSON lines).")],
    as_json: Annotated[bool, option("--json", help="Print one JSON document instead.")] = False,
) -> None:
    from textdp.ledger import Ledger, LedgerError

    try:
        contents = Ledger(path).read()
    except LedgerError as exc:
        raise CLIError(str(exc)) from None
    doc = _document(path, contents)
    if as_json:
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        typer.echo("\n".join(_text(doc)))
    for message in doc["warnings"]:
        warn(message)


show.__doc__ = SHOW_HELP
app.command("show")(show)
