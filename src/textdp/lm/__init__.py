"""Language models for DP-Prompt and synthesis: load a local causal LM offline (once per process),
generate with one engine, and apply the mechanism's law to every token.

Above the core: this package imports torch and transformers (the ``lm`` extra), lazily. A
mechanism's law — DP-Prompt's clipped, temperature-scaled softmax and its sampler — lives in the
core (:class:`textdp.mechanisms.prompt.DPPrompt`); here the model only supplies logits, and every
token is picked by a :class:`TokenSampler` from randomness drawn through :mod:`textdp._random`
(never torch's RNG).

* :class:`LanguageModel`, :func:`load_model`, :func:`shared_model` (:mod:`textdp.lm.model`) — a
  model and its tokenizer, offline, with a sha256 fingerprint; a packaged GGUF is de-quantized
  once and cached as safetensors; a warm load of that copy does not import transformers
  (:mod:`textdp.lm.lean`: memory-mapped weights, ``tokenizers``, the chat template by jinja2).
* :class:`Engine`, :func:`get_engine`, :class:`TokenSampler`, :class:`UniformSampler`
  (:mod:`textdp.lm.engine`) — batched generation with a KV cache and continuous batching, on the
  CPU or a CUDA device.
* :class:`Paraphraser`, :func:`paraphrase`, :func:`privatize_spec` (:mod:`textdp.lm.paraphrase`) —
  DP-Prompt over texts, and what ``textdp.privatize(texts, mechanism="dp_prompt", ...)`` runs.
"""

from __future__ import annotations

from textdp.lm.engine import Engine, TokenSampler, UniformSampler, get_engine, resolve_device
from textdp.lm.model import (
    DEFAULT_GGUF,
    INSTALL_HINT,
    LanguageModel,
    _require_lm,  # noqa: F401 — the CLI's install hint before transformers is imported
    _require_torch,  # noqa: F401 — the same check, without importing transformers
    default_model_path,
    load_model,
    shared_model,
)
from textdp.lm.paraphrase import (
    DEFAULT_BATCH_SIZE,
    DPPromptSampler,
    Paraphraser,
    generate_ids,
    paraphrase,
    privatize_spec,
    torch_sample_tokens,
)

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_GGUF", "DPPromptSampler", "INSTALL_HINT", "Engine", "LanguageModel",
           "Paraphraser", "TokenSampler", "UniformSampler", "default_model_path", "generate_ids",
           "get_engine", "load_model", "paraphrase", "privatize_spec", "resolve_device",
           "shared_model", "torch_sample_tokens"]
