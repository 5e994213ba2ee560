"""The warm load without transformers (textdp.lm.lean, issue 38): a conversion directory with a
lean manifest is read through safetensors, ``tokenizers`` and jinja2, and gives what the
transformers path gives (ids, texts, logits, tokens); a codec that differs gets no manifest.

On the tiny model of tests/conftest.py (saved here as a conversion directory); the packaged
model's own conversion is checked in tests/lm/test_model_cache.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from textdp import _random
from textdp.mechanisms.prompt import DPPrompt

pytest.importorskip("torch")
pytest.importorskip("transformers")

TEXTS = ["w1 w2 w3", "", "w60   w7\tw8", "w5 unknown w9 [EOS] w3", "Ünïcode 👩‍👩‍👧 w4",
         " ".join(f"w{i % 61}" for i in range(300))]


def _convert(tiny, into, *, tied=False):
    """What LanguageModel._convert writes for a GGUF, for the tiny model."""
    import copy

    from safetensors.torch import save_model

    from textdp.lm.lean import write_manifest

    model = tiny.model
    if tied:  # stored once, under the head's name (as save_model does for SmolLM2)
        model = copy.deepcopy(model)
        model.config.tie_word_embeddings = True
        model.lm_head.weight = model.model.embed_tokens.weight
    into.mkdir()
    model.config.save_pretrained(into)
    save_model(model, str(into / "model.safetensors"))
    tiny.tokenizer.save_pretrained(into)
    return write_manifest(into, model, tiny.tokenizer, tiny.eos_ids(), tiny.pad_id()), model


@pytest.fixture(scope="module")
def lean_dir(tiny_lm, tmp_path_factory):
    d = tmp_path_factory.mktemp("lean") / "conv"
    written, _ = _convert(tiny_lm, d)
    assert written
    return d


def test_the_codec_gives_the_tokenizers_ids_and_texts(tiny_lm, lean_dir):
    from textdp.lm import LanguageModel

    lean = LanguageModel(lean_dir)
    assert lean.codec is not None
    assert lean.prompt_ids(TEXTS, "w0 {document}") == tiny_lm.prompt_ids(TEXTS, "w0 {document}")
    rows = [[3, 1, 4, 0, 5], [], [2, 2], list(range(64))]
    assert lean.decode(rows) == tiny_lm.decode(rows)
    assert lean.eos_ids() == tiny_lm.eos_ids() and lean.pad_id() == tiny_lm.pad_id()


def test_the_lean_load_generates_the_transformers_tokens_without_transformers(tiny_lm, lean_dir):
    """Logits of the decoder read from safetensors equal the transformers model's, and the
    engine on it draws the tokens the transformers path draws; its model was never built."""
    import torch

    from textdp.lm import Engine, LanguageModel, UniformSampler
    from textdp.lm.llama import LlamaDecoder

    lean = LanguageModel(lean_dir)
    decoder = lean.decoder("cpu")
    assert decoder is not None and lean._model is None and lean.decoder("cpu") is decoder
    prompts = [[5, 9, 17, 3], [8], [30, 31, 32]]
    with torch.inference_mode():
        want = LlamaDecoder.from_model(tiny_lm.model).prefill(
            LlamaDecoder.from_model(tiny_lm.model).new_cache(3, 8), 0, prompts)
        got = decoder.prefill(decoder.new_cache(3, 8), 0, prompts)
    assert torch.equal(got, want)  # the same float32 tensors, the same arithmetic
    m = DPPrompt(temperature=60.0, max_new_tokens=10, clip_low=-30.0, clip_high=30.0)
    u = _random.seeded_generator(3).random((len(prompts), 10))
    runs = [Engine(x, device="cpu", batch_size=2, backend=b).generate(
        prompts, max_new_tokens=10, sampler=UniformSampler(m.sample, u))
        for x, b in ((lean, "auto"), (tiny_lm, "transformers"))]
    assert runs[0] == runs[1] and lean._model is None


def test_tied_weights_stored_once_are_the_head_and_the_embedding(tiny_lm, tmp_path):
    from textdp.lm import LanguageModel

    written, model = _convert(tiny_lm, tmp_path / "tied", tied=True)
    assert written
    decoder = LanguageModel(tmp_path / "tied").decoder("cpu")
    assert decoder.head is decoder.embed
    np.testing.assert_array_equal(decoder.embed.numpy(),
                                  model.model.embed_tokens.weight.detach().numpy())
    from textdp.lm.llama import LlamaDecoder

    config = {**model.config.to_dict(), "tie_word_embeddings": False}
    assert LlamaDecoder.from_tensors({"lm_head.weight": decoder.head}, config) is None


def test_a_codec_that_differs_gets_no_manifest_and_transformers_loads(tiny_lm, tmp_path,
                                                                       monkeypatch):
    """The check before the manifest is written has power: a codec that drops one token id
    (or a manifest of another format) leaves the model on the transformers path."""
    from textdp.lm import LanguageModel, lean

    real = lean.TextCodec.encode
    monkeypatch.setattr(lean.TextCodec, "encode", lambda self, texts: [
        ids[:-1] if len(ids) > 40 else ids for ids in real(self, texts)])
    written, _ = _convert(tiny_lm, tmp_path / "off")
    assert not written and not (tmp_path / "off" / lean.MANIFEST).exists()
    monkeypatch.undo()
    assert LanguageModel(tmp_path / "off").codec is None
    written, _ = _convert(tiny_lm, tmp_path / "old")
    manifest = json.loads((tmp_path / "old" / lean.MANIFEST).read_text())
    (tmp_path / "old" / lean.MANIFEST).write_text(json.dumps({**manifest, "format": 0}))
    assert LanguageModel(tmp_path / "old").codec is None


def test_the_chat_template_renders_as_transformers_renders_it(tiny_lm, tmp_path):
    """A template with a system turn, loop controls, tojson and the special tokens it reads."""
    import copy

    tok = copy.deepcopy(tiny_lm.tokenizer)
    tok.chat_template = (
        "{% for m in messages %}{% if loop.first %}w0 {{ eos_token }} {% endif %}"
        "{{ m['role'] | tojson }} {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}w1 {% endif %}")
    from textdp.lm import LanguageModel
    from textdp.lm.lean import PROBES, TextCodec, read_manifest

    lm = LanguageModel(model=tiny_lm.model, tokenizer=tok)
    written, _ = _convert(lm, tmp_path / "chat")
    assert written
    codec = TextCodec(tmp_path / "chat", read_manifest(tmp_path / "chat"))
    want = [tok.apply_chat_template([{"role": "user", "content": t}], tokenize=False,
                                    add_generation_prompt=True) for t in PROBES[:4]]
    assert codec.render(PROBES[:4]) == want and want[0].startswith('w0 [EOS] "user" ')
    assert LanguageModel(tmp_path / "chat").prompt_ids(TEXTS, "{document}") == \
        lm.prompt_ids(TEXTS, "{document}")


def test_the_gguf_fingerprint_is_remembered_by_the_files_stat(tmp_path, monkeypatch):
    """The second LanguageModel of a GGUF reads its sha256 from the cache; a changed file (new
    size and mtime) is hashed again."""
    import hashlib
    import os

    from textdp.lm import LanguageModel, model

    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(1000))
    first = LanguageModel(gguf).sha256
    assert first == hashlib.sha256(gguf.read_bytes()).hexdigest()
    calls = []
    monkeypatch.setattr(model, "_sha256", lambda paths: calls.append(paths) or "0" * 64)
    assert LanguageModel(gguf).sha256 == first and calls == []
    gguf.write_bytes(b"GGUF" + bytes(1001))
    os.utime(gguf, ns=(1, 1))
    assert LanguageModel(gguf).sha256 == "0" * 64 and len(calls) == 1
    assert LanguageModel(gguf, cache=False).sha256 == "0" * 64 and len(calls) == 2
