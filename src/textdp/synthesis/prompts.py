"""The public prompts of Private Evolution: RANDOM_API (a first population from label prompts)
and VARIATION_API (rewrites of selected synthetic documents) of Lin et al. (ICLR 2024) and Xie
et al. (ICML 2024, §3.2: "rephrase" variations).

Every prompt is public: a template, a description of the documents the user gives
(``document_kind``, e.g. "customer support ticket"), a label name (labels are treated as
public) and, for variations, a synthetic document. No private text is ever put in a prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_DOCUMENT_KIND", "INITIAL", "INITIAL_UNLABELLED", "VARIATION", "Prompts",
           "clean"]

DEFAULT_DOCUMENT_KIND = "text"
INITIAL = ("Write one realistic {kind} about the topic \"{label}\". Reply with the {kind} only, "
           "in a few sentences.")
INITIAL_UNLABELLED = "Write one realistic {kind}. Reply with the {kind} only, in a few sentences."
VARIATION = ("Rewrite the following {kind} in different words, keeping its topic, tone and "
             "length. Reply with the rewritten {kind} only.\n\n{document}")

_PLACES = {"initial": ("{kind}", "{label}"), "variation": ("{kind}", "{document}")}


@dataclass(frozen=True, slots=True)
class Prompts:
    """The templates and the description of the documents, checked once.

    Attributes:
        kind: what the documents are, in a few words (public).
        initial: the first population's template (``{kind}``, ``{label}``).
        variation: the variation template (``{kind}``, ``{document}``: a synthetic document).
    """

    kind: str = DEFAULT_DOCUMENT_KIND
    initial: str | None = None
    variation: str = VARIATION

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.strip():
            raise ValueError("document_kind must be a non-empty string")
        if self.initial is not None and (not isinstance(self.initial, str)
                                         or not self.initial.strip()):
            raise ValueError("the initial prompt must be a non-empty string")
        if "{document}" not in self.variation:
            raise ValueError("the variation prompt must hold {document} (the text to rewrite)")

    def first(self, label: str) -> str:
        """The RANDOM_API prompt of a label ("" for no labels)."""
        template = self.initial or (INITIAL if label else INITIAL_UNLABELLED)
        return template.replace("{kind}", self.kind).replace("{label}", label)

    def vary(self, document: str) -> str:
        """The VARIATION_API prompt of a synthetic document."""
        return self.variation.replace("{kind}", self.kind).replace("{document}", document)

    def describe(self) -> dict[str, str]:
        return {"document_kind": self.kind,
                "initial": self.initial or INITIAL, "initial_unlabelled": INITIAL_UNLABELLED
                if self.initial is None else self.initial, "variation": self.variation}


def clean(text: str) -> str:
    """A generation as a document: one line, whitespace collapsed, surrounding quotes removed."""
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text
