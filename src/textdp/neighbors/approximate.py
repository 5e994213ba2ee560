"""Approximate nearest-neighbour search for big vocabularies: a faiss HNSW index (optional extra).

Malkov and Yashunin, "Efficient and robust approximate nearest neighbor search using Hierarchical
Navigable Small World graphs", IEEE TPAMI 2020; faiss's ``IndexHNSWFlat`` (Douze et al., "The
Faiss library", 2024). The index is built from the public word vectors only and cached on disk,
keyed by the vectors' fingerprint and the build parameters (M, efConstruction).

Privacy. In MVC, Mahalanobis and Vickrey the search reads only the noisy vector (and, for Vickrey
with the input excluded, the input's id, as the exact search does) and public data, so replacing
the exact search by any other deterministic function of them is post-processing: the guarantee is
unchanged; only utility (how often the output differs from the exact nearest word) changes, and
:func:`disagreement` measures that.

:class:`ApproximateNeighbors` has the interface of :class:`~textdp.neighbors.NearestNeighbors`
that the mechanisms use: :meth:`~ApproximateNeighbors.query` and
:meth:`~ApproximateNeighbors.two_nearest`. The few candidates HNSW returns are re-ranked by float64
distance (ties → lowest index), as the exact engine orders its results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from textdp._checks import Parameter
from textdp._guide import MissingExtra, install_hint
from textdp.neighbors.engine import check_queries, squared_distances64

__all__ = ["ApproximateNeighbors", "INSTALL", "MODES", "NEIGHBORS", "SAMPLE", "disagreement",
           "load_faiss", "search_note", "searcher"]

INSTALL = install_hint("approximate", "neighbors='approximate' (faiss)")
MODES = ("exact", "approximate")
_MAGIC = b"textdp-hnsw 1\n"
SAMPLE = 1000  # noisy inputs on which the approximate search is compared with the exact one

NEIGHBORS = Parameter(
    "neighbors", str, "nearest-neighbour search: exact (certified) or approximate (faiss HNSW, "
    "for big vocabularies; post-processing, the guarantee is unchanged)",
    default="exact", choices=MODES, flag=True)


def load_faiss() -> Any:
    """The faiss module, or an ImportError of one line that says how to install it."""
    try:
        import faiss
    except ImportError:
        raise MissingExtra(INSTALL) from None
    return faiss


def _cache_root() -> Path:
    from textdp.vocab import cache_dir

    return cache_dir() / "hnsw"


class ApproximateNeighbors:
    """Approximate Euclidean nearest neighbours among the rows of ``vectors`` (HNSW, faiss).

    Args:
        vectors: (|V|, d) array; stored as float32.
        m: HNSW graph degree M (links per node on the upper layers, 2M on the bottom one).
        ef_construction: candidate list size while building the graph.
        ef_search: candidate list size while searching (recall against speed).
        fingerprint: key of the on-disk cache (e.g. the vocabulary's fingerprint); None: the
            sha256 of the float32 vectors.
        cache: directory of the cached indexes (default: ``textdp cache dir``/hnsw); False: none.
    """

    def __init__(self, vectors: np.ndarray, *, m: int = 32, ef_construction: int = 100,
                 ef_search: int = 128, fingerprint: str | None = None,
                 cache: Path | str | bool | None = None) -> None:
        self._faiss = load_faiss()
        v = np.ascontiguousarray(vectors, dtype=np.float32)
        if v.ndim != 2 or v.shape[0] == 0:
            raise ValueError(f"vectors must be a non-empty 2-D array, got shape {v.shape}")
        self._v32 = v
        self._v64: np.ndarray | None = None
        self.m, self.ef_construction = int(m), int(ef_construction)
        key = fingerprint or hashlib.sha256(v.astype("<f4", copy=False).tobytes()).hexdigest()
        root = None if cache is False else Path(cache) if cache not in (None, True) else _cache_root()
        self.cache_path = None if root is None else root / (
            f"{key[:32]}-n{v.shape[0]}-d{v.shape[1]}-M{self.m}-efc{self.ef_construction}.faiss")
        self.loaded_from_cache = False
        self.measured: float | None = None  # set by search_note
        self._index = self._load() or self._build()
        self.ef_search = ef_search

    @property
    def n_vectors(self) -> int:
        return int(self._v32.shape[0])

    @property
    def dim(self) -> int:
        return int(self._v32.shape[1])

    @property
    def ef_search(self) -> int:
        """The search's candidate list size (settable: recall against speed, no rebuild)."""
        return int(self._index.hnsw.efSearch)

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        self._index.hnsw.efSearch = int(value)

    @property
    def description(self) -> str:
        return f"HNSW M={self.m}, efConstruction={self.ef_construction}, efSearch={self.ef_search}"

    # -- the index and its cache -------------------------------------------------------------------
    def _build(self) -> Any:
        index = self._faiss.IndexHNSWFlat(self.dim, self.m)
        index.hnsw.efConstruction = self.ef_construction
        index.add(self._v32)
        if self.cache_path is not None:
            from textdp.io.atomic import atomic_write_bytes

            payload = self._faiss.serialize_index(index).tobytes()
            digest = hashlib.sha256(payload).hexdigest().encode()
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.cache_path, _MAGIC + digest + b"\n" + payload)
        return index

    def _load(self) -> Any | None:
        """The cached index, or None where it is missing, corrupt or of other vectors."""
        if self.cache_path is None or not self.cache_path.is_file():
            return None
        data = self.cache_path.read_bytes()
        head = len(_MAGIC) + 65
        payload = data[head:]
        # The checksum keeps a truncated or damaged file from ever reaching faiss's reader.
        if (not data.startswith(_MAGIC)
                or data[len(_MAGIC):head - 1] != hashlib.sha256(payload).hexdigest().encode()):
            return None
        try:
            index = self._faiss.deserialize_index(np.frombuffer(payload, dtype=np.uint8))
        except RuntimeError:  # pragma: no cover - a valid checksum over a foreign payload
            return None
        if index.ntotal != self.n_vectors or index.d != self.dim:
            return None
        self.loaded_from_cache = True
        return index

    # -- searches ----------------------------------------------------------------------------------
    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(check_queries(queries, self.dim), dtype=np.float32)

    def _ranked(self, q: np.ndarray, k: int, exclude: np.ndarray | None, keep: int,
                ) -> tuple[np.ndarray, np.ndarray]:
        """HNSW's k candidates re-ranked by (float64 squared distance, index), ``exclude`` and
        missing (−1) candidates last; the first ``keep`` indices and squared distances."""
        k = min(k, self.n_vectors)
        _, cand = self._index.search(q, k)
        if self._v64 is None:
            self._v64 = self._v32.astype(np.float64)
        qf = q.astype(np.float64)
        d2 = squared_distances64(self._v64, np.maximum(cand, 0).ravel(),
                                 np.repeat(qf, k, axis=0)).reshape(cand.shape)
        bad = cand < 0
        if exclude is not None:
            bad |= cand == np.asarray(exclude)[:, None]
        d2[bad] = np.inf
        order = np.lexsort((cand, d2), axis=1)[:, :keep]
        idx = np.take_along_axis(cand, order, axis=1)
        if (idx < 0).any():
            raise RuntimeError("the HNSW index returned too few neighbours; raise ef_search")
        return idx.astype(np.int64), np.take_along_axis(d2, order, axis=1)

    def query(self, queries: np.ndarray, *, exact: bool = True) -> np.ndarray:
        """Approximate index of the nearest row of every query; shape (N,), int64. ``exact`` is
        accepted for the interface of NearestNeighbors and ignored."""
        return self._ranked(self._check_queries(queries), 2, None, 1)[0][:, 0]

    def two_nearest(self, queries: np.ndarray, *,
                    exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Approximate two nearest rows (nearest first), optionally excluding one row each:
        three candidates are searched and the excluded one dropped. Returns (N, 2) int64
        indices and (N, 2) float64 distances."""
        q = self._check_queries(queries)
        if self.n_vectors < (3 if exclude is not None else 2):
            raise ValueError("two_nearest needs at least two candidate rows")
        ex = None if exclude is None else np.asarray(exclude, dtype=np.int64)
        if ex is not None and ex.shape != (q.shape[0],):
            raise ValueError(f"exclude must have shape ({q.shape[0]},), got {ex.shape}")
        idx, d2 = self._ranked(q, 3, ex, 2)
        return idx, np.sqrt(d2)


def searcher(vocabulary: Any, params: dict[str, Any]) -> Any:
    """The search over ``vocabulary.vectors`` that a mechanism's ``params["neighbors"]`` names:
    "exact" (the certified :class:`~textdp.neighbors.NearestNeighbors`) or "approximate"
    (:class:`ApproximateNeighbors`, cached under ``vocabulary.fingerprint``).

    The default "exact" is taken out of ``params`` (the parameters a report lists), so that the
    reports of exact runs read as before the option existed.
    """
    from textdp.neighbors.engine import NearestNeighbors

    neighbors = params.get("neighbors", "exact")
    if neighbors == "exact":
        params.pop("neighbors", None)
        return NearestNeighbors(vocabulary.vectors)
    if neighbors == "approximate":
        return ApproximateNeighbors(vocabulary.vectors, fingerprint=vocabulary.fingerprint)
    raise ValueError(f"neighbors must be one of {MODES}, got {neighbors!r}")


def disagreement(outputs: Callable[[Any], np.ndarray], exact: Any, approximate: Any) -> float:
    """Fraction of outputs that differ between the two searches: ``outputs(search)`` must run
    the same inputs and the same noise through the given search."""
    return float(np.mean(outputs(exact) != outputs(approximate)))


def search_note(mechanism: Any) -> tuple[str, ...]:
    """The report's line on an approximate search, with its measured disagreement (else ()).

    For mechanisms whose ``apply`` searches through ``mechanism._nn``: :data:`SAMPLE` words drawn
    uniformly with public seed 0 and their noise (the mechanism's own ``draw``, at its ε) go
    through ``apply`` with the approximate search and with the exact one; measured once.
    """
    approx = mechanism._nn
    if not isinstance(approx, ApproximateNeighbors):
        return ()
    if getattr(approx, "measured", None) is None:
        from textdp._random import public_generator
        from textdp.neighbors.engine import NearestNeighbors

        rng = public_generator(0)
        ids = rng.integers(0, approx.n_vectors, SAMPLE)
        noise = mechanism.draw(ids, rng)

        def outputs(search: Any) -> np.ndarray:
            mechanism._nn = search
            try:
                return mechanism.apply(ids, noise)
            finally:
                mechanism._nn = approx

        approx.measured = disagreement(outputs, NearestNeighbors(approx._v32), approx)
    return (f"neighbour search: approximate ({approx.description}); post-processing of the noisy "
            f"vector, so the guarantee is unchanged; measured fraction of outputs that differ "
            f"from exact search: {approx.measured:.4f} ({SAMPLE} noisy inputs, words uniform over "
            f"the vocabulary, public seed 0, this ε)",)
