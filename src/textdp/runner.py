"""One guarded release for every front: :func:`run_release`.

A front (a command, a library function, a DataFrame accessor) describes the release once (a
*spec*), hands over its data (a *source*) and the thing that computes the output (an
*engine*), and calls :func:`run_release`, which does the same steps in the same order for all:

1. **fingerprint** the source (:mod:`textdp.privacy.fingerprint`: the texts as the release reads
   them);
2. **measure**: ``spec.measure(source)`` — the release's measurement (notion, input metric,
   privacy map, guarantee; the accountant's events for a dataset-level release). Everything
   that depends on the data and can be refused without spending (too few units, a bad δ) is
   refused here, before the ledger is touched;
3. **budget check and pending line** — the ledger's guarded release (:meth:`textdp.ledger.Ledger.
   release`): composed with the earlier releases of the same input, refused under ``refuse``
   when the budget would be exceeded, and recorded as pending (write-ahead) *before* the engine
   runs;
4. **run**: ``engine.run(spec, source, measurement)`` → an :class:`Outcome`;
5. **report**: the engine's report with the ledger's section attached;
6. **commit** (a front that writes files stages them and commits inside the guard; it calls
   ``exposed()`` right before its output may become visible) and **complete** the ledger line —
   or void it when anything before the commit failed.

This module is the only caller of :meth:`~textdp.ledger.Ledger.release` for the fronts routed
through it (``textdp synthesize`` and :func:`textdp.synthesize`; Ray Data's word, vector and
document releases, :mod:`textdp.integrations.ray`). Without a ledger the source is not
fingerprinted (step 1 only feeds the ledger).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Engine", "Outcome", "Source", "Spec", "run_release"]


class Source(Protocol):
    """A release's data: what the ledger fingerprints and names.

    Two attributes are optional, read after :meth:`fingerprint`: ``input_kind`` (``texts``,
    ``vectors`` or ``documents``: the fingerprint's encoding; default ``texts``) and ``space``
    (what else fixes the metric, as :meth:`textdp.ledger.Ledger.release` takes it; None: the
    mechanism's vocabulary; default "")."""

    name: str | None

    def fingerprint(self) -> tuple[str, int]:
        """(sha256 of the texts as released, number of records)."""
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


def run_release(spec: Spec, source: Source, engine: Engine, *, ledger: Any = None,
                output_path: Any = None,
                commit: Callable[[Outcome, Callable[[], None]], None] | None = None) -> Outcome:
    """Run one release through the steps of the module docstring; returns the output and the
    report (with its ``ledger`` section when ``ledger`` guards the release).

    Args:
        spec, source, engine: see :class:`Spec`, :class:`Source`, :class:`Engine`.
        ledger: a :class:`textdp.ledger.Ledger`, or None (unguarded).
        output_path: where the output goes (recorded in the ledger).
        commit: ``commit(outcome, exposed)``, called inside the guard after the report is built:
            it makes the output visible (atomic files), calling ``exposed()`` first.

    Raises:
        ValueError: the spec refuses the data (step 2); nothing was recorded.
        textdp.ledger.LedgerRefused: the budget would be exceeded (step 3); nothing ran.
    """
    from textdp.ledger import guarded_release

    # Unguarded, nothing reads the fingerprint: a distributed source is not read twice for it.
    fingerprint, records = source.fingerprint() if ledger is not None else ("", 0)
    measurement = spec.measure(source)
    with guarded_release(ledger, mechanism=measurement, input_fingerprint=fingerprint,
                         records=records, seed=spec.seed, input_name=source.name,
                         input_kind=getattr(source, "input_kind", "texts"),
                         space=getattr(source, "space", ""),
                         output_path=output_path) as release:
        outcome = engine.run(spec, source, measurement)
        report = release.attach(outcome.report) if release is not None else outcome.report
        outcome = Outcome(outcome.output, report)
        if commit is not None:
            commit(outcome, release.exposed if release is not None else _nothing)
    return outcome


def _nothing() -> None:
    return None
