"""The per-process half of a distributed word release: one protocol for every engine that runs
the Privatizer in processes of its own (``datasets.map``'s workers, Ray Data's actors, the
command line's Ray file workers).

What travels to a process is the release spec (:class:`textdp.spec.ReleaseSpec`: mechanism name,
ε, parameters, policy), never a Privatizer or a generator: a pickled generator's copies would all
replay one state (identical noise in every process). The process builds the mechanism and its
Privatizer once, from the spec, in its own memory — an unseeded Privatizer keys its secure
generator from that process's ``os.urandom`` (:mod:`textdp._random`) — and runs batch after
batch at their global positions (a seeded document i draws from ``document_generator(seed, i)``
wherever it runs). After each batch (or file) it sends home the difference of two
:meth:`~textdp.pipeline.Privatizer.tallies` snapshots (:class:`textdp.tallies.Tallies`, as JSON):
what that batch added, so that a batch that failed and was retried elsewhere is counted once,
and the driver's sum is the one report's count.
"""

from __future__ import annotations

from typing import Any

from textdp.tallies import Tallies

__all__ = ["ProcessRelease", "peak_rss"]


class ProcessRelease:
    """A release spec and the Privatizer this process built from it (lazily, or at once with
    :meth:`build`); pickles as the spec alone. :meth:`run` privatises a batch, :meth:`delta`
    gives what the batches since the last call added to the tallies."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self._privatizer: Any = None
        self._before: Tallies | None = None

    def __getstate__(self) -> dict[str, Any]:
        # A process builds its own Privatizer (and secure generator) from the spec.
        return {"spec": self.spec, "_privatizer": None, "_before": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def build(self) -> Any:
        """The Privatizer of this process (built on the first call)."""
        if self._privatizer is None:
            self._privatizer = self.spec.privatizer()
            self._before = self._privatizer.tallies()
        return self._privatizer

    def run(self, texts: list[str], start: int | None = None) -> list[str]:
        """``texts`` privatised, the first at corpus position ``start`` (None: unseeded)."""
        return self.build().run(texts, start=start)

    def reset(self) -> None:
        """Forget what was counted so far (a batch or file about to start: what an earlier one
        that failed part-way counted is not sent home)."""
        self._before = self.build().tallies()

    def delta(self) -> Tallies:
        """What this process counted since the previous call (or since it was built)."""
        now = self.build().tallies()
        before, self._before = self._before, now
        return now - before

    def stats(self) -> dict[str, Any]:
        """What a batch or a file sends home: its tallies (JSON) and the process's peak RSS."""
        return {"tallies": self.delta().to_json(), "peak_rss": peak_rss()}


def peak_rss() -> int:
    """This process's peak resident set size in bytes (Linux reports kilobytes)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
