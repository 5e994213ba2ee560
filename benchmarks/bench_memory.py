"""Peak memory of privatising one very long document: a 30 MB single-line file through the CLI.

Memory is bounded by characters per batch (``Privatizer(batch_chars=...)``, default 256 Ki characters), not by
documents: a line longer than a segment (64 Ki characters) is privatised segment by segment. The
figure is the peak resident set size (``ru_maxrss``) of a fresh ``textdp privatize`` subprocess,
so it includes the interpreter, numpy, the vocabulary and its search index. Target: ≤ 700 MB.

Run alone: ``python -m benchmarks.run memory`` (or ``python -m benchmarks.bench_memory [MB]``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MB = 700
MECHANISMS = ("mvc", "diffractor")

_CHILD = """
import resource, sys
from textdp.cli import main
status = main(sys.argv[1:])
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
print(f"PEAK_KIB {peak_kib}", file=sys.stderr)
sys.exit(status)
"""


def one_line_file(path: Path, megabytes: float) -> int:
    """A single line of real English sentences (VADER) repeated to ``megabytes`` MB; its length."""
    from benchmarks.common import vader_texts

    unit = " ".join(vader_texts(20_000))
    target = int(megabytes * 1_000_000)
    text = (unit + " ") * (target // (len(unit) + 1) + 1)
    text = text[:target].rstrip() + "\n"
    path.write_text(text, encoding="utf-8")
    return path.stat().st_size


def peak_rss(src: Path, mechanism: str) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of ``textdp privatize`` on ``src`` in a fresh process."""
    out = src.with_suffix(".private.txt")
    args = ["privatize", str(src), "-o", str(out), "--mechanism", mechanism, "--epsilon", "5",
            "--seed", "1"]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True,
                          env=os.environ.copy())
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"textdp privatize failed ({proc.returncode}): {proc.stderr[-2000:]}")
    kib = int(proc.stderr.rsplit("PEAK_KIB", 1)[1].split()[0])
    out.unlink()
    return kib * 1024 / 1e6, wall


def run(megabytes: float = 30.0) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "one-line.txt"
        size = one_line_file(src, megabytes)
        rows = []
        for name in MECHANISMS:
            peak, wall = peak_rss(src, name)
            verdict = "yes" if peak <= TARGET_MB else "**no**"
            rows.append(f"| {name} | {peak:,.0f} | {wall:,.1f} | {verdict} |")
    return "\n".join([
        f"One document of {size / 1e6:,.1f} MB on a single line (real sentences, repeated), "
        "privatised by a fresh `textdp privatize` process (ε = 5, --seed 1); peak RSS from "
        f"`getrusage(RUSAGE_SELF).ru_maxrss` of that process. Target ≤ {TARGET_MB} MB.",
        "",
        "| mechanism | peak RSS (MB) | wall time (s) | within target |",
        "|---|---:|---:|---|",
        *rows,
    ])


if __name__ == "__main__":
    print(run(float(sys.argv[1]) if len(sys.argv) > 1 else 30.0))
