"""One generation engine for every language-model mechanism (DP-Prompt, synthesis): the model
gives logits, textdp's sampler picks every token.

Interface (what a mechanism calls)::

    engine = get_engine(None, device="auto")        # the packaged model, loaded once per process
    rows = engine.generate(prompts, max_new_tokens=64, sampler=my_sampler)

* ``prompts``: token-id sequences (``LanguageModel.prompt_ids`` makes them from texts).
* ``sampler``: a :class:`TokenSampler`. At every step the engine calls
  ``sampler.sample(logits, rows, steps)`` with ``logits`` float64 ``[k, vocab]`` — the model's
  float32 next-token logits of the k rows being generated, cast once to float64, untouched
  otherwise (no temperature, no top-k, no processor) — ``rows`` int64 ``[k]``, the index in
  ``prompts`` of each, and ``steps`` int64 ``[k]``, the position of the token being drawn
  (0 for the first new token). It returns k token ids. A sampler that draws its randomness
  keyed by (row, step) — e.g. :class:`UniformSampler` over a ``[len(prompts), max_new_tokens]``
  array of uniforms from :mod:`textdp._random` — gives the same tokens whatever the batch size,
  the scheduling, or the order in which the engine visits the prompts.
* Optional fast path: a sampler that also has ``sample_torch(logits, rows, steps)`` gets the same
  logits as a float64 torch tensor on the model's device (no copy to numpy; its law runs on the
  device's vectorised kernels) and returns the k token ids (tensor or array). DP-Prompt's
  :class:`textdp.lm.paraphrase.DPPromptSampler` has one (numpy's float64 ``exp`` is scalar code
  on CPUs without AVX-512, and the law's exp over [k, vocab] then costs as much as the model).
* The result: for each prompt, its new tokens (without the prompt), up to and including its
  first end-of-sequence token, at most ``max_new_tokens`` of them.

How it runs (Orca-style continuous batching, Yu et al., OSDI 2022, at the granularity of steps):
prompts are sorted by length (so a batch's prompts need little padding), the first
``batch_size`` are prefilled together (the last position's logits only), and then one token per
step for every active row through the KV cache. A row that ends (EOS or ``max_new_tokens``)
leaves the batch at once (so the step's cost follows the active rows), and when at least
``refill`` rows are free the next waiting prompts are prefilled and join the running batch.
With ``share_prefix=True`` (the default: BENCHMARKS.md, ``lm_engine``, run 5b) the prompts'
common prefix (DP-Prompt's template and the chat template's system prompt: 40 of the ~67 tokens
of a VADER sentence's prompt) runs through the model once per call and its keys and values serve
every row, so a prefill computes only each prompt's own tokens, at positions that continue the
prefix's; a later call whose prompts share the kept prefix reuses it.

Two forwards (``backend``): for a Llama-architecture model (the packaged SmolLM2) the engine
runs :class:`textdp.lm.llama.LlamaDecoder` — the model's own tensors, HF's arithmetic, over a
preallocated cache with one slot per row (a row's prefix and own tokens contiguous from column
0, no padding inside a row; a finished row's slot takes the last active row's contents; a prefill
runs its rows in passes of similar lengths, :func:`prefill_buckets`, as each pass pads to its
longest row) — and
for any other model the transformers module call with a growing cache (left padding, explicit
positions, a finished row's cache rows dropped, a merged prefill left-padded to the running
cache's length). Either way the result is the same as generating each prompt alone: padding is
never attended to, positions are per row, and a row's tokens depend only on its own logits and
the sampler's draws for (row, step) (tested on a tiny model, both forwards, and the lean one's
logits against the transformers model's).

Device: ``"auto"`` is CUDA when torch sees a GPU, else the CPU; ``"cpu"`` and ``"cuda"`` force
one. The model stays float32 on either device (no bf16: the law's inputs are the float32
logits); on a GPU, logits can differ from the CPU's in the last bits, so a seeded run is
reproducible on one kind of device, not across them. On the CPU the engine sets torch's threads
to the cores this process may use (``threads`` overrides).
"""

from __future__ import annotations

import inspect
import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from textdp.lm.llama import LlamaDecoder
from textdp.lm.model import LanguageModel, _require_torch, shared_model

__all__ = ["DEFAULT_BATCH_SIZE", "Engine", "TokenSampler", "UniformSampler", "available_cores",
           "get_engine", "resolve_device"]

#: Rows generated together: CPU, and a CUDA device.
DEFAULT_BATCH_SIZE = {"cpu": 16, "cuda": 256}
#: The shortest common prefix of the prompts worth computing once (tokens).
MIN_SHARED_PREFIX = 8
#: A prefill pass's fixed cost in tokens of padding (:func:`prefill_buckets`): the lean forward
#: splits a prefill into passes of similar lengths when that saves more padded tokens than this
#: per extra pass.
PREFILL_PASS_TOKENS = 32
#: ``auto``: the lean Llama forward (:mod:`textdp.lm.llama`) when it reproduces the model, else
#: the transformers module call; ``llama`` / ``transformers`` force one.
BACKENDS = ("auto", "llama", "transformers")


@runtime_checkable
class TokenSampler(Protocol):
    """Picks the next token of k rows from their logits (see the module docstring)."""

    def sample(self, logits: np.ndarray, rows: np.ndarray, steps: np.ndarray) -> np.ndarray:
        ...


class UniformSampler:
    """A sampler that feeds ``law(logits, u)`` one uniform per row: ``uniforms[row, step]``.

    ``law`` maps float64 logits ``[k, vocab]`` and uniforms ``[k]`` to k token ids
    deterministically (e.g. :meth:`textdp.mechanisms.prompt.DPPrompt.sample`); ``uniforms`` is
    ``[number of prompts, max_new_tokens]``, drawn before generation from :mod:`textdp._random`.
    Keyed by (row, step), so the tokens do not depend on batching or order.
    """

    def __init__(self, law: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 uniforms: np.ndarray) -> None:
        self.law = law
        self.uniforms = np.asarray(uniforms, dtype=np.float64)
        if self.uniforms.ndim != 2:
            raise ValueError(f"uniforms must be [prompts, max_new_tokens], got {self.uniforms.shape}")

    def sample(self, logits: np.ndarray, rows: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return self.law(logits, self.uniforms[rows, steps])


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_device(device: str) -> str:
    """``"auto"`` → ``"cuda"`` when torch sees a GPU, else ``"cpu"``; ``"cuda"`` without one is
    an error naming the problem."""
    torch = _require_torch()
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device must be auto, cpu or cuda, got {device!r}")
    has_cuda = torch.cuda.is_available()
    if device == "cuda" and not has_cuda:
        raise ValueError("device cuda: torch sees no CUDA device (is the CUDA build of torch "
                         "installed?); use --device cpu")
    return "cuda" if device == "cuda" or (device == "auto" and has_cuda) else "cpu"


def prefill_buckets(lengths: Sequence[int], pass_tokens: int | None = None
                    ) -> list[tuple[int, int]]:
    """Split ascending ``lengths`` into consecutive runs ``[(a, b), …]`` that minimise the tokens
    computed, ``Σ (b − a) · lengths[b − 1] + pass_tokens`` per run (a prefill pads each row to
    its run's longest prompt). Dynamic programming over the split points; a split inside rows
    of equal length never pays, so only the boundaries between distinct lengths are tried
    (exact up to :data:`_MAX_SPLIT_POINTS` of them, else among that many evenly spaced)."""
    pass_tokens = PREFILL_PASS_TOKENS if pass_tokens is None else pass_tokens
    n = len(lengths)
    points = [0] + [i for i in range(1, n) if lengths[i] != lengths[i - 1]] + [n] if n else [0]
    if len(points) > _MAX_SPLIT_POINTS:  # e.g. 100,000 rows of a thousand lengths: coarser
        step = (len(points) - 1) / (_MAX_SPLIT_POINTS - 1)
        points = sorted({points[round(j * step)] for j in range(_MAX_SPLIT_POINTS)})
    m = len(points)
    best = [0.0] + [float("inf")] * (m - 1)
    cut = [0] * m
    for j in range(1, m):
        b = points[j]
        for i in range(j):
            cost = best[i] + (b - points[i]) * lengths[b - 1] + pass_tokens
            if cost < best[j]:
                best[j], cut[j] = cost, i
    runs, j = [], m - 1
    while j:
        runs.append((points[cut[j]], points[j]))
        j = cut[j]
    return runs[::-1]


#: At most this many split points are tried by :func:`prefill_buckets` (O(points²) work).
_MAX_SPLIT_POINTS = 256


def _left_pad(prompts: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    width = max(1, max(len(p) for p in prompts))  # an empty prompt is one masked pad
    ids = np.full((len(prompts), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(prompts), width), dtype=np.int64)
    for i, p in enumerate(prompts):
        if len(p):
            ids[i, width - len(p):] = p
            mask[i, width - len(p):] = 1
    return ids, mask


def _kv(cache: Any) -> list[tuple[Any, Any]]:
    """Per layer (keys, values), each ``[batch, heads, length, head_dim]``."""
    if hasattr(cache, "layers"):  # transformers ≥ 4.56
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


def _set_kv(cache: Any, kv: Iterable[tuple[Any, Any]]) -> None:
    kv = list(kv)
    if hasattr(cache, "layers"):
        for layer, (k, v) in zip(cache.layers, kv, strict=True):
            layer.keys, layer.values = k, v
    else:
        cache.key_cache[:] = [k for k, _ in kv]
        cache.value_cache[:] = [v for _, v in kv]


class _Batch:
    """The rows being generated: their prompt index, tokens drawn, next input, cache and mask."""

    def __init__(self, rows: np.ndarray, last: np.ndarray, mask: Any, positions: Any,
                 cache: Any) -> None:
        self.rows, self.last = rows, last
        self.steps = np.ones(len(rows), dtype=np.int64)  # each row has drawn its first token
        self.mask, self.positions, self.cache = mask, positions, cache

    def __len__(self) -> int:
        return len(self.rows)

    def merge(self, new: _Batch) -> None:
        """Append ``new``'s rows; the shorter cache is left-padded (masked) to the longer."""
        torch = _require_torch()
        width = max(self.mask.shape[1], new.mask.shape[1])

        def pad(x: Any, dim: int) -> Any:
            missing = width - x.shape[dim]
            if not missing:
                return x
            shape = list(x.shape)
            shape[dim] = missing
            return torch.cat([x.new_zeros(shape), x], dim)

        _set_kv(self.cache, [(torch.cat([pad(k, 2), pad(nk, 2)]), torch.cat([pad(v, 2), pad(nv, 2)]))
                             for (k, v), (nk, nv) in zip(_kv(self.cache), _kv(new.cache),
                                                         strict=True)])
        self.mask = torch.cat([pad(self.mask, 1), pad(new.mask, 1)])
        self.positions = torch.cat([self.positions, new.positions])
        self.rows = np.concatenate([self.rows, new.rows])
        self.last = np.concatenate([self.last, new.last])
        self.steps = np.concatenate([self.steps, new.steps])

    def keep(self, keep: np.ndarray) -> None:
        """Only the rows where ``keep``; then drop leading columns no remaining row attends to."""
        torch = _require_torch()
        if not keep.all():
            index = torch.from_numpy(np.flatnonzero(keep)).to(self.mask.device)
            self.rows, self.last, self.steps = self.rows[keep], self.last[keep], self.steps[keep]
            self.mask, self.positions = self.mask[index], self.positions[index]
            if len(self.rows):
                _set_kv(self.cache, [(k[index], v[index]) for k, v in _kv(self.cache)])
        if len(self.rows):
            first = int(self.mask.any(0).int().argmax())
            if first:
                self.mask = self.mask[:, first:]
                _set_kv(self.cache, [(k[:, :, first:], v[:, :, first:])
                                     for k, v in _kv(self.cache)])


class Engine:
    """Batched generation with a KV cache and continuous batching; tokens from a
    :class:`TokenSampler` (module docstring).

    Args:
        lm: a :class:`LanguageModel`, a model path (directory or .gguf), or None (the packaged
            SmolLM2-135M-Instruct); a path or None uses the process's shared model.
        device: ``"auto"`` (CUDA when present, else CPU), ``"cpu"`` or ``"cuda"``.
        batch_size: rows generated together (default 16 on the CPU, 256 on CUDA).
        threads: torch's CPU threads (default: the cores this process may use).
        refill: admit waiting prompts when at least this many rows are free (default
            max(1, batch_size // 8): fewer, larger prefills).
        eos_ids, pad_id: override the model's end-of-sequence ids and padding id.
        share_prefix: run the prompts' common prefix through the model once and reuse its keys
            and values (:meth:`_shared_prefix`). On by default: 2.5× faster at batch 64, 0.84× at
            batch 16 (BENCHMARKS.md, ``lm_engine``, run 5b; loaded machine); the tokens are
            the same either way.
        backend: ``"auto"`` (the lean Llama forward when it reproduces the model, else the
            transformers module call), ``"llama"`` or ``"transformers"``.
    """

    def __init__(self, lm: LanguageModel | str | os.PathLike | None = None, *,
                 device: str = "auto", batch_size: int | None = None,
                 threads: int | None = None, refill: int | None = None,
                 eos_ids: Iterable[int] | None = None, pad_id: int | None = None,
                 share_prefix: bool = True, backend: str = "auto") -> None:
        torch = _require_torch()
        self.lm = lm if isinstance(lm, LanguageModel) else shared_model(lm)
        self.device = resolve_device(device)
        size = DEFAULT_BATCH_SIZE[self.device] if batch_size is None else batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"batch_size must be an integer ≥ 1, got {batch_size!r}")
        self.batch_size = size
        self.refill = max(1, size // 8) if refill is None else int(refill)
        if not 1 <= self.refill <= size:
            raise ValueError(f"refill must be between 1 and batch_size, got {refill!r}")
        self.threads = available_cores() if threads is None else int(threads)
        if self.device == "cpu" and torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        self._eos = None if eos_ids is None else {int(i) for i in eos_ids}
        self._pad = pad_id
        #: Compute the prompts' common prefix once (:meth:`_shared_prefix`).
        self.share_prefix = bool(share_prefix)
        self._prefix: tuple[tuple[int, ...], list[tuple[Any, Any]], Any] | None = None
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.backend = backend
        self._decoder: LlamaDecoder | None = None

    # --- the model, on its device ----------------------------------------------------------
    def _model(self) -> Any:
        """The transformers model on the device, or None when the lean forward runs (set in
        ``self._decoder``: for the packaged model's cached conversion it reads the
        memory-mapped weights, and transformers is not imported)."""
        if self._eos is None:
            self._eos = self.lm.eos_ids()
        if self._pad is None:
            self._pad = self.lm.pad_id()
        self._decoder = None
        if self.backend != "transformers":
            self._decoder = self.lm.decoder(self.device)
            if self._decoder is not None:
                return None
            if self.backend == "llama":
                raise ValueError(f"backend llama: {type(self.lm.model).__name__} is not a Llama "
                                 "model this engine reproduces; use backend auto or transformers")
        model = self.lm.model
        if next(model.parameters()).device.type != self.device:
            model.to(self.device)
        params = inspect.signature(model.forward).parameters
        self._keep = next((k for k in ("logits_to_keep", "num_logits_to_keep") if k in params),
                          None)
        self._cache_kw = "cache" if "cache" in params else "past_key_values"  # renamed in 5.x
        return model

    def load(self) -> Engine:
        """Load now, on the engine's device, what :meth:`generate` uses (the model or its lean
        forward, and the tokenizer), so that errors surface before any input is read."""
        self._model()
        if self.lm.codec is None:
            self.lm.tokenizer  # noqa: B018
        return self

    def _forward(self, model: Any, ids: Any, mask: Any, positions: Any,
                 cache: Any) -> tuple[Any, Any]:
        """The float32 next-token logits [k, vocab] of the last position (a tensor on the
        device), and the cache."""
        extra = {self._keep: 1} if self._keep else {}
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                    **{self._cache_kw: cache}, **extra)
        cache = out.cache if self._cache_kw == "cache" else out.past_key_values
        return out.logits[:, -1, :], cache

    def _draw(self, sampler: TokenSampler, logits: Any, rows: np.ndarray,
              steps: np.ndarray) -> np.ndarray:
        # The law needs float64 only for the [k, vocab] slice it draws from: cast it once.
        fast = getattr(sampler, "sample_torch", None)
        if fast is not None:
            tokens = fast(logits.double(), rows, steps)
            tokens = tokens.cpu().numpy() if hasattr(tokens, "cpu") else tokens
        else:
            tokens = sampler.sample(logits.float().cpu().numpy().astype(np.float64), rows, steps)
        tokens = np.asarray(tokens, dtype=np.int64)
        if tokens.shape != rows.shape or (tokens < 0).any() or (tokens >= logits.shape[1]).any():
            raise ValueError(f"the sampler returned {tokens!r}, not one token id per row in "
                             f"[0, {logits.shape[1]})")
        return tokens

    def _shared_prefix(self, model: Any, prompts: Sequence[Sequence[int]]) -> Any:
        """The KV cache of the prompts' common prefix (DP-Prompt's template and the chat
        template's system prompt: about half of each prompt), computed once and kept for the
        next calls while their prompts share it; None when it is shorter than
        :data:`MIN_SHARED_PREFIX` tokens. Every prompt keeps at least one token of its own (its
        last position gives the first logits)."""
        torch = _require_torch()
        kind = "llama" if self._decoder is not None else "transformers"
        shortest = min(len(p) for p in prompts)
        kept = self._prefix
        if kept is not None and kept[2] == kind and shortest > len(kept[0]) and all(
                tuple(p[:len(kept[0])]) == kept[0] for p in prompts):
            return kept
        if len(prompts) < 2 or shortest <= MIN_SHARED_PREFIX:
            return None
        first, n = prompts[0], shortest - 1
        for p in prompts[1:]:
            n = next((j for j in range(n) if p[j] != first[j]), n)
        if n < MIN_SHARED_PREFIX:
            return None
        if self._decoder is not None:
            self._prefix = (tuple(first[:n]), self._decoder.prefix(first[:n]), kind)
            return self._prefix
        ids = torch.tensor([list(first[:n])], device=self.device)
        mask = torch.ones_like(ids)
        positions = torch.arange(n, device=self.device)[None]
        _, cache = self._forward(model, ids, mask, positions, None)
        self._prefix = (tuple(first[:n]), _kv(cache), kind)
        self._prefix_cache_type = type(cache)
        return self._prefix

    def _prefill(self, model: Any, take: list[int], prompts: Sequence[Sequence[int]],
                 sampler: TokenSampler, prefix: Any = None) -> _Batch:
        """The first token of the prompts ``take``; with ``prefix`` (:meth:`_shared_prefix`)
        only their own tokens run through the model, after the shared prefix's cached keys and
        values (the prefix columns first, then each row's left padding, masked: a row attends to
        the same tokens at the same positions as alone)."""
        torch = _require_torch()
        start = len(prefix[0]) if prefix is not None else 0
        ids, mask = _left_pad([prompts[i][start:] for i in take], self._pad)
        ids_t = torch.from_numpy(ids).to(self.device)
        mask_t = torch.from_numpy(mask).to(self.device)
        positions = start + (mask_t.cumsum(-1) - 1).clamp(min=0)
        cache = None
        if prefix is not None:
            k = len(take)
            cache = self._prefix_cache_type([(pk.expand(k, -1, -1, -1), pv.expand(k, -1, -1, -1))
                                             for pk, pv in prefix[1]])
            mask_t = torch.cat([mask_t.new_ones((k, start)), mask_t], 1)
        logits, cache = self._forward(model, ids_t, mask_t, positions, cache)
        rows = np.asarray(take, dtype=np.int64)
        tokens = self._draw(sampler, logits, rows, np.zeros(len(take), dtype=np.int64))
        return _Batch(rows, tokens, mask_t, start + mask_t[:, start:].sum(-1), cache)

    def _step(self, model: Any, batch: _Batch, sampler: TokenSampler) -> None:
        torch = _require_torch()
        ids = torch.from_numpy(batch.last[:, None]).to(self.device)
        mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch), 1))], 1)
        logits, batch.cache = self._forward(model, ids, mask, batch.positions[:, None],
                                            batch.cache)
        batch.mask, batch.positions = mask, batch.positions + 1
        batch.last = self._draw(sampler, logits, batch.rows, batch.steps)
        batch.steps = batch.steps + 1

    def generate(self, prompts: Sequence[Sequence[int]], *, max_new_tokens: int,
                 sampler: TokenSampler, progress: Callable[[int], Any] | None = None
                 ) -> list[list[int]]:
        """The new tokens of every prompt, in the order of ``prompts`` (module docstring).

        ``progress``, if given, is called with the number of prompts that just finished (e.g. a
        tqdm bar's ``update``).
        """
        torch = _require_torch()
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) \
                or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be an integer ≥ 1, got {max_new_tokens!r}")
        prompts = [[int(t) for t in p] for p in prompts]
        out: list[list[int]] = [[] for _ in prompts]
        if not prompts:
            return out
        model = self._model()
        eos = np.fromiter(self._eos, dtype=np.int64)
        waiting = deque(sorted(range(len(prompts)), key=lambda i: len(prompts[i])))
        batch: _Batch | None = None
        with torch.inference_mode():
            prefix = self._shared_prefix(model, prompts) if self.share_prefix else None
            if self._decoder is not None:
                self._generate_lean(prompts, waiting, max_new_tokens, sampler, progress, out,
                                    prefix, eos)
                return out
            while waiting or batch:
                free = self.batch_size - (len(batch) if batch else 0)
                if waiting and (not batch or free >= self.refill):
                    new = self._prefill(model, [waiting.popleft()
                                                for _ in range(min(free, len(waiting)))],
                                        prompts, sampler, prefix)
                    if batch:
                        batch.merge(new)
                    else:
                        batch = new
                    drawn = new
                else:
                    self._step(model, batch, sampler)
                    drawn = batch
                for row, token in zip(drawn.rows.tolist(), drawn.last.tolist(), strict=True):
                    out[row].append(token)
                done = np.isin(batch.last, eos) | (batch.steps >= max_new_tokens)
                if done.any():
                    batch.keep(~done)
                    if progress is not None:
                        progress(int(done.sum()))
        return out


    def _generate_lean(self, prompts: list[list[int]], waiting: deque, max_new_tokens: int,
                       sampler: TokenSampler, progress: Callable[[int], Any] | None,
                       out: list[list[int]], prefix: Any, eos: np.ndarray) -> None:
        """:meth:`generate` on the lean Llama forward (:mod:`textdp.lm.llama`): the same
        schedule, over a preallocated cache whose active rows are slots ``0..n-1`` (a finished
        row's slot takes the last active row's contents, so a step's cost follows the active
        rows and no cache is concatenated or re-masked)."""
        torch = _require_torch()
        decoder = self._decoder
        start = 0 if prefix is None else len(prefix[0])
        kv = None if prefix is None else prefix[1]
        # An empty prompt has no last position to read logits from: it starts at the pad token
        # (the transformers path feeds it one masked pad; either way no prompt token is seen).
        own = [prompts[i][start:] or [self._pad] for i in range(len(prompts))]
        slots = min(self.batch_size, len(prompts))
        cache = decoder.new_cache(slots, start + max(map(len, own)) + max_new_tokens)
        rows = np.zeros(slots, dtype=np.int64)    # prompt index of each active slot
        drawn = np.zeros(slots, dtype=np.int64)   # tokens drawn so far by each
        last = np.zeros(slots, dtype=np.int64)    # each one's latest token
        n = 0
        while waiting or n:
            free = slots - n
            if waiting and (not n or free >= self.refill):
                take = sorted((waiting.popleft() for _ in range(min(free, len(waiting)))),
                              key=lambda i: len(own[i]))
                new = slice(n, n + len(take))
                # Rows of similar length together: a pass pads to its longest row (VADER
                # prompts at batch 16: 848 tokens padded for 453 own in one pass).
                runs = prefill_buckets([len(own[i]) for i in take])
                logits = torch.cat([decoder.prefill(cache, n + a, [own[i] for i in take[a:b]], kv)
                                    for a, b in runs])
                rows[new] = take
                last[new] = self._draw(sampler, logits, rows[new], drawn[new] * 0)
                drawn[new] = 1
                n += len(take)
            else:
                new = slice(0, n)
                logits = decoder.step(cache, n, torch.from_numpy(last[:n]).to(self.device))
                last[:n] = self._draw(sampler, logits, rows[:n], drawn[:n].copy())
                drawn[:n] += 1
            for row, token in zip(rows[new].tolist(), last[new].tolist(), strict=True):
                out[row].append(token)
            done = np.flatnonzero(np.isin(last[:n], eos) | (drawn[:n] >= max_new_tokens))
            for i in done[::-1].tolist():  # highest first: the slot moved in is never done
                n -= 1
                if i != n:
                    cache.move(n, i)
                    rows[i], drawn[i], last[i] = rows[n], drawn[n], last[n]
            if len(done) and progress is not None:
                progress(len(done))


_ENGINES: dict[tuple[Any, ...], Engine] = {}


def get_engine(lm: LanguageModel | str | os.PathLike | None = None, *, device: str = "auto",
               batch_size: int | None = None, threads: int | None = None) -> Engine:
    """The process's engine for a model path (None: the packaged model) and device: the model
    is loaded once per process. A :class:`LanguageModel` object gets a new (cheap) engine over
    that object's already-loaded model."""
    if isinstance(lm, LanguageModel):
        return Engine(lm, device=device, batch_size=batch_size, threads=threads)
    key = (None if lm is None else os.fspath(lm), resolve_device(device), batch_size, threads)
    if key not in _ENGINES:
        _ENGINES[key] = Engine(lm, device=device, batch_size=batch_size, threads=threads)
    return _ENGINES[key]
