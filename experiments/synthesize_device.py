"""DP fine-tuning and DP-Prompt on a lent GPU (issues 32 and 38): the device's figures, and the
privacy-in-practice checks of the synthetic tickets, computed here.

The device run (``benchmarks/device_session.sh``: ``device_lm.py`` and ``device_finetune.py``,
document and person level) saved its figures and outputs under
``docs/results/synthesize_device/``. This script reads them, regenerates the same tickets (the
generator and seeds of ``device_finetune.py``), and adds what the device could not do without
spaCy and MiniLM: the output screen (entities and identifiers the default recognisers find) and
issue 32's checks (:func:`textdp.audit.practice.practice_checks`: names and identifiers of the
originals — the generator's ground truth — found in the output; 8-word sequences that occur in
exactly one original; synthetic tickets closer, by MiniLM cosine, to an original than that
original's nearest other original). Canaries need a run with canaries inserted: not done here.

    python -m experiments.synthesize_device            # writes docs/results/synthesize_device.md
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import zstandard

ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "docs" / "results" / "synthesize_device"
PAGE = ROOT / "docs" / "results" / "synthesize_device.md"
RUNS = {"document": ("device_finetune.json", "ft_outputs.json.zst"),
        "person": ("device_finetune_customer.json", "ft_customer_outputs.json.zst")}


def _outputs(name: str) -> dict[str, list[str]]:
    return json.loads(zstandard.ZstdDecompressor().decompress((DIR / name).read_bytes()))["outputs"]


def _interval(k: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson 95% interval of k successes in n."""
    from scipy import stats

    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def run() -> dict[str, Any]:
    from experiments.synthesize_results import ground_truth
    from textdp.audit.practice import practice_checks
    from textdp.datasets.tickets import generate_tickets
    from textdp.encoders import SBERT
    from textdp.synthesis.screen import build_masker

    tickets = generate_tickets(12_000, seed=0, describe_issue=True)
    private = [t.text for t in tickets[:10_000]]
    identifiers = ground_truth(tickets[:10_000])
    encoder = SBERT()
    cache = Path("/tmp/textdp_synthesize_device_originals.npy")  # reruns skip 10,000 encodings
    if cache.is_file():
        original_embeddings = np.load(cache)
    else:
        original_embeddings = np.asarray(encoder(private))
        np.save(cache, original_embeddings)
    masker = build_masker()
    results: dict[str, Any] = {}
    for unit, (figures, outputs) in RUNS.items():
        r = json.loads((DIR / figures).read_text(encoding="utf-8"))
        out = _outputs(outputs)
        checks = practice_checks(private, out["synthetic"], identifiers=identifiers,
                                 original_embeddings=original_embeddings,
                                 synthetic_embeddings=np.asarray(encoder(out["synthetic"])))
        screen = {name: dict(sorted(_kinds(masker, out[name]).items()))
                  for name in ("synthetic", "baseline")}
        results[unit] = {"figures": r, "practice": checks.to_dict(), "screen": screen}
    return results


def _kinds(masker: Any, texts: list[str]) -> dict[str, int]:
    from collections import Counter

    return Counter(kind for spans in masker.find(texts) for _, _, kind in spans)


def _z(a: float, b: float, n: int) -> float:
    p = (a + b) / 2
    return (a - b) / math.sqrt(2 * p * (1 - p) / n)


def page(results: dict[str, Any]) -> str:
    lm = json.loads((DIR / "device_lm.json").read_text(encoding="utf-8"))
    d = lm["dp_prompt"]
    lines = ["# DP synthetic tickets and DP-Prompt on a lent GPU (NVIDIA H200)", "",
             "One session's device run, 2026-11-28 (`benchmarks/device_session.sh`; figures "
             "and outputs in `docs/results/synthesize_device/`; this page by `python -m "
             "experiments.synthesize_device`). Torch " + lm["torch"] + ", transformers " +
             lm["transformers"] + ", SmolLM2-135M-Instruct (the packaged GGUF, de-quantized to "
             "float32). Entities and identifiers of the private tickets were masked before, on "
             "the 2-core CPU machine, by textdp's own stage with its defaults "
             "(`benchmarks/device_premask.py`; the device image has no spaCy); the outputs were "
             "screened and checked here. One run of each: no repeat, so no run-to-run spread.",
             "", "## DP fine-tuning then sampling: 10,000 tickets → 2,000, ε = 4, δ = 1e-6", "",
             "| unit | ε spent | steps | σ | q | DP-SGD s | sampling s | accuracy synthetic "
             "[95%] | originals | zero-private baseline | synthetic / originals | z vs baseline |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for unit, res in results.items():
        r = res["figures"]
        a, n = r["accuracy"], r["test"]
        lo, hi = _interval(round(a["synthetic"] * n), n)
        lines.append(
            f"| {unit} | {r['epsilon']:.4f} | {r['steps']} | {r['noise_multiplier']:.4g} | "
            f"{r['sampling_probability']:.4g} | {r['phases_s']['DP fine-tuning (steps)']} | "
            f"{r['phases_s']['sampling']} | {a['synthetic']:.3f} [{lo:.3f}, {hi:.3f}] | "
            f"{a['original']:.3f} | {a['baseline']:.3f} | {r['ratio_to_original']:.3f} | "
            f"{_z(a['synthetic'], a['baseline'], n):.1f} |")
    lines += ["", "Accuracy: TF-IDF + logistic regression trained on the 2,000 synthetic "
              "tickets (or 2,000 originals, or the baseline's 2,000), tested on 2,000 held-out "
              "originals. The zero-private-data baseline is the same model, prompts and sampler "
              "without training (ε = 0). The issue's goal (≥ 0.85 of the originals' accuracy and "
              "above the baseline by a two-proportion test) is **met at the document level "
              "(0.930, z ≈ 12.8)** and **not at the person level (0.824)**, where each of about "
              "3,900 customers is one unit (fewer, larger units: fewer steps, more noise). "
              "Time: DP-SGD dominates (≈ 200 s for 79 steps of an expected 512 tickets); the "
              "issue's GPU goal (≤ 3 minutes for 10,000 → 2,000, for the default method) is not "
              "shown by this run: fine-tuning took "
              f"{results['document']['figures']['synthesize_s']} s plus the masking "
              "(77 CPU-s on the loaded CPU machine), and Private Evolution was not run on the "
              "device (its encoder, MiniLM, did not fit in the calls' carry beside the model).",
              "", "## Privacy in practice (computed here, on the device's outputs)", "",
              "| unit | names or identifiers of the originals found | unique 8-grams of one "
              "original found | synthetic closer than the original's nearest other original |"
              " entities found by the output screen (synthetic / baseline) |",
              "|---|---|---|---|---|"]
    for unit, res in results.items():
        p = res["practice"]
        lines.append(f"| {unit} | {p['identifiers_found']} of {p['identifiers_checked']:,} | "
                     f"{p['unique_ngrams_found']} | {p['closer_than_neighbour']} of {p['originals']:,} "
                     f"({100 * p['closer_fraction']:.2f}%) | "
                     f"{sum(res['screen']['synthetic'].values()):,} / "
                     f"{sum(res['screen']['baseline'].values()):,} |")
    lines += ["", "The entities the screen finds are the model's inventions as much as anything: "
              "the zero-private baseline, which saw no private ticket, holds as many. What the "
              "checks above test is whether they are the originals' (the generator's ground truth:"
              " full names, e-mails, phones, order numbers, streets).", "",
              "## DP-Prompt and the engine on the GPU (issue 38)", "",
              "| batch | prompts | tokens | seconds | tokens/s | peak MiB |", "|---|---|---|---|---|---|"]
    lines += [f"| {t['batch']} | {t['prompts']} | {t['tokens']:,} | {t['seconds']} | "
              f"{t['tokens_per_s']:,} | {t['peak_mib']:,} |" for t in lm["throughput"]]
    lines += ["", f"DP-Prompt (T = 0.5, clip [10, 30], 64 new tokens) on {d['tickets']:,} "
              f"tickets: {d['seconds']} s on the device ({d['tokens_per_s']:,} tokens/s), after "
              f"masking on the CPU machine ({d['masked_elsewhere']['cpu_s']} CPU-s for "
              f"{d['masked_elsewhere']['words']:,} words). Model load in a fresh process: cold "
              f"{lm['load']['cold_s']} s (de-quantizing the GGUF), warm {lm['load']['warm_s']} s."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--from-results", action="store_true", help="redo the page from saved checks")
    p.add_argument("--out", type=Path, default=PAGE, help="where the page goes")
    a = p.parse_args(argv)
    saved = DIR / "checks.json"
    if a.from_results:
        results = json.loads(saved.read_text(encoding="utf-8"))
    else:
        results = run()
        saved.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n",
                         encoding="utf-8")
    a.out.write_text(page(results), encoding="utf-8")
    print(a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
