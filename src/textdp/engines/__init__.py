"""Engines: where a release runs, apart from the fronts that describe it (issue 33).

* :mod:`textdp.engines.worker` — the per-process half of a distributed word release, shared by
  every engine that runs one in other processes (``datasets.map`` workers, Ray Data actors,
  the command line's Ray file workers): the release spec in, a Privatizer built once in the
  process that runs it, each batch's tallies out.
* :mod:`textdp.engines.dataset_map` — ``Dataset.map`` over one column of a Hugging Face
  ``Dataset`` (the engine of :func:`textdp.integrations.datasets.privatize`).
* :mod:`textdp.engines.ray` — every Ray engine: Ray Data's actor pools and the command line's
  file workers, with their runtime, logs and staging.

The local engine (one process) is the Privatizer itself (:mod:`textdp.pipeline`).
"""
