"""Per-document accounting: which documents a release holds, and what a whole document gets.

Differential privacy is about one document (one person's record), so the ledger composes budgets
per document across every release and every input that contained it, not per input file. This
module is pure (no files): it

* computes each document's **normal form**, the document as the word mechanisms see it — its
  alphanumeric runs (:func:`textdp.text.split_batch`: the only tokens a mechanism may rewrite),
  each folded to its vocabulary key (:func:`textdp.text.lookup_key`: NFKC, case fold), joined by
  one space. Blank lines, record order, whitespace, punctuation and case therefore never make a
  new document; a text with no alphanumeric run (a blank line) is no document (nothing of it is
  privatised, nothing is spent on it). The form is deliberately coarse: two different texts with
  the same normal form are counted as one document, which can only over-count (the safe side);
* keeps, per document, an in-memory **digest** (16 bytes of the SHA-256 of the normal form, with
  the input kind as a domain separator) and its **size** in the mechanism's units (alphanumeric
  runs of a text, an upper bound on the words a word mechanism privatises; the sentences of a
  sentence-embedding document; 1 for a vector). Digests are never written anywhere: the ledger
  stores only :func:`tag` of each, keyed with its secret (:data:`SCHEME`);
* states the **document-level guarantee** of a mechanism (:func:`unit_guarantee`,
  :func:`whole_document`): the (ε, δ) a document of n units gets between any two documents of n
  units, from the mechanism's own privacy map at the largest distance of its metric;
* groups documents by how often each release held them (:func:`signatures`), so documents the
  ledger must compose exactly (those near the budget) are composed once per group.

Storage: a release records, per document (per record: a document that occurs k times in one
input is k records and spends k times), its 8-byte tag and 4-byte big-endian size, base64-encoded
in the ledger line: 12 bytes, 16 characters, per document and release.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RECORD_BYTES", "SCHEME", "TAG_BYTES", "DocumentRecords", "decode", "encode",
           "key_id", "normal_form", "normal_forms", "signatures", "tag_records", "unit_guarantee",
           "whole_document"]

#: The tag scheme a ledger line names: HMAC-SHA256 of a document's digest under the ledger's key,
#: truncated to 8 bytes, followed by the document's size as a 4-byte big-endian unsigned integer.
SCHEME = "textdp.doc/1 hmac-sha256/8+u32"
TAG_BYTES = 8
RECORD_BYTES = TAG_BYTES + 4
#: A size at this value means "at least this": its whole-document ε is stated as unbounded.
SIZE_CAP = 2**32 - 1
_DIGEST_BYTES = 16


#: An ASCII text's alphanumeric runs: for ASCII, :func:`textdp.text.split_batch`'s word
#: (a letter, then letters) and number (digits) runs are exactly these, and a run's vocabulary
#: key is its lower case (tested against the general path).
_ASCII_RUNS = re.compile(r"[a-z]+|[0-9]+")


def normal_forms(texts: Sequence[str]) -> list[tuple[bytes, int] | None]:
    """Per text: (normal form as UTF-8, number of alphanumeric runs), or None when it has no
    alphanumeric run (see the module docstring). ASCII texts take a fast path that gives the
    same forms as the general one (the mechanisms' own split, one C-level regex per text)."""
    out: list[tuple[bytes, int] | None] = [None] * len(texts)
    other = []
    for i, text in enumerate(texts):
        if text.isascii():
            runs = _ASCII_RUNS.findall(text.lower())
            if runs:
                out[i] = (" ".join(runs).encode("ascii"), len(runs))
        else:
            other.append(i)
    if other:
        from textdp.text import lookup_key, split_batch

        split = split_batch([texts[i] for i in other])
        start = 0
        for i, n in zip(other, split.counts, strict=True):
            runs = split.words[start:start + n]
            start += n
            if runs:
                out[i] = (lookup_key(" ".join(runs)).encode("utf-8", "surrogatepass"), n)
    return out


def normal_form(text: str) -> tuple[bytes, int] | None:
    """:func:`normal_forms` of one text."""
    return normal_forms([text])[0]


class DocumentRecords:
    """The documents of one input, in order: per document a 16-byte digest and its size.

    Held in memory only (the ledger writes :func:`tag_records` of them): 20 bytes a document.
    """

    __slots__ = ("_digests", "_sizes", "kind")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._digests = bytearray()
        self._sizes: list[int] = []

    def __len__(self) -> int:
        return len(self._sizes)

    def add(self, data: bytes, size: int) -> None:
        """One document: ``data`` its normal form (or its encoded values), ``size`` its units."""
        h = hashlib.sha256(f"textdp.doc/1 {self.kind}\n".encode("ascii"))
        h.update(data)
        self._digests += h.digest()[:_DIGEST_BYTES]
        self._sizes.append(min(int(size), SIZE_CAP))

    def texts(self, texts: Sequence[str]) -> None:
        for form in normal_forms(texts):
            if form is not None:
                self.add(*form)

    def tagged(self, key: bytes) -> bytes:
        """:func:`tag_records` of these documents under ``key``."""
        return tag_records(key, bytes(self._digests), self._sizes)


def tag_records(key: bytes, digests: bytes, sizes: Sequence[int]) -> bytes:
    """Per document, HMAC-SHA256(key, digest) truncated to :data:`TAG_BYTES`, then its size
    (4 bytes big-endian): :data:`RECORD_BYTES` a document."""
    out = bytearray()
    digest = hmac.digest
    for i, size in enumerate(sizes):
        d = digests[i * _DIGEST_BYTES:(i + 1) * _DIGEST_BYTES]
        out += digest(key, d, "sha256")[:TAG_BYTES]
        out += int(size).to_bytes(4, "big")
    return bytes(out)


def key_id(key: bytes) -> str:
    """A name for a ledger key (16 hex digits) that does not reveal it: lines record which key
    their tags were made with."""
    return hashlib.sha256(b"textdp.ledger.key-id/1\n" + key).hexdigest()[:16]


def encode(records: bytes) -> str:
    return base64.b64encode(records).decode("ascii")


def decode(text: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(tags as uint64, sizes as uint32) of a line's base64 records; ValueError if malformed."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise ValueError("documents.records is not base64") from None
    if len(raw) != RECORD_BYTES * count:
        raise ValueError(f"documents.records holds {len(raw)} bytes, expected "
                         f"{RECORD_BYTES} × {count}")
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(count, RECORD_BYTES)
    tags = rows[:, :TAG_BYTES].copy().view(">u8").ravel().astype(np.uint64)
    sizes = rows[:, TAG_BYTES:].copy().view(">u4").ravel().astype(np.uint32)
    return tags, sizes


# --- grouping documents by the releases that hold them ------------------------------------------

def signatures(target: np.ndarray, holders: Sequence[tuple[np.ndarray, np.ndarray]]
               ) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Group the documents ``target`` (unique sorted uint64 tags) by how often each holder
    holds them.

    ``holders`` are (unique sorted tags, counts) per release. Returns (the group of each target
    document, per group the tuple of counts, one per holder). Documents of one group were
    released by the same releases the same number of times, so one composition states all their
    totals (their sizes may differ).
    """
    group = np.zeros(target.shape[0], dtype=np.int64)
    rows: list[tuple[int, ...]] = [()]
    for tags, counts in holders:
        if tags.size == 0 or target.size == 0:
            rows = [r + (0,) for r in rows]
            continue
        idx = np.minimum(np.searchsorted(tags, target), tags.size - 1)
        hit = tags[idx] == target
        if not hit.any():  # a release that shares no document: no group splits
            rows = [r + (0,) for r in rows]
            continue
        c = np.where(hit, counts[idx], 0).astype(np.int64)
        pairs, inverse = np.unique(np.stack([group, c], axis=1), axis=0, return_inverse=True)
        rows = [rows[int(g)] + (int(n),) for g, n in pairs]
        group = inverse.reshape(-1)
    return group, rows


def counted(tags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unique sorted tags, how often each occurs)."""
    u, n = np.unique(tags, return_counts=True)
    return u, n.astype(np.int64)


# --- what a whole document gets -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class UnitGuarantee:
    """The guarantee of one unit of a document (a word, a sentence, the document, a vector)
    replaced by any other: the mechanism's privacy map at the largest distance of its metric.

    ``scale`` says how a document's units count: ``size`` (× the recorded size: words of a text,
    sentences of a sentence-embedding document), ``one`` (the document is one unit) or
    ``unknown`` (the ledger does not record the count: no whole-document ε is stated).
    ``epsilon`` is ∞ with ``why`` where the mathematics gives no finite bound.
    """

    unit: str
    epsilon: float
    delta: float = 0.0
    scale: str = "size"
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        eps = self.epsilon if math.isfinite(self.epsilon) else "inf"
        return {"unit": self.unit, "epsilon": eps, "delta": self.delta, "scale": self.scale,
                **({"why": self.why} if self.why else {})}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> UnitGuarantee:
        eps = d.get("epsilon")
        return cls(unit=str(d.get("unit", "")),
                   epsilon=math.inf if eps in ("inf", None) else float(eps),
                   delta=float(d.get("delta") or 0.0), scale=str(d.get("scale", "unknown")),
                   why=str(d.get("why", "")))


def _word_unit(mechanism: Any) -> UnitGuarantee:
    """ε of one word replaced by any other of the vocabulary: the diameter D of the metric
    bounded by the triangle inequality, D ≤ 2·max_w d(w₀, w), taken at two centres; the losses
    come from the mechanism's own ``privacy_loss`` (ε·d, rounded up), so ε_word ≤ 2·max loss."""
    size = int(mechanism.vocabulary.vectors.shape[0])
    ids = np.arange(size)
    first = np.asarray(mechanism.privacy_loss(np.zeros_like(ids), ids), dtype=np.float64)
    far = int(np.argmax(first))
    second = np.asarray(mechanism.privacy_loss(np.full_like(ids, far), ids), dtype=np.float64)
    bound = 2.0 * min(float(first.max()), float(second.max()))  # ×2 is exact in floats
    if not math.isfinite(bound):
        return UnitGuarantee("word", math.inf, why="two words of the vocabulary are not "
                             "protected from each other (their distance is unbounded)")
    return UnitGuarantee("word", bound)


def unit_guarantee(mechanism: Any, input_kind: str = "texts") -> UnitGuarantee:
    """What one unit of a document gets under ``mechanism`` (see :class:`UnitGuarantee`).

    * metric DP per word (MVC, Mahalanobis, Vickrey, Gumbel, TEM, 1-Diffractor): ε·D per word,
      D the metric's diameter on the vocabulary (bounded above);
    * output-set DP (CusText) and a utility-optimised guarantee (SanText+): unbounded (words of
      different output sets, or non-sensitive words, are not protected);
    * ε-SentDP: ε per sentence (texts: the ledger does not count sentences, so no whole-document ε
      is stated; sentence-embedding documents: × their sentences);
    * pure ε-DP per document (DP-Prompt): ε per document;
    * Lipschitz privacy (PrivEmb, LaplaceVector): unbounded unless the mechanism bounds its input
      domain (the vectors may be arbitrarily far apart);
    * no formal guarantee: unbounded.
    """
    from textdp.privacy.measurement import notion_id

    try:
        notion = notion_id(mechanism.notion)
    except (AttributeError, ValueError, KeyError):
        return UnitGuarantee("document", math.inf, scale="one", why="no known notion")
    if notion == "none":
        return UnitGuarantee("document", math.inf, scale="one",
                             why="no formal guarantee for these parameters")
    if notion == "utility-optimised-metric-dp":
        return UnitGuarantee("word", math.inf, why="non-sensitive words are released "
                             "unprotected when kept")
    if notion in ("metric-dp", "output-set-dp"):
        if getattr(mechanism, "vocabulary", None) is None or not hasattr(mechanism,
                                                                          "privacy_loss"):
            return UnitGuarantee("word", math.inf, why="the metric's diameter is not known")
        return _word_unit(mechanism)
    budget = mechanism.privacy_map(1.0)
    eps, delta = float(budget.epsilon), float(budget.delta)
    if notion == "local-dp":
        return UnitGuarantee("document", eps, delta, scale="one")
    if notion == "sentence-dp":
        return UnitGuarantee("sentence", eps, delta,
                             scale="size" if input_kind == "documents" else "unknown")
    diameter = getattr(mechanism, "domain_diameter", None)
    if isinstance(diameter, (int, float)) and math.isfinite(diameter):
        b = mechanism.privacy_map(float(diameter))
        return UnitGuarantee("vector", float(b.epsilon), float(b.delta), scale="one")
    return UnitGuarantee("vector", math.inf, delta, scale="one",
                         why="the input vectors' domain is not bounded, so two documents' "
                             "vectors can be arbitrarily far apart")


def whole_document(unit: UnitGuarantee, size: int) -> tuple[float, float, str]:
    """(ε, δ, why) of a whole document of ``size`` units under one release: n units, each
    replaced independently (basic composition: (n·ε, n·δ)), rounded up. ε is ∞ with ``why``
    where no finite bound holds or the count is not recorded."""
    from textdp.privacy import round_up_product

    if unit.scale == "unknown":
        return math.inf, 1.0, f"{unit.unit}s are not counted by the ledger"
    if not math.isfinite(unit.epsilon):
        return math.inf, 1.0, unit.why
    n = 1 if unit.scale == "one" else int(size)
    if n >= SIZE_CAP:
        return math.inf, 1.0, "document too long to count"
    return (float(round_up_product(unit.epsilon, float(n))),
            min(1.0, float(round_up_product(unit.delta, float(n)))), "")
