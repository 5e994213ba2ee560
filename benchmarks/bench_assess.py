"""``textdp assess`` at scale (issue 37's goal): 10,000 tickets with customers, the default grid.

Writes 10,000 generated support tickets (:func:`textdp.datasets.tickets.generate_tickets`, issues
described so the labels are learnable; the customer is the ticket's writer's full name, so a
name that recurs is one customer with several tickets) to a JSON Lines file, then runs the
command line exactly as a user would, under ``/usr/bin/time -v``::

    textdp assess tickets.jsonl --label-field issue --unit-field customer --seed 0 -o OUT

with the default time budget (300 s) and the default forms (word mechanisms and PrivEmb
embeddings), and reports the wall time, the CPU time, the peak memory, the sample the budget
chose (and the encoder's sub-sample), the pilot's measured costs and the machine's load before
and after. Environment: ``TEXTDP_BENCH_ASSESS_DOCS`` (default 10000), ``TEXTDP_BENCH_ASSESS_ARGS``
(extra arguments, e.g. ``--forms words,embeddings,baseline``).

Run: ``PYTHONPATH=src python -m benchmarks.bench_assess`` (or through ``benchmarks.run assess``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _tickets(path: Path, n: int) -> int:
    from textdp.datasets.tickets import generate_tickets

    tickets = generate_tickets(n, seed=0, describe_issue=True)
    with path.open("w", encoding="utf-8") as f:
        for t in tickets:
            customer = f"{t.values['first_name']} {t.values['last_name']}"
            f.write(json.dumps({"text": t.text, "issue": t.issue, "customer": customer}) + "\n")
    return len({json.loads(line)["customer"] for line in path.open(encoding="utf-8")})


def _time_field(stderr: str, name: str) -> str:
    m = re.search(rf"{re.escape(name)}: (.+)", stderr)
    return m.group(1).strip() if m else "?"


def run() -> str:
    n = int(os.environ.get("TEXTDP_BENCH_ASSESS_DOCS", "10000"))
    extra = shlex.split(os.environ.get("TEXTDP_BENCH_ASSESS_ARGS", ""))
    work = Path(tempfile.mkdtemp(prefix="textdp-bench-assess-"))
    try:
        data = work / "tickets.jsonl"
        customers = _tickets(data, n)
        textdp = shutil.which("textdp") or str(Path(sys.executable).with_name("textdp"))
        command = [textdp, "assess", str(data), "--label-field", "issue", "--unit-field",
                   "customer", "--seed", "0", *extra, "-o", str(work / "out")]
        before = _load()
        done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True,
                              check=False)
        after = _load()
        if done.returncode != 0:
            return f"FAILED ({done.returncode}): {done.stderr[-2000:]}"
        report = json.loads((work / "out" / "report.json").read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sample = report["sample"]
    user = float(_time_field(done.stderr, "User time (seconds)"))
    system = float(_time_field(done.stderr, "System time (seconds)"))
    wall = _time_field(done.stderr, "Elapsed (wall clock) time (h:mm:ss or m:ss)")
    rss = int(_time_field(done.stderr, "Maximum resident set size (kbytes)")) / 2**20
    rows = report["settings"]
    shown = " ".join(shlex.quote(x) for x in ["textdp", *command[1:2], "tickets.jsonl",
                                               *command[3:-2], "-o", "OUT"])
    costs = sample.get("cost_ms_per_document") or {}
    return "\n".join([
        f"{n:,} generated tickets (`generate_tickets({n}, seed=0, describe_issue=True)`), "
        f"{customers:,} customers (full names; a recurring name is one customer).",
        "",
        f"```sh\n/usr/bin/time -v {shown}\n```",
        "",
        "| documents | settings | forms | sample chosen | encoded per setting | wall | CPU (user + sys) "
        "| peak RSS | load before / after |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---|",
        f"| {n:,} | {len(rows)} | {', '.join(report.get('forms', []))} | "
        f"{sample['documents']:,} | {sample.get('encoded', sample['documents']):,} | {wall} | "
        f"{user + system:.0f} s | {rss:.1f} GiB | {before} / {after} |",
        "",
        f"Why this sample (the report's words): {sample['why']}.",
        "",
        "Pilot costs, ms per document: " + ", ".join(f"{k} {v:.1f}" for k, v in costs.items())
        + f"; the assessment's own clock: {report.get('seconds', 0):.0f} s.",
    ])


if __name__ == "__main__":
    print(run())
