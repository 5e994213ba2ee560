"""Issue 37's goal: re-running the recommended release gives leakage, linkage and accuracy inside
the assessment's 95% intervals.

Run: ``python -m experiments.assess_rerun [--n 300] [--seed 0]``.

Generated tickets with customers (:func:`textdp.datasets.tickets.generate_tickets`, issues
described so the label is learnable; the customer is the writer's full name, passed as the unit
and, with the names, as ``known=``). :func:`textdp.assess` measures word mechanisms and PrivEmb
embeddings on the first ``n`` tickets (every one of them: ``sample=n``) and recommends a setting
under its default targets. That setting is then released again on ``n`` *held-out* tickets (the
next ``n`` of the same generator: other customers' texts) with a fresh noise seed, and measured
with the same functions (:func:`textdp.assess` restricted to that one setting, which releases it
through the same code as ``textdp privatize`` / ``textdp embed``). Prints, for leakage (entities
surviving), top-1 linkage and task accuracy, the assessed figure with its 95% interval, the
re-run's figure, and whether the re-run lies inside the interval.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

#: The grid: two word mechanisms around their useful range and PrivEmb at three ε.
EPSILONS = {"mvc": [4.0, 8.0, 12.0], "tem": [2.0, 4.0], "privemb": [30.0, 100.0, 300.0]}
#: The figures compared: (row field, its interval field).
FIGURES = (("entities_survived", "entities_survived_interval"),
           ("linkage_top1", "linkage_top1_interval"),
           ("task_accuracy", "task_accuracy_interval"))


def _data(tickets: list[Any]) -> dict[str, Any]:
    names = [f"{t.values['first_name']} {t.values['last_name']}" for t in tickets]
    return {"texts": [t.text for t in tickets], "labels": [t.issue for t in tickets],
            "units": names,
            "known": [[t.values["first_name"], t.values["last_name"]] for t in tickets]}


def _again(row: dict[str, Any], data: dict[str, Any], seed: int) -> dict[str, Any]:
    import textdp

    common = {**data, "sample": len(data["texts"]), "seed": seed}
    if row["form"] == "words":
        a = textdp.assess(common.pop("texts"), common.pop("labels"), mechanisms=[row["mechanism"]],
                          epsilons=[row["epsilon"]], forms="words", **common)
        (again,) = [r for r in a.rows if r["variant"] == row["variant"]] or a.rows[:1]
        return again
    a = textdp.assess(common.pop("texts"), common.pop("labels"), forms=row["form"],
                      epsilons={row["mechanism"]: [row["epsilon"]]}, **common)
    return a.rows[0]


def run(n: int, seed: int) -> dict[str, Any]:
    import textdp
    from textdp.datasets.tickets import generate_tickets

    tickets = generate_tickets(2 * n, seed=seed, describe_issue=True)
    assessed, held_out = _data(tickets[:n]), _data(tickets[n:])
    t0 = time.perf_counter()
    a = textdp.assess(assessed.pop("texts"), assessed.pop("labels"), mechanisms=["mvc", "tem"],
                      epsilons=EPSILONS, forms="words,embeddings", sample=n, seed=seed,
                      **assessed)
    took = time.perf_counter() - t0
    rec = a.recommendation
    row = a.recommended or a.rows[rec["nearest"][0]["index"]]
    t0 = time.perf_counter()
    again = _again(row, held_out, seed + 1)
    out: dict[str, Any] = {"n": n, "seed": seed, "met": rec["met"], "assess_seconds": took,
                           "rerun_seconds": time.perf_counter() - t0,
                           "setting": f"{row['label']} ε={row['epsilon']:g} ({row['form']})",
                           "command": row.get("command") or row.get("privatize_options"),
                           "figures": {}}
    for name, interval in FIGURES:
        value, iv, rerun = row.get(name), row.get(interval), again.get(name)
        inside = None if value is None or rerun is None else bool(iv[0] <= rerun <= iv[1])
        out["figures"][name] = {"assessed": value, "interval": iv, "rerun": rerun,
                                "rerun_interval": again.get(interval), "inside": inside}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    print(json.dumps(run(a.n, a.seed), indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
