"""One call that measures ``textdp synthesize --method finetune`` (DP fine-tuning then sampling,
issue 32) where a GPU is lent; ``--smoke`` runs the same steps on the CPU at a tiny size.

    python benchmarks/device_finetune.py                 # 10,000 tickets → 2,000, ε = 4, δ = 1e-6
    python benchmarks/device_finetune.py --smoke         # CPU: 60 tickets → 8, three steps
    python benchmarks/device_finetune.py --unit customer # user level (each customer a unit)

What it does, with the packaged SmolLM2-135M-Instruct (float32) and seeded randomness:

1. generates ``--tickets`` + ``--test`` support tickets (``textdp.datasets.tickets``, issues
   described so the label is learnable, seed 0); the first ``--tickets`` are the private input,
   the rest are held-out originals for testing;
2. ``textdp.synthesize(..., method="finetune")``: entities masked, LoRA adapters trained by DP-SGD
   at (ε, δ) by the ledger's accountant, ``-n`` tickets sampled through the engine (equal
   quotas per issue) — timed per phase (training steps; sampling);
3. the zero-private-data baseline (ε = 0): the same model, prompts and sampler without training;
4. TF-IDF + logistic regression trained on (a) the synthetic tickets, (b) ``-n`` original
   private tickets, (c) the baseline's, each tested on the held-out originals: accuracy, the
   ratio (a)/(b) against the issue's goal of ≥ 0.85, and a one-sided two-proportion z-test of
   (a) above (c).

It prints a Markdown section (paste into BENCHMARKS.md) and, with ``--json PATH``, writes the same
figures as JSON. Exit status 0 when every step ran (the goals are reported, not asserted).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the working tree's textdp when run as a script
sys.path.insert(0, str(ROOT / "benchmarks"))  # device_premask beside this script

#: --smoke: a few DP-SGD steps of a few tickets (cut to 32 tokens) and a few short samples, so
#: the full-size model runs every step on 2 loaded CPU cores in minutes; the figures mean nothing.
SMOKE = {"tickets": 60, "test": 40, "n": 8, "epochs": 0.2, "train_batch": 4, "max_length": 32,
         "max_new_tokens": 12, "device": "cpu", "epsilon": 8.0, "delta": 1e-4,
         "micro_batch": 4, "gen_batch": 8}


class _Phases:
    """A progress factory that times each phase (from its bar's creation to its close)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, description: str, total: int) -> Any:
        phases, start = self, time.perf_counter()

        class Bar:
            def update(self, k: int = 1) -> None:
                pass

            def close(self) -> None:
                phases.seconds[description] = round(time.perf_counter() - start, 2)
                print(f"{description}: {phases.seconds[description]} s", file=sys.stderr,
                      flush=True)  # as it goes, in case the call is cut short

        return Bar()


def _accuracy(train_texts: list[str], train_labels: list[str], test_texts: list[str],
              test_labels: list[str]) -> float:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1)
    features = vectorizer.fit_transform(train_texts)
    model = LogisticRegression(max_iter=2000).fit(features, train_labels)
    predicted = model.predict(vectorizer.transform(test_texts))
    return float(sum(p == t for p, t in zip(predicted, test_labels, strict=True))
                 / len(test_labels))


def _above(a: float, b: float, n: int) -> float:
    """One-sided p-value of a two-proportion z-test that accuracy a > b (both on n items)."""
    from scipy import stats

    pooled = (a + b) / 2
    se = math.sqrt(max(pooled * (1 - pooled) * 2 / n, 1e-300))
    return float(stats.norm.sf((a - b) / se))


def _baseline(lm: Any, labels: list[str], args: argparse.Namespace, device: str) -> list[str]:
    """The base model from the same label prompts, same sampler settings: nothing private."""
    from textdp.synthesis.finetune import FinetuneEngine, FinetuneSpec, label_quotas
    from textdp.synthesis.prompts import Prompts

    spec = FinetuneSpec(epsilon=args.epsilon, n=args.n, seed=args.seed + 1,
                        prompts=Prompts("customer support ticket"),
                        max_new_tokens=args.max_new_tokens, batch_size=args.gen_batch,
                        device=device)
    return FinetuneEngine()._sample(spec, lm, lm.model, label_quotas(sorted(set(labels)),
                                                                     args.n), device)


def _peak_mib(device: str) -> float:
    import resource

    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import textdp
    from textdp import _random
    from textdp.datasets.tickets import generate_tickets
    from textdp.lm import load_model, resolve_device

    device = resolve_device(args.device)
    tickets = generate_tickets(args.tickets + args.test, seed=0, describe_issue=True)
    private, test = tickets[:args.tickets], tickets[args.tickets:]
    texts, labels = [t.text for t in private], [t.issue for t in private]
    units = ([f"{t.values.get('first_name', '')} {t.values.get('last_name', '')}"
              for t in private] if args.unit == "customer" else None)
    premasked, masking = None, {}
    if args.masked is not None:  # masked on another machine (device_premask.py): off here
        from device_premask import read_masked

        premasked, header = read_masked(args.masked, texts)
        masking = {"identifiers": False, "entities": "none"}
    t0 = time.perf_counter()
    lm = load_model(args.model)
    load_s = time.perf_counter() - t0
    phases = _Phases()
    t0 = time.perf_counter()
    result = textdp.synthesize(
        premasked if premasked is not None else texts, labels=labels, **masking,
        units=units, epsilon=args.epsilon, delta=args.delta, n=args.n,
        seed=args.seed, model=lm, document_kind="customer support ticket",
        max_new_tokens=args.max_new_tokens, batch_size=args.gen_batch, method="finetune",
        finetune={"epochs": args.epochs, "train_batch": args.train_batch,
                  "learning_rate": args.learning_rate, "micro_batch": args.micro_batch,
                  "max_length": args.max_length, "device": device}, progress=phases)
    total_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    baseline = _baseline(lm, labels, args, device)
    baseline_s = time.perf_counter() - t0
    pick = _random.public_generator(args.seed).choice(len(private), size=min(args.n,
                                                      len(private)), replace=False)
    test_texts, test_labels = [t.text for t in test], [t.issue for t in test]
    acc = {"synthetic": _accuracy(result.texts, result.labels, test_texts, test_labels),
           "original": _accuracy([texts[i] for i in pick], [labels[i] for i in pick],
                                 test_texts, test_labels),
           "baseline": _accuracy(baseline, result.labels, test_texts, test_labels)}
    a = result.report["accounting"]
    return {"device": device, "tickets": args.tickets, "test": args.test, "n": args.n,
            "unit": a["unit"], "units": a["units"], "epsilon": a["epsilon_reported"],
            "delta": a["delta"], "steps": a["steps"], "sampling_probability":
            a["sampling_probability"], "noise_multiplier": a["noise_multiplier"],
            "epochs": args.epochs, "train_batch": args.train_batch,
            "learning_rate": args.learning_rate, "max_new_tokens": args.max_new_tokens,
            "model_load_s": round(load_s, 2), "synthesize_s": round(total_s, 2),
            "phases_s": phases.seconds, "baseline_s": round(baseline_s, 2),
            "peak_mib": round(_peak_mib(device), 1), "accuracy": acc,
            "ratio_to_original": acc["synthetic"] / acc["original"] if acc["original"] else None,
            "p_above_baseline": _above(acc["synthetic"], acc["baseline"], len(test)),
            "masked_in_private_input": (result.report["counts"]["masked_in_private_input"]
                                        if premasked is None else header["masked_by_kind"]),
            "masked_elsewhere": None if premasked is None else
            {k: header[k] for k in ("words", "cpu_s", "wall_s")},
            "outputs": {"synthetic": result.texts, "synthetic_labels": result.labels,
                        "baseline": baseline},
            "found_in_output": result.report["screening"]["found_by_kind"],
            "empty_synthetic": result.report["counts"]["empty_synthetic_documents"],
            "examples": list(zip(result.labels[:4], result.texts[:4], strict=True)),
            "load_average": os.getloadavg()[0]}


def markdown(r: dict[str, Any]) -> str:
    acc = r["accuracy"]
    lines = [f"### DP fine-tuning then sampling ({r['device']}): {r['tickets']:,} tickets → "
             f"{r['n']:,} synthetic, ε = {r['epsilon']}, δ = {r['delta']:g}, unit {r['unit']}",
             "",
             f"- DP-SGD: {r['steps']} steps, q = {r['sampling_probability']:.4g}, σ = "
             f"{r['noise_multiplier']:.4g}, clip 1, {r['epochs']} epochs, expected batch "
             f"{r['train_batch']}, Adam lr {r['learning_rate']:g}; LoRA rank 8",
             f"- time: model load {r['model_load_s']} s; synthesize {r['synthesize_s']} s "
             f"(phases: {', '.join(f'{k} {v} s' for k, v in r['phases_s'].items())}); "
             f"baseline sampling {r['baseline_s']} s; peak memory {r['peak_mib']:,.0f} MiB",
             f"- TF-IDF + LR on {r['test']:,} held-out originals: synthetic "
             f"{acc['synthetic']:.3f}, original ({r['n']:,}) {acc['original']:.3f}, "
             f"zero-private-data baseline {acc['baseline']:.3f}; ratio synthetic/original "
             f"{r['ratio_to_original']:.3f} (goal ≥ 0.85); p(synthetic > baseline) = "
             f"{r['p_above_baseline']:.2g} (one-sided two-proportion z-test)",
             f"- entities masked in the input: {r['masked_in_private_input']}; found in the "
             f"output (masked): {r['found_in_output']}; empty outputs: {r['empty_synthetic']}",
             f"- load average {r['load_average']:.1f}"]
    if r.get("masked_elsewhere"):
        m = r["masked_elsewhere"]
        lines.insert(-1, f"- the private tickets were masked before, on another machine "
                     f"(benchmarks/device_premask.py, synthesize's defaults: {m['words']:,} "
                     f"words in {m['cpu_s']} CPU-s), so this run's own masking and output "
                     "screening were off; the outputs were screened there (`device_premask.py "
                     "screen`)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="tiny sizes on the CPU (see SMOKE)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--tickets", type=int, default=10_000)
    p.add_argument("--test", type=int, default=2_000)
    p.add_argument("-n", type=int, default=2_000)
    p.add_argument("--epsilon", type=float, default=4.0)
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--epochs", type=float, default=4.0)
    p.add_argument("--train-batch", type=int, default=512)
    p.add_argument("--learning-rate", type=float, default=2e-3)
    p.add_argument("--micro-batch", type=int, default=64)
    p.add_argument("--gen-batch", type=int, default=256)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--max-length", type=int, default=128, help="training tokens per ticket")
    p.add_argument("--unit", default="document", choices=["document", "customer"])
    p.add_argument("--model", type=Path, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--masked", type=Path, default=None,
                   help="the private tickets masked elsewhere (device_premask.py prepare)")
    p.add_argument("--outputs", type=Path, default=None,
                   help="write the synthetic and baseline texts here (JSON 'outputs')")
    args = p.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    result = measure(args)
    outputs = result.pop("outputs")
    print(markdown(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    if args.outputs is not None:
        args.outputs.write_text(json.dumps({"outputs": outputs}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
