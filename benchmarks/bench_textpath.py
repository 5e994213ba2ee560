"""The text path before and after a change, in one run: ``textdp.privatize`` end to end.

Run with ``TEXTDP_BASE=21ff086 .venv/bin/python -m benchmarks.run textpath``. ``TEXTDP_BASE`` (a
git revision, default ``21ff086``: main before the runner work of issue 33) is exported with
``git archive`` into a temporary directory. The two sides are then timed in alternation:
``TEXTDP_ROUNDS`` rounds (default 3), each a child process importing the base's ``src`` and one
importing this checkout's, in the order base, new in even rounds and new, base in odd ones
(so that a drift of the machine's load during the run falls on both sides alike). A child runs
every configuration: the mechanism built, one warm-up call, then the best of ``TEXTDP_REPEAT``
(default 2) CPU-time runs. Every configuration runs the same VADER sentences through
``textdp.privatize`` with one BLAS thread; the figure is words (``\\w+`` runs of the input) per
CPU second of the child.

Two ratios new/base are printed per configuration: the ratio of each side's best over all
rounds, and the median of the rounds' own ratios with their range (the spread says how much the
machine's noise moves one comparison). Both sides run on the same machine within the same
minutes, so load cancels out to first order, not to the last percent: on a shared machine,
ratios within about ±5% are noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: label → (mechanism, ε, keyword arguments, seed, share of the sentences)
CONFIGS = {
    "1-Diffractor, entities off, unseeded": ("diffractor", 1.0, {"entities": "none"}, None, 1.0),
    "1-Diffractor, entities off, seed=1": ("diffractor", 1.0, {"entities": "none"}, 1, 1.0),
    "1-Diffractor, oov=random + deny/allow lists, entities off, seed=1":
        ("diffractor", 1.0, {"entities": "none", "oov": "random", "deny_list": ["movie"],
                             "allow_list": ["Acme"]}, 1, 1.0),
    "MVC ε=10, entities off, seed=1": ("mvc", 10.0, {"entities": "none"}, 1, 0.15),
    "1-Diffractor, entities on (default), seed=1": ("diffractor", 1.0, {}, 1, 0.1),
    "MVC ε=10, entities on (default), seed=1": ("mvc", 10.0, {}, 1, 0.05),
}

_CHILD = r"""
import json, re, sys, time
from threadpoolctl import threadpool_limits
threadpool_limits(1)
import textdp
from textdp.mechanisms import create
from textdp.vocab import load_default
from benchmarks.common import vader_texts

configs, repeat = json.loads(sys.argv[1])
pool = vader_texts(300_000)
vocab = load_default()
out = {}
for label, (name, eps, kw, seed, share) in configs.items():
    texts = pool[: max(1, int(len(pool) * share))]
    words = sum(len(re.findall(r"\w+", t)) for t in texts)
    mech = create(name, vocab, epsilon=eps)
    textdp.privatize(texts[:500], mechanism=mech, seed=seed, **kw)  # warm: models, tables
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        textdp.privatize(texts, mechanism=mech, seed=seed, **kw)
        best = min(best, time.process_time() - c0)
    out[label] = {"words": words, "cpu": best}
print(json.dumps({"configs": out, "textdp": textdp.__file__}))
"""


def _export(revision: str, into: Path) -> Path:
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _measure(src: Path, repeat: int) -> dict:
    """One child importing ``src``: every configuration, best of ``repeat`` CPU-time runs."""
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([CONFIGS, repeat])],
                         check=True, capture_output=True, text=True, env=env, cwd=ROOT)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["textdp"].startswith(str(src)):
        raise RuntimeError(f"the child imported {result['textdp']}, not {src}")
    return result["configs"]


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run() -> str:
    base = os.environ.get("TEXTDP_BASE", "21ff086")
    rounds = int(os.environ.get("TEXTDP_ROUNDS", "3"))
    repeat = int(os.environ.get("TEXTDP_REPEAT", "2"))
    load_start = _load()
    runs: dict[str, list[dict]] = {"base": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"base": _export(base, Path(tmp)), "new": ROOT / "src"}
        for r in range(rounds):
            for side in (("base", "new") if r % 2 == 0 else ("new", "base")):
                runs[side].append(_measure(sides[side], repeat))
    rows = []
    for label in CONFIGS:
        words = runs["base"][0][label]["words"]
        speed = {side: [words / x[label]["cpu"] for x in runs[side]] for side in runs}
        paired = sorted(n / o for o, n in zip(speed["base"], speed["new"], strict=True))
        o, n = max(speed["base"]), max(speed["new"])
        rows.append(f"| {label} | {words:,} | {o:,.0f} | {n:,.0f} | {n / o:.3f} | "
                    f"{statistics.median(paired):.3f} ({paired[0]:.3f}–{paired[-1]:.3f}) |")
    head = (f"Base: `{base}` (`TEXTDP_BASE`); this checkout's `src` as new. Words per CPU second "
            f"of `textdp.privatize` (one BLAS thread). {rounds} rounds (`TEXTDP_ROUNDS`), base "
            "and new alternating (base first in even rounds, new first in odd ones), each side a "
            f"fresh process per round, best of {repeat} runs (`TEXTDP_REPEAT`) per configuration "
            f"in it. Load average (1, 5, 15 min): {load_start} at the start, {_load()} at the "
            "end.\n\n"
            "| configuration | words | base words/CPU-s (best) | new words/CPU-s (best) | "
            "new/base (bests) | new/base per round: median (range) |\n"
            "|---|---:|---:|---:|---:|---:|")
    return head + "\n" + "\n".join(rows)
