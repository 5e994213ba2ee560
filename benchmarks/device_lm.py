"""One call that measures the generation engine on a device (issue 38): a session with a lent GPU
runs it once; it runs on the CPU too with small sizes.

    python benchmarks/device_lm.py                                # auto: the GPU when present
    python benchmarks/device_lm.py --device cpu --batches 1,4 --tickets 8 --max-new-tokens 8

It prints a Markdown section (paste into BENCHMARKS.md) and, with ``--json PATH``, writes the same
figures as JSON: the device; model load (cold: de-quantize the GGUF and write the safetensors copy
into an empty cache directory; warm: read the copy; each in a fresh process, imports included);
tokens/s at each batch size (``--prompts-per-row`` prompts per row of the batch, so finished
rows are refilled: continuous batching), DP-Prompt's law applied to every token (T = 0.5,
clip [10, 30], through DP-Prompt's own sampler: the law in float64 on the
model's device); peak memory (CUDA: ``torch.cuda.max_memory_allocated``; CPU: the process's
maximum resident set); and DP-Prompt (``Paraphraser``, the default template) on ``--tickets``
synthetic support tickets, seeded. Exit status 0 when every step ran.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the working tree's textdp when run as a script
sys.path.insert(0, str(ROOT / "benchmarks"))  # device_premask beside this script

T = 0.5
_LOAD = ("import sys, time; t0 = time.perf_counter(); from textdp.lm import get_engine; "
         "get_engine(None, device=sys.argv[1]).load(); "
         "print(time.perf_counter() - t0)")


def _load_times(device: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        path = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "TEXTDP_CACHE": cache, "PYTHONPATH": path}
        times = [float(subprocess.run([sys.executable, "-c", _LOAD, device], env=env, check=True,
                                      capture_output=True, text=True).stdout.split()[-1])
                 for _ in range(2)]
    return {"cold_s": round(times[0], 2), "warm_s": round(times[1], 2)}


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def _peak_mib(device: str) -> float:
    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _throughput(engine, prompts, batch: int, new_tokens: int, per_row: int) -> dict[str, float]:
    import torch

    from textdp import _random
    from textdp.lm import Engine
    from textdp.lm.paraphrase import DPPromptSampler
    from textdp.mechanisms.prompt import DPPrompt

    mechanism = DPPrompt(temperature=T, max_new_tokens=new_tokens)
    sized = Engine(engine.lm, device=engine.device, batch_size=batch)
    docs = [prompts[i % len(prompts)] for i in range(batch * per_row)]
    u = _random.seeded_generator(batch).random((len(docs), new_tokens))
    if engine.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    _sync(engine.device)
    t0 = time.perf_counter()
    rows = sized.generate(docs, max_new_tokens=new_tokens,
                          sampler=DPPromptSampler(mechanism, u))  # DP-Prompt's own path
    _sync(engine.device)
    seconds = time.perf_counter() - t0
    tokens = sum(len(r) for r in rows)
    return {"batch": batch, "prompts": len(docs), "tokens": tokens, "seconds": round(seconds, 2),
            "tokens_per_s": round(tokens / seconds, 1),
            "peak_mib": round(_peak_mib(engine.device), 1)}


def _tickets(engine, n: int, new_tokens: int, masked: Path | None,
             outputs: dict[str, list[str]]) -> dict[str, Any]:
    from textdp.datasets.tickets import generate_tickets
    from textdp.lm import Paraphraser
    from textdp.spec import TokenPolicy

    texts = [t.text for t in generate_tickets(n, seed=1)]
    premasked = None
    if masked is not None:  # masked on another machine (device_premask.py): masking off here
        from device_premask import read_masked

        texts, premasked = read_masked(masked, texts)
    runner = Paraphraser(model=engine.lm, seed=1, device=engine.device, temperature=T,
                         max_new_tokens=new_tokens,
                         policy=None if masked is None else TokenPolicy(identifiers=False,
                                                                        entities="none"))
    t0 = time.perf_counter()
    outputs["dp_prompt"] = runner.run(texts)
    _sync(engine.device)
    seconds = time.perf_counter() - t0
    tokens = runner.report()["counts"]["generated_tokens"]
    return {"tickets": n, "batch": runner.batch_size, "seconds": round(seconds, 1),
            "tokens": tokens, "tokens_per_s": round(tokens / seconds, 1),
            "tickets_per_s": round(n / seconds, 2),
            "masked_elsewhere": None if premasked is None else
            {k: premasked[k] for k in ("masked_by_kind", "words", "cpu_s", "wall_s")}}


def _say(figures: dict) -> dict:
    print(figures, file=sys.stderr, flush=True)  # as it goes, in case the call is cut short
    return figures


def _markdown(r: dict) -> str:
    lines = [f"- device: {r['device_name']} (`--device {r['device']}`); torch {r['torch']}, "
             f"transformers {r['transformers']}; {r['threads']} CPU threads; load average "
             f"{r['load_average']}",
             f"- model: {r['model']} (float32), load in a fresh process: cold {r['load']['cold_s']} s,"
             f" warm {r['load']['warm_s']} s",
             f"- T = {T}, clip [10, 30], max_new_tokens {r['max_new_tokens']}",
             "", "| batch | prompts | tokens | seconds | tokens/s | peak MiB |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {t['batch']} | {t['prompts']} | {t['tokens']:,} | {t['seconds']} | "
              f"{t['tokens_per_s']:,} | {t['peak_mib']:,} |" for t in r["throughput"]]
    d = r["dp_prompt"]
    lines += ["", f"DP-Prompt on {d['tickets']:,} tickets (batch {d['batch']}): {d['seconds']} s, "
              f"{d['tokens']:,} tokens, {d['tokens_per_s']:,} tokens/s, {d['tickets_per_s']} "
              "tickets/s."]
    if d.get("masked_elsewhere"):
        m = d["masked_elsewhere"]
        lines += [f"Entities and identifiers were masked before, on another machine "
                  f"(benchmarks/device_premask.py, the defaults): {m['words']:,} words in "
                  f"{m['cpu_s']} CPU-s, {sum(m['masked_by_kind'].values()):,} spans "
                  f"{m['masked_by_kind']}; the seconds above are the model's alone."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--batches", default="1,16,64,256")
    p.add_argument("--prompts-per-row", type=int, default=2)
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--tickets", type=int, default=1000)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--masked", type=Path, default=None,
                   help="the tickets masked elsewhere (device_premask.py prepare): masking off here")
    p.add_argument("--outputs", type=Path, default=None,
                   help="write the paraphrases here (JSON: {'outputs': {'dp_prompt': [...]}})")
    a = p.parse_args(argv)
    import torch
    import transformers

    from textdp.datasets.tickets import generate_tickets
    from textdp.lm import get_engine
    from textdp.mechanisms.prompt import DEFAULT_TEMPLATE

    outputs: dict[str, list[str]] = {}
    load = _say(_load_times(a.device))
    engine = get_engine(None, device=a.device)
    prompts = engine.lm.prompt_ids([t.text for t in generate_tickets(64, seed=2)], DEFAULT_TEMPLATE)
    _throughput(engine, prompts, 2, 4, 1)  # warm-up (CUDA context, kernels)
    result = {
        "device": engine.device, "torch": torch.__version__, "transformers": transformers.__version__,
        "device_name": torch.cuda.get_device_name() if engine.device == "cuda"
        else f"CPU, {os.cpu_count()} cores", "threads": torch.get_num_threads(),
        "model": engine.lm.name, "load": load, "max_new_tokens": a.max_new_tokens,
        "throughput": [_say(_throughput(engine, prompts, int(b), a.max_new_tokens,
                                        a.prompts_per_row)) for b in a.batches.split(",")],
        "dp_prompt": _tickets(engine, a.tickets, a.max_new_tokens, a.masked, outputs),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(_markdown(result))
    if a.json is not None:
        a.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if a.outputs is not None:
        a.outputs.write_text(json.dumps({"outputs": outputs}, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
