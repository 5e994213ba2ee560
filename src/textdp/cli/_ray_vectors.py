"""``textdp embed`` and ``textdp docembed`` with ``--engine ray``: vector and document releases on
a Ray actor pool, files in and files out on the workers (issue 25, item 5).

The same shape as ``textdp privatize --engine ray`` (:mod:`textdp.cli._ray`, whose ``start``,
``RayLogs``, INPUT resolution and staging are used as they are): INPUT may be a directory, a
quoted glob pattern, several files or a URI of a pyarrow filesystem (``s3://``, ``gs://``,
``file://``), resolved and refused exactly as privatize's (:func:`textdp.cli._ray.check_engine`
with the command's :class:`~textdp.cli._ray.InputRules`). One pool of ``--workers`` actors per
job, each receiving the mechanism built once on the driver (a PrivEmb / LaplaceVector /
DeepCandidate object holds no generator: :func:`textdp.integrations.ray.check_no_generator`) and
building its encoder once; each actor reads a whole input file, releases it and writes the output
file into privatize's staging (a hidden directory beside the output, or a hidden prefix on an
object store); the driver holds counts only. The staged files are handed over to the command's
atomic group with the report when every file succeeded (renamed locally, moved on an object
store when the group commits); a failure or an interrupt kills the actors and removes the
staging.

Seeded runs give the local engine's values: every row keeps its position in the whole input
(files in name order; several INPUTs in the order given) — from the ``.npy`` headers and
Parquet footers for vectors, from a counting pass on the pool for texts — and draws from the
local engine's streams: vector chunk c (rows 4096·c …,
:data:`textdp.mechanisms.embedding.release.CHUNK_ROWS`) from ``document_generator(seed, c)``, a
chunk that spans two files being drawn in full by both actors with the other file's rows
as zeros (a row's output depends on its own input and the chunk's draws only); document i from
``document_generator(seed, i)``. The float64 outputs are equal value for value to the local
engine's; the ``.npy`` files are then byte-identical, the Parquet files equal as tables.

What differs from the local engine, and why:

* ``embed``'s PrivEmb audit samples pairs within each file (each file gets its share of
  ``--audit-pairs`` by rows; no pair spans two files: an actor holds one file) and the report
  merges them: counts summed, the largest ratio, each quantile the largest of the files' — an
  upper bound of the pooled quantile, the side that matters for privacy. One file: the local
  engine's audit, pair for pair.
* ``--ledger``: the fingerprint is the local engine's (the files in name order as one input),
  computed in a streaming pass on the driver before the release, and computed again at commit to
  check that the input did not change (the workers do not return the records).

Inputs a worker cannot open (standard input) are refused in one line: ``embed`` reads regular
files only, and ``docembed --engine ray`` needs a file too.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from textdp.cli._common import CLIError, check_new_file, one_line, progress_bar
from textdp.cli._ray import (
    ACTOR_RETRIES,
    RayLogs,
    _for_worker,
    _kill,
    _remove_empty,
    _see,
    _size,
    _Staging,
    pool_map,
    start,
    stop,
)
from textdp.io import FileError
from textdp.io.streams import is_stdio, open_output
from textdp.io.uri import RemoteFile, check_output_file, check_remote_input

__all__ = ["DocumentFileWorker", "VectorFileWorker", "check_remote_pair", "file_check",
           "refuse_stdin", "run_docembed", "run_embed"]


# --- paths ---------------------------------------------------------------------------------------
# INPUT and OUTPUT are resolved and checked as privatize's (:func:`textdp.cli._ray.resolve_paths`,
# :func:`textdp.cli._ray.check_engine`), with each command's :class:`~textdp.cli._ray.InputRules`.

def refuse_stdin(engine: str, inputs: list[Any]) -> None:
    """A worker cannot open standard input: refused in one line with ``--engine ray``."""
    if engine == "ray" and any(is_stdio(p) for p in inputs):
        raise CLIError("--engine ray: the workers read files, not standard input (save the input "
                       "to a file first, or use --engine local)")


def file_check(suffixes: tuple[str, ...]) -> Callable[[Any, str | None], None]:
    """``InputRules.check`` of vector (or text) files: one of ``suffixes``, a non-empty file
    (local, or a :class:`~textdp.io.uri.RemoteFile`)."""
    def check(path: Any, format: str | None = None) -> None:
        suffix = posixpath.splitext(os.fspath(path))[1].lower()
        if suffix not in suffixes:
            raise FileError(path, None, f"not an input file of type {', '.join(suffixes)}")
        if isinstance(path, RemoteFile):
            check_remote_input(path, suffix, None)
        elif not path.is_file():
            raise FileError(path, None, "no such file" if not path.exists() else
                            "not a regular file")
        elif path.stat().st_size == 0:
            raise FileError(path, None, "empty file (0 bytes)")

    return check


def check_remote_pair(src: Any, dst: Any, check: Callable[[Any, str | None], object],
                      output_suffixes: tuple[str, ...]) -> None:
    """One input file and its output file of ``embed`` or ``docembed`` where either is a URI
    (both local: the command's own checks, as the local engine's)."""
    check(src, None)
    suffix = posixpath.splitext(os.fspath(dst))[1].lower()
    if suffix not in output_suffixes:
        raise FileError(dst, None, f"unsupported output type {suffix or '(none)'!r}; use "
                                   f"{' or '.join(output_suffixes)}")
    if isinstance(dst, RemoteFile):
        check_output_file(dst, src)
    else:
        check_new_file(dst, "output")


# --- the workers ---------------------------------------------------------------------------------

class VectorFileWorker:
    """An actor of ``embed``'s pool: holds the mechanism (built on the driver, no generator) and
    builds the encoder once (``--encode``), then releases whole files into staging paths. An
    unseeded actor draws from its own secure generator, keyed in its own process."""

    def __init__(self, mechanism: Any, *, dim: int, vector_field: str, text_field: str,
                 encoder: tuple[str, str | None] | None, batch_size: int, seed: int | None,
                 threads: int = 1) -> None:
        from textdp import _random
        from textdp.integrations.ray import limit_threads

        limit_threads(threads)
        self.mechanism, self.dim, self.seed = mechanism, dim, seed
        self.vector_field, self.text_field, self.batch_size = vector_field, text_field, batch_size
        self.encoder = _build_encoder(*encoder) if encoder is not None else None
        self.rng = _random.secure_generator() if seed is None else None

    def count(self, src: str | RemoteFile) -> int | str:
        """The texts of ``src`` (``--encode``: the counting pass), or its one-line error."""
        return _count_texts(src, self.text_field)

    def release(self, index: int, src: str | RemoteFile, dst: str, staged: str | RemoteFile,
                first: int, n_rows: int, audit_pairs: int, audit_stream: int) -> dict[str, Any]:
        """Release file ``src`` (its first row is row ``first`` of the ``n_rows`` of the whole
        input) into ``staged``; audit ``audit_pairs`` of its pairs (a seeded run samples them
        from stream ``audit_stream``). Returns counts, the audit and the peak RSS, or the
        one-line problem with the file (``error``)."""
        from textdp.integrations.ray import peak_rss
        from textdp.io.vectors import first_non_finite_row, read_vectors, write_vectors

        t0 = time.perf_counter()
        empty = None
        try:
            if self.encoder is not None:
                from textdp.encoders import encode_file

                X, empty = encode_file(src, self.encoder, text_field=self.text_field,
                                       batch_size=self.batch_size)
            else:
                X = read_vectors(src, self.vector_field)
            if X.shape[0] == 0:
                raise FileError(src, None, "no vectors")
            if X.shape[1] != self.dim:
                raise FileError(src, None, f"vectors of dimension {X.shape[1]}, but the first "
                                           f"file's have dimension {self.dim}")
            bad = first_non_finite_row(X)
            if bad is not None:
                raise FileError(src, bad + 1, "vector with NaN or infinity", unit="row")
            W = self._release(X, first, n_rows)
            audit, problem = self._audit(X, audit_pairs, audit_stream)
            write_vectors(staged, W, self.vector_field, suffix=posixpath.splitext(dst)[1])
        except FileError as exc:
            return {"index": index, "error": str(exc)}
        return {"index": index, "rows": int(X.shape[0]), "dim_out": int(W.shape[1]),
                "empty": empty, "audit": audit, "audit_problem": problem,
                "summary": {"input": os.fspath(src), "output": dst, "records_in": int(X.shape[0]),
                            "records_out": int(W.shape[0])},
                "seconds": time.perf_counter() - t0, "peak_rss": peak_rss()}

    def _release(self, X: np.ndarray, first: int, n_rows: int) -> np.ndarray:
        """The local engine's output for rows ``first`` … of the whole input (see the module)."""
        from textdp import _random
        from textdp.mechanisms.embedding.release import CHUNK_ROWS

        mech, n = self.mechanism, X.shape[0]
        out = np.empty((n, mech.output_dim(X.shape[1])), dtype=np.float64)
        if self.seed is None:
            for a in range(0, n, CHUNK_ROWS):
                out[a:a + CHUNK_ROWS] = mech.release(X[a:a + CHUNK_ROWS], self.rng)
            return out
        for c in range(first // CHUNK_ROWS, (first + n - 1) // CHUNK_ROWS + 1):
            lo, hi = c * CHUNK_ROWS, min((c + 1) * CHUNK_ROWS, n_rows)  # chunk c, global rows
            a, b = max(lo, first), min(hi, first + n)  # this file's rows in it
            if (a, b) == (lo, hi):
                block = X[a - first:b - first]
            else:  # the other files' rows as zeros: only this file's rows are kept
                block = np.zeros((hi - lo, X.shape[1]), dtype=np.float64)
                block[a - lo:b - lo] = X[a - first:b - first]
            released = mech.release(block, _random.document_generator(self.seed, c))
            out[a - first:b - first] = released[a - lo:b - lo]
        return out

    def _audit(self, X: np.ndarray, pairs: int, stream: int) -> tuple[Any, str | None]:
        from textdp import _random
        from textdp.mechanisms.embedding.release import audit_projection

        rng = _random.document_generator(self.seed, stream) if self.seed is not None else None
        try:
            return audit_projection(self.mechanism, X, max_pairs=pairs, rng=rng), None
        except ValueError as exc:  # e.g. all vectors of the file identical
            return None, one_line(exc)


class DocumentFileWorker:
    """An actor of ``docembed``'s pool: holds DeepCandidate (built on the driver) and builds the
    sentence encoder once; releases whole files of documents into staging ``.npy`` paths."""

    def __init__(self, mechanism: Any, *, encoder: str, text_field: str, batch_size: int,
                 seed: int | None, threads: int = 1) -> None:
        from textdp import _random
        from textdp.integrations.ray import limit_threads

        limit_threads(threads)
        self.mechanism, self.seed = mechanism, seed
        self.text_field, self.batch_size = text_field, batch_size
        self.encoder = _build_encoder(encoder, None)
        self.rng = _random.secure_generator() if seed is None else None

    def count(self, src: str | RemoteFile) -> int | str:
        """The documents of ``src`` (the counting pass of a seeded run), or its error."""
        return _count_texts(src, self.text_field)

    def release(self, index: int, src: str | RemoteFile, dst: str, staged: str | RemoteFile,
                first: int) -> dict[str, Any]:
        """Release every document of ``src`` (its first is document ``first`` of the whole
        input) into ``staged``; returns the sentence counts (released too: the guarantee covers
        documents of the same count) or the one-line problem (``error``)."""
        from textdp.encoders import iter_document_embeddings
        from textdp.integrations.ray import peak_rss
        from textdp.mechanisms.document import release_documents

        t0 = time.perf_counter()
        rows: list[np.ndarray] = []
        counts: list[int] = []
        try:
            for start_, docs in iter_document_embeddings(src, self.encoder,
                                                         text_field=self.text_field,
                                                         batch_size=self.batch_size):
                rows.append(release_documents(self.mechanism, docs, seed=self.seed, rng=self.rng,
                                              start=first + start_))
                counts += [d.shape[0] for d in docs]
        except FileError as exc:
            return {"index": index, "error": str(exc)}
        out = np.vstack(rows) if rows else np.zeros((0, self.mechanism.candidates.dim))
        try:
            with open_output(staged) as f:  # a local file, or an object under the staging prefix
                np.save(f, out)
        except FileError as exc:
            return {"index": index, "error": str(exc)}
        return {"index": index, "counts": counts, "dim": int(out.shape[1]),
                "summary": {"input": os.fspath(src), "output": dst, "records_in": len(counts),
                            "records_out": int(out.shape[0])},
                "seconds": time.perf_counter() - t0, "peak_rss": peak_rss()}


def _build_encoder(name: str, vocabulary: str | None) -> Any:
    """The encoder the driver built, built again in an actor's process (once)."""
    from textdp import encoders

    if vocabulary is not None:
        from textdp.cli._vocabulary import resolve_vocabulary

        return encoders.GloveMean(resolve_vocabulary(vocabulary))
    return encoders.load_sbert() if name == "sbert" else encoders.get_encoder(name)


def _count_texts(src: str | RemoteFile, text_field: str) -> int | str:
    from textdp.io import open_records

    try:
        with open_records(src, text_field=text_field) as reader:
            return sum(len(batch.texts) for batch in reader.batches(8192))
    except FileError as exc:
        return str(exc)


# --- the driver ----------------------------------------------------------------------------------

class Job:
    """One Ray job of ``embed`` or ``docembed``: the runtime (started, or the caller's / the
    cluster's), Ray's log lines off stderr, and on exit the runtime shut down if it was started
    here. ``run`` gives every pair to the pool and moves the staged outputs into ``files``."""

    def __init__(self, workers: int | None, address: str | None, verbose: bool) -> None:
        self.workers, self.address = workers, address
        self.logs = RayLogs(verbose=verbose)
        self.ray: Any = None
        self.own = False
        self.created: list[Path] = []  # the output directory of a directory, once made
        self.worker_peak = 0

    def __enter__(self) -> Job:
        self.logs.__enter__()
        try:
            self.ray, self.own = start(self.workers, self.address, self.logs, data=False)
            self.workers = self.workers or max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        except BaseException as exc:
            self.logs.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None:
                for directory in self.created:
                    _remove_empty(directory)
            if self.own:
                stop(self.ray)
        finally:
            self.logs.__exit__(exc_type, exc, tb)
        if isinstance(exc, Exception) and type(exc).__module__.startswith("ray"):
            raise CLIError(f"Ray: {one_line(exc)}{_see(self.logs)}") from None

    def pool(self, worker: type, kwargs: dict[str, Any], n: int) -> list[Any]:
        """``min(workers, n)`` actors of ``worker``; a dead actor is restarted and its file
        rewritten, a bounded number of times (a file that kills every actor fails the job)."""
        actor = self.ray.remote(num_cpus=1, max_restarts=ACTOR_RETRIES,
                                max_task_retries=ACTOR_RETRIES)(worker)
        return [actor.remote(**kwargs) for _ in range(min(self.workers, n))]

    def counts(self, actors: list[Any], pairs: list[tuple[Any, Any]]) -> list[int]:
        """Each file's texts, counted on the pool in parallel (the first malformed file in name
        order is the error, as the local engine would say)."""
        out = list(pool_map(actors, "count", [(_for_worker(src),) for src, _ in pairs],
                            file_at=0, ordered=True))
        for n in out:
            if isinstance(n, str):
                raise CLIError(n)
        return out

    def run(self, actors: list[Any], pairs: list[tuple[Any, Any]], output: Any,
            args: Callable[[int], tuple[Any, ...]], files: Any, what: str
            ) -> list[dict[str, Any]]:
        """Release pair i with ``actor.release(i, src, dst, staged, *args(i))``, the largest
        files first, into privatize's staging (:class:`textdp.cli._ray._Staging`: a hidden
        directory beside ``output``, or a hidden prefix on an object store); when every file
        succeeded, hand the staged outputs over to ``files``. Returns the workers' answers in
        name order."""
        stage = _Staging(pairs, output)
        try:
            order = sorted(range(len(pairs)), key=lambda i: -_size(pairs[i][0]))
            staged = [stage.path_for(i, dst) for i, (_, dst) in enumerate(pairs)]
            items = [(i, _for_worker(pairs[i][0]), os.fspath(pairs[i][1]),
                      _for_worker(staged[i]), *args(i)) for i in order]
            answers: dict[int, dict[str, Any]] = {}
            bar = progress_bar(what)(len(pairs), "files")
            try:
                for out in pool_map(actors, "release", items, file_at=1, ordered=False):
                    if "error" in out:
                        raise CLIError(out["error"])
                    answers[out["index"]] = out
                    self.worker_peak = max(self.worker_peak, out["peak_rss"])
                    bar.update(1)
            finally:
                bar.close()
            stage.hand_over(pairs, staged, files, self.created)
        finally:
            for a in actors:  # before the staging directory goes: no actor writes there any more
                _kill(self.ray, a)
            stage.remove()
        return [answers[i] for i in range(len(pairs))]

    def context(self, wall: float, io: dict[str, Any]) -> dict[str, Any]:
        """The report's context: the local engine's io, plus the engine, workers and RSS."""
        from textdp.integrations.ray import engine_context, peak_rss

        return {**engine_context(self.workers, wall, self.worker_peak),
                "driver_peak_rss_bytes": peak_rss(), "io": io}


def io_section(input: Any, output: Any, answers: list[dict[str, Any]], single: bool,
               **extra: Any) -> dict[str, Any]:
    """The local engine's io section for one file; for a directory, summed, with each file's
    (``input``: a path, or the tuple of several INPUTs)."""
    summaries = [a["summary"] for a in answers]
    if isinstance(input, tuple):
        input = [os.fspath(p) for p in input]
    else:
        input = os.fspath(input)
    if single:
        return {"input": input, "output": os.fspath(output),
                "records_in": summaries[0]["records_in"],
                "records_out": summaries[0]["records_out"], **extra}
    return {"input": input, "output": os.fspath(output), "files": summaries,
            "records_in": sum(s["records_in"] for s in summaries),
            "records_out": sum(s["records_out"] for s in summaries), **extra}


# --- embed ---------------------------------------------------------------------------------------

def shapes(pairs: list[tuple[Any, Any]], vector_field: str) -> list[tuple[int, int]]:
    """Each input's (rows, dimension) from its header or footer; one dimension for all."""
    from textdp.io.vectors import vector_shape

    out = [vector_shape(src, vector_field) for src, _ in pairs]
    for (src, _), (n, d) in zip(pairs, out, strict=True):
        if n == 0:
            raise FileError(src, None, "no vectors")
        if d != out[0][1]:
            raise FileError(src, None, f"vectors of dimension {d}, but {pairs[0][0]} has "
                                       f"dimension {out[0][1]}; every file must have one")
    return out


def vector_fingerprint(paths: list[Any], vector_field: str, n: int, d: int
                       ) -> Callable[[], tuple[str, int]]:
    """The local engine's fingerprint of the vectors of ``paths`` read as one input, in one
    streaming pass on the driver (one block in memory at a time)."""
    def fingerprint() -> tuple[str, int]:
        from textdp.io.vectors import iter_vectors
        from textdp.privacy.fingerprint import InputHash

        blocks: Iterator[np.ndarray] = chain.from_iterable(
            iter_vectors(p, vector_field) for p in paths)
        try:
            h = InputHash("vectors").vector_blocks(n, d, blocks)
        except ValueError as exc:  # a file changed since its header or footer was read
            where = paths[0] if len(paths) == 1 else paths[0].parent
            raise FileError(where, None, f"changed while it was read ({exc})") from None
        return h.hexdigest(), h.count

    return fingerprint


def merge_audits(audits: list[Any]) -> Any:
    """One PrivEmb audit from the files' (see the module: no pair spans two files)."""
    from dataclasses import replace

    audits = [a for a in audits if a is not None]
    if len(audits) <= 1:
        return audits[0] if audits else None
    pairs = sum(a.n_pairs for a in audits)
    above = sum(a.count_above for a in audits)
    below = sum(a.fraction_below_1_minus_beta * a.n_pairs for a in audits)
    return replace(
        audits[0], n_points=sum(a.n_points for a in audits), n_pairs=pairs,
        exhaustive=False,  # the pairs across files were not evaluated
        n_identical=sum(a.n_identical for a in audits),
        max_ratio=max(a.max_ratio for a in audits), min_ratio=min(a.min_ratio for a in audits),
        quantiles={q: max(a.quantiles[q] for a in audits) for q in audits[0].quantiles},
        count_above=above, fraction_above=above / pairs if pairs else 0.0,
        fraction_below_1_minus_beta=below / pairs if pairs else 0.0, passed=above == 0)


def audit_shares(rows: list[int], pairs: int) -> list[int]:
    """``pairs`` split over the files in proportion to their rows, rounded (at least one each,
    when auditing: the sum may differ from ``pairs`` by a few): one file keeps them all."""
    total = sum(rows)
    if pairs <= 0 or total == 0:
        return [0] * len(rows)
    return [max(1, round(pairs * n / total)) for n in rows]


def run_embed(job: Job, pairs: list[tuple[Any, Any]], output: Any, *, mechanism: Any, dim: int,
              rows: list[int] | None, seed: int | None, vector_field: str, text_field: str,
              encoder: tuple[str, str | None] | None, batch_size: int, audit_pairs: int,
              files: Any) -> tuple[list[dict[str, Any]], Any, list[str]]:
    """Release every pair on the pool (``rows``: each file's vectors, None for texts: counted on
    the pool). Returns the workers' answers in name order, the merged audit and the audit
    problems (one line each)."""
    from textdp.integrations.ray import check_no_generator
    from textdp.mechanisms.embedding.release import AUDIT_KEY

    check_no_generator(mechanism)
    actors = job.pool(VectorFileWorker, {
        "mechanism": mechanism, "dim": dim, "vector_field": vector_field,
        "text_field": text_field, "encoder": encoder, "batch_size": batch_size, "seed": seed},
        len(pairs))
    if rows is None:
        rows = job.counts(actors, pairs)
        for (src, _), n in zip(pairs, rows, strict=True):
            if n == 0:
                raise FileError(src, None, "no texts")
    firsts = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(int).tolist()
    total = int(sum(rows))
    shares = audit_shares(rows, audit_pairs)
    single = len(pairs) == 1  # one file: the local engine's audit stream, pair for pair
    answers = job.run(actors, pairs, output, lambda i: (
        firsts[i], total, shares[i], AUDIT_KEY if single else AUDIT_KEY + 1 + i), files, "embed")
    problems = [f"{a['summary']['input']}: {a['audit_problem']}" for a in answers
                if a["audit_problem"]]
    return answers, merge_audits([a["audit"] for a in answers]), problems


# --- docembed ------------------------------------------------------------------------------------

def run_docembed(job: Job, pairs: list[tuple[Any, Any]], output: Any, *, mechanism: Any, encoder: str,
                 seed: int | None, text_field: str, batch_size: int, files: Any
                 ) -> list[dict[str, Any]]:
    """Release every pair on the pool; a seeded run first counts the documents of each file on
    the pool, so that document i of the whole input draws from stream i as locally."""
    from textdp.integrations.ray import check_no_generator

    check_no_generator(mechanism)
    actors = job.pool(DocumentFileWorker, {
        "mechanism": mechanism, "encoder": encoder, "text_field": text_field,
        "batch_size": batch_size, "seed": seed}, len(pairs))
    firsts = [0] * len(pairs)
    if seed is not None:
        counts = job.counts(actors, pairs)
        firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    return job.run(actors, pairs, output, lambda i: (firsts[i],), files, "docembed")
