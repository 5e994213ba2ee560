"""Document-level mechanisms that rewrite text with a language model (issue 16).

* :class:`DPPrompt` — DP-Prompt (Utpala, Hooker & Chen, Findings of EMNLP 2023): every generated
  token an exponential-mechanism draw over clipped logits; pure local ε-DP per document.

This package is the pure part (parameters, ε arithmetic, privacy map, the sampler over arrays of
logits); it imports neither torch nor transformers. :mod:`textdp.lm` loads a model and runs the
generation loop. These mechanisms take whole documents, not vocabulary ids, so they are listed
by :func:`available` here, apart from the word-mechanism registry.
"""

from __future__ import annotations

from textdp.mechanisms.prompt.dp_prompt import (
    DEFAULT_CLIP,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TEMPLATE,
    DPPrompt,
    clipped_log_probabilities,
    sample_tokens,
)

__all__ = ["DEFAULT_CLIP", "DEFAULT_MAX_NEW_TOKENS", "DEFAULT_TEMPLATE", "DPPrompt", "MECHANISMS",
           "available", "clipped_log_probabilities", "create", "sample_tokens"]

#: Name → class of the language-model mechanisms (``--mechanism dp_prompt``): the one list of
#: their names (:func:`textdp.mechanisms.available` and :data:`textdp.spec.PROMPT_MECHANISMS`
#: read it).
MECHANISMS = {cls.name: cls for cls in (DPPrompt,)}


def available() -> list[str]:
    return sorted(MECHANISMS)


def create(name: str, **params) -> DPPrompt:
    try:
        cls = MECHANISMS[name]
    except KeyError:
        raise ValueError(f"unknown language-model mechanism {name!r}; available: "
                         f"{', '.join(available())}") from None
    return cls(**params)
