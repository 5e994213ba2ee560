"""The masking half of the device runs (issues 32 and 38), done on this machine's CPU.

The device image has no spaCy, no name gazetteers and no room in a call's carry for them beside
the model, so the entity and identifier stage (the same code and defaults as ``textdp
privatize``, DP-Prompt and ``textdp synthesize``) runs here, and the device runs only what needs
the GPU on the masked texts, with its own masking off:

    python benchmarks/device_premask.py prepare DIR     # DIR/lm.json and DIR/finetune.json
    python benchmarks/device_lm.py --masked DIR/lm.json ...
    python benchmarks/device_finetune.py --masked DIR/finetune.json ...
    python benchmarks/device_premask.py screen OUT.json # what the recognisers find in outputs

``prepare`` writes the masked texts of the tickets each device script generates (the same
generator and seeds: ``device_lm`` 1,000 tickets, seed 1; ``device_finetune`` the first 10,000 of
12,000, seed 0, issues described), the counts by kind and the CPU seconds the masking took.
Masking is a function of one document, so masking before or on the device releases the same
thing under the same guarantee. ``screen`` counts, by kind, the entities and identifiers the
default recognisers find in the texts of a JSON file's ``outputs`` lists (the device scripts'
``--outputs``) — the screening ``synthesize`` does on its outputs, done here.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the working tree's textdp when run as a script

#: (file, tickets generated, of which masked, seed, issues described): as the device scripts.
SETS = {"lm": (1_000, 1_000, 1, False), "finetune": (12_000, 10_000, 0, True)}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def prepare(out: Path, sets: dict[str, tuple[int, int, int, bool]] = SETS) -> None:
    from textdp.datasets.tickets import generate_tickets
    from textdp.synthesis.screen import build_masker

    masker = build_masker()  # the defaults of privatize, DP-Prompt and synthesize
    masker.find(["warm up: Ada Lovelace in London"])
    out.mkdir(parents=True, exist_ok=True)
    for name, (total, used, seed, described) in sets.items():
        texts = [t.text for t in generate_tickets(total, seed=seed, describe_issue=described)]
        c0, t0 = _cpu(), time.perf_counter()
        masked, counts = masker.mask(texts[:used])
        record = {"tickets": used, "seed": seed, "describe_issue": described,
                  "masked_by_kind": dict(sorted(counts.items())),
                  "words": sum(len(t.split()) for t in texts[:used]),
                  "cpu_s": round(_cpu() - c0, 2), "wall_s": round(time.perf_counter() - t0, 2),
                  "entities": masker.description, "texts": masked}
        (out / f"{name}.json").write_text(json.dumps(record, ensure_ascii=False) + "\n",
                                          encoding="utf-8")
        print(f"{name}: {used:,} tickets masked in {record['cpu_s']} CPU-s "
              f"({record['words'] / max(record['cpu_s'], 1e-9):,.0f} words/CPU-s): "
              f"{sum(counts.values()):,} spans {record['masked_by_kind']}")


def read_masked(path: Path, texts: list[str]) -> tuple[list[str], dict]:
    """The masked texts of ``path`` (written by :func:`prepare`) for these generated ``texts``,
    and its header; refuses a file made for other tickets."""
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    masked = record.pop("texts")
    if len(masked) != len(texts):
        raise SystemExit(f"{path}: {len(masked)} masked texts for {len(texts)} tickets")
    return masked, record


def screen(path: Path) -> dict[str, dict[str, int]]:
    from textdp.synthesis.screen import build_masker

    masker = build_masker()
    found = {}
    for name, texts in json.loads(Path(path).read_text(encoding="utf-8"))["outputs"].items():
        if name.endswith("_labels"):
            continue
        counts = Counter(kind for spans in masker.find(texts) for _, _, kind in spans)
        found[name] = dict(sorted(counts.items()))
        print(f"{name}: {len(texts):,} texts, found {sum(counts.values()):,} {found[name]}")
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("dir", type=Path)
    prep.add_argument("--lm-tickets", type=int, default=SETS["lm"][0])
    prep.add_argument("--finetune-tickets", type=int, default=SETS["finetune"][1],
                      help="as device_finetune.py's --tickets (its --test must be given too)")
    prep.add_argument("--test", type=int, default=SETS["finetune"][0] - SETS["finetune"][1])
    sub.add_parser("screen").add_argument("file", type=Path)
    a = p.parse_args(argv)
    if a.command == "prepare":
        prepare(a.dir, {"lm": (a.lm_tickets, a.lm_tickets, 1, False),
                        "finetune": (a.finetune_tickets + a.test, a.finetune_tickets, 0, True)})
    else:
        screen(a.file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
