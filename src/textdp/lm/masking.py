"""Entities and identifiers masked before a language model reads a document (DP-Prompt).

The word mechanisms replace identifiers (e-mail addresses, URLs, phone and card numbers, IBANs,
deny-list terms: :mod:`textdp.text.identifiers`) and entities (people, places, organisations,
street addresses: :mod:`textdp.text.entities`) by their labels before the mechanism; DP-Prompt
does the same before the model sees the text, with the same recognisers, options and defaults
(on). :class:`DocumentMasker` rewrites each document with its spans replaced by their labels
(``[PERSON]``, ``[EMAIL]``, …; allow-list terms stay as they are) and counts them.

Why this is sound. DP-Prompt's guarantee (Utpala et al., Findings of EMNLP 2023, Thm. 1) holds
for ANY two documents; masking is a function of one document, so the masked documents of any
two inputs are two documents and the bound is unchanged. What masking adds is outside the ε:
a masked span never reaches the model, so the output cannot copy it (a large ε per document —
the usable range — lets the model copy what it reads nearly verbatim).

The placeholders and the output. The model reads the placeholders and may keep, drop or rewrite
them; the output is not edited afterwards: putting the original spans back would release them
unprotected, and deleting what looks like a placeholder would be a guess. So the placeholders
are counted instead: the report's ``placeholders`` section gives, per label, how many went into
the prompts and how many the paraphrases contain (a label the model wrote without reading it
counts too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from textdp.text.entities import ALLOWED, Recognisers
from textdp.token_policy import OOVPolicy, make_entities, make_identifiers, policy_sections

__all__ = ["DocumentMasker"]

#: :meth:`textdp.spec.TokenPolicy.options` of the default policy (not imported: the spec
#: imports this module to check a prompt release's options).
_DEFAULTS = {"identifiers": True, "identifier_labels": None, "identifier_patterns": None,
             "deny_list": None, "phone_regions": None, "entities": "default", "allow_list": None}


class DocumentMasker:
    """Replace identifier and entity spans by their labels, before the model; count them.

    Args:
        policy: a :class:`textdp.spec.TokenPolicy` (its identifier and entity options; the word
            options ``oov``, ``mask_token`` and ``keep_stopwords`` do not apply) or None (the
            defaults: identifiers and every entity kind on).
    """

    def __init__(self, policy: Any = None) -> None:
        o = policy.options() if policy is not None else _DEFAULTS
        self.identifiers = make_identifiers(o["identifiers"], o["identifier_labels"],
                                            o["identifier_patterns"], o["deny_list"],
                                            o["phone_regions"])
        self.entities = make_entities(o["entities"], o["allow_list"])
        self._spans: Any = (Recognisers(self.identifiers, self.entities)
                            if self.entities.active else self.identifiers)
        kinds = self._spans.kinds if self._spans is not None else ()
        self._kinds = tuple(kinds)
        self._labels = tuple(self._spans.label(k) if k != ALLOWED else "" for k in kinds)
        self._n_identifier = len(self.identifiers.kinds) if self.identifiers is not None else 0
        self.by_kind: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        #: label → [placeholders put into the prompts, found in the paraphrases]
        self.placeholders: dict[str, list[int]] = {lab: [0, 0] for lab in
                                                   dict.fromkeys(self._labels) if lab}

    @property
    def active(self) -> bool:
        return self._spans is not None

    def mask(self, texts: Sequence[str]) -> list[str]:
        """``texts`` with every identifier and entity span replaced by its label (allow-list
        terms kept); counted in :attr:`by_kind`, :attr:`counts` and :attr:`placeholders`."""
        if self._spans is None:
            return list(texts)
        out = []
        for text in texts:
            starts, ends, kinds = self._spans.spans(text)
            if not starts.size:
                out.append(text)
                continue
            pieces, at = [], 0
            for a, b, k in zip(starts.tolist(), ends.tolist(), kinds.tolist(), strict=True):
                kind, label = self._kinds[k], self._labels[k]
                self.by_kind[kind] += 1
                if kind == ALLOWED:
                    self.counts["allowed_kept"] += 1
                    continue
                self.counts["identifiers_masked" if k < self._n_identifier
                            else "entities_masked"] += 1
                self.placeholders[label][0] += 1
                pieces += [text[at:a], label]
                at = b
            pieces.append(text[at:])
            out.append("".join(pieces))
        return out

    def count_output(self, texts: Sequence[str]) -> None:
        """Count the placeholders the paraphrases ``texts`` contain."""
        for label, seen in self.placeholders.items():
            seen[1] += sum(t.count(label) for t in texts)

    def sections(self) -> list[Any]:
        """The report's ``identifiers`` and ``entities`` sections (as the word pipeline's) and
        ``placeholders`` (:class:`textdp.privacy.report.Section`)."""
        from textdp.privacy.report import Section

        out = policy_sections(self.identifiers, self.entities, OOVPolicy.MASK, self.counts,
                              self.by_kind)
        put = sum(p[0] for p in self.placeholders.values())
        found = sum(p[1] for p in self.placeholders.values())
        body = {"masked_before_the_model": put, "found_in_output": found,
                "by_label": {lab: {"in_prompts": p[0], "in_output": p[1]}
                             for lab, p in self.placeholders.items() if p[0] or p[1]},
                "note": "masked spans never reach the model; the model may keep, drop or rewrite "
                        "their placeholders, and the output is not edited (putting the spans "
                        "back would release them unprotected)"}
        out.append(Section("placeholders", body))
        return out
