"""What every Ray engine shares: Ray itself (:func:`require_ray`: one line naming the extra when
it is missing), an actor's thread limit (:func:`limit_threads`), the refusal to ship a random
generator to the actors (:func:`check_no_generator`), the pool's size and the report's engine
context. Nothing here starts a runtime (the command line's: :mod:`textdp.engines.ray.cluster`).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from textdp._guide import MissingExtra, install_hint

__all__ = ["check_no_generator", "check_workers", "engine_context", "limit_threads", "require_ray"]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "NUMEXPR_NUM_THREADS")


def require_ray(*, data: bool = True) -> Any:
    """The ``ray`` module (with ``ray.data`` imported unless ``data`` is False: half a second
    that a process which runs no Ray Data job need not spend), or ImportError saying which extra
    to install."""
    try:
        import ray
        if data:
            import ray.data  # noqa: F401 - ray without the [data] extra has no ray.data
    except ImportError:
        raise MissingExtra(install_hint("ray", "Ray Data")) from None
    return ray


def check_no_generator(obj: Any, depth: int = 3) -> None:
    """Refuse to ship a random generator to the actors: every unpickled copy would replay the
    same state (identical noise on every worker). Looks through attributes, dicts and lists."""
    if isinstance(obj, np.random.Generator | np.random.BitGenerator | np.random.RandomState):
        raise ValueError("a random generator would be copied to every Ray worker (identical "
                         "noise); pass a seed or nothing, never a generator")
    if depth == 0 or isinstance(obj, str | bytes | np.ndarray | int | float):
        return
    if isinstance(obj, dict):
        items = list(obj.values())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):  # a ReleaseSpec (slots)
        items = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    elif isinstance(obj, list | tuple):
        items = list(obj)
    else:
        items = list(getattr(obj, "__dict__", {}).values())
    for item in items:
        check_no_generator(item, depth - 1)


def check_workers(workers: int | None) -> int:
    if workers is None:
        return max(1, int(require_ray().available_resources().get("CPU", 1)))
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    return workers


def limit_threads(threads: int) -> None:
    """This actor's BLAS/OpenMP threads: the variables (read by the neighbour engine and by any
    library loaded later) and the pools already loaded (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    for name in _THREAD_VARIABLES:
        os.environ[name] = str(threads)
    threadpool_limits(limits=threads)


def engine_context(workers: int, wall: float, peak_rss_bytes: int = 0) -> dict[str, Any]:
    """What the report says about a Ray run (:class:`textdp.privacy.report.ReportContext`):
    ``engine`` and ``workers``; rates per wall-clock second of the whole run (the summed time
    inside the workers kept as ``worker_seconds``; the largest peak RSS of a worker process as
    ``worker_peak_rss_mib``)."""
    return {"engine": "ray", "workers": workers, "wall_seconds": wall,
            "worker_peak_rss_bytes": peak_rss_bytes}
