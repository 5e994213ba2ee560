"""Private Evolution's label prompts and variation temperature, measured: does SmolLM2 write on
the label?

    nice -n 10 python -m experiments.pe_label_prompts --per-label 10 --max-new-tokens 48

The judge of ``experiments.pe_variation_prompts`` (TF-IDF 1–2-grams + logistic regression trained
on 2,000 real generated tickets, 8 issue labels) gives each generation a label; reported per
setting: how often it is the label the prompt asked for (label agreement), with a one-sided
two-proportion z-test against the library's current setting.

* **First population** (RANDOM_API): the library's label prompt, and the same with a public
  label description (``--label-description``), in two styles written here from the label names
  alone (not from the ticket generator's templates): a definition, and a one-sentence example
  in the customer's voice.
* **Variations** (VARIATION_API) with the library's prompt, at temperature 1.0 and 0.7, of
  model-written parents and of real tickets.

Seeded: every setting draws its rows from the same generators, so settings differ only in what
they vary. The descriptions are PUBLIC text a user writes about their labels: no private
document is shown to the model.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

KIND = "customer support ticket"
#: Definitions written from the label names (what a user who knows the categories would say).
DEFINITIONS = {
    "late delivery": "the order has not arrived by the promised delivery date",
    "damaged item": "the product arrived broken or damaged",
    "refund": "the customer asks for their money back",
    "wrong size": "the clothes or shoes received do not fit and another size is needed",
    "billing error": "the customer was charged the wrong amount or charged twice",
    "account locked": "the customer cannot sign in because their account is locked",
    "missing parts": "the package arrived with pieces or accessories missing",
    "cancel order": "the customer wants to cancel an order before it ships",
}
#: One-sentence examples in the customer's voice, written here (public, invented).
EXAMPLES = {
    "late delivery": "My order was supposed to arrive last week and it still has not come.",
    "damaged item": "The lamp I ordered arrived with a cracked base.",
    "refund": "I sent the jacket back and would like my money returned.",
    "wrong size": "The shoes are too small, can I exchange them for a larger size?",
    "billing error": "I was charged twice for the same order on my card.",
    "account locked": "I can't log in, it says my account is locked.",
    "missing parts": "The shelf kit came without the screws.",
    "cancel order": "Please cancel my order, I no longer need it.",
}


def two_proportion(a: int, b: int, n: int) -> dict[str, float]:
    """One-sided pooled z-test of a/n > b/n."""
    p = (a + b) / (2 * n)
    se = math.sqrt(p * (1 - p) * 2 / n)
    z = (a - b) / n / se if se > 0 else 0.0
    return {"z": round(z, 3), "p_one_sided": 0.5 * math.erfc(z / math.sqrt(2))}


def _raw(lm: Any, prompts: list[str], seed: int, stage: int, max_new_tokens: int,
         temperature: float = 1.0) -> list[str]:
    """Raw generations, all prompts in one batch (row-seeded: the same texts as any batch)."""
    from textdp.synthesis.generation import NucleusSampler, generate_ids, row_generators

    ids = lm.prompt_ids(prompts, "{document}")
    rows = generate_ids(lm, ids, max_new_tokens=max_new_tokens, batch_size=len(ids),
                        sampler=NucleusSampler(row_generators(len(ids), seed, stage),
                                               temperature=temperature))
    return list(lm.tokenizer.batch_decode(rows, skip_special_tokens=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-label", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", nargs="*", default=["initial", "variation"])
    parser.add_argument("--initial", nargs="*", default=["current", "definition", "example"],
                        help="first-population settings to run (the first is the reference)")
    parser.add_argument("--parents", nargs="*", default=["model", "real"])
    parser.add_argument("--reference", type=int, default=None,
                        help="on-label count of the reference setting from an earlier run of "
                             "the same command, when it is not run again")
    args = parser.parse_args(argv)

    from experiments.pe_variation_prompts import label_judge
    from textdp.datasets.tickets import ISSUES, generate_tickets
    from textdp.lm import shared_model
    from textdp.synthesis.prompts import Prompts, clean

    judge = label_judge()
    lm = shared_model()
    labels = [lab for lab in ISSUES for _ in range(args.per_label)]
    n = len(labels)
    results: dict[str, Any] = {"n": n, "per_label": args.per_label,
                               "max_new_tokens": args.max_new_tokens}

    def judged(name: str, texts: list[str], seconds: float, base: int | None) -> int:
        pred = judge.predict(texts)
        agree = int(sum(p == lab for p, lab in zip(pred, labels, strict=True)))
        row: dict[str, Any] = {"agree": agree, "n": n, "seconds": round(seconds, 1),
                               "words": round(sum(len(t.split()) for t in texts) / n, 1),
                               "examples": texts[::max(1, n // 4)][:4]}
        if base is not None:
            row["vs_current"] = two_proportion(agree, base, n)
        results[name] = row
        print(f"-- {name}: {agree}/{n} on label"
              + (f" (vs current: z {row['vs_current']['z']}, p "
                 f"{row['vs_current']['p_one_sided']:.3g})" if base is not None else "")
              + f", {row['words']} words, {seconds:.0f} s", flush=True)
        for t in row["examples"][:2]:
            print(f"   {t[:150]!r}", flush=True)
        return agree

    parents = None
    if "initial" in args.parts:
        settings = {
            "current": Prompts(KIND),
            "definition": Prompts(KIND, descriptions=tuple(DEFINITIONS.items())),
            "example": Prompts(KIND, descriptions=tuple(EXAMPLES.items())),
        }
        base = args.reference
        for name in args.initial:
            prompts = settings[name]
            name = f"initial: {name}"
            t0 = time.perf_counter()
            texts = [clean(t) for t in _raw(lm, [prompts.first(lab) for lab in labels],
                                             args.seed, 0, args.max_new_tokens)]
            agree = judged(name, texts, time.perf_counter() - t0, base)
            if base is None:
                base = agree
            if name == "initial: current":
                parents = texts
    if "variation" in args.parts:
        if parents is None and "model" in args.parents:
            parents = [clean(t) for t in _raw(lm, [Prompts(KIND).first(lab) for lab in labels],
                                               args.seed, 0, args.max_new_tokens)]
        pool = generate_tickets(40 * len(ISSUES), seed=2, describe_issue=True)
        by = {lab: [t.text for t in pool if t.issue == lab] for lab in ISSUES}
        real = [" ".join(by[lab][i].split()) for lab in ISSUES for i in range(args.per_label)]
        for kind, docs in (("model", parents), ("real", real)):
            if kind not in args.parents:
                continue
            base = None
            for temperature in (1.0, 0.7):
                t0 = time.perf_counter()
                prompts = [Prompts(KIND).vary(d, lab) for d, lab in zip(docs, labels, strict=True)]
                texts = [clean(t) for t in _raw(lm, prompts, args.seed, 1, args.max_new_tokens,
                                                temperature)]
                agree = judged(f"variation of {kind} parents, T = {temperature:g}", texts,
                               time.perf_counter() - t0, base)
                base = agree if base is None else base
    print(json.dumps(results, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
