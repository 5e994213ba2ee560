"""DP synthetic text (``textdp.synthesize``) on the default models: seconds per round.

Private Evolution with SmolLM2-135M-Instruct (the packaged GGUF, float32 on the CPU) and
all-MiniLM-L6-v2, on generated support tickets (``textdp.datasets.tickets``, issues described so
labels are learnable) with their issue labels. Environment: ``TEXTDP_BENCH_SYNTH_DOCS`` (default
200 private tickets), ``TEXTDP_BENCH_SYNTH_N`` (default 50 synthetic), ``TEXTDP_BENCH_SYNTH_ROUNDS``
(default 3), ε = 4. Prints the model and encoder load time, the time of the first population and
of each round (voting + selection + variations), the generations and tokens, and the
extrapolation of the measured time per generated document to 10,000 → 2,000.

Run: ``PYTHONPATH=src python -m benchmarks.bench_synthesize``.
"""

from __future__ import annotations

import os
import resource
import time


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run() -> str:
    import textdp
    from textdp.datasets.tickets import generate_tickets
    from textdp.encoders import SBERT
    from textdp.lm import load_model

    docs = int(os.environ.get("TEXTDP_BENCH_SYNTH_DOCS", "200"))
    n = int(os.environ.get("TEXTDP_BENCH_SYNTH_N", "50"))
    rounds = int(os.environ.get("TEXTDP_BENCH_SYNTH_ROUNDS", "3"))
    tickets = generate_tickets(docs, seed=0, describe_issue=True)
    t0 = time.perf_counter()
    lm, encoder = load_model(), SBERT()
    encoder(["warm up"])
    load = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), _cpu()
    result = textdp.synthesize([t.text for t in tickets], labels=[t.issue for t in tickets],
                               epsilon=4.0, n=n, rounds=rounds, seed=0, model=lm,
                               encoder=encoder, document_kind="customer support ticket")
    total, cpu = time.perf_counter() - t0, _cpu() - c0
    report = result.report
    lines = [f"{docs} private tickets → {n} synthetic, {rounds} rounds, ε = 4: "
             f"{total:.1f} s wall, {cpu:.1f} s CPU (models loaded before: {load:.1f} s); "
             f"load average {os.getloadavg()[0]:.1f}"]
    for r in report["mechanism"]["rounds"]:
        lines.append(f"- round {r['round']}: {r['seconds']:.1f} s, {r['generated']} generations, "
                     f"{r['candidates']} candidates voted on")
    counts = report["counts"]
    first = total - sum(r["seconds"] for r in report["mechanism"]["rounds"])
    per_doc = total / max(counts["generations"], 1)
    lines.append(f"- first population and masking/embedding: {first:.1f} s")
    lines.append(f"- {counts['generations']} generations, {counts['generated_tokens']} tokens: "
                 f"{per_doc:.2f} s per generated document")
    # 10,000 → 2,000 with the same settings: about n·(1 + rounds·(1 − kept share)) generations;
    # measured kept share here.
    scale = 2000 / n
    lines.append(f"- extrapolated to 10,000 → 2,000 (same rounds): "
                 f"{counts['generations'] * scale * per_doc / 60:.0f} min of generation")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
