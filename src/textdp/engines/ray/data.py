"""Ray Data's engine: a distributed dataset released on an actor pool (issue 13, items 1 and 2;
the front is :mod:`textdp.integrations.ray`).

:func:`run_words` runs :class:`textdp.Privatizer` over a ``ray.data.Dataset`` with
``map_batches`` on an actor pool (``ray.data.ActorPoolStrategy``): each actor builds the
mechanism and its Privatizer ONCE, in its constructor (vocabulary, word lists, the neighbour
engine: :class:`textdp.engines.worker.ProcessRelease`), and privatises batch after batch.
:func:`run_vectors` (PrivEmb, LaplaceVector) and :func:`run_documents` (DeepCandidate,
Truncation) work the same way over a vector column and a column of sentence embeddings.

Randomness, as in one process (:mod:`textdp._random`):

* **seeded** — every row carries its global index (a column added before the pool, the input's
  order kept: ``preserve_order``), and the Privatizer is run with ``start`` = that index, so row
  i draws from ``document_generator(seed, i)`` whatever actor or batch it lands in: the output
  is byte-identical to :func:`textdp.privatize` and to the local command line. Vectors use the
  local chunk streams (chunk c = rows 4096·c …, laid out once in
  :func:`textdp.mechanisms.embedding.release.release_rows`).
* **unseeded** — each actor builds its Privatizer in its own process, and with it a secure
  generator keyed from ``os.urandom`` there. Only the release spec
  (:class:`textdp.spec.ReleaseSpec`: mechanism name, ε, parameters, policy) or, for vectors and
  documents, the mechanism object (which holds no generator) is shipped to an actor —
  never a Privatizer or a generator, whose pickled state every copy
  would share (identical noise on every worker: the forked-RNG pitfall). The rows are not
  numbered (:func:`prepare`): where a row lands changes nothing, and numbering costs a Ray job.

Threads: each actor sets its BLAS/OpenMP limits in its constructor (:func:`limit_threads`), not
through a ``runtime_env``: an actor without one can start in one of the worker processes Ray
keeps ready, about a second sooner on every call.

Fault tolerance: actors restart (``max_restarts``) and Ray re-runs the failed batch
(``max_task_retries``). A seeded batch gives the same output when re-run; an unseeded re-run
draws fresh noise, and only the retried output is kept. The report's tallies travel with each
batch's output (a column dropped afterwards), so a batch that failed and was retried is counted
once.

One report: the per-batch tallies are summed on the driver (:class:`textdp.tallies.Tallies`) and
given to the one report builder (:mod:`textdp.privacy.report`), with ``engine: "ray"`` and
``workers`` added. Seeded rows are numbered by materialising the input once (in its order), counting
its blocks and adding the index in one task per output block (:func:`with_row_index`; the
object store spills to disk what does not fit in memory). Ray's ``zip`` with ``ray.data.range``
would do the same but is deprecated, and run lazily before an actor pool it can wait for ever
for CPUs the actors hold.

Each batch's tallies are the difference of two :meth:`textdp.Privatizer.tallies` snapshots
(:class:`textdp.tallies.Tallies`, sent home as JSON), summed on the driver into the one report —
as the datasets front does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from textdp import _random
from textdp._guide import names_listing
from textdp.engines.ray.runtime import (
    check_no_generator,
    check_workers,
    engine_context,
    limit_threads,
    require_ray,
)
from textdp.engines.worker import ProcessRelease
from textdp.pipeline import Privatizer
from textdp.spec import ReleaseSpec
from textdp.tallies import Tallies

__all__ = ["ROW", "STATS", "prepare", "run_documents", "run_text", "run_vectors", "run_words",
           "texts_of"]

#: The global row index column (added before the pool, dropped in the output).
ROW = "__textdp_row"

#: Each output batch's tallies (JSON in its first row), summed into the report and dropped.
STATS = "__textdp_stats"

DEFAULT_BATCH_SIZE = 1024

#: Unseeded inputs with fewer blocks than this many per worker (and rows for them) are re-cut.
TASKS_PER_WORKER = 4


class _Worker:
    """What every actor shares: its thread limit and the contiguous runs of row indices."""

    def __init__(self, threads: int = 1) -> None:
        limit_threads(threads)

    def rows(self, batch: dict[str, Any]) -> np.ndarray | None:
        """The batch's global row indices (removed from it), or None where the rows carry none
        (unseeded runs: :func:`prepare`)."""
        if ROW not in batch:
            return None
        return np.asarray(batch.pop(ROW), dtype=np.int64)

    @staticmethod
    def runs(rows: np.ndarray) -> list[tuple[int, int]]:
        """[a, b) ranges of ``rows`` whose indices are consecutive (one Privatizer call each)."""
        cuts = np.flatnonzero(np.diff(rows) != 1) + 1
        bounds = [0, *cuts.tolist(), rows.size]
        return list(zip(bounds[:-1], bounds[1:], strict=True))

    @staticmethod
    def with_stats(batch: dict[str, Any], n: int, stats: dict[str, Any]) -> dict[str, Any]:
        column = np.full(n, "", dtype=object)
        if n:
            column[0] = json.dumps(stats)
        batch[STATS] = column
        return batch


class _TextWorker(_Worker):
    """Builds the mechanism and its Privatizer once, from the release spec
    (:class:`textdp.engines.worker.ProcessRelease`); privatises the text column of each batch."""

    def __init__(self, column: str, spec: ReleaseSpec, threads: int = 1) -> None:
        super().__init__(threads)
        # Built here, in the actor's process: an unseeded Privatizer keys its secure generator
        # from this process's os.urandom.
        self.release = ProcessRelease(spec)
        self.release.build()
        self.column = column

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        texts = list(batch[self.column])
        # A binary column holds UTF-8 with lone surrogates let through (see encode_texts): the
        # output is returned the same way.
        binary = bool(texts) and isinstance(texts[0], bytes)
        if binary:
            texts = decode_texts(texts)
        self.release.reset()
        out: list[str] = []
        rows = self.rows(batch)
        if rows is not None:
            for a, b in self.runs(rows):
                out += self.release.run(texts[a:b], start=int(rows[a]))
        else:  # unseeded: a secure generator, the position draws nothing
            out = self.release.run(texts)
        batch[self.column] = np.array(encode_texts(out) if binary else out, dtype=object)
        return self.with_stats(batch, len(out), self.release.stats())


class _VectorWorker(_Worker):
    """Releases a vector column with an embedding mechanism, chunk streams as in one process
    (:func:`textdp.mechanisms.embedding.release.release_rows`)."""

    def __init__(self, column: str, mechanism: Any, n_rows: int, seed: int | None,
                 threads: int = 1) -> None:
        super().__init__(threads)
        self.column, self.mechanism, self.n_rows, self.seed = column, mechanism, n_rows, seed
        self.rng = _random.secure_generator() if seed is None else None  # in this process

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        from textdp.mechanisms.embedding.release import release_rows

        t0 = time.perf_counter()
        rows = self.rows(batch)
        X = np.asarray(np.stack(list(batch[self.column])), dtype=np.float64)
        if self.seed is None:  # the actor's secure generator, wherever the rows are
            out = release_rows(self.mechanism, X, rng=self.rng)
        else:
            out = np.empty((X.shape[0], self.mechanism.output_dim(X.shape[1])))
            for a, b in self.runs(rows):  # each run of consecutive rows as the local run
                out[a:b] = release_rows(self.mechanism, X[a:b], first=int(rows[a]),
                                        n_rows=self.n_rows, seed=self.seed)
        batch[self.column] = list(out)
        stats = {"vectors": int(X.shape[0]), "dim_in": int(X.shape[1]),
                 "dim_out": int(out.shape[1]), "seconds": time.perf_counter() - t0}
        return self.with_stats(batch, X.shape[0], stats)


class _DocumentWorker(_Worker):
    """One DeepCandidate / Truncation release per row of sentence embeddings."""

    def __init__(self, column: str, output_column: str, mechanism: Any, seed: int | None,
                 threads: int = 1) -> None:
        super().__init__(threads)
        self.column, self.output_column, self.mechanism, self.seed = (column, output_column,
                                                                      mechanism, seed)
        self.rng = _random.secure_generator() if seed is None else None  # in this process

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        from textdp.mechanisms.document import release_documents as release

        t0 = time.perf_counter()
        rows = self.rows(batch)
        docs = [np.asarray(np.stack(list(d)), dtype=np.float64) for d in batch[self.column]]
        if rows is None:  # unseeded: one call, the actor's secure generator
            rows = np.arange(len(docs))
        parts = [release(self.mechanism, docs[a:b], seed=self.seed, rng=self.rng,
                         start=int(rows[a])) for a, b in self.runs(rows)]
        out = np.vstack(parts) if parts else np.zeros((0, self.mechanism.dim))
        batch[self.output_column] = list(out)
        stats = {"sentence_counts": [len(d) for d in docs], "seconds": time.perf_counter() - t0}
        return self.with_stats(batch, len(docs), stats)


def map_with_pool(ds: Any, worker: type, kwargs: dict[str, Any], *, workers: int,
                  batch_size: int, threads: int = 1) -> Any:
    """``map_batches`` over a fixed pool of ``workers`` actors of one CPU and ``threads`` BLAS
    threads each. Ray Data's actor pools restart a dead actor and retry its batch by default
    (``max_restarts=-1``, ``max_task_retries=-1``; tests/integrations/test_ray.py kills one)."""
    ray = require_ray()
    return ds.map_batches(
        worker, fn_constructor_kwargs={**kwargs, "threads": threads}, batch_size=batch_size,
        batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1)


def prepare(ds: Any, block_rows: int, *, indexed: bool, workers: int) -> tuple[Any, int]:
    """The input the pool maps, materialised in order, and its row count.

    With the global row index, in blocks of ``block_rows`` rows (:func:`with_row_index`), where
    the output depends on it (a seed) or where the input's own blocks
    are too few to keep ``workers`` actors busy (a task maps whole blocks: one Parquet file is
    one block, one actor). Otherwise as it is: an unseeded row draws from its actor's secure
    generator wherever it lands, and numbering the rows costs Ray jobs on every call.
    """
    if ROW in ds.columns():
        raise ValueError(f"the dataset already has a column {ROW!r}")
    if indexed:
        return with_row_index(ds, block_rows)
    out = materialize_in_order(ds)
    n = out.count()
    if out.num_blocks() < min(TASKS_PER_WORKER * workers, -(-n // block_rows)):
        return with_row_index(out, block_rows)
    return out, n


def with_row_index(ds: Any, block_rows: int) -> tuple[Any, int]:
    """``ds`` with the global row index in :data:`ROW`, cut into blocks of ``block_rows`` rows
    (the last shorter), materialised; and its row count.

    The input is materialised once; its blocks (``to_arrow_refs``: in the dataset's order) are
    counted, and one task per output block concatenates the slices it covers and adds the
    index. Everything finishes before the pool starts (its actors hold the CPUs).
    """
    ray = require_ray()
    if ROW in ds.columns():
        raise ValueError(f"the dataset already has a column {ROW!r}")
    refs = materialize_in_order(ds).to_arrow_refs()
    count = _remote(_num_rows)
    sizes = ray.get([count.remote(r) for r in refs])
    ends = np.cumsum(sizes, dtype=np.int64)
    n = int(ends[-1]) if len(sizes) else 0
    if n == 0:
        return ds.materialize(), 0  # no rows: no batch reaches the pool
    starts = ends - np.asarray(sizes, dtype=np.int64)
    index = _remote(_indexed)
    pieces = []
    for first in range(0, n, block_rows):
        last = min(n, first + block_rows)
        blocks = np.flatnonzero((starts < last) & (ends > first)).tolist()
        cuts = [(max(first, int(starts[k])) - int(starts[k]),
                 min(last, int(ends[k])) - int(starts[k])) for k in blocks]
        pieces.append(index.remote(first, cuts, *(refs[k] for k in blocks)))
    return ray.data.from_arrow_refs(pieces).materialize(), n


def materialize_in_order(ds: Any) -> Any:
    """``ds`` materialised in its order, before a pool starts (its actors hold the CPUs that
    lazy read tasks would wait for)."""
    # A dataset runs with the DataContext copied when it was made: its own must keep the order
    # (e.g. the files of read_parquet) while it is materialised.
    options = ds.context.execution_options
    before, options.preserve_order = options.preserve_order, True
    try:
        return ds.materialize()
    finally:
        options.preserve_order = before


def _remote(fn: Any) -> Any:
    return require_ray().remote(fn)


def _num_rows(table: Any) -> int:
    return table.num_rows


def _indexed(first: int, cuts: list[tuple[int, int]], *tables: Any) -> Any:
    """Rows ``cuts[k]`` of ``tables[k]``, concatenated, numbered from ``first``."""
    import pyarrow as pa

    piece = pa.concat_tables([t.slice(a, b - a) for t, (a, b) in zip(tables, cuts, strict=True)])
    return piece.append_column(ROW, pa.array(np.arange(first, first + piece.num_rows)))


class preserve_order:
    """Context: Ray Data keeps the input's order (the output is in input order)."""

    def __enter__(self) -> None:
        from ray.data import DataContext

        self._options = DataContext.get_current().execution_options
        self._before = self._options.preserve_order
        self._options.preserve_order = True

    def __exit__(self, *exc: object) -> None:
        self._options.preserve_order = self._before


def collect_stats(ds: Any) -> Iterator[dict[str, Any]]:
    """The tallies of every output batch (the non-empty cells of :data:`STATS`) of a
    materialised dataset, read straight from its blocks in the object store (zero-copy Arrow):
    a ``select_columns`` pass would start a Ray Data job, seconds per call on a small cluster."""
    ray = require_ray()
    for ref in ds.to_arrow_refs():
        for cell in ray.get(ref).column(STATS).to_pylist():
            if cell:
                yield json.loads(cell)


def run_text(indexed: Any, driver: Privatizer, spec: ReleaseSpec, *, column: str, workers: int,
             batch_size: int, threads: int = 1, peak: dict[str, int] | None = None
             ) -> tuple[Any, Tallies]:
    """Privatise ``indexed`` (with :data:`ROW`) on the pool with the release ``spec`` (what the
    actors receive); returns the materialised output and the sum of the workers' tallies (the
    largest worker RSS goes to ``peak["rss"]``)."""
    check_no_generator(spec)
    kwargs = {"column": column, "spec": spec}
    out = map_with_pool(indexed, _TextWorker, kwargs, workers=workers, batch_size=batch_size,
                        threads=threads).materialize()
    total = Tallies.zero()
    for stats in collect_stats(out):
        total = total + Tallies.from_json(stats["tallies"])
        if peak is not None:
            peak["rss"] = max(peak.get("rss", 0), stats["peak_rss"])
    # A column projection over the materialised blocks: no second copy of the output.
    return out.drop_columns([STATS]), total


def run_words(dataset: Any, column: str, spec: ReleaseSpec, workers: int | None,
               batch_size: int, threads: int) -> tuple[Any, dict[str, Any]]:
    require_ray()
    t0 = time.perf_counter()
    workers = check_workers(workers)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if column not in dataset.columns():
        raise ValueError(f"the dataset has no column {column!r} "
                         f"({names_listing(column, dataset.columns())})")
    # Built on the driver too: the report needs the mechanism (guarantee, vocabulary,
    # deniability), and the actors' tallies are added to it.
    driver = spec.privatizer()
    peak: dict[str, int] = {}
    with preserve_order():
        indexed, n = prepare(dataset, batch_size,
                             indexed=spec.seed is not None, workers=workers)
        out, tallies = run_text(
            indexed, driver, spec, column=column, workers=workers,
            batch_size=batch_size, threads=threads, peak=peak) if n else (indexed, Tallies.zero())
    return out, driver.report(tallies, **engine_context(workers, time.perf_counter() - t0,
                                                        peak.get("rss", 0)))


def run_vectors(dataset: Any, mechanism: Any, column: str, **pool: Any
                     ) -> tuple[Any, dict[str, Any]]:
    from textdp.mechanisms.embedding.release import CHUNK_ROWS
    from textdp.privacy.report import ReportContext, embedding_report

    t0 = time.perf_counter()
    out, stats, n, seed, workers = _release(
        dataset, _VectorWorker, lambda n: {"column": column, "mechanism": mechanism, "n_rows": n},
        **pool)
    dim_in = stats[0]["dim_in"] if stats else 0
    context = ReportContext(**engine_context(workers, time.perf_counter() - t0))
    return out, embedding_report(mechanism, vectors_in=n, vectors_out=n, dim_in=dim_in,
                                 dim_out=stats[0]["dim_out"] if stats else 0, seed=seed,
                                 seconds=sum(s["seconds"] for s in stats),
                                 chunk_rows=CHUNK_ROWS if seed is not None else None,
                                 context=context)


def run_documents(dataset: Any, mechanism: Any, column: str, output_column: str,
                       **pool: Any) -> tuple[Any, dict[str, Any]]:
    from textdp.privacy.report import ReportContext, document_report

    t0 = time.perf_counter()
    out, stats, n, seed, workers = _release(
        dataset, _DocumentWorker,
        lambda n: {"column": column, "output_column": output_column, "mechanism": mechanism},
        **pool)
    counts = [k for s in stats for k in s["sentence_counts"]]
    context = ReportContext(**engine_context(workers, time.perf_counter() - t0))
    return out, document_report(mechanism, sentence_counts=counts, seed=seed,
                                seconds=sum(s["seconds"] for s in stats), context=context)


def _release(dataset: Any, worker: type, kwargs_for: Any, *, seed: int | None,
             workers: int | None, batch_size: int, threads: int
             ) -> tuple[Any, list[dict[str, Any]], int, Any, int]:
    """What :func:`release_vectors` and :func:`release_documents` share: check, prepare the rows,
    run ``worker`` (constructed with ``kwargs_for(rows)`` and the seed) on the pool. Returns (the
    output without the tallies, the tallies, the rows, the checked seed, the workers)."""
    require_ray()
    workers = check_workers(workers)
    with preserve_order():
        indexed, n = prepare(dataset, batch_size, indexed=seed is not None, workers=workers)
        kwargs = {**kwargs_for(n), "seed": seed}
        check_no_generator(kwargs["mechanism"])
        out, stats = _map_and_collect(indexed, n, worker, kwargs, workers=workers,
                                      batch_size=batch_size, threads=threads)
    return out, stats, n, seed, workers


def _map_and_collect(indexed: Any, n: int, worker: type, kwargs: dict[str, Any],
                     **pool: Any) -> tuple[Any, list[dict[str, Any]]]:
    """The pool's materialised output without the tallies, and the tallies (none for no rows)."""
    if n == 0:
        return indexed, []
    out = map_with_pool(indexed, worker, kwargs, **pool).materialize()
    stats = list(collect_stats(out))
    # A column projection over the materialised blocks: no second copy of the output.
    return out.drop_columns([STATS]), stats


def texts_of(ds: Any, column: str = "text") -> Iterable[str]:
    """The strings of ``column``, in order (the ledger's fingerprint; tests and examples); a
    binary column is decoded as :func:`encode_texts` wrote it."""
    for batch in ds.iter_batches(batch_format="numpy"):
        values = batch[column].tolist()
        yield from decode_texts(values) if values and isinstance(values[0], bytes) else values


def encode_texts(texts: Iterable[str]) -> list[bytes]:
    """Texts as UTF-8 bytes for a binary Arrow column, lone surrogates included.

    A Python string may hold a lone surrogate (JSON's ``"\\ud800"`` decodes to one, and the local
    engine privatises and writes it back as that escape), but an Arrow string column is strict
    UTF-8 and refuses it; the command line's Ray engine therefore ships texts as bytes encoded
    with ``surrogatepass``, which :func:`decode_texts` reverses exactly."""
    return [t.encode("utf-8", "surrogatepass") for t in texts]


def decode_texts(values: Iterable[bytes]) -> list[str]:
    """The inverse of :func:`encode_texts`."""
    return [v.decode("utf-8", "surrogatepass") for v in values]
