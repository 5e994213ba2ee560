"""The command line's file-worker pools, shared by ``privatize``, ``embed`` and ``docembed`` with
``--engine ray``: actors restarted a bounded number of times (:data:`ACTOR_RETRIES`), files
handed out to them (:func:`pool_map`: an actor that died for good is one line naming its file),
outputs staged in a hidden directory beside the output or under a hidden prefix on an object
store (:class:`Staging`), handed over to the command's atomic group only when every file
succeeded; and :class:`Job`, the runtime of one ``embed`` or ``docembed`` run.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from textdp.cli._common import CLIError, one_line, progress_bar
from textdp.engines.ray.cluster import start, stop
from textdp.engines.ray.logs import RayLogs, see_logs
from textdp.io.uri import RemoteFile, RemoteStaging

__all__ = ["ACTOR_RETRIES", "Job", "Staging", "for_worker", "io_section", "kill_actor", "pool_map"]

#: Restarts of a dead actor, and retries of the file it was writing.
ACTOR_RETRIES = 3


def kill_actor(ray: Any, actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # noqa: BLE001 - dead already, or its cluster gone: nothing left to stop
        pass


class Staging:
    """Where a job's outputs are written until every file succeeded: a hidden directory beside
    the output (a local or shared file system: moved into the command's group by renames), or,
    for an output on an object store, a hidden prefix beside it (joined to the group, which
    moves its objects when it commits: :class:`~textdp.io.uri.RemoteStaging`)."""

    def __init__(self, pairs: list[tuple[Any, Any]], output: Path | RemoteFile) -> None:
        self.remote: RemoteStaging | None = None
        self.directory: Path | None = None
        if isinstance(output, RemoteFile):  # beside the output: the object of one file, the prefix of several
            self.remote = RemoteStaging(output if pairs[0][1] == output else pairs[0][1].parent)
        else:
            out_dir = pairs[-1][1].parent
            self.directory = staging_directory(out_dir if out_dir.is_dir() else out_dir.parent)

    def path_for(self, index: int, dst: Any) -> Any:
        if self.remote is not None:
            return self.remote.path_for(index, dst)
        assert self.directory is not None
        return self.directory / f"{index:06d}-{dst.name}"

    def hand_over(self, pairs: list[tuple[Any, Any]], staged: list[Any], files: Any,
                  created: list[Path]) -> None:
        """Every file succeeded: the staged files become part of the command's group."""
        if self.remote is not None:  # moved to their names when the group commits
            self.remote.moves = [(staged[i], dst) for i, (_, dst) in enumerate(pairs)]
            files.join(self.remote)
            self.remote = None  # the group's now: committed or aborted with it
            return
        make_parent(pairs[-1][1], created)
        for i, (_, dst) in enumerate(pairs):
            os.replace(staged[i], files.path_for(dst))

    def remove(self) -> None:
        """The staging area, unless the group has it (after the actors are killed)."""
        if self.directory is not None:
            remove_tree(self.directory)
        if self.remote is not None:
            self.remote.abort()


def pool_map(actors: list[Any], method: str, items: list[tuple[Any, ...]], *, file_at: int,
             ordered: bool) -> Iterator[Any]:
    """``actor.method(*item)`` for every item on the job's pool (:class:`ray.util.ActorPool`),
    the answers in the items' order (``ordered``) or as they finish. An actor that died for good
    (its restarts spent) ends the job with one line naming the file it was given (argument
    ``file_at`` of its item), not with Ray's message naming an actor id. Every command's file
    workers (privatize, embed, docembed) go through it."""
    import ray
    from ray.util import ActorPool

    given: dict[str | None, str] = {}
    pool = ActorPool(actors)
    try:
        yield from (pool.map if ordered else pool.map_unordered)(
            _submit(method, file_at, given), items)
    except ray.exceptions.RayActorError as exc:
        _died(exc, given)


def _submit(method: str, at: int, given: dict[str | None, str]) -> Any:
    """For :class:`ray.util.ActorPool`: call the actor's ``method`` with the arguments, noting
    in ``given`` the file (argument ``at``) each actor was given last, for :func:`_died`."""
    def submit(actor: Any, args: tuple[Any, ...]) -> Any:
        given[_actor_id(actor)] = args[at]
        return getattr(actor, method).remote(*args)

    return submit


def _actor_id(actor: Any) -> str | None:
    actor_id = getattr(actor, "_actor_id", None)  # private; RayActorError names it in hex
    return actor_id.hex() if actor_id is not None else None


def _died(exc: Exception, given: dict[str | None, str]) -> NoReturn:
    """An actor died for good (its restarts spent, see ACTOR_RETRIES): one line naming the file
    it was working on (Ray's own message, unchanged, where the actor is not known)."""
    import re

    actor = getattr(exc, "actor_id", None)
    src = given.get(actor) if actor is not None else None
    if src is None:
        raise exc
    said = one_line(exc)
    detail = re.search(r"Worker exit detail: (.*?)(?: Some common causes|$)", said)
    raise CLIError(f"{src}: the Ray worker on this file died for good, its {ACTOR_RETRIES} "
                   "restarts spent (out of memory, a crash or a lost node?); nothing was "
                   f"written (Ray: {detail.group(1) if detail else said})") from None


#: The staging directory of a job: hidden (never an input), named after the driver's process.
STAGE_PREFIX = ".textdp-ray-"


def staging_directory(parent: Path) -> Path:
    """A fresh staging directory in ``parent`` (the output's own file system: the final moves
    are renames); those of drivers that no longer run (killed outright) are removed first."""
    from textdp.io.atomic import _running

    for old in parent.glob(f"{STAGE_PREFIX}*"):
        pid = old.name[len(STAGE_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            remove_tree(old)
    return Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-", dir=parent))


def remove_tree(path: Path) -> None:
    import shutil

    for _ in range(3):  # an actor being killed may still close a file there
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.2)


def for_worker(path: Path | RemoteFile) -> str | RemoteFile:
    """A path as an actor receives it: a local one as a string (the workers share the file
    system), a remote one as it is (its filesystem is pickled; the actor opens it)."""
    return path if isinstance(path, RemoteFile) else str(path)


def file_size(path: Path | RemoteFile) -> int:
    if isinstance(path, RemoteFile):
        return path.size or 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


def make_parent(path: Path, created: list[Path]) -> None:
    """The directory of ``path``, made if missing (and then added to ``created``)."""
    if not path.parent.is_dir():
        path.parent.mkdir()
        created.append(path.parent)


def remove_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        pass


class Job:
    """One Ray job of ``embed`` or ``docembed``: the runtime (started, or the caller's / the
    cluster's), Ray's log lines off stderr, and on exit the runtime shut down if it was started
    here. ``run`` gives every pair to the pool and moves the staged outputs into ``files``."""

    def __init__(self, workers: int | None, address: str | None, verbose: bool) -> None:
        self.workers, self.address = workers, address
        self.logs = RayLogs(verbose=verbose)
        self.ray: Any = None
        self.own = False
        self.created: list[Path] = []  # the output directory of a directory, once made
        self.worker_peak = 0

    def __enter__(self) -> Job:
        self.logs.__enter__()
        try:
            self.ray, self.own = start(self.workers, self.address, self.logs, data=False)
            self.workers = self.workers or max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        except BaseException as exc:
            self.logs.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None:
                for directory in self.created:
                    remove_empty(directory)
            if self.own:
                stop(self.ray)
        finally:
            self.logs.__exit__(exc_type, exc, tb)
        if isinstance(exc, Exception) and type(exc).__module__.startswith("ray"):
            raise CLIError(f"Ray: {one_line(exc)}{see_logs(self.logs)}") from None

    def pool(self, worker: type, kwargs: dict[str, Any], n: int) -> list[Any]:
        """``min(workers, n)`` actors of ``worker``; a dead actor is restarted and its file
        rewritten, a bounded number of times (a file that kills every actor fails the job)."""
        actor = self.ray.remote(num_cpus=1, max_restarts=ACTOR_RETRIES,
                                max_task_retries=ACTOR_RETRIES)(worker)
        return [actor.remote(**kwargs) for _ in range(min(self.workers, n))]

    def counts(self, actors: list[Any], pairs: list[tuple[Any, Any]]) -> list[int]:
        """Each file's texts, counted on the pool in parallel (the first malformed file in name
        order is the error, as the local engine would say)."""
        out = list(pool_map(actors, "count", [(for_worker(src),) for src, _ in pairs],
                            file_at=0, ordered=True))
        for n in out:
            if isinstance(n, str):
                raise CLIError(n)
        return out

    def run(self, actors: list[Any], pairs: list[tuple[Any, Any]], output: Any,
            args: Callable[[int], tuple[Any, ...]], files: Any, what: str
            ) -> list[dict[str, Any]]:
        """Release pair i with ``actor.release(i, src, dst, staged, *args(i))``, the largest
        files first, into privatize's staging (:class:`Staging`: a hidden
        directory beside ``output``, or a hidden prefix on an object store); when every file
        succeeded, hand the staged outputs over to ``files``. Returns the workers' answers in
        name order."""
        stage = Staging(pairs, output)
        try:
            order = sorted(range(len(pairs)), key=lambda i: -file_size(pairs[i][0]))
            staged = [stage.path_for(i, dst) for i, (_, dst) in enumerate(pairs)]
            items = [(i, for_worker(pairs[i][0]), os.fspath(pairs[i][1]),
                      for_worker(staged[i]), *args(i)) for i in order]
            answers: dict[int, dict[str, Any]] = {}
            bar = progress_bar(what)(len(pairs), "files")
            try:
                for out in pool_map(actors, "release", items, file_at=1, ordered=False):
                    if "error" in out:
                        raise CLIError(out["error"])
                    answers[out["index"]] = out
                    self.worker_peak = max(self.worker_peak, out["peak_rss"])
                    bar.update(1)
            finally:
                bar.close()
            stage.hand_over(pairs, staged, files, self.created)
        finally:
            for a in actors:  # before the staging directory goes: no actor writes there any more
                kill_actor(self.ray, a)
            stage.remove()
        return [answers[i] for i in range(len(pairs))]

    def context(self, wall: float, io: dict[str, Any]) -> dict[str, Any]:
        """The report's context: the local engine's io, plus the engine, workers and RSS."""
        from textdp.engines.ray.runtime import engine_context
        from textdp.engines.worker import peak_rss

        return {**engine_context(self.workers, wall, self.worker_peak),
                "driver_peak_rss_bytes": peak_rss(), "io": io}


def io_section(input: Any, output: Any, answers: list[dict[str, Any]], single: bool,
               **extra: Any) -> dict[str, Any]:
    """The local engine's io section for one file; for a directory, summed, with each file's
    (``input``: a path, or the tuple of several INPUTs)."""
    summaries = [a["summary"] for a in answers]
    if isinstance(input, tuple):
        input = [os.fspath(p) for p in input]
    else:
        input = os.fspath(input)
    if single:
        return {"input": input, "output": os.fspath(output),
                "records_in": summaries[0]["records_in"],
                "records_out": summaries[0]["records_out"], **extra}
    return {"input": input, "output": os.fspath(output), "files": summaries,
            "records_in": sum(s["records_in"] for s in summaries),
            "records_out": sum(s["records_out"] for s in summaries), **extra}
