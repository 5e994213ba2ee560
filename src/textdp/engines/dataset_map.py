"""The ``datasets.map`` engine: one column of a Hugging Face ``Dataset`` privatised by
``Dataset.map(batched=True, with_indices=True)``, in this process or ``num_proc`` workers — the
engine under :func:`textdp.integrations.datasets.privatize` (the front).

* **Workers.** The map function (:class:`MapWorker`) pickles as the release spec
  (:class:`textdp.engines.worker.ProcessRelease`), never a generator: each process builds its
  mechanism once and its own secure generator (and :mod:`textdp._random` re-keys a secure
  generator that is pickled or forked, so no two processes can share a stream). Document i (row
  order, missing values skipped) starts at its global position, so a seeded run is the same for
  any ``num_proc`` and ``batch_size``.
* **The cache.** ``datasets`` caches a map's result under a fingerprint and replays it when the
  fingerprint comes again (datasets #2775, #3297): replaying private noise would release the
  same noisy text as if it were new. An unseeded run therefore always gets a fresh random
  fingerprint (and ``load_from_cache_file=False``); a seeded run gets one derived from the
  input's fingerprint, the column, the seed, the mechanism and its parameters, the run's
  options, the vocabulary's fingerprint and the textdp version (:func:`cache_fingerprint`) — so
  re-running it may replay the cache, which for a seeded run gives the same output anyway.
* **The report.** Each batch's tallies travel back in :data:`COUNTERS_COLUMN` (removed before
  returning) and are summed into one report: ``engine: "datasets"``, ``workers``, the wall time
  of the whole call.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from typing import Any

import numpy as np

from textdp._guide import names_listing
from textdp.engines.worker import ProcessRelease
from textdp.runner import Outcome
from textdp.spec import ReleaseSpec
from textdp.tallies import Tallies

__all__ = ["COUNTERS_COLUMN", "Column", "MapEngine", "MapWorker", "cache_fingerprint", "check_column"]

#: The temporary column that carries each batch's counters (removed from the result).
COUNTERS_COLUMN = "__textdp_counters__"


def check_column(ds: Any, column: str) -> None:
    """A column this engine can privatise: present, of strings (or all null), and the dataset
    without a column of the engine's reserved name."""
    if column not in ds.column_names:
        raise KeyError(f"no column {column!r}; {names_listing(column, ds.column_names)}")
    feature = ds.features[column]
    if getattr(feature, "dtype", None) not in ("string", "large_string", "null"):
        raise TypeError(f"column {column!r} holds {feature}, expected strings")
    if COUNTERS_COLUMN in ds.column_names:
        raise ValueError(f"the column name {COUNTERS_COLUMN!r} is reserved")


class MapWorker:
    """The function given to ``Dataset.map``: picklable, holding the release spec, not the state
    (:class:`textdp.engines.worker.ProcessRelease`: each worker builds its own Privatizer)."""

    def __init__(self, spec: ReleaseSpec, column: str, null_rows: np.ndarray) -> None:
        self.release, self.column, self.null_rows = ProcessRelease(spec), column, null_rows

    def __call__(self, batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        values = batch[self.column]
        rows = [i for i, v in enumerate(values) if v is not None]
        out = list(values)
        if rows:
            first = int(indices[rows[0]])
            start = first - int(np.searchsorted(self.null_rows, first))
            texts = self.release.run([values[i] for i in rows], start=start)
            for i, t in zip(rows, texts, strict=True):
                out[i] = t
        counters = [None] * len(values)
        if values:
            counters[0] = json.dumps(self.release.delta().to_json())
        return {self.column: out, COUNTERS_COLUMN: counters}


def null_rows(ds: Any, column: str) -> np.ndarray:
    """Sorted positions of the rows whose ``column`` is null (in the dataset's own row order)."""
    if getattr(ds, "_indices", None) is None:
        array = ds.data.column(column)
    else:  # a selected or shuffled view: its rows, in its order
        array = ds.select_columns([column]).with_format("arrow")[column]
    if array.null_count == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow.compute as pc

    return np.flatnonzero(pc.is_null(array).to_numpy(zero_copy_only=False)).astype(np.int64)


def cache_fingerprint(ds: Any, column: str, spec: ReleaseSpec, mech: Any) -> str:
    """Fresh random bytes for an unseeded run; else a digest of everything the output depends on."""
    if spec.seed is None:
        return os.urandom(20).hex()
    from textdp._version import __version__

    recipe = {"textdp": __version__, "input": ds._fingerprint, "column": column,
              "seed": spec.seed, "mechanism": mech.name, "parameters": mech.parameters,
              "vocabulary": mech.vocabulary.fingerprint, "policy": repr(spec.policy),
              "allocation": repr(spec.allocation), "batch_chars": spec.batch_chars,
              "unchanged_warning": spec.unchanged_warning}
    blob = json.dumps(recipe, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()[:40]


@dataclasses.dataclass(frozen=True)
class Column:
    """The runner's source (:func:`textdp.runner.run_release`): one column of a dataset."""

    ds: Any
    column: str

    @property
    def name(self) -> str:
        return f"dataset column {self.column!r}"

    def fingerprint(self) -> tuple[str, int]:
        """The ledger's fingerprint of the non-missing texts of the column in row order."""
        from textdp.privacy.fingerprint import InputHash

        h = InputHash("texts")
        for chunk in self.ds.data.column(self.column).chunks:  # never the whole column at once
            h.texts(t for t in chunk.to_pylist() if t is not None)
        return h.hexdigest(), h.count


@dataclasses.dataclass(frozen=True)
class MapEngine:
    """The runner's engine: ``Dataset.map`` over the source's column; the mapped dataset (the
    counters column removed) and the one report."""

    num_proc: int | None
    batch_size: int

    def run(self, spec: ReleaseSpec, source: Column, measurement: Any) -> Outcome:
        ds, column = source.ds, source.column
        parent = spec.privatizer()
        t0 = time.perf_counter()
        mapper = MapWorker(spec, column, null_rows(ds, column))
        fingerprint = cache_fingerprint(ds, column, spec, parent.mechanism)
        mapped = ds.map(mapper, batched=True, batch_size=self.batch_size, with_indices=True,
                        num_proc=self.num_proc, new_fingerprint=fingerprint,
                        load_from_cache_file=None if spec.seed is not None else False,
                        desc="textdp privatize")
        if COUNTERS_COLUMN in mapped.column_names:
            counters = mapped.data.column(COUNTERS_COLUMN).drop_null().to_pylist()
            result = mapped.remove_columns([COUNTERS_COLUMN])
        else:  # an empty Dataset: map() never called the mapper, so there is nothing to count
            counters, result = [], mapped
        wall = time.perf_counter() - t0
        tallies = sum((Tallies.from_json(json.loads(c)) for c in counters), Tallies.zero())
        # The performance is the wall time of the call.
        tallies = dataclasses.replace(tallies, nanoseconds=round(wall * 1e9) if counters else 0)
        return Outcome(result, parent.report(
            tallies, engine="datasets", workers=int(self.num_proc or 1), sections={
                "datasets": {"column": column, "rows": len(ds), "fingerprint": fingerprint,
                             "fingerprint_source": "random (unseeded)" if spec.seed is None
                             else "derived from input, seed, mechanism, parameters, vocabulary",
                             "document_numbering": "row order, missing values skipped"}}))
