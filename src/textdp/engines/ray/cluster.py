"""The command line's Ray runtime: a local one started for the run (``--workers`` CPUs, a small
object store, no dashboard, its workers at the command's own priority) or a cluster joined with
``--ray-address`` (:func:`start`), and stopped again at the end (:func:`stop`). Token
authentication that refuses this process is named in one line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from textdp.cli._common import CLIError, one_line

if TYPE_CHECKING:
    from textdp.engines.ray.logs import RayLogs

__all__ = ["LOCAL_SYSTEM_CONFIG", "OBJECT_STORE_BYTES", "start", "stop"]

#: The object store of a local runtime (spills to disk beyond it).
OBJECT_STORE_BYTES = 256 * 2**20

#: Ray's system settings of a local runtime. ``worker_niceness``: Ray raises its workers'
#: niceness by 15 so that its own daemons keep priority over the work; here the workers *are*
#: the command's work (the driver waits), and at +15 they ran at a fraction of the local
#: engine's share of a busy machine (two actors on 2 loaded cores no faster than one): they run
#: at the command's own priority instead (a user's ``nice textdp …`` still applies to them).
LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0}


def start(workers: int | None, address: str | None, logs: RayLogs | None = None, *,
          data: bool = True) -> tuple[Any, bool]:
    """The ``ray`` module, connected; and whether this run started (and must stop it:
    :func:`stop`). ``logs``: where Ray's own lines go (told Ray's log directory once it is
    known). ``data``: whether this process runs Ray Data jobs (their progress bars and start-up
    lines are then turned off); the file workers' pool does not, and is spared its import."""
    from textdp.engines.ray.runtime import require_ray

    try:
        ray = require_ray(data=data)
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    if data:
        from ray.data import DataContext

        context = DataContext.get_current()  # no bars from Ray Data: the command draws its own
        context.enable_progress_bars = False
        context.print_on_execution_start = False
    verbose = logs is None or logs.verbose
    level = "INFO" if verbose else "ERROR"  # INFO: Ray's default
    own = not ray.is_initialized()  # else a caller's runtime (Python, tests): used as it is
    sigterm = _sigterm_handler()
    try:
        if own and address is not None:
            ray.init(address=address, log_to_driver=verbose, logging_level=level)
        elif own:
            with _lean_runtime(enabled=not data, log_monitor=verbose):
                ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                         object_store_memory=OBJECT_STORE_BYTES, log_to_driver=verbose,
                         logging_level=level, _system_config=LOCAL_SYSTEM_CONFIG)
    except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; all are one line here
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        said = f"{exc}\n{logs.captured() if logs is not None else ''}"
        if address is not None and ("InvalidAuthToken" in said or "no authentication token"
                                    in said):
            raise CLIError(f"cannot join {where}: {_token_problem(said)}") from None
        raise CLIError(f"cannot start {where}: {one_line(exc)}") from None
    finally:
        # ray.init replaces the SIGTERM handler with one that exits with status 1: the command's
        # own (SIGTERM unwinds as Ctrl-C does: the cleanup runs, status 130) is put back.
        if sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)
    if logs is not None:
        logs.started(ray)
    return ray, own


@contextlib.contextmanager
def _lean_runtime(*, enabled: bool, log_monitor: bool) -> Iterator[None]:
    """While ``ray.init`` starts the local runtime of a file workers' job: without Ray's
    autoscaler monitor (a runtime of fixed size has nothing to scale) and, unless the workers'
    lines are to reach the driver (``--verbose``), without its log monitor — two Python
    processes that nothing of the job uses, and whose start-up competes with the runtime's own
    for the CPUs (about 0.8 s of CPU, 0.8 s of the start on 2 loaded cores). ``ray start`` has
    ``--no-monitor`` and Ray's node parameters have both switches, but ``ray.init`` passes
    neither: they are set on the parameters of the head node that ``ray.init`` builds. Where
    Ray's private ``Node`` differs, ``ray.init`` runs as it is. (Ray Data's jobs, which may
    ask the autoscaler for resources, keep the full runtime.)"""
    try:
        from ray._private import node
        original = node.Node.__init__
    except Exception:  # noqa: BLE001 - a private API
        enabled = False
    if not enabled:
        yield
        return

    def init(self: Any, ray_params: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("head") and kwargs.get("ray_init_cluster"):  # ray.init's own runtime
            ray_params.no_monitor = True
            if not log_monitor:
                ray_params.include_log_monitor = False
        original(self, ray_params, *args, **kwargs)

    node.Node.__init__ = init
    try:
        yield
    finally:
        node.Node.__init__ = original


def stop(ray: Any) -> None:
    """``ray.shutdown()`` of a runtime this process started, less the second it spends on Ray's
    autoscaler monitor: ``ray.shutdown`` stops the GCS before the monitor, whose SIGTERM handler
    then waits on the GCS it can no longer reach until ``shutdown`` gives up and kills it. A
    local runtime has nothing to autoscale: the monitor is killed first (and reaped), the rest
    stops as Ray stops it. Every process of the runtime is gone when this returns, as with
    ``ray.shutdown`` itself."""
    try:  # a private API: where it differs, ray.shutdown alone (the second is only time)
        node = ray._private.worker._global_node
        monitors = [info.process for info in node.all_processes.get("monitor", [])]
    except Exception:  # noqa: BLE001
        monitors = []
    for process in monitors:
        try:
            process.kill()
            process.wait(timeout=5)
        except Exception:  # noqa: BLE001 - gone already, or not ours to wait for: Ray's turn
            pass
    ray.shutdown()


def _sigterm_handler() -> Any:
    """The SIGTERM handler to restore after ``ray.init`` (None: none can be set here)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.getsignal(signal.SIGTERM)


def _token_problem(said: str) -> str:
    """The cause of a refused connection, in one line, from what Ray raised and logged."""
    give = ("give the cluster's token (`ray get-auth-token` on its head node prints it) as "
            "RAY_AUTH_TOKEN or in ~/.ray/auth_token")
    if "InvalidAuthToken" in said:
        return ("the cluster uses token authentication and refused this process's token "
                "(InvalidAuthToken: missing or not the cluster's): set RAY_AUTH_MODE=token and "
                f"{give}")
    return f"RAY_AUTH_MODE=token, but no token was found: {give}"
