"""Fixtures of the integration tests: an S3 server on this machine for the ``s3://`` tests of
``--engine ray`` (privatize, embed, docembed)."""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
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
