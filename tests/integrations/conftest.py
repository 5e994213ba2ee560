"""Fixtures of the integration tests: an S3 server on this machine for the ``s3://`` tests of
``--engine ray`` (privatize, embed, docembed), a Ray runtime started after it, and a command
interrupted while its workers write."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
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


@pytest.fixture(scope="module")
def s3(request):
    """A moto S3 server on a free local port with the test module's bucket (its ``BUCKET``),
    and the AWS variables pointing at it, for the whole module: a module's Ray runtime must
    start after this fixture (``runtime(s3)``), so that its worker processes inherit the
    variables as a command's own runtime would."""
    server_module = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    pafs = pytest.importorskip("pyarrow.fs")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    bucket = getattr(request.module, "BUCKET", "textdp-test")
    try:
        with pytest.MonkeyPatch.context() as mp:
            for key, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                               "AWS_DEFAULT_REGION": "us-east-1",
                               "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}.items():
                mp.setenv(key, value)
            mp.delenv("AWS_PROFILE", raising=False)
            boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}").create_bucket(
                Bucket=bucket)
            fs = pafs.S3FileSystem(endpoint_override=f"127.0.0.1:{port}", scheme="http",
                                   access_key="test", secret_key="test", region="us-east-1")
            yield S3Bucket(fs, bucket)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def runtime(s3):
    """A local Ray runtime of 2 CPUs for the module's tests, started once the S3 variables are
    set (its workers inherit them); a module may define its own."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, object_store_memory=150 * 2**20, include_dashboard=False,
             log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


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
