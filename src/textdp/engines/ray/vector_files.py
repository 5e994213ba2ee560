"""``textdp embed`` and ``textdp docembed`` with ``--engine ray``: vector and document releases on
a Ray actor pool, files in and files out on the workers (issue 25, item 5).

The same shape as ``textdp privatize --engine ray`` (:mod:`textdp.engines.ray.text_files`: the
same runtime, logs, INPUT resolution and staging, :mod:`textdp.engines.ray.pool`): INPUT may be a
directory, a quoted glob pattern, several files or a URI of a pyarrow filesystem (``s3://``,
``gs://``, ``file://``), resolved and refused exactly as privatize's
(:func:`textdp.cli._inputs.check_engine` with the command's
:class:`~textdp.cli._inputs.InputRules`). One pool of ``--workers`` actors per job, each
receiving the mechanism built once on the driver (a PrivEmb / LaplaceVector / DeepCandidate
object holds no generator: :func:`textdp.engines.ray.runtime.check_no_generator`) and building
its encoder once; each actor reads a whole input file, releases it and writes the output file
into privatize's staging (a hidden directory beside the output, or a hidden prefix on an object
store); the driver holds counts only. The staged files are handed over to the command's atomic
group with the report when every file succeeded (renamed locally, moved on an object store when
the group commits); a failure or an interrupt kills the actors and removes the staging.

Seeded runs give the local engine's values: every row keeps its position in the whole input
(files in name order; several INPUTs in the order given) — from the ``.npy`` headers and
Parquet footers for vectors, from a counting pass on the pool for texts — and draws from the
local engine's streams (laid out once, :func:`textdp.mechanisms.embedding.release.release_rows`):
vector chunk c (rows 4096·c …) from ``document_generator(seed, c)``, a
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
from typing import Any

import numpy as np

from textdp.cli._common import one_line
from textdp.engines.ray.pool import Job
from textdp.io import FileError
from textdp.io.streams import open_output
from textdp.io.uri import RemoteFile

__all__ = ["DocumentFileWorker", "VectorFileWorker", "run_docembed", "run_embed", "shapes",
           "vector_fingerprint"]

class VectorFileWorker:
    """An actor of ``embed``'s pool: holds the mechanism (built on the driver, no generator) and
    builds the encoder once (``--encode``), then releases whole files into staging paths. An
    unseeded actor draws from its own secure generator, keyed in its own process."""

    def __init__(self, mechanism: Any, *, dim: int, vector_field: str, text_field: str,
                 encoder: tuple[str, str | None] | None, batch_size: int, seed: int | None,
                 threads: int = 1) -> None:
        from textdp import _random
        from textdp.engines.ray.runtime import limit_threads

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
        from textdp.engines.worker import peak_rss
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
        from textdp.mechanisms.embedding.release import release_rows

        return release_rows(self.mechanism, X, first=first, n_rows=n_rows, seed=self.seed,
                            rng=self.rng)

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
        from textdp.engines.ray.runtime import limit_threads

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
        from textdp.encoders import release_document_file
        from textdp.engines.worker import peak_rss

        t0 = time.perf_counter()
        try:
            out, counts = release_document_file(
                self.mechanism, src, self.encoder, text_field=self.text_field,
                batch_size=self.batch_size, seed=self.seed, rng=self.rng, first=first)
        except FileError as exc:
            return {"index": index, "error": str(exc)}
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
    from textdp.engines.ray.runtime import check_no_generator
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


def run_docembed(job: Job, pairs: list[tuple[Any, Any]], output: Any, *, mechanism: Any, encoder: str,
                 seed: int | None, text_field: str, batch_size: int, files: Any
                 ) -> list[dict[str, Any]]:
    """Release every pair on the pool; a seeded run first counts the documents of each file on
    the pool, so that document i of the whole input draws from stream i as locally."""
    from textdp.engines.ray.runtime import check_no_generator

    check_no_generator(mechanism)
    actors = job.pool(DocumentFileWorker, {
        "mechanism": mechanism, "encoder": encoder, "text_field": text_field,
        "batch_size": batch_size, "seed": seed}, len(pairs))
    firsts = [0] * len(pairs)
    if seed is not None:
        counts = job.counts(actors, pairs)
        firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    return job.run(actors, pairs, output, lambda i: (firsts[i],), files, "docembed")
