"""A ledger's totals and the policy a release meets when it enters the ledger
(:class:`textdp.ledger.Release`): what the ledger already holds for the release's input and for
each of its documents, the cumulative guarantee under sequential composition, the warnings, and
whether ``refuse`` refuses it (:func:`assess`); the totals of the whole ledger per input
(:func:`iter_inputs`) and per document (:func:`documents_summary`), for ``textdp ledger``.

This module reads validated contents (:mod:`textdp.ledger_lines`) and opens no file; the
write-ahead protocol that calls :func:`assess` under the exclusive lock is :mod:`textdp.ledger`'s. Per input,
the earlier counted releases (pending ones included) and this one are composed
(:func:`textdp.privacy.composition.compose`, keyed on each measurement's stable ids); per
document, every release that held the document (:func:`textdp.ledger_documents.check_documents`,
docs/accounting.md, "Per document"). Either composition over the budget refuses under
``refuse`` and is warned about under ``warn``; so does, under ``refuse``, a line that cannot be
validated or a document tag made under another key (fail closed).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from textdp.ledger_documents import DocumentCheck, check_documents, worst_document
from textdp.ledger_lines import Contents, _printed, _spend, _spends
from textdp.privacy.composition import Composition, compose

__all__ = ["Assessment", "assess", "documents_summary", "iter_inputs"]


@dataclass
class Assessment:
    """What the ledger says about a release about to happen.

    Attributes:
        earlier: the earlier counted releases of the same input (pending ones included).
        composition: cumulative guarantee of the input, this release included (None when the
            release was refused before it was computed).
        warnings: one line each, for the report and the standard error.
        documents: the per-document composition (None without documents).
        refusal: under ``refuse``, why nothing may be released (the message of
            :class:`textdp.ledger.LedgerRefused`); None when the release may go ahead.
    """

    earlier: list[dict[str, Any]] = field(default_factory=list)
    composition: Composition | None = None
    warnings: list[str] = field(default_factory=list)
    documents: DocumentCheck | None = None
    refusal: str | None = None


def assess(contents: Contents, entry: dict[str, Any], *, path: str | os.PathLike,
           policy: str, budget: float | None, key_path: str | os.PathLike) -> Assessment:
    """Apply ``policy`` and ``budget`` to the release ``entry`` given the ledger's ``contents``
    (the ledger at ``path``, its document key at ``key_path``)."""
    refuse = policy == "refuse"
    if refuse and contents.invalid:
        return Assessment(refusal=contents.refusal(path))
    fingerprint = entry["input"]["fingerprint"]
    earlier = contents.of_input(fingerprint)
    out = Assessment(earlier=earlier, composition=compose(_spends([*earlier, entry])),
                     warnings=contents.problems(path))
    if earlier:
        names = ", ".join(f"{e['id']} ({e['time']}, {e['mechanism']['name']} "
                          f"ε = {_printed(e['guarantee'].get('epsilon'))}"
                          + (f", from {e['input']['name']}" if e["input"].get("name") else "")
                          + (", pending" if e["_state"] == "pending" else "") + ")"
                          for e in earlier)
        out.warnings.append(
            f"this input (sha256 {fingerprint[:16]}…) was released {len(earlier)} "
            f"time(s) before according to ledger {path}: {names}; cumulative "
            f"with this release: {out.composition.summary()}")
    reasons = out.composition.over_budget(budget) if budget is not None else []
    what = "this input"
    out.refusal = _assess_documents(out, contents, entry, path, refuse, budget, key_path)
    if out.refusal is not None:
        return out
    first = out.documents.first_over if out.documents else None
    if budget is not None and first is not None and not reasons:
        reasons = first.composition.over_budget(budget)
        what = (f"{out.documents.over} of this input's documents (the worst: "
                f"{first.describe()})")
    if reasons and refuse:
        out.refusal = (f"ledger {path}: refused, the budget ε = {budget:g} for {what} would be "
                       f"exceeded: {'; '.join(reasons)}; nothing was released or recorded")
    elif reasons:
        out.warnings.append(f"budget ε = {budget:g} exceeded for {what} (policy warn): "
                            + "; ".join(reasons))
    return out


def _assess_documents(out: Assessment, contents: Contents, entry: dict[str, Any],
                      path: str | os.PathLike, refuse: bool, budget: float | None,
                      key_path: str | os.PathLike) -> str | None:
    """Compose the release per document (:func:`textdp.ledger_documents.check_documents`) into
    ``out``; tags made under another key cannot be matched: the refusal under ``refuse`` (else a
    warning)."""
    if "documents" not in entry:
        return None
    out.documents, foreign = check_documents(entry, contents.entries, entry["documents"]["key"],
                                             _spend, budget)
    if foreign:
        message = (f"ledger {path}: release(s) {', '.join(foreign[:5])} recorded "
                   "their documents under another key than the one in "
                   f"{key_path} (replaced or lost?): their documents cannot be "
                   "matched with this release's; restore the key file")
        if refuse:
            return message + "; under the refuse policy nothing was released or recorded"
        out.warnings.append(message)
    if out.documents.before:
        out.warnings.append(
            f"{out.documents.before} of this input's documents were released before (as "
            f"part of this or other inputs) according to ledger {path}; the "
            f"worst: {out.documents.worst.describe()}")
    return None


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
