"""Leakage: which entities and identifiers of the originals survive verbatim in the private text.

The entities and identifiers are found in the **original** documents by textdp's own recognisers
(:mod:`textdp.text.entities`, :mod:`textdp.text.identifiers`, at their defaults: people,
locations, organisations, street addresses, e-mail addresses, URLs, IP addresses, IBANs, card and
phone numbers). One survives when its exact text (same characters, same case) appears in the
private version of the same document as a whole word sequence. What the recognisers miss in the
original is not counted here: on data with known names (:mod:`textdp.datasets.tickets`) measure
those too. The release's own placeholders (``[IBAN]``, ``[ORG]``, the mask token) are removed from
the private text before the count: the word "IBAN", tagged as an organisation in the original,
does not survive because the number after it became ``[IBAN]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from textdp.text.entities import ALLOWED, Entities, Recognisers
from textdp.text.identifiers import DENIED, Identifiers

__all__ = ["Mention", "find_mentions", "survival"]


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity or identifier of an original document: its kind and its text."""

    kind: str
    text: str


def find_mentions(texts: Sequence[str]) -> list[list[Mention]]:
    """Per document, the distinct entities and identifiers the default recognisers find."""
    recognisers = Recognisers(Identifiers(), Entities())
    out = []
    for text in texts:
        starts, ends, kinds = recognisers.spans(text)
        seen: dict[tuple[str, str], Mention] = {}
        for a, b, k in zip(starts.tolist(), ends.tolist(), kinds.tolist(), strict=True):
            kind = recognisers.kinds[k]
            surface = text[a:b].strip()
            if kind in (DENIED, ALLOWED) or not surface:
                continue
            seen.setdefault((kind, surface), Mention(kind, surface))
        out.append(list(seen.values()))
    return out


def _survives(mention: Mention, private: str) -> bool:
    # Whole words only: "Ann" does not survive in "Annual"; the same characters, case included.
    return re.search(rf"(?<!\w){re.escape(mention.text)}(?!\w)", private) is not None


def _without(placeholders: Sequence[str]):
    """A function removing every placeholder from a text: each becomes NUL, neither a word
    character nor part of any mention, so no mention is found in it or across it. A placeholder
    that begins or ends with a word character (a mask token such as ``x``) is removed only as a
    whole word: inside "Max" it is the customer's name, which must still count."""
    def whole(p: str) -> str:
        return ((r"(?<!\w)" if re.match(r"\w", p) else "") + re.escape(p)
                + (r"(?!\w)" if re.search(r"\w$", p) else ""))

    kept = sorted({p for p in placeholders if p}, key=len, reverse=True)
    if not kept:
        return lambda text: text
    pattern = re.compile("|".join(whole(p) for p in kept))
    return lambda text: pattern.sub("\0", text)


def survival(mentions: Sequence[Sequence[Mention]], private: Sequence[str],
             placeholders: Sequence[str] = ()) -> dict[str, object]:
    """How many of ``mentions`` (per document) survive in ``private`` (same order), overall and
    by kind: ``{"found", "survived", "by_kind": {kind: {"found", "survived"}}}``.

    ``placeholders``: the texts the release put in place of tokens
    (:meth:`textdp.token_policy.TokenRules.placeholders`); never counted as a surviving entity.
    """
    if len(mentions) != len(private):
        raise ValueError(f"{len(mentions)} documents of mentions but {len(private)} private texts")
    strip = _without(placeholders)
    private = [strip(text) for text in private]
    by_kind: dict[str, dict[str, int]] = {}
    found = survived = 0
    for doc, text in zip(mentions, private, strict=True):
        for m in doc:
            row = by_kind.setdefault(m.kind, {"found": 0, "survived": 0})
            hit = _survives(m, text)
            row["found"] += 1
            row["survived"] += hit
            found += 1
            survived += hit
    return {"found": found, "survived": survived, "by_kind": by_kind}
