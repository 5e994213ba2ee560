"""``textdp experiment NAME [OPTIONS]``: regenerate a results page under docs/results/.

A source-checkout tool. The experiments are not part of the installed package: they live in the
repository's top-level ``experiments/`` directory. This command finds that checkout (beside the
package's source tree, or the current directory) and runs ``python -m experiments.NAME`` there in
a child process, with the checkout's root and this textdp first on its path; the installed package
itself never imports ``experiments`` (``tests/test_structure.py``). Without a checkout it says so
in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import CLIError

EXPERIMENTS = {
    "privemb": "PrivEmb (M1 vs M2) experiments → docs/results/privemb.md",
    "deepcandidate": "SentDP DeepCandidate evaluation → docs/results/deepcandidate.md",
    "word_mechanisms": "N_w/S_w, utility and empirical privacy of the word mechanisms "
                       "→ docs/results/word_mechanisms.md",
    "mvc300": "MVC at 300d: N_w/S_w, 50d vs 300d, Table 1 → docs/results/mvc300.md",
    "diffractor": "1-Diffractor Table 2 stopword policy, 300-d lists, speed on text, list build "
                  "→ docs/results/diffractor.md",
    "privemb300": "PrivEmb at d = 300 (GloVe 840B) → docs/results/privemb300.md",
    "deepcandidate300": "DeepCandidate vs. 300-d word-level MVC, same units "
                        "→ docs/results/deepcandidate300.md",
    "beyond_words": "DP-Prompt next to MVC and 1-Diffractor: similarity, utility, speed, one "
                    "guarantee per document → docs/results/beyond_words.md",
    "mvc_utility": "MVC's utility (Fig. 5), both protocols, 50d and 300d, over seeds "
                   "→ docs/results/mvc_utility.md",
    "baselines300": "1-Diffractor's Table 2/3 and Fig. 4 with every baseline on 300-d vectors "
                    "→ docs/results/baselines300.md",
    "provenance": "MVC's privacy audit (Tables 3-4): a provenance auditor on fortunes authors "
                  "→ docs/results/provenance.md",
    "mvc_worstcase": "MVC Fig. 2's worst case on every word, Fig. 1's neighbour distances "
                     "→ docs/results/mvc_worstcase.md",
    "differences": "the differences from the papers other pages left open, measured or bounded "
                   "→ docs/results/differences.md",
}


def find_checkout() -> Path | None:
    """The repository root that holds ``experiments/``, or None.

    Looked for beside the textdp package's source tree (``<root>/src/textdp``: an editable
    install or ``PYTHONPATH=src``), then in the current directory.
    """
    import textdp

    for root in (Path(textdp.__file__).resolve().parents[2], Path.cwd()):
        if (root / "experiments" / "_harness.py").is_file():
            return root
    return None


def run_experiment(root: Path, name: str, argv: list[str]) -> int:
    """``python -m experiments.NAME ARGV`` in a child process, from the current directory (paths
    in ARGV mean what they say), with the checkout ``root`` and this textdp's source tree first on
    its path; its exit status."""
    import textdp

    package_root = str(Path(textdp.__file__).resolve().parents[1])
    path = [str(root), package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.call([sys.executable, "-m", f"experiments.{name}", *argv], env=env)


def experiment(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        help="Experiment: " + "; ".join(f"{k} ({v})" for k, v in EXPERIMENTS.items()))],
) -> None:
    """Run one of the papers' experiments from a source checkout: the same as `python -m
    experiments.NAME` from the repository's root; further options go to the experiment (its
    --help lists them). Needs the `experiments` extra; long on 2 cores."""
    if name not in EXPERIMENTS:
        raise CLIError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    root = find_checkout()
    if root is None:
        raise CLIError("the experiments are not installed with textdp: from a source checkout "
                       f"of the repository, run `python -m experiments.{name}` in its root (or "
                       "this command, after `pip install -e .`)")
    status = run_experiment(root, name, list(ctx.args))
    if status:
        raise typer.Exit(status)
