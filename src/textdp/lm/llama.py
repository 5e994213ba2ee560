"""A lean float32 forward of Llama-architecture models (SmolLM2 is one) for the engine: the
model's own weight tensors, a preallocated key/value cache with one slot per row, and no
per-step module calls, masks of 4 dimensions or cache growth.

Why not the Hugging Face module call: at batch 16 a decode step of a 135M-parameter model is
about 4 GFLOP in 30 layers of small matrix products, and transformers' per-step work around
them (the module tree, a 4-D mask rebuilt every step, ``torch.cat`` growth of the cache, the
logits processors of ``generate``) is a large share of it on a CPU (BENCHMARKS.md,
``lm_engine``). The arithmetic here is HF's ``LlamaForCausalLM`` (transformers 5.x,
``modeling_llama.py``): RMSNorm in float32, rotary position embedding (Su et al. 2021, eq. 34,
the "rotate half" form), grouped-query attention (Ainslie et al. 2023), SiLU-gated MLP; the
logits are float32 and equal HF's to float32 rounding (tests/lm/test_engine.py).

Cache layout: per layer, keys and values ``[slots, kv_heads, length, head_dim]``. A row's slot
holds the shared prefix's columns (if any) and then its own tokens, contiguous from column 0,
so a token's column is its position and there is no padding inside a row's cache: a prefill
writes its rows right-padded (the padding columns are overwritten by the row's next tokens and
never attended to: every query attends to columns below its row's length only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LlamaDecoder", "SlotCache"]


def _supported(config: Mapping[str, Any]) -> bool:
    """The configurations whose arithmetic this module reproduces exactly."""
    rope = config.get("rope_parameters") or config.get("rope_scaling") or {}
    rope_type = rope.get("rope_type", rope.get("type", "default")) if rope else "default"
    return (config.get("model_type") == "llama" and config.get("hidden_act", "silu") == "silu"
            and not config.get("attention_bias") and not config.get("mlp_bias")
            and config.get("pretraining_tp", 1) == 1 and rope_type == "default")


class SlotCache:
    """Keys and values of ``slots`` rows, ``length`` columns each, and every slot's filled
    length (module docstring)."""

    def __init__(self, layers: int, slots: int, kv_heads: int, length: int, head_dim: int,
                 *, dtype: Any, device: Any) -> None:
        import torch

        shape = (slots, kv_heads, length, head_dim)
        # Zeros, not empty: a masked column still meets its value as 0·v, and 0·NaN is NaN.
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layers)]
        self.lengths = torch.zeros(slots, dtype=torch.int64, device=device)

    def move(self, src: int, dst: int) -> None:
        """Slot ``src``'s contents into slot ``dst`` (compaction when a row leaves)."""
        n = int(self.lengths[src])
        for k, v in zip(self.keys, self.values, strict=True):
            k[dst, :, :n] = k[src, :, :n]
            v[dst, :, :n] = v[src, :, :n]
        self.lengths[dst] = self.lengths[src]


class LlamaDecoder:
    """The forward pass of a Llama model over a :class:`SlotCache` (module docstring).

    Build with :meth:`from_model` (a transformers ``LlamaForCausalLM``: its parameter tensors
    are used, not copied) or :meth:`from_tensors` (a state dict and a config dict). Both return
    None for a model this module does not reproduce exactly; the engine then calls the model.
    """

    def __init__(self, tensors: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        import torch

        self.layers_n = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.kv_heads = int(config.get("num_key_value_heads") or self.heads)
        hidden = int(config["hidden_size"])
        self.head_dim = int(config.get("head_dim") or hidden // self.heads)
        self.groups = self.heads // self.kv_heads
        self.eps = float(config.get("rms_norm_eps", 1e-6))
        rope = config.get("rope_parameters") or {}
        theta = float(rope.get("rope_theta", config.get("rope_theta", 10000.0)))
        self.embed = tensors["model.embed_tokens.weight"]
        self.norm = tensors["model.norm.weight"]
        self.head = tensors.get("lm_head.weight", self.embed)  # tied embeddings
        self.device, self.dtype = self.embed.device, self.embed.dtype
        names = ("input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                 "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                 "mlp.down_proj")
        self.layers = [tuple(tensors[f"model.layers.{i}.{n}.weight"] for n in names)
                       for i in range(self.layers_n)]
        # HF's default rotary init, in float32 (LlamaRotaryEmbedding.compute_default_rope_parameters).
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float)
                                         .to(self.device) / self.head_dim))

    @classmethod
    def from_model(cls, model: Any) -> LlamaDecoder | None:
        config = model.config.to_dict()
        if not _supported(config):
            return None
        tensors = dict(model.named_parameters(remove_duplicate=False))
        if "lm_head.weight" not in tensors or "model.embed_tokens.weight" not in tensors:
            return None
        return cls(tensors, config)

    @classmethod
    def from_tensors(cls, tensors: Mapping[str, Any], config: Mapping[str, Any]
                     ) -> LlamaDecoder | None:
        """From a state dict (e.g. read from safetensors, which stores tied weights once, under
        either name: with ``tie_word_embeddings`` the head and the embedding are one tensor)."""
        embed, head = "model.embed_tokens.weight", "lm_head.weight"
        if not _supported(config):
            return None
        tensors = dict(tensors)
        if config.get("tie_word_embeddings", False):
            tied = tensors.get(embed, tensors.get(head))
            tensors[embed] = tensors[head] = tied
        if tensors.get(embed) is None or tensors.get(head) is None:
            return None
        return cls(tensors, config)

    def new_cache(self, slots: int, length: int) -> SlotCache:
        return SlotCache(self.layers_n, slots, self.kv_heads, length, self.head_dim,
                         dtype=self.dtype, device=self.device)

    # --- the arithmetic ---------------------------------------------------------------------
    def _rms(self, x: Any, weight: Any) -> Any:
        import torch

        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def _rope(self, positions: Any) -> tuple[Any, Any]:
        """cos, sin ``[*positions.shape, head_dim]`` (HF: cat(freqs, freqs), float32)."""
        import torch

        freqs = positions[..., None].float() * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    @staticmethod
    def _rotate(x: Any, cos: Any, sin: Any) -> Any:
        import torch

        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    def _layers(self, x: Any, cos: Any, sin: Any, attend: Any) -> Any:
        """x ``[b, t, hidden]`` through every layer; ``attend(i, q, k, v)`` with q
        ``[b, t, heads, d]`` and k, v ``[b, t, kv_heads, d]`` (rotated) returns ``[b, t,
        heads·d]``. cos/sin broadcast against ``[b, t, heads, d]``."""
        import torch.nn.functional as F

        b, t, _ = x.shape
        d = self.head_dim
        for i, (n1, wq, wk, wv, wo, n2, wg, wu, wd) in enumerate(self.layers):
            h = self._rms(x, n1)
            q = self._rotate(F.linear(h, wq).view(b, t, self.heads, d), cos, sin)
            k = self._rotate(F.linear(h, wk).view(b, t, self.kv_heads, d), cos, sin)
            v = F.linear(h, wv).view(b, t, self.kv_heads, d)
            x = x + F.linear(attend(i, q, k, v), wo)
            h = self._rms(x, n2)
            x = x + F.linear(F.silu(F.linear(h, wg)) * F.linear(h, wu), wd)
        return x

    def _logits(self, x: Any) -> Any:
        import torch.nn.functional as F

        return F.linear(self._rms(x, self.norm), self.head)

    def _sdpa(self, q: Any, keys: Any, values: Any, mask: Any) -> Any:
        """Grouped-query attention without repeating keys: q ``[b, t, heads, d]`` is regrouped
        to ``[b, kv_heads, groups·t, d]`` (query head h reads kv head h // groups, as HF's
        ``repeat_kv``); ``mask`` is boolean ``[..., groups·t, columns]``."""
        import torch.nn.functional as F

        b, t = q.shape[:2]
        g, d = self.groups, self.head_dim
        q = q.view(b, t, self.kv_heads, g, d).permute(0, 2, 3, 1, 4).reshape(
            b, self.kv_heads, g * t, d)
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask,
                                             scale=d ** -0.5)
        return out.view(b, self.kv_heads, g, t, d).permute(0, 3, 1, 2, 4).reshape(
            b, t, self.heads * d)

    # --- what the engine calls --------------------------------------------------------------
    def prefix(self, ids: Sequence[int]) -> list[tuple[Any, Any]]:
        """Per layer, the keys and values ``[kv_heads, len(ids), d]`` of one token sequence at
        positions 0, 1, …: a prefix every row shares (causal attention within it)."""
        import torch

        n = len(ids)
        kv: list[tuple[Any, Any]] = []
        ids_t = torch.tensor([list(ids)], device=self.device)
        cos, sin = self._rope(torch.arange(n, device=self.device))
        cos, sin = cos[None, :, None], sin[None, :, None]
        mask = torch.ones(n, n, dtype=torch.bool, device=self.device).tril().repeat(
            self.groups, 1)

        def attend(i: int, q: Any, k: Any, v: Any) -> Any:
            k, v = k.transpose(1, 2), v.transpose(1, 2)
            kv.append((k[0].contiguous(), v[0].contiguous()))
            return self._sdpa(q, k, v, mask)

        self._layers(self.embed[ids_t], cos, sin, attend)
        return kv

    def prefill(self, cache: SlotCache, start: int, prompts: Sequence[Sequence[int]],
                prefix: list[tuple[Any, Any]] | None = None) -> Any:
        """Rows ``start, start+1, …`` of ``cache`` take ``prompts`` (each non-empty; their tokens
        after the shared ``prefix``, whose keys and values are copied into each slot); returns
        the float32 next-token logits ``[len(prompts), vocab]``."""
        import torch

        k_rows = len(prompts)
        own = [len(p) for p in prompts]
        t = max(own)
        p_len = 0 if prefix is None else prefix[0][0].shape[1]
        ids = torch.zeros((k_rows, t), dtype=torch.int64)
        for r, p in enumerate(prompts):
            ids[r, :len(p)] = torch.tensor(p, dtype=torch.int64)
        ids = ids.to(self.device)
        rows = slice(start, start + k_rows)
        end = p_len + t
        cos, sin = self._rope(torch.arange(p_len, end, device=self.device))
        cos, sin = cos[None, :, None], sin[None, :, None]
        cols = torch.arange(end, device=self.device)
        # Query i (position p_len + i) sees the prefix and its own tokens 0..i.
        mask = (cols[None, :] <= p_len + torch.arange(t, device=self.device)[:, None]).repeat(
            self.groups, 1)

        def attend(i: int, q: Any, k: Any, v: Any) -> Any:
            keys, values = cache.keys[i], cache.values[i]
            if p_len:
                keys[rows, :, :p_len] = prefix[i][0]
                values[rows, :, :p_len] = prefix[i][1]
            keys[rows, :, p_len:end] = k.transpose(1, 2)
            values[rows, :, p_len:end] = v.transpose(1, 2)
            return self._sdpa(q, keys[rows, :, :end], values[rows, :, :end], mask)

        x = self._layers(self.embed[ids], cos, sin, attend)
        last = torch.tensor(own, device=self.device) - 1
        cache.lengths[rows] = torch.tensor(own, device=self.device) + p_len
        return self._logits(x[torch.arange(k_rows, device=self.device), last])

    def step(self, cache: SlotCache, n: int, tokens: Any) -> Any:
        """One new token for each of the rows ``0..n-1`` (``tokens`` int64 ``[n]`` on the
        device), written at its slot's next column; returns the float32 logits ``[n, vocab]``."""
        import torch

        positions = cache.lengths[:n]
        cos, sin = self._rope(positions)
        cos, sin = cos[:, None, None], sin[:, None, None]
        width = int(positions.max()) + 1
        slot = torch.arange(n, device=self.device)
        mask = (torch.arange(width, device=self.device)[None, :] <= positions[:, None])[
            :, None, None, :]

        def attend(i: int, q: Any, k: Any, v: Any) -> Any:
            keys, values = cache.keys[i], cache.values[i]
            keys[slot, :, positions] = k[:, 0]
            values[slot, :, positions] = v[:, 0]
            return self._sdpa(q, keys[:n, :, :width], values[:n, :, :width], mask)

        x = self._layers(self.embed[tokens][:, None], cos, sin, attend)
        cache.lengths[:n] += 1
        return self._logits(x[:, 0])
