"""The generation engine (issue 38): the law of every token through continuous batching, the same
tokens whatever the batch size or order, the safetensors cache, the device choice.

The tiny randomly initialised Llama of tests/conftest.py (64 tokens, EOS = 1, pad = 0) stands in
for the packaged model: no file from a hub.
"""

from __future__ import annotations

import numpy as np
import pytest

from textdp import _random
from textdp.mechanisms.prompt import DPPrompt

pytest.importorskip("torch")
pytest.importorskip("transformers")

ALPHA = 1e-6
EOS = 1


@pytest.fixture(scope="module")
def tiny(tiny_lm):
    return tiny_lm


def _engine(tiny, **kw):
    """One torch thread: the tiny model's products are microseconds, and with 2 threads on a
    shared machine each one waits for the other thread to be scheduled (measured: the law test
    below 30 s wall / 10.7 CPU-s with 2 threads, 1.2 s / 0.45 CPU-s with 1, load ≈ 12)."""
    from textdp.lm import Engine

    kw.setdefault("threads", 1)
    return Engine(tiny, device="cpu", **kw)


def _sampler(mechanism, uniforms):
    from textdp.lm import UniformSampler

    return UniformSampler(mechanism.sample, uniforms)


def _logits(tiny, prompts):
    """Next-token logits of each prompt, run alone (no padding, no cache), float64."""
    import torch

    with torch.no_grad():
        return np.stack([tiny.model(input_ids=torch.tensor([p])).logits[0, -1].double().numpy()
                         for p in prompts])


# --- the same tokens whatever the batching ------------------------------------------------------
PROMPTS = [[5, 9, 17, 3, 22, 40], [8], [11, 12, 13], [30, 31], [2, 4, 6, 8, 10, 12, 14, 16, 18],
           [50, 51, 52, 53], [7, 7], [60], [19, 20, 21, 22, 23], [33, 44, 55], [9], [40, 41]]


def test_every_batch_size_and_order_gives_each_prompt_what_it_gets_alone(tiny):
    """Continuous batching (rows leave at EOS or the cap, waiting prompts are prefilled and merged
    into the running cache, left padding) returns, for each prompt, exactly the tokens it gets
    when generated alone from the same (row, step) uniforms; permuting the prompts with their
    uniforms permutes the output."""
    m = DPPrompt(temperature=60.0, max_new_tokens=20, clip_low=-30.0, clip_high=30.0)
    u = _random.seeded_generator(11).random((len(PROMPTS), 20))
    alone = [_engine(tiny, batch_size=1).generate([p], max_new_tokens=20,
                                                  sampler=_sampler(m, u[i:i + 1]))[0]
             for i, p in enumerate(PROMPTS)]
    lengths = [len(r) for r in alone]
    # The test exercises both ways out of a batch: some rows stop at EOS, some run to the cap.
    assert any(r[-1] == EOS and len(r) < 20 for r in alone) and 20 in lengths
    for size, refill in ((1, 1), (2, 1), (3, 1), (5, 2), (12, 1), (64, 8)):
        got = _engine(tiny, batch_size=size, refill=refill).generate(
            PROMPTS, max_new_tokens=20, sampler=_sampler(m, u))
        assert got == alone, (size, refill)
    perm = _random.public_generator(3).permutation(len(PROMPTS))
    got = _engine(tiny, batch_size=4, refill=1).generate(
        [PROMPTS[i] for i in perm], max_new_tokens=20, sampler=_sampler(m, u[perm]))
    assert got == [alone[i] for i in perm]


def test_prefill_buckets_minimise_the_padded_tokens():
    """Against every split of ascending lengths (all 2^(n−1) for n ≤ 8): the runs cover the
    rows in order and their cost is the least."""
    import itertools

    from textdp.lm.engine import prefill_buckets

    rng = _random.public_generator(8)
    for _ in range(60):
        n = int(rng.integers(1, 9))
        lengths = sorted(rng.integers(1, 60, n).tolist())
        pass_tokens = int(rng.integers(0, 40))

        def cost(runs, lengths=lengths, pass_tokens=pass_tokens):
            return sum((b - a) * lengths[b - 1] + pass_tokens for a, b in runs)

        runs = prefill_buckets(lengths, pass_tokens)
        assert [a for a, _ in runs] == [0] + [b for _, b in runs[:-1]] and runs[-1][1] == n
        best = min(cost(list(zip((0, *cuts), (*cuts, n), strict=True)))
                   for k in range(n) for cuts in itertools.combinations(range(1, n), k))
        assert cost(runs) == best, (lengths, pass_tokens, runs)
    assert prefill_buckets([13, 16, 18, 19, 21, 21, 22, 26, 28, 30, 31, 32, 33, 39, 51, 53],
                           32) == [(0, 7), (7, 13), (13, 16)]
    # 100,001 rows (tests/mechanisms/test_dp_prompt.py's batch): split points are the distinct
    # lengths, at most 256 of them, so this is milliseconds, not 10¹⁰ steps.
    assert prefill_buckets([1] + [4] * 100_000, 32) == [(0, 100_001)]
    many = sorted(rng.integers(1, 3000, 100_000).tolist())
    runs = prefill_buckets(many, 32)
    assert runs[0][0] == 0 and runs[-1][1] == 100_000 and len(runs) < 256
    assert all(a < b and many[a - 1] != many[a] for a, b in runs[1:])


def test_a_prefill_in_several_passes_gives_the_same_tokens(tiny, monkeypatch):
    """The lean forward prefills rows of similar length together (prefill_buckets): with every
    row its own pass, each prompt still gets what it gets alone."""
    from textdp.lm import engine as engine_module
    from textdp.lm.llama import LlamaDecoder

    m = DPPrompt(temperature=60.0, max_new_tokens=8, clip_low=-30.0, clip_high=30.0)
    u = _random.seeded_generator(21).random((len(PROMPTS), 8))
    alone = [_engine(tiny, batch_size=1).generate([p], max_new_tokens=8,
                                                  sampler=_sampler(m, u[i:i + 1]))[0]
             for i, p in enumerate(PROMPTS)]
    passes = []
    real = LlamaDecoder.prefill
    monkeypatch.setattr(LlamaDecoder, "prefill", lambda self, cache, start, prompts, prefix=None: (
        passes.append(len(prompts)), real(self, cache, start, prompts, prefix))[1])
    monkeypatch.setattr(engine_module, "PREFILL_PASS_TOKENS", 0)
    got = _engine(tiny, batch_size=12, backend="llama").generate(
        PROMPTS, max_new_tokens=8, sampler=_sampler(m, u))
    assert got == alone and len(passes) > 3


@pytest.mark.parametrize("backend", ["llama", "transformers"])
def test_a_shared_prefix_computed_once_gives_the_same_tokens(tiny, backend):
    """The prompts' common prefix (DP-Prompt's template) runs through the model once and its keys
    and values are reused (Engine._shared_prefix): every prompt gets the tokens it gets alone,
    without the shortcut, at every batch size, and in a later call that shares the prefix; the
    logits the sampler sees are the prompt's own, to float32 rounding."""
    head = [3, 14, 15, 9, 26, 5, 35, 8, 9, 7]  # 10 tokens, longer than MIN_SHARED_PREFIX
    prompts = [head + p for p in PROMPTS]
    m = DPPrompt(temperature=60.0, max_new_tokens=12, clip_low=-30.0, clip_high=30.0)
    u = _random.seeded_generator(4).random((len(prompts), 12))
    alone = [_engine(tiny, batch_size=1, share_prefix=False, backend=backend).generate(
        [p], max_new_tokens=12, sampler=_sampler(m, u[i:i + 1]))[0]
        for i, p in enumerate(prompts)]
    assert len({tuple(r) for r in alone}) > 6  # the prompts' own tokens matter
    for size, refill in ((1, 1), (3, 1), (5, 2), (12, 1)):
        engine = _engine(tiny, batch_size=size, refill=refill, share_prefix=True, backend=backend)
        assert engine.generate(prompts, max_new_tokens=12, sampler=_sampler(m, u)) == alone
        assert engine._prefix is not None and len(engine._prefix[0]) == len(head)
        # The kept prefix serves a later call (here: one prompt, which alone shares nothing).
        again = engine.generate(prompts[1:2], max_new_tokens=12, sampler=_sampler(m, u[1:2]))
        assert again == alone[1:2]
    engine = _engine(tiny, batch_size=4, share_prefix=True, backend=backend)
    seen = []
    engine._draw = lambda sampler, logits, rows, steps: (
        seen.append((logits.double().numpy(), rows.copy())), np.zeros(len(rows), np.int64))[1]
    engine.generate(prompts, max_new_tokens=1, sampler=None)
    assert sum(len(r) for _, r in seen) == len(prompts)
    for logits, rows in seen:
        np.testing.assert_allclose(logits, _logits(tiny, [prompts[r] for r in rows]), rtol=0,
                                   atol=1e-4)


def test_the_lean_forward_gives_the_models_logits_and_tokens(tiny):
    """textdp.lm.llama's forward (prefill, then steps through its slot cache) gives the logits of
    the transformers model run on the whole sequence, and the engine on it draws the tokens the
    transformers path draws, at every batch size."""
    import torch

    from textdp.lm.llama import LlamaDecoder

    decoder = LlamaDecoder.from_model(tiny.model)
    assert decoder is not None
    prompts, extra = PROMPTS[:5], [[4, 9, 2], [63, 0, 5], [1, 1, 1], [7, 8, 9], [30, 20, 10]]
    with torch.inference_mode():
        cache = decoder.new_cache(6, 20)
        got = [decoder.prefill(cache, 1, prompts).double().numpy()]
        cache.move(5, 0)  # compaction: the last row's slot moves to the front
        order = [4, 0, 1, 2, 3]
        for j in range(3):
            tokens = torch.tensor([extra[r][j] for r in order])
            got.append(decoder.step(cache, 5, tokens).double().numpy()[np.argsort(order)])
    for j, logits in enumerate(got):
        np.testing.assert_allclose(logits, _logits(tiny, [p + extra[r][:j]
                                                          for r, p in enumerate(prompts)]),
                                   rtol=0, atol=1e-4)
    m = DPPrompt(temperature=60.0, max_new_tokens=20, clip_low=-30.0, clip_high=30.0)
    u = _random.seeded_generator(12).random((len(PROMPTS), 20))
    want = _engine(tiny, batch_size=5, backend="transformers").generate(
        PROMPTS, max_new_tokens=20, sampler=_sampler(m, u))
    for size in (1, 4, 12):
        assert _engine(tiny, batch_size=size, backend="llama").generate(
            PROMPTS, max_new_tokens=20, sampler=_sampler(m, u)) == want


def test_a_model_the_lean_forward_does_not_reproduce_uses_transformers(tiny):
    import transformers

    from textdp.lm import LanguageModel
    from textdp.lm.llama import LlamaDecoder

    config = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=1, mlp_bias=True)
    other = LanguageModel(model=transformers.LlamaForCausalLM(config).eval(),
                          tokenizer=tiny.tokenizer)
    assert LlamaDecoder.from_model(other.model) is None
    engine = _engine(other, batch_size=2)
    assert len(engine.generate([[5, 6], [7]], max_new_tokens=2,
                               sampler=_sampler(DPPrompt(temperature=1.0), np.full((2, 2), 0.5)))) == 2
    assert engine._decoder is None
    with pytest.raises(ValueError, match="backend llama"):
        _engine(other, backend="llama").generate(
            [[5]], max_new_tokens=1, sampler=_sampler(DPPrompt(temperature=1.0), np.zeros((1, 1))))
    with pytest.raises(ValueError, match="backend must be"):
        _engine(tiny, backend="onnx")


def test_seeded_paraphrases_do_not_depend_on_the_batch_size(tiny):
    from textdp.lm import Paraphraser

    texts = [" ".join(f"w{(7 * i + j) % 60}" for j in range(1 + i % 5)) for i in range(10)]
    kw = {"temperature": 20.0, "max_new_tokens": 12, "clip_low": -30.0, "clip_high": 30.0,
          "template": "{document}"}
    outs = {tuple(Paraphraser(model=tiny, seed=9, batch_size=b, **kw).run(texts))
            for b in (1, 2, 3, 16)}
    assert len(outs) == 1
    other = Paraphraser(model=tiny, seed=10, batch_size=3, **kw).run(texts)
    assert list(outs.pop()) != other


def test_progress_counts_every_prompt_once(tiny):
    m = DPPrompt(temperature=60.0, max_new_tokens=8, clip_low=-30.0, clip_high=30.0)
    seen = []
    _engine(tiny, batch_size=3).generate(
        PROMPTS, max_new_tokens=8, sampler=_sampler(m, np.full((len(PROMPTS), 8), 0.5)),
        progress=seen.append)
    assert sum(seen) == len(PROMPTS) and all(s > 0 for s in seen)


def test_a_sampler_that_breaks_the_contract_is_refused(tiny):
    class Bad:
        def sample(self, logits, rows, steps):
            return np.full(len(rows), logits.shape[1])  # one past the vocabulary

    with pytest.raises(ValueError, match="one token id per row"):
        _engine(tiny).generate([[5, 6]], max_new_tokens=2, sampler=Bad())


def test_the_sampler_sees_float64_logits_rows_and_steps(tiny):
    calls = []

    class Spy:
        def sample(self, logits, rows, steps):
            calls.append((logits.dtype, logits.shape, rows.tolist(), steps.tolist()))
            return np.full(len(rows), 5)

    _engine(tiny, batch_size=8).generate([[5, 6], [7]], max_new_tokens=3, sampler=Spy())
    assert all(c[0] == np.float64 and c[1][1] == 64 for c in calls)
    assert [sorted(c[2]) for c in calls] == [[0, 1]] * 3
    assert [c[3] for c in calls] == [[0, 0], [1, 1], [2, 2]]


# --- the law of every token, through the engine ------------------------------------------------
def _two_step_law(tiny, prompt, params):
    """Closed form of the first two tokens: category (a, b) with P(a)·P(b | a) for a ≠ EOS, and
    (EOS,) with P(EOS): index a·64 + b, and 64·64 for a first-step EOS."""
    law = DPPrompt(**params)
    p1 = np.exp(law.log_probabilities(_logits(tiny, [prompt])[0]))
    p2 = np.exp(law.log_probabilities(_logits(tiny, [prompt + [a] for a in range(64)])))
    joint = (p1[:, None] * p2).ravel()
    joint[EOS * 64:(EOS + 1) * 64] = 0.0
    return np.append(joint, p1[EOS])


def _two_step_counts(tiny, prompts, params, n, seed):
    from textdp.lm import DPPromptSampler

    m = DPPrompt(**params)
    u = _random.seeded_generator(seed).random((len(prompts), 2))
    rows = _engine(tiny, batch_size=512, refill=64, threads=1).generate(
        prompts, max_new_tokens=2, sampler=DPPromptSampler(m, u))
    cats = [r[0] * 64 + r[1] if len(r) == 2 else 64 * 64 for r in rows[:n]]
    return np.bincount(cats, minlength=64 * 64 + 1)


@pytest.mark.statistical
def test_two_token_law_through_continuous_batching_and_a_wrong_temperature_is_rejected(
        tiny, chisquare_merged):
    """χ² of 20,000 two-token outputs against P(a)·P(b | a), P = softmax(clip(ℓ)/T) of the model's
    logits (Utpala et al. 2023, Thm. 1), drawn by the sampler Paraphraser uses (the law in torch
    float64 on the engine's fast path; the numpy law through the engine is tested in
    tests/mechanisms/test_dp_prompt.py), generated at batch 512 with refills every 64 free rows
    (cache merges, row drops) among prompts of another length; the same run at T × 1.1 must
    reject (measured on the lean forward, n = 20,000: p = 0.34 and 0.64 for seeds 7 and 17 of
    the right law, p = 5.6e-19 at T × 1.1 and 6e-5 at T × 1.05). One torch thread (``_engine``):
    ≈ 3 s instead of 26 s on a quiet machine, the same draws."""
    prompt = [5, 9, 17, 3]
    lo, hi = np.quantile(_logits(tiny, [prompt])[0], [0.2, 0.9])
    params = {"clip_low": float(lo), "clip_high": float(hi), "max_new_tokens": 2,
              "temperature": float((hi - lo) / 4)}
    probs = _two_step_law(tiny, prompt, params)
    n = 20_000
    prompts = [prompt] * n + [[8, 2]] * 300 + [[5, 9, 17, 3, 22, 40]] * 300  # mixed lengths
    assert chisquare_merged(_two_step_counts(tiny, prompts, params, n, 7), probs) > ALPHA
    wrong = {**params, "temperature": params["temperature"] * 1.1}
    assert chisquare_merged(_two_step_counts(tiny, prompts, wrong, n, 8), probs) < ALPHA


def test_the_torch_law_draws_what_the_numpy_law_draws():
    """The fast path computes the reference's steps in the same order: on 3,000 rows of random
    logits (±inf entries, rows clipped flat, u at 0 and 1 − 2⁻⁵³, T from 0.01 to 50) every token
    is the one :func:`sample_tokens` draws."""
    import torch

    from textdp.lm import torch_sample_tokens
    from textdp.mechanisms.prompt import sample_tokens

    rng = _random.public_generator(5)
    for trial in range(30):
        x = rng.normal(rng.uniform(-5, 20), rng.uniform(0.5, 10), (100, 257))
        x[::7, rng.integers(0, 257)] = np.inf
        x[3, :] = -np.inf
        u = rng.random(100)
        u[0], u[1] = 0.0, 1 - 2.0**-53
        lo, hi = sorted(rng.uniform(-10, 30, 2))
        t = float(np.exp(rng.uniform(np.log(0.01), np.log(50))))
        want = sample_tokens(x, u, lo, hi, t)
        got = torch_sample_tokens(torch.from_numpy(x), u, lo, hi, t).numpy()
        assert np.array_equal(want, got), trial
    with pytest.raises(ValueError, match="NaN"):
        torch_sample_tokens(torch.tensor([[0.0, float("nan")]], dtype=torch.float64), [0.5],
                            -1.0, 1.0, 1.0)


# --- model loading, devices, the per-process cache -----------------------------------------------
def test_converted_cache_is_built_once_atomically(tmp_path):
    from textdp.lm.model import converted_cache

    calls = []

    def build(into):
        calls.append(into)
        (into / "weights").write_text("w")

    first = converted_cache("k1", build, root=tmp_path)
    again = converted_cache("k1", build, root=tmp_path)
    assert first == again == tmp_path / "lm" / "k1" and len(calls) == 1
    assert (first / "weights").read_text() == "w"

    def broken(into):
        (into / "half").write_text("x")
        raise RuntimeError("killed mid-conversion")

    with pytest.raises(RuntimeError):
        converted_cache("k2", broken, root=tmp_path)
    assert sorted(p.name for p in (tmp_path / "lm").iterdir()) == ["k1"]  # nothing partial
    (tmp_path / "ro").write_text("a file where the cache directory should be")
    assert converted_cache("k3", build, root=tmp_path / "ro") is None  # unwritable: no cache


def test_devices_are_checked(tiny):
    import torch

    from textdp.lm import resolve_device

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="auto, cpu or cuda"):
        resolve_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda")


def test_engines_and_models_are_shared_per_process(tmp_path, tiny):
    from textdp.lm import get_engine, shared_model

    tiny.model.save_pretrained(tmp_path / "m")
    tiny.tokenizer.save_pretrained(tmp_path / "m")
    a = get_engine(tmp_path / "m", device="cpu")
    assert get_engine(tmp_path / "m", device="cpu") is a
    assert shared_model(tmp_path / "m") is a.lm is shared_model(str(tmp_path / "m") + "/")
    assert get_engine(tiny, device="cpu").lm is tiny
