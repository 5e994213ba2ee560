"""Say on stderr what is loading when a first call takes long.

The first ``textdp.privatize`` of a process loads the entity model (spaCy and its pipeline) and
the default vocabulary: 10–40 s on a busy machine, during which a new user sees nothing and may
think it hung. :func:`loading` wraps such a load: if it is still running after
:data:`NOTICE_AFTER` seconds, one line says what is loading and that it happens once per process,
and a second line says when it is done. Fast loads (a warm cache) print nothing.

``TEXTDP_QUIET=1`` silences it; the command line silences it too (:func:`quiet`): its own status
lines say what it does, and its errors must stay one line.

Three helpers keep spaCy's load to what the entity model needs (issue 38, Deliver 5):
:func:`spacy_without_cli` for its import, :func:`without_entry_points` and
:func:`load_pipeline` for its load; two make its run cheaper (issue 35, Deliver 4):
:func:`numpy_matmul` and :func:`one_blas_thread`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["NOTICE_AFTER", "loading", "quiet", "spacy_without_cli", "without_entry_points",
           "load_pipeline", "numpy_matmul", "one_blas_thread"]

#: Seconds a load may take before it is announced.
NOTICE_AFTER = 2.0

_quiet = False


def quiet(value: bool = True) -> None:
    """Turn the notices off (the command line does) or back on."""
    global _quiet
    _quiet = value


def _silenced() -> bool:
    return _quiet or os.environ.get("TEXTDP_QUIET", "") not in ("", "0")


@contextlib.contextmanager
def loading(what: str, hint: str = "", *, after: float | None = None) -> Iterator[None]:
    """Announce ``what`` on stderr if the block is still running after ``after`` seconds
    (default :data:`NOTICE_AFTER`), with ``hint`` (how to avoid it), and its duration when it
    ends."""
    if _silenced():
        yield
        return
    start = time.monotonic()
    said = threading.Event()

    def announce() -> None:
        said.set()
        _write(f"textdp: loading {what}, once per process (later calls reuse it"
               + (f"; {hint}" if hint else "") + ")…")

    timer = threading.Timer(NOTICE_AFTER if after is None else after, announce)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            _write(f"textdp: {what} loaded in {time.monotonic() - start:.1f} s")


def _write(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: the notice is a courtesy, never an error
        pass


@contextlib.contextmanager
def spacy_without_cli() -> Iterator[None]:
    """``import spacy`` inside this block skips its command line (``spacy.cli``: its commands,
    weasel, requests and httpx; 0.3 CPU-s and 18 MiB), which ``spacy/__init__.py`` imports only
    to offer ``spacy.info``. Stand-ins for ``spacy.cli`` and ``spacy.cli.info`` sit in
    :data:`sys.modules` while spaCy is imported and are removed after, so a later
    ``import spacy.cli`` is the real one; ``spacy.info`` imports the real function when called.
    Nothing happens when spaCy is imported already."""
    if "spacy" in sys.modules or "spacy.cli" in sys.modules:
        yield
        return
    package = types.ModuleType("spacy.cli")
    package.__path__ = []  # a package with no submodules of its own
    module = types.ModuleType("spacy.cli.info")

    def info(*args: Any, **kwargs: Any) -> Any:
        from spacy.cli.info import info as real

        return real(*args, **kwargs)

    module.info = info  # type: ignore[attr-defined]
    stand_ins = {"spacy.cli": package, "spacy.cli.info": module}
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
        spacy = sys.modules.get("spacy")
        if spacy is not None and getattr(spacy, "cli", None) is package:
            del spacy.cli  # the real package is imported on first use


@contextlib.contextmanager
def without_entry_points(registry: Any) -> Iterator[None]:
    """Every ``catalogue`` registry of ``registry`` (``spacy.util.registry``) looks up no
    packages' entry points inside this block: a pipeline built from spaCy's own components
    needs none, and each lookup scans every installed distribution's metadata (≈ 0.1 CPU-s a
    load)."""
    switched = []
    for name in dir(registry):
        if name.startswith("_"):
            continue
        member = getattr(registry, name, None)
        if getattr(member, "entry_points", None) is True and hasattr(member, "get_all"):
            member.entry_points = False
            switched.append(member)
    try:
        yield
    finally:
        for member in switched:
            member.entry_points = True


#: The tokenizer settings of a spaCy language's defaults that a pipeline's own tokenizer file
#: holds too.
_TOKENIZER_DEFAULTS = {"tokenizer_exceptions": "rules", "prefixes": "prefix_search",
                       "suffixes": "suffix_search", "infixes": "infix_finditer",
                       "token_match": "token_match", "url_match": "url_match"}


def load_pipeline(spacy: Any, path: Any, exclude: list[str], lang: str) -> Any:
    """``spacy.load(path, exclude=exclude)`` with its tokenizer built once, from the pipeline's
    own file. spaCy first builds the tokenizer from the language's defaults (2,694 special
    cases, the affix patterns compiled) and then replaces all of it by what the pipeline's
    ``tokenizer`` file holds: the first build (0.15–0.25 CPU-s) is skipped by lending the
    language's defaults empty settings while the pipeline loads. Where the file lacks one of
    them (not so for en_core_web_sm 3.8.0: tokens and entities identical on 3,000 texts), the
    pipeline is loaded again the usual way."""
    defaults = spacy.util.get_lang_class(lang).Defaults
    kept = {name: getattr(defaults, name) for name in _TOKENIZER_DEFAULTS}
    for name in kept:
        setattr(defaults, name, {} if name == "tokenizer_exceptions" else None)
    try:
        with without_entry_points(spacy.util.registry):
            nlp = spacy.load(path, exclude=exclude)
    finally:
        for name, value in kept.items():
            setattr(defaults, name, value)
    tokenizer = nlp.tokenizer
    if all(not value or getattr(tokenizer, _TOKENIZER_DEFAULTS[name], None)
           for name, value in kept.items()):
        return nlp
    with without_entry_points(spacy.util.registry):
        return spacy.load(path, exclude=exclude)


def numpy_matmul(nlp: Any) -> None:
    """The pipeline's dense layers multiplied by numpy's BLAS instead of thinc's bundled BLIS
    (``NumpyOps.use_blis``): on this project's machine (OpenBLAS, Haswell kernels) the ``ner``
    component's whole pass costs 0.60–0.72× the CPU time with BLIS, with the same entities,
    provided numpy's BLAS runs on one thread (:func:`one_blas_thread`): with two, OpenBLAS
    spends more CPU than it saves on these small matrices (BENCHMARKS.md, issue 35). The
    transition parser's own loop keeps BLIS (its C code holds the pointer)."""
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is None:
            continue
        for node in model.walk():
            if hasattr(node.ops, "use_blis"):
                node.ops.use_blis = False


_controller: Any = None


def one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on one thread (threadpoolctl), for the entity
    model's small matrix products (:func:`numpy_matmul`); the previous limits come back on
    exit. The libraries are looked up once per process."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")
