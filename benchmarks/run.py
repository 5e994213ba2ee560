"""Run benchmarks and record them in BENCHMARKS.md with the machine and the command.

Usage::

    python -m benchmarks.run                 # every benchmarks/bench_*.py
    python -m benchmarks.run mvc vocab       # only bench_mvc.py and bench_vocab.py

Each ``benchmarks/bench_<name>.py`` defines ``run() -> str`` returning a Markdown section (without
its ``## <name>`` heading). Sections of BENCHMARKS.md not re-run are kept as they were.
"""

from __future__ import annotations

import importlib
import os
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "BENCHMARKS.md"
START = "<!-- bench:{name} -->"
END = "<!-- /bench:{name} -->"


def machine() -> str:
    import numpy as np

    from textdp.evaluation.efficiency import cpu_model

    cpu = cpu_model()
    blas = ""
    try:
        from threadpoolctl import threadpool_info

        blas = ", ".join(
            f"{i['internal_api']} {i.get('version') or ''} {i.get('architecture') or ''} "
            f"({i['num_threads']} threads)"
            for i in threadpool_info()
        )
    except Exception:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB; Python {platform.python_version()}, "
            f"numpy {np.__version__}; BLAS: {blas}")


def discover() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in Path(__file__).parent.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or discover()
    unknown = sorted(set(names) - set(discover()))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; have: {', '.join(discover())}",
              file=sys.stderr)
        return 2
    text = OUT.read_text() if OUT.exists() else (
        "# Benchmarks\n\nRegenerate with `make bench` (all) or "
        "`.venv/bin/python -m benchmarks.run NAME ...` (some). Each section names its machine, "
        "date and command. Figures come from whole-machine runs with nothing else running.\n"
    )
    host = machine()
    for name in names:
        print(f"running bench_{name} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(f"benchmarks.bench_{name}")
        t0 = time.perf_counter()
        body = module.run().strip()
        took = time.perf_counter() - t0
        section = (
            f"{START.format(name=name)}\n## {name}\n\n"
            f"- command: `.venv/bin/python -m benchmarks.run {name}`\n"
            f"- machine: {host}\n"
            f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, took {took:.0f} s\n\n"
            f"{body}\n{END.format(name=name)}"
        )
        pattern = re.compile(
            re.escape(START.format(name=name)) + r".*?" + re.escape(END.format(name=name)), re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _m, s=section: s, text)
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        OUT.write_text(text)
        print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
