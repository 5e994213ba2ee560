"""The packaged model's warm load without transformers: weights memory-mapped from the cached
safetensors copy, text through the ``tokenizers`` library and the chat template through jinja2.

Why: importing transformers and building its tokenizer costs about 3 CPU-s, more than the rest
of a warm load together (torch's import ≈ 2 CPU-s, the memory-mapped weights ≈ 0.01 s;
BENCHMARKS.md, ``lm_engine``). transformers stays where it is needed: the GGUF's one-time
de-quantization, ``backend="transformers"``, fine-tuning, and models that are not a cached
conversion.

A cached conversion (:func:`textdp.lm.model.converted_cache`) holds, beside the float32 weights
and transformers' own files, :data:`MANIFEST`: the model's config, its end-of-sequence and
padding ids, its chat template and the special-token strings the template reads, and the
tokenizer's encode/decode options. :func:`write_manifest` writes it only after checking, on
:data:`PROBES` (unicode, NFD, emoji, control tokens, empty and long texts), that
:class:`TextCodec` gives exactly transformers' strings and ids for the chat-templated prompts
and the decoded texts; a model on which it differs gets no manifest and loads through
transformers as before. The weights are the same float32 tensors either way, so
:class:`textdp.lm.llama.LlamaDecoder` computes the same logits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

__all__ = ["LEAN_FORMAT", "MANIFEST", "PROBES", "TextCodec", "load_tensors", "read_manifest",
           "write_manifest"]

MANIFEST = "textdp-lean.json"
#: Bumped when the manifest's fields change (an older manifest is then ignored: transformers loads).
LEAN_FORMAT = 1
#: Texts on which the lean codec must reproduce transformers before a manifest is written.
PROBES = ("", " ", "Paraphrase: The service at 1493 Victoria Rd. was slow.",
          "Ünïcödé café — naïve résumé, 東京 and Москва; ﬁ ligature, ½, ｆｕｌｌ widths.",
          "cafe\u0301 nai\u0308ve (NFD)", "emoji 👩‍👩‍👧 🇳🇿 ✌🏽 and ZWJ\u200d",
          "tabs\tand\nnew\r\nlines   spaced  ", "<|im_start|>user\nnot a turn<|im_end|>",
          "<|endoftext|> ' n't 's ?!, . quotes", "x" * 3000,
          " ".join(f"word{i}" for i in range(400)))


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The directory's manifest when it is one this version of textdp writes, else None."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != LEAN_FORMAT:
        return None
    if not (directory / "model.safetensors").is_file() or not (directory / "tokenizer.json").is_file():
        return None
    return manifest


def _compile(template: str) -> Any:
    """The chat template in transformers' jinja2 environment (``utils/chat_template_utils.py``,
    ``_compile_jinja_template``): sandboxed, trim_blocks and lstrip_blocks, loop controls, its
    ``tojson`` (no HTML escaping), ``raise_exception`` and ``strftime_now``."""
    import jinja2
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(template)


def _clean_up(text: str) -> str:
    """transformers' ``clean_up_tokenization`` (for tokenizers saved with it on)."""
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
                 (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(a, b)
    return text


class TextCodec:
    """Prompts to token ids and generated ids to text, as the transformers tokenizer the
    conversion was made with does it (module docstring), from ``tokenizer.json`` and the
    manifest."""

    def __init__(self, directory: Path, manifest: Mapping[str, Any]) -> None:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tok.no_padding()    # transformers pads and truncates only when asked
        tok.no_truncation()
        tok.encode_special_tokens = bool(manifest.get("split_special_tokens", False))
        self._tok = tok
        self.chat_template: str | None = manifest.get("chat_template")
        self.special_tokens: dict[str, str] = dict(manifest.get("special_tokens", {}))
        self.clean_up = bool(manifest.get("clean_up_tokenization_spaces", False))
        self.eos_ids = {int(i) for i in manifest["eos_ids"]}
        self.pad_id = int(manifest["pad_id"])

    @cached_property
    def _template(self) -> Any:
        return _compile(self.chat_template) if self.chat_template else None

    def render(self, prompts: Sequence[str]) -> list[str]:
        """Each prompt as the user's turn in the chat template, with the generation prompt
        (transformers' ``apply_chat_template(..., tokenize=False, add_generation_prompt=True)``);
        unchanged when the model has no chat template."""
        if self._template is None:
            return list(prompts)
        return [self._template.render(messages=[{"role": "user", "content": p}], tools=None,
                                      documents=None, add_generation_prompt=True,
                                      **self.special_tokens) for p in prompts]

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, no special tokens added (``tokenizer(texts,
        add_special_tokens=False)``)."""
        return [e.ids for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def decode(self, rows: Sequence[Sequence[int]]) -> list[str]:
        """``tokenizer.batch_decode(rows, skip_special_tokens=True)``."""
        texts = self._tok.decode_batch([list(r) for r in rows], skip_special_tokens=True)
        return [_clean_up(t) for t in texts] if self.clean_up else texts


def load_tensors(directory: Path, device: str) -> dict[str, Any]:
    """The cached float32 weights, memory-mapped (safetensors maps the file; a tensor's pages
    are read when first touched), on ``device``."""
    from safetensors.torch import load_file

    tensors = load_file(str(directory / "model.safetensors"))
    return tensors if device == "cpu" else {k: v.to(device) for k, v in tensors.items()}


def write_manifest(into: Path, model: Any, tokenizer: Any, eos_ids: set[int],
                   pad_id: int) -> bool:
    """Write :data:`MANIFEST` into a conversion directory that already holds the weights and
    ``tokenizer.save_pretrained``'s files, if :class:`TextCodec` reproduces ``tokenizer`` on
    :data:`PROBES`; returns whether it did."""
    if not (into / "tokenizer.json").is_file():
        return False
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    manifest = {
        "format": LEAN_FORMAT, "config": json.loads(json.dumps(config, default=str)),
        "eos_ids": sorted(eos_ids), "pad_id": int(pad_id),
        "chat_template": getattr(tokenizer, "chat_template", None) or None,
        "special_tokens": dict(getattr(tokenizer, "special_tokens_map", {})),
        "split_special_tokens": bool(getattr(tokenizer, "split_special_tokens", False)),
        "clean_up_tokenization_spaces": bool(getattr(tokenizer, "clean_up_tokenization_spaces",
                                                     False)),
    }
    if not isinstance(manifest["chat_template"], (str, type(None))):
        return False  # several named templates: transformers picks among them
    try:
        codec = TextCodec(into, manifest)
        if not _same(codec, tokenizer):
            return False
    except Exception:  # noqa: BLE001 — any failure of the lean path means: no lean path
        return False
    (into / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1),
                                 encoding="utf-8")
    return True


def _same(codec: TextCodec, tokenizer: Any) -> bool:
    """Whether ``codec`` renders, encodes and decodes :data:`PROBES` as ``tokenizer`` does."""
    texts = list(PROBES)
    if codec.chat_template:
        want = [tokenizer.apply_chat_template([{"role": "user", "content": t}], tokenize=False,
                                              add_generation_prompt=True) for t in texts]
        if codec.render(texts) != want:
            return False
        texts = texts + want
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    if codec.encode(texts) != ids:
        return False
    # Generated rows are any ids: byte pieces out of order, special tokens among words.
    vocab = codec._tok.get_vocab_size(with_added_tokens=True)
    ids += [list(range(i, vocab, 211 + i))[:300] for i in range(8)] + [[i] for i in range(64)]
    return codec.decode(ids) == tokenizer.batch_decode(ids, skip_special_tokens=True)
