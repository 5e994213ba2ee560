"""The cluster recipe of docs/scaling.md, as written (issue 25, item 4): a two-node Ray cluster on
this machine (``ray start --head`` and ``ray start --address``, loopback only, one CPU each)
with Ray 2.5x's token authentication (``RAY_AUTH_MODE=token``, the token from
``ray get-auth-token``), and ``textdp privatize DIR --engine ray --ray-address`` from a separate
process: the output is the local engine's seeded output, byte for byte. Without the token,
textdp's error names the cause in one line.

The nodes run ``--block`` in processes this test owns and stops (never ``ray stop``, which would
stop every Ray runtime of this user on the machine), with their own temporary directory and
home (the token file).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import textdp
from textdp.cli import main

pytest.importorskip("ray")
pytest.importorskip("ray.data")

RAY = Path(sys.executable).with_name("ray")
WORDS = "the food was great but the service was slow and the room felt cold".split()
STARTED = "Ray runtime started"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if STARTED in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    pytest.fail(f"a Ray node did not start: {log.read_text(errors='replace')[-2000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """``ray start --block`` stops the node's processes when it receives SIGTERM."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def cluster():
    """(address, environment of a process that has the token) of a running two-node cluster."""
    root = Path(tempfile.mkdtemp(prefix="tdpc", dir="/tmp"))  # short: Ray's socket paths
    home = root / "home"
    home.mkdir()
    src = Path(textdp.__file__).resolve().parents[1]  # this checkout's textdp, on every node
    env = {**os.environ, "HOME": str(home), "RAY_AUTH_MODE": "token",
           "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get(
               "PYTHONPATH")])]), "RAY_USAGE_STATS_ENABLED": "0"}
    token = subprocess.run([str(RAY), "get-auth-token", "--generate"], env=env, check=True,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert (home / ".ray" / "auth_token").read_text().strip() == token
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    nodes = []
    try:
        for i, args in enumerate([
                ["--head", f"--port={port}", "--include-dashboard=false",
                 f"--temp-dir={root / 'ray'}"],
                [f"--address={address}"]]):
            log = root / f"node{i}.log"
            with open(log, "wb") as out:
                nodes.append(subprocess.Popen([str(RAY), "start", *args, *common], env=env,
                                              stdout=out, stderr=subprocess.STDOUT))
            _wait_for(nodes[-1], log, 120)
        yield address, {**env, "RAY_AUTH_TOKEN": token}, root
    finally:
        for proc in reversed(nodes):
            _stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def _texts(n: int) -> list[str]:
    return [" ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(3 + i % 9)) + "."
            for i in range(n)]


def test_two_node_cluster_with_token_authentication(cluster, tmp_path):
    address, env, _ = cluster
    texts = _texts(90)
    d = tmp_path / "in"
    d.mkdir()
    for k, name in enumerate(("a.jsonl", "b.jsonl", "c.jsonl")):
        (d / name).write_text("".join(json.dumps({"id": i, "text": t}) + "\n"
                                      for i, t in enumerate(texts[30 * k:30 * k + 30])))
    client = {**env, "HOME": str(tmp_path)}  # the token from RAY_AUTH_TOKEN only
    cmd = [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
           "privatize", str(d), "-o", str(tmp_path / "out"), "--epsilon", "10", "--seed", "3",
           "--engine", "ray", "--workers", "2", "--ray-address", address]
    proc = subprocess.run(cmd, env=client, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all(x.startswith("textdp: ") for x in proc.stderr.splitlines()), proc.stderr[-2000:]
    # The local engine's seeded run over the files in name order, as one file: the same bytes.
    names = ("a.jsonl", "b.jsonl", "c.jsonl")
    (tmp_path / "all.jsonl").write_bytes(b"".join((d / n).read_bytes() for n in names))
    assert main(["privatize", str(tmp_path / "all.jsonl"), "-o", str(tmp_path / "local.jsonl"),
                 "--epsilon", "10", "--seed", "3"]) == 0
    assert b"".join((tmp_path / "out" / n).read_bytes() for n in names) == \
        (tmp_path / "local.jsonl").read_bytes()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == list(names)

    # Without the token: one line naming the cause (Ray's own is a retry loop in its logs).
    bare = {k: v for k, v in client.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE")}
    bare["RAY_gcs_server_port_wait_time_s"] = "3"  # Ray's connect retries: ~20 s by default
    proc = subprocess.run([*cmd[:-1], address, "-o", str(tmp_path / "out2")], env=bare,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "InvalidAuthToken" in lines[0] and "RAY_AUTH_TOKEN" in lines[0], \
        proc.stderr[-2000:]
    assert not (tmp_path / "out2").exists()
