"""Fixtures of the integration tests: one local Ray runtime shared by every test that asks for
it (``runtime``), an S3 server on this machine for the ``s3://`` tests of ``--engine ray``
(privatize, embed, docembed), and a command interrupted while its workers write."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class S3Bucket:
    """A bucket of the test's S3 server: ``fs`` (a pyarrow S3 filesystem pointed at the server)
    and byte-exact helpers (pyarrow's default ``compression='detect'`` would re-compress a .gz
    name, so objects are written and read raw)."""

    fs: Any
    bucket: str

    def put(self, key: str, data: bytes) -> None:
        with self.fs.open_output_stream(f"{self.bucket}/{key}", compression=None) as out:
            out.write(data)

    def get(self, key: str) -> bytes:
        with self.fs.open_input_stream(f"{self.bucket}/{key}", compression=None) as stream:
            return stream.read()

    def keys(self, prefix: str = "") -> list[str]:
        """Every object under ``bucket/prefix``, as ``bucket/key``, in name order."""
        from pyarrow import fs as pafs

        where = f"{self.bucket}/{prefix}".rstrip("/")
        return sorted(i.path for i in self.fs.get_file_info(pafs.FileSelector(where,
                                                                               recursive=True))
                      if i.type == pafs.FileType.File)


class _Moto:
    """One moto S3 server on a free local port for the session, started on first use: the
    shared Ray runtime's processes are given its address when the runtime starts."""

    def __init__(self) -> None:
        self.server: Any = None
        self.port = 0

    def up(self) -> bool:
        """Start it if moto is installed (False if not)."""
        if self.server is None:
            try:
                from moto import server as server_module
            except ImportError:
                return False
            logging.getLogger("werkzeug").setLevel(logging.ERROR)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            self.server = server_module.ThreadedMotoServer(ip_address="127.0.0.1",
                                                           port=self.port, verbose=False)
            self.server.start()
        return True

    def env(self) -> dict[str, str]:
        """The AWS variables that point a client (pyarrow, boto3) at the server."""
        return {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{self.port}"}

    def reset(self) -> None:
        """Every bucket and object gone (moto's reset call), as a new server would be."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/moto-api/reset",
                                         method="POST")
        urllib.request.urlopen(request, timeout=30).close()

    def down(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


class _Ray:
    """One local Ray runtime (2 CPUs) for the tests that ask for one, started on first use
    and stopped once no test still to run in this process asks for it (see
    ``pytest_runtest_teardown``): starting a runtime costs seconds, and Ray Data's first job on
    a runtime starts its helper actors. Its workers run at the test process's own priority, as
    the command's own runtime's do (``LOCAL_SYSTEM_CONFIG``: at Ray's default +15 they starved
    beside any other work on the machine). The S3 server's variables are set while it starts,
    so that its worker processes inherit them as a command's own runtime's would; the test
    process's environment is then put back (the ``s3`` fixture sets them for its module)."""

    def __init__(self) -> None:
        self.ray: Any = None

    def up(self) -> Any:
        if self.ray is None:
            ray = pytest.importorskip("ray")
            pytest.importorskip("ray.data")
            from textdp.engines.ray.cluster import LOCAL_SYSTEM_CONFIG

            sigterm = signal.getsignal(signal.SIGTERM)
            with pytest.MonkeyPatch.context() as mp:
                if _MOTO.up():
                    for key, value in _MOTO.env().items():
                        mp.setenv(key, value)
                    mp.delenv("AWS_PROFILE", raising=False)
                ray.init(num_cpus=2, object_store_memory=150 * 2**20, include_dashboard=False,
                         log_to_driver=False, logging_level="ERROR",
                         _system_config=LOCAL_SYSTEM_CONFIG)
            signal.signal(signal.SIGTERM, sigterm)  # ray.init's own exits with status 1
            self.ray = ray
        return self.ray

    def down(self) -> None:
        if self.ray is not None:
            self.ray.shutdown()
            self.ray = None


_MOTO = _Moto()
_RAY = _Ray()


@pytest.fixture
def runtime():
    """The session's local Ray runtime (``ray``, connected): 2 CPUs, a 150 MiB object store,
    no dashboard."""
    return _RAY.up()


def _ray_scope(nodeid: str) -> bool:
    """tests/conftest.py's ``ray_scope``: the tests that xdist runs together on one worker."""
    path, _, name = nodeid.partition("::")
    return Path(path).name.startswith("test_ray") or \
        (Path(path).name == "test_fronts_parity.py" and name.startswith("test_ray"))


def _needs_runtime(item: pytest.Item) -> bool:
    return "runtime" in getattr(item, "fixturenames", ())


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the shared runtime after the last test that uses it: the tests after it need not
    share the machine with an idle runtime. In one process that is the last such test in
    collection order; on a pytest-xdist worker, where the tests that run Ray come together
    (tests/conftest.py's scheduler), the last one before a test that does not run Ray."""
    if _RAY.ray is None:
        return
    if hasattr(item.config, "workerinput"):  # an xdist worker
        last = nextitem is None or not _ray_scope(nextitem.nodeid)
    else:
        items = item.session.items
        users = [k for k, i in enumerate(items) if _needs_runtime(i)]
        last = nextitem is None or not users or items.index(item) >= users[-1]
    if last:
        _RAY.down()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _RAY.down()
    _MOTO.down()


@pytest.fixture(scope="module")
def s3(request):
    """The session's S3 server with the test module's bucket (its ``BUCKET``), and the AWS
    variables pointing at it, for the whole module; emptied (every bucket gone) after it."""
    pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    pafs = pytest.importorskip("pyarrow.fs")
    assert _MOTO.up()
    bucket = getattr(request.module, "BUCKET", "textdp-test")
    try:
        with pytest.MonkeyPatch.context() as mp:
            for key, value in _MOTO.env().items():
                mp.setenv(key, value)
            mp.delenv("AWS_PROFILE", raising=False)
            boto3.client("s3", endpoint_url=f"http://127.0.0.1:{_MOTO.port}").create_bucket(
                Bucket=bucket)
            fs = pafs.S3FileSystem(endpoint_override=f"127.0.0.1:{_MOTO.port}", scheme="http",
                                   access_key="test", secret_key="test", region="us-east-1")
            yield S3Bucket(fs, bucket)
    finally:
        _MOTO.reset()


def interrupt_when(cmd: list[str], ready: Path | Callable[[], bool], sig: int,
                   limit: float = 240.0) -> tuple[int, str, bool]:
    """Run ``cmd`` (a process with this one's environment); once ``ready`` (a callable; a
    directory: a staging directory in it holds a file, i.e. the workers are writing), send
    ``sig``. Returns its exit status, its stderr and whether ``sig`` was sent."""
    if isinstance(ready, Path):
        parent = ready

        def ready() -> bool:
            return any(p.name.startswith(".textdp-ray-") and any(p.iterdir())
                       for p in parent.iterdir())

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    sent = False
    try:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and proc.poll() is None:
            if ready():
                proc.send_signal(sig)
                sent = True
                break
            time.sleep(0.02)
        _, err = proc.communicate(timeout=limit)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err, sent


@pytest.fixture
def interrupt() -> Callable[..., tuple[int, str, bool]]:
    """:func:`interrupt_when`, for the tests of interrupted jobs."""
    return interrupt_when
