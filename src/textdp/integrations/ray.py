"""Ray Data: privatise a distributed dataset on an actor pool (issue 13, items 1 and 2) — the
front. Each function builds its release (a spec, the dataset's column as the source, the pool
as the engine) and runs it through the one guarded release, :func:`textdp.runner.run_release`:
with ``ledger=`` the column is fingerprinted on the driver before any actor starts, checked
against the budget and recorded, for word, vector and document releases alike.

The engine — the actors, the row index that keeps seeded runs byte-identical to one process, the
per-batch tallies summed into one report, threads and fault tolerance — is
:mod:`textdp.engines.ray.data`.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from textdp._checks import check_seed
from textdp._fronts import word_only
from textdp._guide import names_listing
from textdp.engines.ray.data import (
    DEFAULT_BATCH_SIZE,
    materialize_in_order,
    preserve_order,
    run_documents,
    run_vectors,
    run_words,
    texts_of,
)
from textdp.engines.ray.runtime import check_no_generator, limit_threads, require_ray
from textdp.spec import release_spec

__all__ = ["check_no_generator", "limit_threads", "privatize", "release_documents",
           "release_vectors", "require_ray", "texts_of"]


def privatize(dataset: Any, column: str = "text", mechanism: Any = "mvc",
              epsilon: float | None = None, *, seed: int | None = None,
              workers: int | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
              threads: int = 1, ledger: Any = None, ledger_policy: str = "warn",
              budget: float | None = None, **options: Any) -> tuple[Any, dict[str, Any]]:
    """Privatise the string column ``column`` of a Ray dataset word by word.

    Args:
        dataset: a ``ray.data.Dataset``; other columns pass through unchanged.
        column: the column of documents (strings).
        mechanism, epsilon: as for :func:`textdp.privatize` (a name and its parameters, or a
            built word mechanism). ``dp_prompt`` is refused: every actor would load a language
            model; run it with :func:`textdp.privatize` or ``textdp privatize``.
        seed: None (secure, per actor) or an integer: then the output is byte-identical to
            ``textdp.privatize(texts, ..., seed=seed)`` over the rows in order.
        workers: actors in the pool (default: the CPUs of the Ray cluster), one CPU each.
        batch_size: rows per ``map_batches`` call (never the output of a seeded run).
        threads: BLAS/OpenMP threads per actor.
        ledger, ledger_policy, budget: a privacy ledger, as in :func:`textdp.privatize`; the
            column's texts in row order are fingerprinted on the driver before any actor starts.
        **options: the options of :func:`textdp.spec.release_spec` (``oov``, ``keep_stopwords``,
            ``identifiers``, ``vocabulary``, ``allocation``, …: the same names in every front)
            and further mechanism parameters, built into one release spec that every actor runs.

    Returns:
        (the privatised dataset, materialised and in input order; the one privacy report,
        counts summed over the workers, with ``engine: "ray"`` and ``workers``).
    """
    from textdp.ledger import as_ledger
    from textdp.runner import run_release

    book = as_ledger(ledger, ledger_policy, budget)
    spec = word_only(release_spec(mechanism, epsilon, seed=seed, **options),
                     "is not run on Ray (every actor would load a language model): run "
                     "textdp.privatize or `textdp privatize` (local engine)")
    source = Column(dataset, column, "texts")
    engine = _Engine(lambda: run_words(dataset, column, spec, workers, batch_size, threads))
    outcome = run_release(_Measured(spec.mechanism_object, spec.seed), source, engine,
                          ledger=book)
    return outcome.output, outcome.report


def release_vectors(dataset: Any, mechanism: Any, column: str = "vector", *,
                    seed: int | None = None, workers: int | None = None,
                    batch_size: int = 4096, threads: int = 1, ledger: Any = None,
                    ledger_policy: str = "warn", budget: float | None = None
                    ) -> tuple[Any, dict[str, Any]]:
    """Release a column of vectors with an embedding mechanism (PrivEmb, LaplaceVector).

    Seeded, the output equals :func:`textdp.mechanisms.embedding.release.release_vectors` over
    the rows in order (the same chunk streams); unseeded, each actor draws from its own secure
    generator. ``ledger``, ``ledger_policy``, ``budget``: a privacy ledger, as in
    :func:`release_vectors` of one process: the column's vectors in row order are fingerprinted
    on the driver (as that function fingerprints its array) before any actor starts. Returns
    (the dataset with ``column`` replaced by the private vectors, the embedding report with
    ``engine`` and ``workers``).
    """
    from textdp.ledger import as_ledger
    from textdp.runner import run_release

    book = as_ledger(ledger, ledger_policy, budget)
    seed = check_seed(seed)
    source = Column(dataset, column, "vectors")
    engine = _Engine(lambda: run_vectors(source.dataset, mechanism, column, seed=seed,
                                              workers=workers, batch_size=batch_size,
                                              threads=threads))
    outcome = run_release(_Measured(lambda: mechanism, seed), source, engine, ledger=book)
    return outcome.output, outcome.report


def release_documents(dataset: Any, mechanism: Any, column: str = "sentences",
                      output_column: str = "embedding", *, seed: int | None = None,
                      workers: int | None = None, batch_size: int = 256,
                      threads: int = 1, ledger: Any = None, ledger_policy: str = "warn",
                      budget: float | None = None) -> tuple[Any, dict[str, Any]]:
    """One private embedding per row of sentence embeddings (DeepCandidate, Truncation).

    ``column`` holds each document's (k, d) sentence embeddings (a list of vectors). Seeded,
    row i draws from ``document_generator(seed, i)`` as
    :func:`textdp.mechanisms.document.release_documents` does with ``start``; unseeded, each
    actor draws from its own secure generator. ``ledger``, ``ledger_policy``, ``budget``: a
    privacy ledger, as in that function (the documents fingerprinted in row order on the
    driver first). Returns (the dataset with ``output_column`` added, the document report with
    ``engine`` and ``workers``).
    """
    from textdp.ledger import as_ledger
    from textdp.runner import run_release

    book = as_ledger(ledger, ledger_policy, budget)
    seed = check_seed(seed)
    source = Column(dataset, column, "documents")
    engine = _Engine(lambda: run_documents(
        source.dataset, mechanism, column, output_column, seed=seed, workers=workers,
        batch_size=batch_size, threads=threads))
    outcome = run_release(_Measured(lambda: mechanism, seed), source, engine, ledger=book)
    return outcome.output, outcome.report


class Column:
    """One column of a Ray dataset as a release's source (:class:`textdp.runner.Source`): its
    values in row order, fingerprinted on the driver as one process fingerprints them (texts as
    :func:`textdp.privatize`, vectors as one (n, d) array, documents as their sentence
    embeddings). Fingerprinting materialises the dataset in its order once; the engine then
    maps that copy (:attr:`dataset`), not the lazy input a second time."""

    def __init__(self, dataset: Any, column: str, input_kind: str) -> None:
        self.dataset, self.column, self.input_kind = dataset, column, input_kind
        self.name = f"Ray Data column {column!r}"
        #: The ledger's space: the vocabulary for texts (None); set by :meth:`fingerprint`.
        self.space: str | None = None if input_kind == "texts" else ""

    def fingerprint(self) -> tuple[str, int]:
        from textdp.privacy.fingerprint import InputHash

        require_ray()
        if self.column not in self.dataset.columns():
            raise ValueError(f"the dataset has no column {self.column!r} "
                             f"({names_listing(self.column, self.dataset.columns())})")
        h = InputHash(self.input_kind)
        if self.input_kind == "texts":
            h.texts(texts_of(self.dataset, self.column))
            return h.hexdigest(), h.count
        with preserve_order():
            return self._arrays(h)

    def _arrays(self, h: Any) -> tuple[str, int]:
        self.dataset = materialize_in_order(self.dataset)
        batches = (batch[self.column] for batch in
                   self.dataset.iter_batches(batch_format="numpy", batch_size=4096))
        if self.input_kind == "documents":
            for batch in batches:
                for doc in batch:
                    h.document(np.stack(list(doc)))
            return h.hexdigest(), h.count
        blocks = (np.stack(list(b)) for b in batches if len(b))
        first = next(blocks, np.zeros((0, 0)))
        d = first.shape[1] if first.ndim == 2 else 0
        h.vector_blocks(self.dataset.count(), d, chain([first] if first.size else [], blocks))
        self.space = f"the input vectors themselves (R^{d})"
        return h.hexdigest(), h.count


class _Measured:
    """The spec :func:`textdp.runner.run_release` needs: the seed and the mechanism (built on
    the driver; each actor builds or receives its own)."""

    def __init__(self, mechanism: Any, seed: int | None) -> None:
        self._mechanism, self.seed = mechanism, seed

    def measure(self, source: Any) -> Any:
        return self._mechanism()


class _Engine:
    """An engine of :func:`textdp.runner.run_release`: the pool's run, (output, report)."""

    def __init__(self, run: Any) -> None:
        self._run = run

    def run(self, spec: Any, source: Any, measurement: Any) -> Any:
        from textdp.runner import Outcome

        return Outcome(*self._run())
