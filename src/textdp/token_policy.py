"""Token policy: what each class of token becomes, and what the report says about it.

A word in the vocabulary goes to the mechanism (unless it is a kept stop word); a word outside
it and a number follow the OOV policy (:class:`OOVPolicy`); identifiers (e-mail addresses,
URLs, …), deny-list terms, entities (people, places, organisations, addresses) and allow-list
terms are found as spans before the mechanism and become their labels, are kept or are dropped.
:class:`TokenRules` holds these decisions for one run, in the form the vectorised core applies
them (label offsets into one code buffer), counts them (:class:`textdp.tallies.TallyCounter`) and
renders their report sections.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from textdp.tallies import Tallies, TallyCounter
from textdp.text._codes import CodeTable
from textdp.text.entities import ENTITY_KINDS, OFF_WARNING, Entities, Recognisers
from textdp.text.identifiers import DENIED, Identifiers
from textdp.text.stopwords import ENGLISH_STOPWORDS

__all__ = ["OOVPolicy", "TokenRules", "make_entities", "make_identifiers", "policy_sections"]


class OOVPolicy(StrEnum):
    """What happens to a word outside the vocabulary, and to a number (the mechanism has no
    neighbours for them): ``mask`` replaces it by the mask token, ``keep`` releases it
    unprotected (the report lists it), ``drop`` removes it, ``random`` draws a vocabulary word
    uniformly, independently of the input.

    An identifier (e-mail address, URL, …: :mod:`textdp.text.identifiers`) is one token:
    ``mask`` and ``random`` replace it by its kind's label (``[EMAIL]``; a random word would
    read as a word and hide that an identifier was removed), ``keep`` releases it (unprotected,
    counted) and ``drop`` removes it. Deny-list terms are masked under every policy."""

    MASK = "mask"
    KEEP = "keep"
    DROP = "drop"
    RANDOM = "random"


def check_oov(oov: object) -> OOVPolicy:
    try:
        return OOVPolicy(oov)
    except ValueError:
        choices = ", ".join(p.value for p in OOVPolicy)
        raise ValueError(f"unknown oov policy {oov!r}; choose one of: {choices}") from None


#: The verb each OOV policy's counts are named with (``oov_words_masked``, …).
_VERB = {OOVPolicy.MASK: "masked", OOVPolicy.KEEP: "kept", OOVPolicy.DROP: "dropped",
         OOVPolicy.RANDOM: "randomized"}


class TokenRules:
    """The token policy of one run, ready for the vectorised core.

    ``table`` is the vocabulary's code table: the labels (mask token, then one per identifier
    and entity kind) are encoded after its pool, so one gather builds the output.
    ``own_stopwords`` are words the mechanism keeps by design (CusText+).
    """

    def __init__(self, vocabulary: Any, table: CodeTable, *, oov: str, mask_token: str,
                 keep_stopwords: bool, own_stopwords: frozenset[str],
                 identifiers: bool | Identifiers, identifier_labels: Mapping[str, str] | None,
                 identifier_patterns: Mapping[str, str] | None,
                 deny_list: Iterable[str] | None, phone_regions: Sequence[str] | None,
                 entities: str | Sequence[str] | bool | Entities | None,
                 allow_list: Iterable[str] | None) -> None:
        if not isinstance(mask_token, str):
            raise TypeError("mask_token must be a string")
        self.oov = check_oov(oov)
        self.verb = _VERB[self.oov]
        self.mask_token = mask_token
        self.keep_stopwords = bool(keep_stopwords) or bool(own_stopwords)
        self.stop_ids = (
            np.array(sorted(vocabulary.lookup[w] for w in
                            (ENGLISH_STOPWORDS if keep_stopwords else frozenset()) | own_stopwords
                            if w in vocabulary.lookup))
            if self.keep_stopwords else None
        )
        self.identifiers = make_identifiers(identifiers, identifier_labels, identifier_patterns,
                                            deny_list, phone_regions)
        # Entities (textdp.text.entities) ride on the identifier spans: kinds after the
        # identifiers' own, so the identifier kind indices (DENIED first) are unchanged.
        self.entities = make_entities(entities, allow_list)
        self.spans: Identifiers | Recognisers | None = (
            Recognisers(self.identifiers, self.entities) if self.entities.active
            else self.identifiers)
        self.n_identifier_kinds = len(self.identifiers.kinds) if self.identifiers is not None else 0
        self.kinds = self.spans.kinds if self.spans is not None else ()
        labels = [mask_token, *(self.spans.label(k) for k in self.kinds)]
        codes = [np.frombuffer(t.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                 for t in labels]
        lengths = np.array([c.size for c in codes], dtype=np.int64)
        offsets = table.pool.size + np.cumsum(lengths) - lengths
        self.mask_off, self.mask_len = int(offsets[0]), int(lengths[0])
        self.label_off, self.label_len = offsets[1:], lengths[1:]  # by identifier kind
        #: The vocabulary pools and the labels: the fixed head of every batch's code buffer.
        self.static = np.concatenate([table.pool, *codes])

    def placeholders(self) -> tuple[str, ...]:
        """Every text this policy puts in place of a token (the mask token, the identifier and
        entity labels): what a count of surviving entities must not read as the entity."""
        labels = [self.mask_token, *(self.spans.label(k) for k in self.kinds)]
        return tuple(dict.fromkeys(t for t in labels if t))

    def policy(self) -> dict[str, Any]:
        """The report's ``policy`` section."""
        return {"oov": self.oov.value, "mask_token": self.mask_token,
                "keep_stopwords": self.keep_stopwords}

    # --- applying ---------------------------------------------------------------------------
    def place_oov(self, oov: np.ndarray, src: np.ndarray, length: np.ndarray) -> None:
        """Mask or drop the OOV tokens ``oov`` (``keep`` leaves them, ``random`` is placed by
        the caller, who draws the words)."""
        if self.oov is OOVPolicy.MASK:
            src[oov] = self.mask_off
            length[oov] = self.mask_len
        elif self.oov is OOVPolicy.DROP:
            length[oov] = 0

    def place_identifiers(self, tokens: np.ndarray, kinds: np.ndarray, src: np.ndarray,
                          length: np.ndarray) -> None:
        """Point identifier ``tokens`` at their kinds' labels, or keep or drop them (see
        OOVPolicy)."""
        if not tokens.size:
            return
        if len(self.label_off) > self.n_identifier_kinds:  # entities and allow-list terms
            tokens, kinds = self._place_entities(tokens, kinds, src, length)
            if not tokens.size:
                return
        if self.oov in (OOVPolicy.KEEP, OOVPolicy.DROP):
            denied = kinds == self.identifiers.kinds.index(DENIED)  # masked under every policy
            if self.oov is OOVPolicy.DROP:
                length[tokens[~denied]] = 0
            tokens, kinds = tokens[denied], kinds[denied]
        src[tokens] = self.label_off.take(kinds)
        length[tokens] = self.label_len.take(kinds)

    def _place_entities(self, tokens: np.ndarray, kinds: np.ndarray, src: np.ndarray,
                        length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Entity tokens get their labels (removed under ``oov="drop"``), allow-list terms keep
        their text; returns the identifier tokens left to place."""
        entity = kinds >= self.n_identifier_kinds
        allowed = kinds == len(self.label_off) - 1  # ALLOWED is the last kind
        labelled = entity & ~allowed
        if self.oov is OOVPolicy.DROP:
            length[tokens[labelled]] = 0
        else:
            src[tokens[labelled]] = self.label_off.take(kinds[labelled])
            length[tokens[labelled]] = self.label_len.take(kinds[labelled])
        return tokens[~entity], kinds[~entity]

    # --- counting ---------------------------------------------------------------------------
    def count_spans(self, tally: TallyCounter, kinds: np.ndarray) -> None:
        """Count one batch's identifier, entity and allow-list tokens (their ``kinds``)."""
        per_kind = np.bincount(kinds, minlength=len(tally.by_kind))
        tally.add_kinds(per_kind)
        counts = tally.by_policy
        n_id = self.n_identifier_kinds
        if len(tally.by_kind) > n_id:  # entities, then allow-list terms (the last kind)
            verb = "dropped" if self.oov is OOVPolicy.DROP else "masked"
            counts[f"entities_{verb}"] += int(per_kind[n_id:-1].sum())
            counts["allowed_kept"] += int(per_kind[-1])
        if not n_id:
            return
        denied = int(per_kind[self.identifiers.kinds.index(DENIED)])
        verb = {OOVPolicy.KEEP: "kept", OOVPolicy.DROP: "dropped"}.get(self.oov, "masked")
        counts["identifiers_masked"] += denied
        counts[f"identifiers_{verb}"] += int(per_kind[:n_id].sum()) - denied

    # --- reporting --------------------------------------------------------------------------
    def sections(self, tallies: Tallies) -> list[Any]:
        """The report sections of this policy for a run that counted ``tallies``: identifiers
        (when recognised) and entities, each with what it released unprotected and its
        warnings (:class:`textdp.privacy.report.Section`)."""
        return policy_sections(self.identifiers, self.entities, self.oov, tallies.by_policy,
                               tallies.by_kind)


def policy_sections(identifiers: Identifiers | None, entities: Entities, oov: OOVPolicy,
                    counts: Mapping[str, int], by_kind: Mapping[str, int]) -> list[Any]:
    """The ``identifiers`` (when recognised) and ``entities`` report sections of a run that
    counted ``counts`` (``identifiers_masked``, ``entities_masked``, ``allowed_kept``, …) and
    ``by_kind`` (kind → spans): shared by the word pipeline and DP-Prompt's masking
    (:mod:`textdp.lm.masking`)."""
    from textdp.privacy.report import Section

    out = []
    if identifiers is not None:
        kinds = {k: by_kind.get(k, 0) for k in identifiers.kinds}
        body = {**identifiers.describe(), "by_kind": kinds,
                "masked": counts.get("identifiers_masked", 0),
                "kept": counts.get("identifiers_kept", 0),
                "dropped": counts.get("identifiers_dropped", 0)}
        unprotected, warnings = [], []
        if oov is OOVPolicy.KEEP and body["kept"]:
            kept = {k: n for k, n in kinds.items() if n and k != DENIED}
            unprotected.append({"kind": "identifiers", "count": body["kept"],
                                "by_kind": kept, "why": "oov=keep releases them unchanged"})
            warnings.append(f"released unprotected by oov=keep: {body['kept']} "
                            "identifier(s) (" + ", ".join(f"{n} {k}" for k, n in kept.items())
                            + ")")
        out.append(Section("identifiers", body, tuple(unprotected), tuple(warnings)))
    e = entities
    allowed = counts.get("allowed_kept", 0)
    body = {"enabled": bool(e.kinds), **e.describe(),
            "by_kind": {k: by_kind.get(k, 0) for k in e.kinds},
            "masked": counts.get("entities_masked", 0),
            "dropped": counts.get("entities_dropped", 0), "allowed_kept": allowed}
    unprotected = ([{"kind": "allow-list terms", "count": allowed,
                     "why": "allow_list releases them unchanged"}] if allowed else [])
    off = [k for k in ENTITY_KINDS if k not in e.kinds]  # a user's recogniser adds kinds
    if not e.kinds:
        warnings = [OFF_WARNING]
    elif off:
        warnings = [f"entity recognition is off for: {', '.join(off)} "
                    "(they may pass through)"]
    else:
        warnings = []
    out.append(Section("entities", body, tuple(unprotected), tuple(warnings)))
    return out


def make_identifiers(identifiers: bool | Identifiers, labels: Mapping[str, str] | None,
                     patterns: Mapping[str, str] | None,
                     deny_list: Iterable[str] | None,
                     phone_regions: Sequence[str] | None = None) -> Identifiers | None:
    """The recogniser the options describe (None: no identifiers and no deny-list)."""
    if isinstance(identifiers, Identifiers):
        if labels or patterns or deny_list or phone_regions:
            raise ValueError("pass labels, patterns, the deny-list and phone regions to the "
                             "Identifiers object")
        return identifiers
    if not isinstance(identifiers, bool):
        raise TypeError("identifiers must be True, False or a textdp.text.identifiers.Identifiers")
    if isinstance(deny_list, str):
        raise TypeError("deny_list must be a list of terms, not a single string")
    deny = list(deny_list or ())
    if phone_regions is not None and not identifiers:
        raise ValueError("phone regions given, but identifiers are off")
    if not (identifiers or patterns or deny):
        if labels:
            raise ValueError("identifier labels given, but identifiers are off")
        return None
    regions = {} if phone_regions is None else {"phone_regions": phone_regions}
    return Identifiers(builtin=identifiers, patterns=dict(patterns or {}),
                       labels=dict(labels or {}), deny_list=deny, **regions)


def make_entities(entities: str | Sequence[str] | bool | Entities | None,
                  allow_list: Iterable[str] | None) -> Entities:
    """The entity recogniser the options describe (its ``kinds`` empty when off)."""
    if isinstance(entities, Entities):
        if allow_list:
            raise ValueError("pass the allow-list to the Entities object")
        return entities
    if isinstance(allow_list, str):
        raise TypeError("allow_list must be a list of terms, not a single string")
    return Entities(kinds=entities, allow_list=tuple(allow_list or ()))
