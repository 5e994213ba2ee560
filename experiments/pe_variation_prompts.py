"""Private Evolution's variation prompt, measured: do SmolLM2's rewrites keep their label?

    nice -n 5 python -m experiments.pe_variation_prompts --per-label 5 --max-new-tokens 48

A judge (TF-IDF 1–2-grams + logistic regression) is trained on real generated tickets
(``generate_tickets(2000, seed=1, describe_issue=True)``, 8 issue labels). Parents: ``per_label``
tickets per label, either written by the model from the label prompt (what Private Evolution's
first round holds) or real tickets (``seed=2``, what a well-voted candidate looks like). Each
parent is rewritten once by each variation template; reported per template: how often the judge
gives the parent's label to the rewrite (label agreement), how often the rewrite echoes the
instruction, and its mean length in words. Seeded (the same parents and generators for every
template), so the templates differ only in their wording.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any

KIND = "customer support ticket"
OLD = ("Rewrite the following {kind} in different words, keeping its topic, tone and "
       "length. Reply with the rewritten {kind} only.\n\n{document}")
TEMPLATES = {
    "old (no label)": OLD,
    "current (textdp.synthesis.prompts.VARIATION)": None,  # Prompts.vary(document, label)
    "label, instruction first": (
        "Rewrite the following {kind} about \"{label}\" in different words, keeping its topic, "
        "tone and length. Reply with the rewritten {kind} only.\n\n{document}"),
    "label, document first": (
        "Here is a {kind} about \"{label}\":\n\n{document}\n\nRewrite this {kind} in "
        "different words. It must still be about \"{label}\". Reply with the new {kind} only."),
    "label, write-like": (
        "Write one realistic {kind} about the topic \"{label}\", in a few sentences, saying "
        "the same as this one in different words:\n\n{document}"),
}
#: What an echoed instruction looks like in a generation.
ECHO = re.compile(r"\b(rewrit\w*|rephras\w*|in different words|reply with|the following "
                  r"customer support ticket|here is (a|the)\b)", re.IGNORECASE)


def _legacy_clean(text: str) -> str:
    """``clean`` before the echo was stripped: whitespace collapsed, surrounding quotes off."""
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def _raw(lm: Any, prompts: list[str], seed: int, stage: int, max_new_tokens: int,
         temperature: float = 1.0) -> list[str]:
    from textdp.synthesis.generation import NucleusSampler, generate_ids, row_generators

    ids = lm.prompt_ids(prompts, "{document}")
    rows = generate_ids(lm, ids, max_new_tokens=max_new_tokens, batch_size=16,
                        sampler=NucleusSampler(row_generators(len(ids), seed, stage),
                                               temperature=temperature))
    return list(lm.tokenizer.batch_decode(rows, skip_special_tokens=True))


def label_judge() -> Any:
    """TF-IDF + logistic regression trained on 2,000 real generated tickets (seed 1, issues
    described): what says whether a written ticket is on its label."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from textdp.datasets.tickets import generate_tickets

    train = generate_tickets(2000, seed=1, describe_issue=True)
    judge = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
                          LogisticRegression(max_iter=2000))
    return judge.fit([t.text for t in train], [t.issue for t in train])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-label", type=int, default=5)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parents", choices=("model", "real", "both"), default="both")
    parser.add_argument("--temperature", type=float, default=1.0,
                        help="of the variations (the parents are drawn at 1.0)")
    parser.add_argument("--show", type=int, default=3, help="rewrites printed per template")
    parser.add_argument("--templates", nargs="*", help="names of TEMPLATES to run (all)")
    args = parser.parse_args(argv)

    from textdp.datasets.tickets import ISSUES, generate_tickets
    from textdp.lm import shared_model
    from textdp.synthesis.prompts import Prompts, clean

    judge = label_judge()
    lm = shared_model()
    labels = [lab for lab in ISSUES for _ in range(args.per_label)]
    kinds = ("model", "real") if args.parents == "both" else (args.parents,)
    results: dict[str, Any] = {}
    for kind in kinds:
        if kind == "model":
            parents = [clean(t) for t in _raw(lm, [Prompts(KIND).first(lab) for lab in labels],
                                               args.seed, 0, args.max_new_tokens)]
        else:
            pool = generate_tickets(40 * len(ISSUES), seed=2, describe_issue=True)
            by = {lab: [t.text for t in pool if t.issue == lab] for lab in ISSUES}
            parents = [" ".join(by[lab][i].split()) for lab in ISSUES
                       for i in range(args.per_label)]
        agree = sum(p == lab for p, lab in zip(judge.predict(parents), labels, strict=True))
        print(f"\n== parents: {kind}; judge agrees with the label on {agree}/{len(labels)}")
        results[kind] = {"parents": agree / len(labels), "n": len(labels)}
        for name, template in TEMPLATES.items():
            if args.templates and name not in args.templates:
                continue
            t0 = time.perf_counter()
            if template is None:  # the library's prompt and clean
                prompts = [Prompts(KIND).vary(doc, lab) for doc, lab in zip(parents, labels,
                                                                            strict=True)]
            else:  # a template here, with clean as it was before the echo was stripped
                prompts = [template.replace("{kind}", KIND).replace("{label}", lab)
                           .replace("{document}", doc) for doc, lab in zip(parents, labels,
                                                                            strict=True)]
            raw = _raw(lm, prompts, args.seed, 1, args.max_new_tokens, args.temperature)
            out = [(clean if template is None else _legacy_clean)(t) for t in raw]
            seconds = time.perf_counter() - t0
            pred = judge.predict(out)
            agree = sum(p == lab for p, lab in zip(pred, labels, strict=True))
            echo = sum(bool(ECHO.search(t)) for t in raw)
            echo_left = sum(bool(ECHO.search(t)) for t in out)
            words = sum(len(t.split()) for t in out) / len(out)
            results[kind][name] = {"agree": agree, "echo_raw": echo, "echo_after_clean": echo_left,
                                   "words": round(words, 1),
                                   "seconds": round(seconds, 1)}
            print(f"-- {name}: label agreement {agree}/{len(out)}, echoes {echo}/{len(out)} "
                  f"raw, {echo_left} after clean, "
                  f"{words:.1f} words, {seconds:.0f} s")
            for i in range(0, len(out), max(1, len(out) // max(args.show, 1)))[:args.show]:
                print(f"   [{labels[i]} → {pred[i]}] {out[i][:160]!r}")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
