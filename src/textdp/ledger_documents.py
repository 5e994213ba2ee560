"""The ledger's per-document accounting: its secret key, the documents a release line records,
and the budget composed per document across every release and every input that held it.

A release line (``textdp.ledger/2``) may carry ``documents`` — per document of its input an 8-byte
keyed tag and its size (:mod:`textdp.privacy.documents`; 16 base64 characters a document) — and
``document_guarantee``, what one unit of a document gets (:func:`unit_guarantee`). Lines without
them (``/1`` lines, ``/2`` lines written before, releases whose front gave a bare fingerprint)
are composed per input, as before, and with the documents of a tagged release of the same input.

**The key** (:class:`LedgerKey`) is 32 random bytes in ``<ledger>.key``, mode 0600, created once,
atomically (written to a temporary file, then linked into place: no reader sees half a key). It
keeps the tags from being a dictionary oracle: without it, nobody holding the ledger can test
whether a guessed document ("yes", a name, a phone number) was released, however short. It does
not hide *which* releases share documents, how many, or their sizes (these are in the clear, by
design: that is what the ledger composes), and it protects nothing from whoever can read the key
file (the ledger's owner). Lose the key and the old tags match nothing: a ``refuse`` ledger then
refuses (fail closed) until the key is restored.

**The rule** (docs/accounting.md, "Per document"): for every document of the new release, the
releases that held it (each as often as it held it, this one included) are composed
(:func:`textdp.privacy.composition.compose`), and the release is refused when that composition
is over the budget — per metric group, and across groups their ε's (each in its own units) add.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from textdp.privacy import format_up, round_up_sum
from textdp.privacy.composition import Composition, Spend, compose, family_of
from textdp.privacy.documents import (
    RECORD_BYTES,
    SCHEME,
    UnitGuarantee,
    counted,
    decode,
    encode,
    key_id,
    signatures,
    whole_document,
)

__all__ = ["DocumentCheck", "DocumentTotals", "KeyFileError", "LedgerKey", "check_documents",
           "document_field", "worst_document"]

_KEY_HEADER = "textdp.ledger.key/1 "
_HEX16 = re.compile(r"[0-9a-f]{16}\Z")


class KeyFileError(ValueError):
    """The key file cannot be used (one line naming it)."""


class LedgerKey:
    """The secret of one ledger: ``<ledger>.key``, 32 random bytes, mode 0600."""

    def __init__(self, ledger_path: Path) -> None:
        self.path = ledger_path.with_name(ledger_path.name + ".key")
        self._key: bytes | None = None

    def load(self, create: bool = True) -> bytes | None:
        """The key (created when missing and ``create``; None when missing and not)."""
        if self._key is None:
            self._key = self._read()
            if self._key is None and create:
                self._create()
                self._key = self._read()
        return self._key

    @property
    def id(self) -> str | None:
        key = self.load(create=False)
        return key_id(key) if key is not None else None

    def _read(self) -> bytes | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise KeyFileError(f"ledger key {self.path}: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise KeyFileError(f"ledger key {self.path}: not a regular file")
            if st.st_mode & 0o077:
                raise KeyFileError(f"ledger key {self.path}: readable or writable by others (mode "
                                f"{st.st_mode & 0o777:o}); it must be private: chmod 600 "
                                f"{self.path}")
            text = os.read(fd, 256).decode("ascii", "replace")
        finally:
            os.close(fd)
        hexed = text[len(_KEY_HEADER):].strip() if text.startswith(_KEY_HEADER) else ""
        if not re.fullmatch(r"[0-9a-f]{64}", hexed):
            raise KeyFileError(f"ledger key {self.path}: not a textdp ledger key (damaged?); "
                            "restore it from a backup")
        return bytes.fromhex(hexed)

    def _create(self) -> None:
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(temp, flags, 0o600)
            try:
                os.write(fd, f"{_KEY_HEADER}{os.urandom(32).hex()}\n".encode("ascii"))
                os.fsync(fd)
            finally:
                os.close(fd)
            with contextlib.suppress(FileExistsError):  # another process made it first: theirs
                os.link(temp, self.path)
            _fsync_dir(self.path.parent)
        except OSError as exc:
            raise KeyFileError(f"ledger key {self.path}: cannot be created "
                            f"({exc.strerror or exc})") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def document_field(records: Any, key: bytes) -> dict[str, Any]:
    """A release line's ``documents``: the tags and sizes of ``records``
    (:class:`textdp.privacy.documents.DocumentRecords`) under ``key``."""
    return {"scheme": SCHEME, "key": key_id(key), "count": len(records),
            "records": encode(records.tagged(key))}


def check_field(entry: dict[str, Any]) -> None:
    """Validate a line's ``documents`` and ``document_guarantee`` (ValueError with a phrase)."""
    docs = entry.get("documents")
    if docs is not None:
        if not isinstance(docs, dict) or docs.get("scheme") != SCHEME:
            raise ValueError("documents has an unknown scheme")
        if not isinstance(docs.get("key"), str) or not _HEX16.match(docs["key"]):
            raise ValueError("documents.key is not 16 hex digits")
        n = docs.get("count")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError("documents.count is not a count")
        if not isinstance(docs.get("records"), str) or \
                len(docs["records"]) != 4 * math.ceil(RECORD_BYTES * n / 3):
            raise ValueError("documents.records does not hold documents.count records")
        decode(docs["records"], n)  # raises ValueError: not base64, or the wrong length
    unit = entry.get("document_guarantee")
    if unit is not None:
        if not isinstance(unit, dict) or unit.get("scale") not in ("size", "one", "unknown"):
            raise ValueError("document_guarantee has no valid scale")
        eps = unit.get("epsilon")
        if eps != "inf" and (isinstance(eps, bool) or not isinstance(eps, (int, float))
                             or not eps >= 0 or not math.isfinite(eps)):
            raise ValueError("document_guarantee.epsilon is not ≥ 0 (or inf)")


def _tags(entry: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(tags, sizes) of a line (decoded once and kept on the parsed entry)."""
    cached = entry.get("_tags")
    if cached is None:
        docs = entry["documents"]
        cached = decode(docs["records"], docs["count"])
        if "_line" in entry:  # a parsed line (a line being written keeps only its own fields)
            entry["_tags"] = cached
    return cached


def _unit(entry: dict[str, Any]) -> UnitGuarantee:
    unit = entry.get("document_guarantee")
    if unit is None:
        return UnitGuarantee("document", math.inf, scale="unknown",
                             why="released before textdp recorded document-level guarantees")
    return UnitGuarantee.from_dict(unit)


@dataclass(frozen=True)
class DocumentTotals:
    """A document's totals, exact: ``holds`` pairs each release (its entry) that held it with how
    often; ``composition`` composes their spends (in budget units); ``epsilon_document`` and
    ``delta_document`` are its whole-document guarantee (``size`` units), ∞ with ``why`` where no
    finite bound is known; ``documents``: how many documents share these totals."""

    documents: int
    size: int
    holds: tuple[tuple[dict[str, Any], int], ...]
    composition: Composition
    epsilon_document: float
    delta_document: float
    why: str = ""

    @property
    def spent(self) -> float:
        """ε's added over every group (each in its own units): what the budget is compared with."""
        return self.composition.total

    def describe(self) -> str:
        doc = (f"whole document (≤ {self.size} unit(s)): ε = {format_up(self.epsilon_document)}"
               + (f", δ = {format_up(self.delta_document)}" if self.delta_document else "")
               if math.isfinite(self.epsilon_document) else
               f"whole document: not bounded ({self.why or 'no finite bound'})")
        held = ", ".join(f"{e['id']}" + (f" ×{n}" if n > 1 else "") for e, n in self.holds)
        return (f"{self.documents} document(s) released in {held}: budget spent "
                f"{self.composition.summary()}; {doc}")

    def to_dict(self) -> dict[str, Any]:
        eps = self.epsilon_document
        return {"documents": self.documents, "size": self.size,
                "releases": [{"id": e["id"], "times": n} for e, n in self.holds],
                "spent": self.spent if math.isfinite(self.spent) else "inf",
                "cumulative": self.composition.to_dict(),
                "epsilon_document": eps if math.isfinite(eps) else "inf",
                "delta_document": self.delta_document, **({"why": self.why} if self.why else {})}


def _totals(holds: tuple[tuple[dict[str, Any], int], ...], size: int, documents: int,
            spend_of: Callable[[dict[str, Any]], Spend]) -> DocumentTotals:
    """The exact totals of documents held by ``holds`` ((release, times) pairs)."""
    spends = [spend_of(e) for e, n in holds for _ in range(n)]
    eps, deltas, why = [], [], ""
    for e, n in holds:
        e_doc, d_doc, reason = whole_document(_unit(e), size)
        eps += [e_doc] * n
        deltas += [d_doc] * n
        why = why or reason
    total = math.inf if any(math.isinf(v) for v in eps) else round_up_sum(eps)
    return DocumentTotals(documents, size, holds, compose(spends), total,
                          min(1.0, round_up_sum(deltas)), why if math.isinf(total) else "")


def _holders(entries: Sequence[dict[str, Any]], key: str | None,
             ) -> tuple[list[tuple[dict[str, Any], np.ndarray, np.ndarray]], list[str]]:
    """(entry, unique tags, counts) of the tagged entries made with ``key``, and of the untagged
    entries of an input some tagged entry holds (its documents); the ids of tagged entries made
    with another key (they cannot be matched)."""
    by_input: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    holders, foreign = [], []
    for e in entries:
        docs = e.get("documents")
        if docs is None:
            continue
        if docs["key"] != key:
            foreign.append(e["id"])
            continue
        tags, _ = _tags(e)
        u, c = counted(tags)
        holders.append((e, u, c))
        by_input.setdefault(e["input"]["fingerprint"], (u, c))
    for e in entries:
        if e.get("documents") is None and e["input"]["fingerprint"] in by_input:
            holders.append((e, *by_input[e["input"]["fingerprint"]]))
    return holders, foreign


class _Screen:
    """Every document's totals in floats, one vector operation per release: the budget spent
    (Σ_j times_j·ε_j; ∞ where a release does not compose) and the whole-document ε. Floats
    screen; the documents a decision or a report rests on are composed exactly
    (:meth:`exact`, :func:`_totals`)."""

    def __init__(self, target: np.ndarray, sizes: np.ndarray,
                 holders: Sequence[tuple[dict[str, Any], np.ndarray, np.ndarray]],
                 spend_of: Callable[[dict[str, Any]], Spend]) -> None:
        self.target, self.sizes, self.holders, self.spend_of = target, sizes, holders, spend_of
        n = target.size
        self.spent, self.whole = np.zeros(n), np.zeros(n)
        self.times = np.zeros(n, dtype=np.int64)  # release-times per document
        self.hits: list[tuple[np.ndarray, np.ndarray]] = []
        for e, tags, counts in holders:
            idx = np.minimum(np.searchsorted(tags, target), max(tags.size - 1, 0))
            hit = np.flatnonzero(tags[idx] == target) if tags.size else np.zeros(0, np.int64)
            c = counts[idx[hit]] if tags.size else np.zeros(0, np.int64)
            self.hits.append((hit, c))
            spend = spend_of(e)
            eps = spend.epsilon if family_of(spend) is not None else math.inf
            self.spent[hit] += c * eps
            unit = _unit(e)
            per = (math.inf if unit.scale == "unknown" or not math.isfinite(unit.epsilon)
                   else unit.epsilon)
            self.whole[hit] += c * (per * sizes[hit] if unit.scale == "size" else per)
            self.times[hit] += c
        # Σ of m non-negative float products, each rounded once: relative error ≤ (m + 1)·2⁻⁵³.
        self.margin = (len(holders) + 2) * 2.0**-52 * self.spent

    def over(self, budget: float) -> np.ndarray:
        """The documents whose exact total passes ``budget`` (indices): certain ones from the
        floats, the ones within the floats' error of it composed exactly."""
        spent = self.spent
        certain = np.isinf(spent) | (spent > budget + self.margin)
        unsure = np.flatnonzero(~certain & (spent >= budget - self.margin))
        if unsure.size:
            group, rows = signatures(self.target[unsure], [(t, c) for _, t, c in self.holders])
            for g, row in enumerate(rows):
                holds = tuple((self.holders[j][0], n) for j, n in enumerate(row) if n)
                if _totals(holds, 0, 1, self.spend_of).composition.over_budget(budget):
                    certain[unsure[group == g]] = True
        return np.flatnonzero(certain)

    def exact(self, i: int) -> DocumentTotals:
        """Document ``i`` composed exactly; ``documents``: how many share its float totals."""
        holds = []
        for (hit, c), (e, _, _) in zip(self.hits, self.holders, strict=True):
            k = int(np.searchsorted(hit, i))
            if k < hit.size and hit[k] == i:
                holds.append((e, int(c[k])))
        same = int(((self.spent == self.spent[i]) & (self.whole == self.whole[i])).sum())
        return _totals(tuple(holds), int(self.sizes[i]), same, self.spend_of)

    def worst(self, among: np.ndarray | None = None) -> int:
        """The document with the most budget spent (then the largest whole-document ε)."""
        idx = np.arange(self.target.size) if among is None else among
        order = np.lexsort((self.whole[idx], self.spent[idx]))
        return int(idx[order[-1]])


@dataclass(frozen=True)
class DocumentCheck:
    """A release's documents against the ledger: ``count`` documents (records), ``before`` of
    them released before, ``over`` of them past the budget (0 without one); ``worst``, the
    document with the most budget spent, and ``first_over``, the worst past the budget (exact)."""

    count: int
    before: int
    over: int
    worst: DocumentTotals | None
    first_over: DocumentTotals | None


def check_documents(entry: dict[str, Any], earlier: Sequence[dict[str, Any]], key: str,
                    spend_of: Callable[[dict[str, Any]], Spend], budget: float | None = None
                    ) -> tuple[DocumentCheck, list[str]]:
    """The new release's documents, each composed with every counted release that held them
    (``earlier``: the ledger's counted entries), as often as it held them, this one included;
    and the ids of tagged entries made with another key."""
    tags, sizes = _tags(entry)
    if tags.size == 0:
        return DocumentCheck(0, 0, 0, None, None), []
    target, counts = counted(tags)
    order = np.argsort(tags, kind="stable")
    per_tag = np.maximum.reduceat(sizes[order], np.r_[0, np.flatnonzero(np.diff(tags[order])) + 1])
    holders, foreign = _holders(earlier, key)
    fingerprint = entry["input"]["fingerprint"]
    holders += [(e, target, counts) for e in earlier
                if e.get("documents") is None and e["input"]["fingerprint"] == fingerprint
                and all(h[0] is not e for h in holders)]
    holders.append((entry, target, counts))
    screen = _Screen(target, per_tag, holders, spend_of)
    before = int(counts[screen.times > counts].sum())
    over = screen.over(budget) if budget is not None else np.zeros(0, np.int64)
    first = screen.exact(screen.worst(over)) if over.size else None
    return DocumentCheck(int(counts.sum()), before, int(counts[over].sum()),
                         screen.exact(screen.worst()), first), foreign


def worst_document(entries: Sequence[dict[str, Any]], key: str | None,
                   spend_of: Callable[[dict[str, Any]], Spend]) -> dict[str, Any] | None:
    """Over the whole ledger: how many documents its tagged releases hold, how many were
    released more than once, and the worst document's totals (None without tagged releases)."""
    holders, foreign = _holders(entries, key)
    tagged = [e for e, _, _ in holders if e.get("documents") is not None]
    if not tagged:
        return None if not foreign else {"documents": 0, "foreign_key": foreign}
    all_tags = np.concatenate([_tags(e)[0] for e in tagged])
    all_sizes = np.concatenate([_tags(e)[1] for e in tagged])
    order = np.argsort(all_tags, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(all_tags[order])) + 1]
    target = all_tags[order][starts]
    sizes = np.maximum.reduceat(all_sizes[order], starts)
    screen = _Screen(target, sizes, holders, spend_of)
    worst = screen.exact(screen.worst())
    whole = screen.exact(int(np.argmax(screen.whole)))
    return {"documents": int(target.size),
            "released_more_than_once": int((screen.times > 1).sum()),
            "worst": worst.to_dict(), "worst_summary": worst.describe(),
            "worst_whole_document": whole.to_dict(),
            **({"foreign_key": foreign} if foreign else {})}
