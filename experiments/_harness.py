"""What the experiments share: seeds, where pages go, the machine, cached encodings, saved results.

Every experiment is three stages, each a function of the one before:

* ``run(...) → results`` — the long part; its results are saved beside the page (or in the cache
  when they are large), so that
* ``figures(results, fig_dir) → paths`` and ``page(results, ...) → Markdown`` can be redone from
  them alone (``--from-results``), without re-running anything.

A page lives at ``docs/results/NAME.md`` and its figures in ``docs/results/NAME/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from textdp import _random

#: The repository's root (``experiments/`` is not installed: it runs from a source checkout).
ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "docs" / "results"

Log = Callable[[str], None]


def command(name: str, argv: Sequence[str] = ()) -> str:
    """The command that regenerates page ``name`` with ``argv`` (as printed on the page)."""
    return " ".join([f"python -m experiments.{name}", *argv])


def default_page(name: str) -> Path:
    return RESULTS_DIR / f"{name}.md"


def figure_dir(page: Path) -> Path:
    """The folder of a page's figures and saved results: the page's path without ``.md``."""
    return page.with_suffix("")


def rng(seed: int, *key: int) -> np.random.Generator:
    """An independent generator for the part of an experiment named by ``key``.

    ``SeedSequence(seed, spawn_key=key)``: the same (seed, key) gives the same stream, different
    keys give independent ones, so adding a part does not shift the randomness of the others.
    """
    return _random.public_generator(seed, tuple(key))


def machine() -> str:
    """CPU model (when the OS says) and core count, for the page's footer."""
    from textdp.evaluation.efficiency import cpu_model

    return f"{cpu_model()}, {os.cpu_count()} cores"


def logger(name: str) -> Log:
    """A progress printer to stderr, stamped with the seconds since it was made."""
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{name} {time.perf_counter() - t0:6.0f}s] {msg}", file=sys.stderr, flush=True)

    return log


def cache_root(name: str) -> Path:
    """``<textdp cache>/experiments/NAME``: encodings and large results that are not committed."""
    from textdp.vocab import cache_dir

    return cache_dir() / "experiments" / name


def cached_encode(folder: Path, key: str, texts: Sequence[str],
                  encode: Callable[[list[str]], np.ndarray], *, chunk: int = 2048,
                  log: Log | None = None) -> np.ndarray:
    """``encode(texts)`` as float64, cached on disk chunk by chunk (an interrupted run resumes).

    The cache is ``folder/KEY-HASH``, HASH a digest of every text, so a changed text set never
    reads a stale cache; each chunk is written atomically.
    """
    texts = list(texts)
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:16]
    root = folder / f"{key}-{digest}"
    root.mkdir(parents=True, exist_ok=True)
    parts = []
    for i, start in enumerate(range(0, len(texts), chunk)):
        path = root / f"part{i:05d}.npy"
        if path.exists():
            part = np.load(path)
        else:
            part = np.asarray(encode(texts[start:start + chunk]), dtype=np.float32)
            fd, tmp = tempfile.mkstemp(dir=root, suffix=".npy")
            with os.fdopen(fd, "wb") as f:
                np.save(f, part)
            os.replace(tmp, path)
            if log is not None:
                log(f"  {key}: encoded {min(start + chunk, len(texts)):,}/{len(texts):,}")
        parts.append(part)
    return np.concatenate(parts).astype(np.float64) if parts else np.zeros((0, 0))


#: The table every results page ends with: one row per claim of the paper that the page checks.
CLAIMS_HEADING = "Claims against the paper"
CLAIMS_HEADER = ("claim", "paper", "textdp", "like for like?", "verdict")


def claims_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """:data:`CLAIMS_HEADER` rows as Markdown lines (for the pages not drawn with ``Document``)."""
    out = [f"## {CLAIMS_HEADING}", "", "| " + " | ".join(CLAIMS_HEADER) + " |",
           "|" + "---|" * len(CLAIMS_HEADER)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return out + [""]


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a reader never sees half a page)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=path.suffix)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def save_json(path: Path, obj: Any, *, indent: int | None = None) -> None:
    write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")


def load_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


class _Parser(argparse.ArgumentParser):
    """An experiment's options; after parsing, ``--out`` is resolved so that a smoke run
    (``--quick``) never writes into ``docs/results/``: without ``--out`` it writes to a fresh
    temporary folder, and an ``--out`` inside ``docs/results/`` is refused."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.experiment = name

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        ns, rest = super().parse_known_args(args, namespace)
        quick = bool(getattr(ns, "quick", False)) and getattr(ns, "from_results", None) is None
        if ns.out is None:
            ns.out = quick_page(self.experiment) if quick else default_page(self.experiment)
        elif quick and _inside(ns.out, RESULTS_DIR):
            self.error(f"--quick writes a smoke run, never the committed results: give an --out "
                       f"outside {RESULTS_DIR}, or leave --out out (a temporary folder is used)")
        return ns, rest


def _inside(path: Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def quick_page(name: str) -> Path:
    """Where a ``--quick`` smoke run writes when no ``--out`` is given: a fresh temporary folder
    (printed on stderr), so that the committed page, its results and any cache are left alone."""
    page = Path(tempfile.mkdtemp(prefix=f"textdp-{name}-quick-")) / f"{name}.md"
    print(f"[{name}] --quick: writing the smoke run's page and results under {page.parent}",
          file=sys.stderr, flush=True)
    return page


def parser(name: str, doc: str | None) -> argparse.ArgumentParser:
    """The options every experiment has: ``--out PAGE``, ``--seed``, ``--from-results FILE``.

    ``--out`` defaults to the committed page ``docs/results/NAME.md``, except for a ``--quick``
    smoke run (see :class:`_Parser`)."""
    ap = _Parser(name, prog=command(name), description=(doc or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="the Markdown page to write; figures and results go to a folder named "
                         f"after it (default: {default_page(name).relative_to(ROOT)}; a --quick "
                         "run: a temporary folder)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--from-results", type=Path, default=None, metavar="FILE",
                    help="redo the figures and the page from a run's saved results, without "
                         "running the experiment")
    return ap


def settings_from(cls: type, saved: dict[str, Any]) -> Any:
    """An experiment's settings dataclass from its saved JSON (lists back to tuples)."""
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()})


def quick_main(name: str, doc: str | None, argv: list[str] | None, run: Callable[[Any], Any],
               settings: Callable[[bool, int], Any], render: Callable[..., Any]) -> int:
    """``main`` of an experiment whose only option is ``--quick`` (tiny sizes, a smoke run that
    never writes into docs/results/): run it, or re-render its page ``--from-results``."""
    ap = parser(name, doc)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    args = ap.parse_args(argv)
    return run_or_render(args, lambda: run(settings(args.quick, args.seed)), render, indent=1)


def run_or_render(args: argparse.Namespace, run: Callable[[], Any],
                  render: Callable[[Any, Path], None], *, indent: int | None = None) -> int:
    """The end of an experiment's ``main``: with ``--from-results`` redraw the page from saved
    results; otherwise run, save the results as ``results.json`` beside the figures, and render."""
    if args.from_results is not None:
        render(load_json(args.from_results), args.out)
        return 0
    results = run()
    save_json(figure_dir(args.out) / "results.json", results, indent=indent)
    render(results, args.out)
    return 0
