"""The text path before and after a change, in one run: ``textdp.privatize`` end to end.

Run with ``.venv/bin/python -m benchmarks.run textpath``. ``TEXTDP_BASE`` (a git revision,
default ``f061fcb``: main before the release spine of issue 23) is exported with ``git archive``
into a temporary directory; each configuration is then timed in two child processes, one
importing the base's ``src`` and one this checkout's, alternating, best of ``TEXTDP_REPEAT``
(default 3) CPU-time runs each. Every configuration runs the same VADER sentences through
``textdp.privatize`` with one BLAS thread; the figure is words (``\\w+`` runs of the input) per
CPU second of the child. The ratio new/base is the figure to read: both sides ran on the same
machine within the same minutes, so load cancels out to first order (not to the last percent:
ratios within about ±5% are noise on a shared machine).
"""

from __future__ import annotations

import json
import os
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

name, eps, kw, seed, share, repeat = json.loads(sys.argv[1])
texts = vader_texts(300_000)
texts = texts[: max(1, int(len(texts) * share))]
words = sum(len(re.findall(r"\w+", t)) for t in texts)
mech = create(name, load_default(), epsilon=eps)
textdp.privatize(texts[:500], mechanism=mech, seed=seed, **kw)  # warm: models, tables
best = float("inf")
for _ in range(repeat):
    c0 = time.process_time()
    textdp.privatize(texts, mechanism=mech, seed=seed, **kw)
    best = min(best, time.process_time() - c0)
print(json.dumps({"words": words, "cpu": best, "textdp": textdp.__file__}))
"""


def _export(revision: str, into: Path) -> Path:
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _measure(src: Path, config: tuple, repeat: int) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1"}
    name, eps, kw, seed, share = config
    out = subprocess.run([sys.executable, "-c", _CHILD,
                          json.dumps([name, eps, kw, seed, share, repeat])],
                         check=True, capture_output=True, text=True, env=env, cwd=ROOT)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["textdp"].startswith(str(src)):
        raise RuntimeError(f"the child imported {result['textdp']}, not {src}")
    return result


def run() -> str:
    base = os.environ.get("TEXTDP_BASE", "f061fcb")
    repeat = int(os.environ.get("TEXTDP_REPEAT", "3"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        old_src = _export(base, Path(tmp))
        new_src = ROOT / "src"
        for label, config in CONFIGS.items():
            old = _measure(old_src, config, repeat)
            new = _measure(new_src, config, repeat)
            old2 = _measure(old_src, config, 1)  # the base again, after: drift shows here
            o = old["words"] / min(old["cpu"], old2["cpu"])
            n = new["words"] / new["cpu"]
            rows.append(f"| {label} | {old['words']:,} | {o:,.0f} | {n:,.0f} | {n / o:.3f} |")
    head = (f"Base: `{base}` (`TEXTDP_BASE`); this checkout's `src` as new. Words per CPU second "
            f"of `textdp.privatize` (one BLAS thread, best of {repeat}; the base is timed before "
            "and after the new code and its best kept). Load: "
            f"{os.getloadavg()[0]:.1f} (1-min average at the end).\n\n"
            "| configuration | words | base words/CPU-s | new words/CPU-s | new/base |\n"
            "|---|---:|---:|---:|---:|")
    return head + "\n" + "\n".join(rows)
