"""One guarded release for every front: :func:`run_release`.

A front (a command, a library function, a DataFrame accessor, a transformer) describes the release
once (a *spec*: :class:`textdp.spec.ReleaseSpec`, :class:`textdp.spec.VectorSpec`,
:class:`textdp.synthesis.SynthesisSpec`), hands over its data (a *source*: :class:`Texts`,
:class:`Vectors`, :class:`Documents`, or a front's own, e.g. a file read in a first pass) and the
thing that computes the output (an *engine*), and calls :func:`run_release`, which does the same
steps in the same order for all:

1. **fingerprint** the source (:mod:`textdp.privacy.fingerprint`: the values as the release reads
   them) — only when a ledger guards the release: an unguarded release reads its input once;
2. **measure**: ``spec.measure(source)`` — what the ledger records (the built mechanism, or a
   dataset-level release's measurement with its accountant's events). Everything that depends
   on the data and can be refused without spending (too few units, a bad δ) is refused here,
   before the ledger is touched;
3. **budget check and pending line** (:func:`guard`, the only caller of
   :meth:`textdp.ledger.Ledger.release`): composed with the earlier releases of the same input,
   refused under ``refuse`` when the budget would be exceeded, and recorded as pending
   (write-ahead) *before* the engine runs;
4. **run**: ``engine.run(spec, source, measurement)`` → an :class:`Outcome`;
5. **report**: the engine's report with the ledger's section attached;
6. **commit** (a front that writes files stages them and commits inside the guard, calling
   ``exposed()`` right before its output may become visible) and **complete** the ledger line —
   or void it when anything before the commit failed (a failure once the output may be visible
   leaves the pending line, which counts).

Every front goes through it (``textdp.runner.guard`` is the one caller of
:meth:`~textdp.ledger.Ledger.release`), Ray Data's word, vector and document releases
(:mod:`textdp.integrations.ray`) included. Without a ledger the source is not
fingerprinted (step 1 only feeds the ledger).

The input space the ledger records (what else fixes the metric: a vocabulary, an encoder, a
sentence splitter; a typed :class:`textdp.privacy.measurement.InputSpace`) is the source's
``space`` when it has one, else the spec's; a word mechanism's is its vocabulary
(:meth:`textdp.ledger.Ledger.release`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["Call", "Documents", "Engine", "Outcome", "Source", "Spec", "Texts", "Vectors", "guard",
           "run_release"]


class Source(Protocol):
    """A release's data: what the ledger fingerprints and names. A source may also carry
    ``input_kind`` (``texts``, ``vectors``, ``documents``: the fingerprint's encoding; default
    ``texts``) and ``space`` (see the module docstring)."""

    name: str | None

    def fingerprint(self) -> tuple[str, int]:
        """(sha256 of the values as released, number of records)."""
        ...


class Spec(Protocol):
    """A release described once (frozen); ``measure`` checks it against the data."""

    seed: int | None

    def measure(self, source: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an engine computed: its output and its report (without the ledger's section)."""

    output: Any
    report: Any


class Engine(Protocol):
    def run(self, spec: Any, source: Any, measurement: Any) -> Outcome: ...


@dataclass(frozen=True, slots=True)
class Call:
    """A function ``run(spec, source, measurement) -> Outcome`` as an :class:`Engine`."""

    run: Callable[[Any, Any, Any], Outcome]


# --- sources --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Texts:
    """Documents in memory (a list of strings), optionally named for the ledger."""

    texts: Sequence[str]
    name: str | None = None
    input_kind = "texts"
    space = None

    def fingerprint(self) -> tuple[str, int]:
        from textdp.privacy.fingerprint import fingerprint_texts

        return fingerprint_texts(self.texts)


@dataclass(frozen=True, slots=True)
class Vectors:
    """An (N, d) array of vectors released as they are (the metric is their own L2 distance)."""

    X: np.ndarray
    name: str | None = None
    input_kind = "vectors"

    @property
    def space(self) -> Any:
        from textdp.privacy.measurement import InputSpace

        return InputSpace.vectors(self.X.shape[1])

    def fingerprint(self) -> tuple[str, int]:
        from textdp.privacy.fingerprint import fingerprint_vectors

        return fingerprint_vectors(self.X)


@dataclass(frozen=True, slots=True)
class Documents:
    """Documents as (k_i, d) arrays of sentence embeddings."""

    documents: Sequence[np.ndarray]
    name: str | None = None
    input_kind = "documents"

    @property
    def space(self) -> Any:
        from textdp.privacy.measurement import InputSpace

        return InputSpace()

    def fingerprint(self) -> tuple[str, int]:
        from textdp.privacy.fingerprint import fingerprint_documents

        return fingerprint_documents(self.documents)


# --- the guarded release --------------------------------------------------------------------------

@contextlib.contextmanager
def guard(ledger: Any, measurement: Any, source: Any, fingerprint: tuple[str, int], *,
          seed: int | None, space: Any, output_path: Any = None,
          exposure: Callable[[], bool] | None = None,
          notify: Callable[[str], None] | None = None,
          resumes: str | None = None) -> Iterator[Any]:
    """Step 3 and 6 of the module docstring around the block: the only caller of
    :meth:`textdp.ledger.Ledger.release`. Yields the entered :class:`textdp.ledger.Release`.

    ``exposure()`` (when given) says, at a failure, whether output may already be visible (the
    pending line then stays and counts); ``notify`` receives the one-line message of a
    completion or void line that could not be written (default: a
    :class:`textdp.ledger.LedgerWarning`); ``resumes``: the pending release a resumed job
    continues (:meth:`textdp.ledger.Ledger.release`: no new pending line)."""
    if not hasattr(ledger, "release"):
        raise TypeError("ledger= takes a textdp.ledger.Ledger(path, policy=..., budget=...), "
                        f"not {type(ledger).__name__}")
    fp, records = fingerprint
    release = ledger.release(mechanism=measurement, input_fingerprint=fp, records=records,
                             seed=seed, input_kind=getattr(source, "input_kind", "texts"),
                             space=space, input_name=getattr(source, "name", None),
                             output_path=output_path, resumes=resumes)
    release.__enter__()
    try:
        yield release
    except BaseException as exc:
        if exposure is not None and exposure():
            release.exposed()
        _say(release.void(f"{type(exc).__name__}: {exc}"), notify)
        raise
    _say(release.complete(), notify)


def _say(message: str | None, notify: Callable[[str], None] | None) -> None:
    if not message:
        return
    if notify is not None:
        notify(message)
    else:
        from textdp.ledger import LedgerWarning

        warnings.warn(message, LedgerWarning, stacklevel=4)


def run_release(spec: Spec, source: Source, engine: Engine, *, ledger: Any = None,
                output_path: Any = None,
                commit: Callable[[Outcome, Callable[[], None]], None] | None = None,
                exposure: Callable[[], bool] | None = None,
                notify: Callable[[str], None] | None = None,
                entered: Callable[[Any], None] | None = None) -> Outcome:
    """Run one release through the steps of the module docstring; returns the output and the
    report (with its ``ledger`` section when ``ledger`` guards the release).

    Args:
        spec, source, engine: see :class:`Spec`, :class:`Source`, :class:`Engine`.
        ledger: a :class:`textdp.ledger.Ledger`, or None (unguarded).
        output_path: where the output goes (recorded in the ledger).
        commit: ``commit(outcome, exposed)``, called inside the guard after the report is built:
            it makes the output visible (atomic files), calling ``exposed()`` first.
        exposure, notify: see :func:`guard`.
        entered: called with the entered :class:`textdp.ledger.Release` before the engine runs
            (a command names it when its output pipe closes).

    Raises:
        ValueError: the spec refuses the data (step 2); nothing was recorded.
        textdp.ledger.LedgerRefused: the budget would be exceeded (step 3); nothing ran.
    """
    if ledger is None:
        outcome = engine.run(spec, source, spec.measure(source))
        if commit is not None:
            commit(outcome, _nothing)
        return outcome
    fingerprint = source.fingerprint()
    measurement = spec.measure(source)
    space = getattr(source, "space", None)
    if space is None:
        space = getattr(spec, "space", None)
    with guard(ledger, measurement, source, fingerprint, seed=spec.seed, space=space,
               output_path=output_path, exposure=exposure, notify=notify) as release:
        if entered is not None:
            entered(release)
        outcome = engine.run(spec, source, measurement)
        if outcome.report is not None:  # a library engine may return the output alone
            outcome = Outcome(outcome.output, release.attach(outcome.report))
        if commit is not None:
            commit(outcome, release.exposed)
    return outcome


def _nothing() -> None:
    return None
