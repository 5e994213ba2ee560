"""textdp's generation engine vs Hugging Face ``generate(do_sample=True)``, side by side (issue 38).

Same model object (the packaged SmolLM2-135M-Instruct, float32), same prompt ids (DP-Prompt's
template around VADER sentences, in the model's chat template), same temperature T = 0.5 with no
top-k / top-p on HF's side, at most ``MAX_NEW_TOKENS`` new tokens. textdp applies DP-Prompt's law
(clip [10, 30], then T) in float64 to the logits its engine returns; HF samples softmax(ℓ/T) in
float32 with torch's RNG. Both count the tokens each prompt keeps (up to and including its first
EOS); HF's batch also computes padding for rows that already stopped, which is part of its cost.
Runs alternate (HF, textdp, HF, textdp, …: ``TEXTDP_BENCH_LM_REPEATS`` pairs, default 2) and
the fastest of each is kept, so load from other processes hits both alike. Model load is
measured in fresh processes: cold (an empty cache directory: de-quantize the GGUF and write the
safetensors copy) and warm (read the copy), imports included (wall seconds, and the process's
CPU seconds from its start, interpreter included); the warm load imports torch, tokenizers and
jinja2, not transformers (``textdp.lm.lean``), which the section says.
``python -m benchmarks.bench_lm_engine load`` measures only the loads.

``TEXTDP_BENCH_LM_BATCHES`` (default ``1,16,64``) and ``TEXTDP_BENCH_LM_TOKENS`` (default 32)
set the sizes (batch 1 runs 4 prompts one at a time; batch b runs b prompts);
``TEXTDP_BENCH_LM_LOAD=0`` skips the load timings; ``TEXTDP_BENCH_LM_AB=1`` also times the engine
without its shared prefix (``share_prefix=False``) in the same alternation;
``TEXTDP_BENCH_LM_BACKEND`` (``auto``, ``llama`` or ``transformers``) picks the engine's forward.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

T = 0.5
MAX_NEW_TOKENS = int(os.environ.get("TEXTDP_BENCH_LM_TOKENS", "32"))
BATCHES = tuple(int(b) for b in os.environ.get("TEXTDP_BENCH_LM_BATCHES", "1,16,64").split(","))
REPEATS = int(os.environ.get("TEXTDP_BENCH_LM_REPEATS", "2"))
#: 0: skip the load timings; warm: only warm loads, from the user's cache (no cold conversion).
LOAD = os.environ.get("TEXTDP_BENCH_LM_LOAD", "1")
#: 1: the law in numpy (DPPrompt.sample) instead of the torch path Paraphraser uses.
NUMPY_LAW = os.environ.get("TEXTDP_BENCH_LM_NUMPY_LAW", "0") == "1"
#: 1: also textdp's engine without the shared prefix (Engine(share_prefix=False)), alternating.
AB = os.environ.get("TEXTDP_BENCH_LM_AB", "0") == "1"
BACKEND = os.environ.get("TEXTDP_BENCH_LM_BACKEND", "auto")
_LOAD = ("import time; t0 = time.perf_counter(); import sys; from textdp.lm import load_model; "
         "lm = load_model(); print(time.perf_counter() - t0, time.process_time(), "
         "int('transformers' in sys.modules))")


def _load_once(env: dict[str, str] | None) -> tuple[float, float, bool]:
    out = subprocess.run([sys.executable, "-c", _LOAD], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), float(out[1]), out[2] == "1"


def load_times() -> list[tuple[float, float, bool]]:
    """(wall s, CPU s, transformers imported) of ``load_model()`` in fresh processes, imports
    included: cold, warm, warm again (cold is NaN with ``TEXTDP_BENCH_LM_LOAD=warm``: the
    user's cache, converted already)."""
    if LOAD == "warm":
        return [(float("nan"), float("nan"), True), _load_once(None), _load_once(None)]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TEXTDP_CACHE": cache}
        return [_load_once(env) for _ in range(3)]


def load_line(times: list[tuple[float, float, bool]]) -> str:
    (cold, cold_cpu, _), *warm = times
    said = " and ".join(f"{w:.2f} s ({c:.2f} CPU-s)" for w, c, _ in warm)
    imported = "imports transformers" if any(t for _, _, t in warm) else \
        "no transformers imported"
    return (f"Model load in a fresh process (imports included): cold {cold:.1f} s ({cold_cpu:.1f} "
            f"CPU-s: de-quantize the GGUF, write the safetensors copy), warm {said} (read the "
            f"memory-mapped copy; {imported}).")


def _kept(rows, eos: set[int]) -> int:
    """Tokens up to and including the first EOS of each row."""
    total = 0
    for r in rows:
        ends = [i for i, t in enumerate(r) if t in eos]
        total += ends[0] + 1 if ends else len(r)
    return total


def _hf(lm, prompts, batch: int) -> tuple[float, int]:
    import torch

    model, eos = lm.model, lm.eos_ids()
    pad = lm.pad_id()
    t0, kept = time.perf_counter(), 0
    with torch.inference_mode():
        for i in range(0, len(prompts), batch):
            chunk = prompts[i:i + batch]
            width = max(len(p) for p in chunk)
            ids = torch.tensor([[pad] * (width - len(p)) + p for p in chunk])
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk])
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                                 temperature=T, top_k=0, top_p=1.0, max_new_tokens=MAX_NEW_TOKENS,
                                 min_new_tokens=0, pad_token_id=pad, eos_token_id=sorted(eos))
            kept += _kept(out[:, width:].tolist(), eos)
    return time.perf_counter() - t0, kept


def _textdp(lm, prompts, batch: int, share_prefix: bool = True) -> tuple[float, int]:
    from textdp.lm import DPPromptSampler, Engine, UniformSampler
    from textdp.mechanisms.prompt import DPPrompt

    mechanism = DPPrompt(temperature=T, max_new_tokens=MAX_NEW_TOKENS)
    engine = Engine(lm, device="cpu", batch_size=batch, share_prefix=share_prefix,
                    backend=BACKEND)
    t0 = time.perf_counter()
    u = mechanism.draw(len(prompts) * MAX_NEW_TOKENS).reshape(len(prompts), MAX_NEW_TOKENS)
    sampler = UniformSampler(mechanism.sample, u) if NUMPY_LAW else DPPromptSampler(mechanism, u)
    rows = engine.generate(prompts, max_new_tokens=MAX_NEW_TOKENS, sampler=sampler)
    return time.perf_counter() - t0, _kept(rows, lm.eos_ids())


def run() -> str:
    import torch
    import transformers

    from benchmarks.common import vader_texts
    from textdp.lm import load_model
    from textdp.mechanisms.prompt import DEFAULT_TEMPLATE

    load_before = os.getloadavg()
    loads = load_times() if LOAD != "0" else [(float("nan"), float("nan"), False)] * 3
    lm = load_model()
    texts = vader_texts(min_words=40 * max(BATCHES))[:max(BATCHES) * 2]
    prompts = lm.prompt_ids(texts, DEFAULT_TEMPLATE)
    _textdp(lm, prompts[:2], 2), _hf(lm, prompts[:2], 2)  # warm-up both paths
    rows = []
    for batch in BATCHES:
        docs = prompts[:4] if batch == 1 else prompts[:batch]
        hf, ours, plain = [], [], []
        for _ in range(REPEATS):
            hf.append(_hf(lm, docs, batch))
            ours.append(_textdp(lm, docs, batch))
            if AB:
                plain.append(_textdp(lm, docs, batch, share_prefix=False))
        h = max(k / s for s, k in hf)
        o = max(k / s for s, k in ours)
        # Each repeat's own ratio (its runs back to back): the median says how stable it is.
        med = statistics.median((k2 / s2) / (k1 / s1)
                                for (s1, k1), (s2, k2) in zip(hf, ours, strict=True))
        ab = ""
        if AB:
            p = max(k / s for s, k in plain)
            ab = f" {p:.1f} ({p / h:.2f}×) |"
        rows.append(f"| {batch} | {len(docs)} | {h:.1f} | {o:.1f} | **{o / h:.2f}×** | "
                    f"{med:.2f}× |{ab} "
                    f"{sum(k for _, k in hf) // REPEATS} / {sum(k for _, k in ours) // REPEATS} |")
        print(rows[-1], file=sys.stderr, flush=True)  # as it goes: a loaded machine is slow
    load_after = os.getloadavg()
    shared = next((j for j in range(min(map(len, prompts)))
                   if len({p[j] for p in prompts}) > 1), 0)
    return "\n".join([
        f"Model: {lm.name} (sha256 {lm.sha256[:12]}…), float32; torch {torch.__version__}, "
        f"transformers {transformers.__version__}, {torch.get_num_threads()} threads; "
        f"T = {T}, max_new_tokens {MAX_NEW_TOKENS}, prompts: DP-Prompt's template around "
        f"VADER sentences ({sum(map(len, prompts)) / len(prompts):.0f} tokens on average, "
        f"the first {shared} shared), best of "
        f"{REPEATS} alternating runs; textdp's engine: backend {BACKEND}, shared prefix on; "
        f"its law in {'numpy' if NUMPY_LAW else 'torch'} "
        f"float64. Load average before / after: "
        f"{load_before[0]:.2f} / {load_after[0]:.2f} (shared machine).",
        "",
        load_line(loads),
        "",
        "| batch | prompts | HF generate tokens/s | textdp engine tokens/s | ratio (best of each) "
        "| median of the repeats' ratios | "
        + ("textdp with share_prefix=False tokens/s (ratio) | " if AB else "")
        + "tokens kept (HF / textdp, per run) |",
        "|---|---|---|---|---|---|---|" + ("---|" if AB else ""),
        *rows,
    ])


if __name__ == "__main__":
    if sys.argv[1:] == ["load"]:
        before = os.getloadavg()
        line = load_line(load_times())
        print(f"{line} Load average before / after: {before[0]:.2f} / {os.getloadavg()[0]:.2f}.")
    else:
        print(run())
