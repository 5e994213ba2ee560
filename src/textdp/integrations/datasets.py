"""Hugging Face ``datasets``: privatise a text column with ``Dataset.map(batched=True)``.

``privatize(ds, column="text", mechanism="mvc", epsilon=8)`` returns ``(new_dataset, report)``.

* **Which generator.** Documents are numbered in row order, skipping missing values (None is not
  a document and stays None) — with no missing value, the global row index that
  ``map(with_indices=True)`` passes. With a seed, document i draws from (seed, i)
  (:meth:`textdp.Privatizer.run` with ``start=``), so the output is the same for any
  ``num_proc`` and ``batch_size``, and byte-identical to ``textdp privatize --seed`` on a file of
  the same texts (``--null pass``) and to :func:`textdp.privatize`.
* **Workers.** With ``num_proc > 1`` the map function is pickled to worker processes. It carries
  the recipe of the mechanism, never a generator: each process builds its mechanism once and its
  own secure generator (and :mod:`textdp._random` re-keys a secure generator that is pickled or
  forked, so no two processes can share a stream).
* **The cache.** ``datasets`` caches a map's result under a fingerprint and replays it when the
  fingerprint comes again (datasets #2775, #3297): replaying private noise would release the same
  noisy text as if it were new. An unseeded run therefore always gets a fresh random fingerprint
  (and ``load_from_cache_file=False``); a seeded run gets one derived from the input's
  fingerprint, the column, the seed, the mechanism and its parameters, the run's options, the
  vocabulary's fingerprint and the textdp version — so re-running it may replay the cache, which
  for a seeded run gives the same output anyway.
* **The report.** Each batch's counters travel back in a temporary column (removed before
  returning) and are summed into one report: counts over all processes, one guarantee,
  ``engine: "datasets"``, ``workers`` (``num_proc``), wall time of the whole call.

``datasets`` is an extra: ``pip install -e '.[datasets]'`` from the repository root.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from typing import Any

import numpy as np

from textdp import mechanisms as registry
from textdp._guide import MissingExtra, install_hint, names_listing
from textdp.pipeline import Privatizer, build_mechanism
from textdp.tallies import Tallies

__all__ = ["privatize", "COUNTERS_COLUMN"]

#: The temporary column that carries each batch's counters (removed from the result).
COUNTERS_COLUMN = "__textdp_counters__"

_PRIVATIZER_OPTIONS = ("oov", "mask_token", "keep_stopwords", "unchanged_warning", "batch_chars",
                       "identifiers", "identifier_labels", "identifier_patterns", "deny_list",
                       "allocation", "phone_regions", "entities",
                       "allow_list")


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise MissingExtra(install_hint("datasets", "textdp.integrations.datasets")) from exc
    return datasets


class _Mapper:
    """The function given to ``Dataset.map``: picklable, holding the recipe, not the state."""

    def __init__(self, recipe: tuple[Any, float | None, dict[str, Any], Any],
                 options: dict[str, Any], seed: int | None, column: str,
                 null_rows: np.ndarray) -> None:
        self.recipe, self.options, self.seed = recipe, options, seed
        self.column, self.null_rows = column, null_rows
        self._runner: Privatizer | None = None
        self._before: dict[str, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # A worker builds its own Privatizer (and secure generator) from the recipe.
        return {**self.__dict__, "_runner": None, "_before": None}

    def runner(self) -> Privatizer:
        if self._runner is None:
            mechanism, epsilon, params, vocabulary = self.recipe
            if not isinstance(mechanism, str):
                mech = mechanism
            else:
                mech = registry.create(mechanism, vocabulary, epsilon=epsilon, **params)
            self._runner = Privatizer(mech, seed=self.seed, **self.options)
            self._before = self._runner.tallies()
        return self._runner

    def __call__(self, batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        runner = self.runner()
        values = batch[self.column]
        rows = [i for i, v in enumerate(values) if v is not None]
        out = list(values)
        if rows:
            first = int(indices[rows[0]])
            start = first - int(np.searchsorted(self.null_rows, first))
            texts = runner.run([values[i] for i in rows], start=start)
            for i, t in zip(rows, texts, strict=True):
                out[i] = t
        counters = [None] * len(values)
        if values:
            counters[0] = json.dumps(self._delta(runner.tallies()).to_json())
        return {self.column: out, COUNTERS_COLUMN: counters}

    def _delta(self, now: Tallies) -> Tallies:
        """This batch's tallies: ``now`` less what the process had counted before it."""
        before, self._before = self._before, now
        return now - before


def _null_rows(ds: Any, column: str) -> np.ndarray:
    """Sorted positions of the rows whose ``column`` is null (in the dataset's own row order)."""
    if getattr(ds, "_indices", None) is None:
        array = ds.data.column(column)
    else:  # a selected or shuffled view: its rows, in its order
        array = ds.select_columns([column]).with_format("arrow")[column]
    if array.null_count == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow.compute as pc

    return np.flatnonzero(pc.is_null(array).to_numpy(zero_copy_only=False)).astype(np.int64)


def _fingerprint(ds: Any, column: str, seed: int | None, mech: Any, options: dict[str, Any]) -> str:
    """Fresh random bytes for an unseeded run; else a digest of everything the output depends on."""
    if seed is None:
        return os.urandom(20).hex()
    import textdp

    recipe = {"textdp": textdp.__version__, "input": ds._fingerprint, "column": column,
              "seed": seed, "mechanism": mech.name, "parameters": mech.parameters,
              "vocabulary": mech.vocabulary.fingerprint, "options": options}
    blob = json.dumps(recipe, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()[:40]


def _check_column(ds: Any, column: str) -> None:
    datasets = _datasets()
    if not isinstance(ds, datasets.Dataset):
        raise TypeError(f"expected a datasets.Dataset, got {type(ds).__name__} "
                        "(privatize each split of a DatasetDict on its own)")
    if column not in ds.column_names:
        raise KeyError(f"no column {column!r}; {names_listing(column, ds.column_names)}")
    feature = ds.features[column]
    if getattr(feature, "dtype", None) not in ("string", "large_string", "null"):
        raise TypeError(f"column {column!r} holds {feature}, expected strings")
    if COUNTERS_COLUMN in ds.column_names:
        raise ValueError(f"the column name {COUNTERS_COLUMN!r} is reserved")


def privatize(ds: Any, column: str = "text", mechanism: Any = "mvc",
              epsilon: float | None = None, *, seed: int | None = None,
              num_proc: int | None = None, batch_size: int = 1000, ledger: Any = None,
              ledger_policy: str = "warn", budget: float | None = None, **kwargs: Any
              ) -> tuple[Any, dict[str, Any]]:
    """Privatise ``ds[column]`` (see the module docstring); returns ``(dataset, report)``.

    Args:
        ds: a ``datasets.Dataset`` (in memory or on disk).
        column: the string column to privatise; other columns are untouched.
        mechanism: a mechanism name or a built word mechanism (pickled to the workers).
        epsilon: ε of the mechanism (with a name).
        seed: None (secure, a fresh cache fingerprint) or an integer (reproducible; flagged).
        num_proc: worker processes of ``Dataset.map`` (None: this process).
        batch_size: rows per ``map`` batch (never the output of a seeded run).
        ledger, ledger_policy, budget: a privacy ledger (a path or a
            :class:`textdp.ledger.Ledger`), as in :func:`textdp.privatize`: the column's
            non-missing texts, in row order, are the release's input (fingerprinted in the
            driver before the map); ``refuse`` raises before any noise is drawn.
        **kwargs: the options of :func:`textdp.privatize` (``oov``, ``mask_token``, …,
            ``vocabulary``) and the mechanism's parameters.
    """
    from textdp.allocation import allocation_params
    from textdp.ledger import as_ledger

    book = as_ledger(ledger, ledger_policy, budget)
    kwargs, epsilon = allocation_params(kwargs, epsilon, mechanism)
    if book is None:
        return _privatize(ds, column, mechanism, epsilon, seed, num_proc, batch_size, kwargs)
    _check_column(ds, column)
    mech = build_mechanism(mechanism, epsilon, kwargs.get("vocabulary"),
                           {k: v for k, v in kwargs.items()
                            if k not in _PRIVATIZER_OPTIONS and k != "vocabulary"})
    fingerprint, count = _column_fingerprint(ds, column)
    with book.release(mechanism=mech, input_fingerprint=fingerprint, records=count,
                      seed=seed) as release:
        result, report = _privatize(ds, column, mechanism, epsilon, seed, num_proc, batch_size,
                                    kwargs)
        report = release.attach(report)
    return result, report


def _column_fingerprint(ds: Any, column: str) -> tuple[str, int]:
    """The ledger's fingerprint of the non-missing texts of ``ds[column]`` in row order."""
    from textdp.privacy.fingerprint import InputHash

    h = InputHash("texts")
    for chunk in ds.data.column(column).chunks:  # Arrow chunks: never the whole column at once
        h.texts(t for t in chunk.to_pylist() if t is not None)
    return h.hexdigest(), h.count


def _privatize(ds: Any, column: str, mechanism: Any, epsilon: float | None, seed: int | None,
               num_proc: int | None, batch_size: int, kwargs: dict[str, Any]
               ) -> tuple[Any, dict[str, Any]]:
    kwargs = dict(kwargs)
    _check_column(ds, column)
    options = {k: kwargs.pop(k) for k in _PRIVATIZER_OPTIONS if k in kwargs}
    vocabulary = kwargs.pop("vocabulary", None)
    mech = build_mechanism(mechanism, epsilon, vocabulary, dict(kwargs))  # checks everything now
    parent = Privatizer(mech, seed=seed, **options)
    recipe = (mechanism, epsilon, dict(kwargs), vocabulary) if isinstance(mechanism, str) \
        else (mech, None, {}, None)
    t0 = time.perf_counter()
    mapper = _Mapper(recipe, options, parent.seed, column, _null_rows(ds, column))
    fingerprint = _fingerprint(ds, column, parent.seed, mech, options)
    mapped = ds.map(mapper, batched=True, batch_size=batch_size, with_indices=True,
                    num_proc=num_proc, new_fingerprint=fingerprint,
                    load_from_cache_file=None if parent.seed is not None else False,
                    desc="textdp privatize")
    counters = mapped.data.column(COUNTERS_COLUMN).drop_null().to_pylist()
    result = mapped.remove_columns([COUNTERS_COLUMN])
    wall = time.perf_counter() - t0
    tallies = sum((Tallies.from_json(json.loads(c)) for c in counters), Tallies.zero())
    # The performance is the wall time of the call.
    tallies = dataclasses.replace(tallies, nanoseconds=round(wall * 1e9) if counters else 0)
    report = parent.report(tallies, engine="datasets", workers=int(num_proc or 1), sections={
        "datasets": {"column": column, "rows": len(ds), "fingerprint": fingerprint,
                     "fingerprint_source": "random (unseeded)" if parent.seed is None
                     else "derived from input, seed, mechanism, parameters, vocabulary",
                     "document_numbering": "row order, missing values skipped"}})
    return result, report

