"""Start-up (issues 35 and 38, Deliver 5): what a one-line ``textdp privatize`` costs, in fresh
processes.

Run with ``.venv/bin/python -m benchmarks.run startup``. Each row is a child process started
as a user starts it (``python -m textdp.cli …``, the console script's code), measured by
``/usr/bin/time``: the child's user + system CPU seconds and its peak resident set,
interpreter start-up included.

* ``python -c 'import numpy'`` and ``textdp --version`` (goal: ≤ 2× the former).
* ``echo "Hi, I am Zanele Kim from Durban, call me on +27 82 555 0199" | textdp privatize - -o -
  --format txt --epsilon 8`` — the defaults (MVC, entities and identifiers on): a name, a place
  and a phone number, so the entity model and the three gazetteers load. *Warm*: textdp's cache
  (``TEXTDP_CACHE`` or the user cache) already holds the default vocabulary and the gazetteers
  (one unmeasured run first); best and median of ``TEXTDP_RUNS`` (default 5), largest peak.
  *Cold*: a new, empty cache folder, once: the first run on a machine, which extracts the names
  from names-dataset's pickles and builds the gazetteers and the vocabulary's cache.
* The same with a line holding no candidate word (the entity model is not loaded).

Goals: a one-line release ≤ 2.5 CPU-s and ≤ 350 MiB (warm). Figures taken on a shared machine
are upper bounds: the load average is printed beside them.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

LINE = "Hi, I am Zanele Kim from Durban, call me on +27 82 555 0199"
PLAIN = "hello there, your order ships monday."
PRIVATIZE = ("-m", "textdp.cli", "privatize", "-", "-o", "-", "--format", "txt", "--epsilon", "8")


def child(args: tuple[str, ...], stdin: str = "", env: dict[str, str] | None = None,
          ) -> tuple[float, float, int]:
    """(user + system CPU seconds, peak RSS MiB, exit status) of ``python args``, measured by
    GNU time where it is installed. (Linux counts the peak of the process a child was forked
    from into the child's own peak: started from this process, ``python -c 'import numpy'``
    would read as large as this process is; GNU time is a small parent.)"""
    time = "/usr/bin/time"
    command = [sys.executable, *args]
    if os.path.exists(time):
        command = [time, "-f", "RUSAGE %U %S %M", *command]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    out = proc.communicate(stdin.encode())[1].decode(errors="replace").splitlines()
    measured = [ln.split() for ln in out if ln.startswith("RUSAGE ")]
    if measured:
        user, system, peak = measured[-1][1:4]
        return float(user) + float(system), int(peak) / 1024, proc.returncode
    return float("nan"), float("nan"), proc.returncode or 1


def _row(name: str, runs: list[tuple[float, float, int]], goal: str) -> str:
    cpu = [r[0] for r in runs]
    failed = " (failed)" if any(r[2] for r in runs) else ""
    median = f"{statistics.median(cpu):.2f}" if len(cpu) > 1 else "–"
    return (f"| {name} | {min(cpu):.2f} | {median} | {max(r[1] for r in runs):,.0f} | "
            f"{len(runs)} | {goal}{failed} |")


def run() -> str:
    n = int(os.environ.get("TEXTDP_RUNS", "5"))
    load_before = os.getloadavg()
    lines = ["| command | CPU s (best) | CPU s (median) | peak RSS MiB | runs | goal |",
             "|---|---:|---:|---:|---:|---|"]
    numpy = [child(("-c", "import numpy")) for _ in range(n)]
    version = [child(("-m", "textdp.cli", "--version")) for _ in range(n)]
    lines.append(_row("`python -c 'import numpy'`", numpy, "–"))
    ratio = min(r[0] for r in version) / min(r[0] for r in numpy)
    lines.append(_row("`textdp --version`", version,
                      f"≤ 2× numpy: {ratio:.2f}× ({'met' if ratio <= 2 else 'not met'})"))
    for name, text in (("a name, a place, a phone", LINE), ("no candidate word", PLAIN)):
        child(PRIVATIZE, text + "\n")  # the caches in place
        warm = [child(PRIVATIZE, text + "\n") for _ in range(n)]
        best = min(r[0] for r in warm)
        peak = max(r[1] for r in warm)
        verdict = "met" if best <= 2.5 and peak <= 350 else "not met"
        lines.append(_row(f"one line, {name}, warm", warm,
                          f"≤ 2.5 CPU-s, ≤ 350 MiB: {verdict}"))
    with tempfile.TemporaryDirectory() as cache:
        cold = [child(PRIVATIZE, LINE + "\n", env={"TEXTDP_CACHE": cache})]
    lines.append(_row("one line, a name, a place, a phone, cold (empty cache)", cold,
                      "– (once per machine)"))
    load_after = os.getloadavg()
    return "\n".join([
        f"The line: `echo \"{LINE}\" | textdp privatize - -o - --format txt --epsilon 8` "
        f"(and `{PLAIN}`); CPU = user + system seconds of the child, as `/usr/bin/time` "
        "gives them.", "", *lines, "",
        f"Load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after, on "
        f"{os.cpu_count()} cores: figures on a shared machine are upper bounds."])


if __name__ == "__main__":
    print(run())
