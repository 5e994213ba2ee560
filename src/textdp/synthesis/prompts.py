"""The public prompts of Private Evolution: RANDOM_API (a first population from label prompts)
and VARIATION_API (rewrites of selected synthetic documents) of Lin et al. (ICLR 2024) and Xie
et al. (ICML 2024, §3.2: "rephrase" variations).

Every prompt is public: a template, a description of the documents the user gives
(``document_kind``, e.g. "customer support ticket"), a label name (labels are treated as
public) and, for variations, a synthetic document. No private text is ever put in a prompt.

The variation prompt names the document's label, as Aug-PE's generation is label-conditional
throughout (Xie et al. 2024: the rephrase prompts carry the class). It puts the document
first and the instruction last: measured with SmolLM2-135M-Instruct on 40 rewrites
(``experiments/pe_variation_prompts.py``, docs/synthesize.md), a TF-IDF judge trained on real
tickets gave the parent's label to 14/40 rewrites of model-written parents (6/40 with the
label-free prompt before it) and to 22/40 rewrites of real tickets (14/40).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_DOCUMENT_KIND", "INITIAL", "INITIAL_DESCRIBED", "INITIAL_UNLABELLED",
           "VARIATION", "VARIATION_UNLABELLED", "Prompts", "clean"]

DEFAULT_DOCUMENT_KIND = "text"
INITIAL = ("Write one realistic {kind} about the topic \"{label}\". Reply with the {kind} only, "
           "in a few sentences.")
#: The first population's prompt of a label the user described (``label_descriptions``).
INITIAL_DESCRIBED = ("Write one realistic {kind} about the topic \"{label}\": {description} "
                     "Reply with the {kind} only, in a few sentences.")
INITIAL_UNLABELLED = "Write one realistic {kind}. Reply with the {kind} only, in a few sentences."
VARIATION = ("Here is a {kind} about \"{label}\":\n\n{document}\n\nRewrite this {kind} in "
             "different words. It must still be about \"{label}\". Reply with the new {kind} "
             "only.")
VARIATION_UNLABELLED = ("Here is a {kind}:\n\n{document}\n\nRewrite this {kind} in different "
                        "words, keeping its topic. Reply with the new {kind} only.")

#: A preamble a small model writes before its answer, echoing the instruction ("Here is the
#: rewritten ticket:", "Rewrite – the provided ticket –:"): it names the rewriting and ends with
#: a colon within the first 160 characters.
_ECHO = re.compile(r"^[^:\n]{0,160}?\b(?:re-?writ\w*|rephras\w*|paraphras\w*)\b"
                   r"[^:\n]{0,160}?:\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Prompts:
    """The templates and the description of the documents, checked once.

    Attributes:
        kind: what the documents are, in a few words (public).
        initial: the first population's template (``{kind}``, ``{label}``).
        variation: the variation template (``{kind}``, ``{document}``: a synthetic document,
            ``{label}``: its label, optional). The default, on data without labels, is
            :data:`VARIATION_UNLABELLED`.
        descriptions: ``(label, description)`` pairs: PUBLIC text the user writes about a
            label (a definition, or an invented example sentence). A described label's first
            prompt is :data:`INITIAL_DESCRIBED` (a user template gets it as
            ``{description}``, the label name where none is given).
    """

    kind: str = DEFAULT_DOCUMENT_KIND
    initial: str | None = None
    variation: str = VARIATION
    descriptions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.strip():
            raise ValueError("document_kind must be a non-empty string")
        if self.initial is not None and (not isinstance(self.initial, str)
                                         or not self.initial.strip()):
            raise ValueError("the initial prompt must be a non-empty string")
        if not isinstance(self.variation, str) or "{document}" not in self.variation:
            raise ValueError("the variation prompt must hold {document} (the text to rewrite)")
        seen: set[str] = set()
        for pair in self.descriptions:
            if (not isinstance(pair, tuple) or len(pair) != 2
                    or not all(isinstance(x, str) for x in pair)):
                raise ValueError("label descriptions must be (label, text) pairs of strings")
            if not pair[1].strip():
                raise ValueError(f"the description of label {pair[0]!r} is empty")
            if pair[0] in seen:
                raise ValueError(f"label {pair[0]!r} is described twice")
            seen.add(pair[0])

    def description(self, label: str) -> str | None:
        """The user's description of ``label`` (one line, ending in a full stop), or None."""
        for name, text in self.descriptions:
            if name == label:
                text = " ".join(text.split())
                return text if text[-1] in ".!?\"'" else text + "."
        return None

    def first(self, label: str) -> str:
        """The RANDOM_API prompt of a label ("" for no labels)."""
        described = self.description(label) if label else None
        template = self.initial or (INITIAL_DESCRIBED if described else
                                    INITIAL if label else INITIAL_UNLABELLED)
        # The description last: a "{label}" written inside it must stay as written.
        return (template.replace("{kind}", self.kind).replace("{label}", label)
                .replace("{description}", described or label))

    def vary(self, document: str, label: str = "") -> str:
        """The VARIATION_API prompt of a synthetic document of ``label`` ("" for no labels)."""
        template = (VARIATION_UNLABELLED if self.variation == VARIATION and not label
                    else self.variation)
        # The document last: a "{label}" written inside it must stay as written.
        return (template.replace("{kind}", self.kind).replace("{label}", label)
                .replace("{description}", self.description(label) or label)
                .replace("{document}", document))

    def describe(self) -> dict[str, str]:
        return {"document_kind": self.kind,
                "initial": self.initial or INITIAL, "initial_unlabelled": INITIAL_UNLABELLED
                if self.initial is None else self.initial, "variation": self.variation,
                "variation_unlabelled": VARIATION_UNLABELLED if self.variation == VARIATION
                else self.variation} | ({"label_descriptions": dict(self.descriptions)}
                                        if self.descriptions else {})


def clean(text: str) -> str:
    """A generation as a document: one line, whitespace collapsed, a leading echo of the
    instruction ("Here is the rewritten ticket:") removed when text follows it, surrounding
    quotes removed."""
    text = " ".join(text.split())
    stripped = _ECHO.sub("", text, count=1)
    if stripped:
        text = stripped
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text
