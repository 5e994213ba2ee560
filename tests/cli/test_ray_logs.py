"""RayLogs (issue 21, item 5) without Ray: in a child process, whose stderr is a real descriptor 2,
lines written the three ways Ray writes them (to descriptor 2 directly as its C++ core worker
does, through a StreamHandler on the ``ray`` logger, as a Python warning from a ``ray/`` module)
land in the log file, and stderr carries textdp's lines only; ``verbose`` lets them through.
(tests/integrations/test_ray.py checks the same on a real Ray run.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import logging, os, sys, types, warnings
    from textdp.engines.ray.logs import RayLogs

    logs_dir, verbose = sys.argv[1], sys.argv[2] == "1"
    class Plain(logging.StreamHandler):  # like Ray's PlainRayHandler: stderr at emit time
        def emit(self, record):
            self.stream = sys.stderr
            super().emit(record)
    logging.getLogger("ray").addHandler(Plain())
    node = types.SimpleNamespace(get_logs_dir_path=lambda: logs_dir)
    ray = types.SimpleNamespace(_private=types.SimpleNamespace(
        worker=types.SimpleNamespace(_global_node=node)))
    with RayLogs(verbose=verbose) as logs:
        os.write(2, b"[E core_worker.cc] before Ray started\\n")
        logs.started(ray)
        print("textdp: a line of ours", file=sys.stderr)
        os.write(2, b"[E core_worker.cc] an actor\\n")
        logging.getLogger("ray").warning("The Dataset job will hang")
        warnings.warn_explicit("a Ray warning", UserWarning, "/x/site-packages/ray/data/op.py", 5)
        warnings.warn_explicit("not Ray's", UserWarning, "/x/other/mod.py", 7)
    print("textdp: after", file=sys.stderr)
    print(logs.path)
""")


@pytest.mark.parametrize("verbose", [False, True])
def test_ray_lines_go_to_the_log_file_unless_verbose(tmp_path, verbose):
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), "1" if verbose else "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ray_lines = ("before Ray started", "an actor", "The Dataset job will hang", "a Ray warning")
    if verbose:
        assert all(x in proc.stderr for x in ray_lines)
        assert proc.stdout.strip() == "None"
        return
    assert proc.stderr.splitlines()[0] == "textdp: a line of ours"
    assert proc.stderr.splitlines()[-1] == "textdp: after"
    assert not any(x in proc.stderr for x in ray_lines)
    assert "not Ray's" in proc.stderr  # other warnings are not Ray's to hide
    log = tmp_path / proc.stdout.strip().rsplit("/", 1)[-1]
    assert proc.stdout.strip() == str(log) and log.name.startswith("textdp-driver-")
    text = log.read_text(encoding="utf-8")
    assert all(x in text for x in ray_lines) and "textdp:" not in text


STDOUT_CHILD = textwrap.dedent("""
    import os, subprocess, sys, types
    from textdp.engines.ray.logs import RayLogs
    from textdp.io import AtomicFiles

    logs_dir, verbose = sys.argv[1], sys.argv[2] == "1"
    node = types.SimpleNamespace(get_logs_dir_path=lambda: logs_dir)
    ray = types.SimpleNamespace(_private=types.SimpleNamespace(
        worker=types.SimpleNamespace(_global_node=node)))
    # A raylet that outlives the driver (an interrupt): it inherited descriptor 1 while Ray ran.
    late = "import sys, time; time.sleep(1); print('\\\\x1b[36m(raylet)\\\\x1b[0m late line')"
    with RayLogs(verbose=verbose) as logs:
        logs.started(ray)
        raylet = subprocess.Popen([sys.executable, "-c", late])
        print("\\x1b[36m(raylet)\\x1b[0m printed by the driver", flush=True)  # Ray's log thread
        os.write(1, b"(raylet) written to descriptor 1\\n")
        with AtomicFiles() as files:  # textdp's own standard output: the data
            files.write_bytes("-", b"DATA\\n")
    print("AFTER")
    sys.stdout.flush()
    os._exit(0)  # the raylet still runs, holding what it was given as descriptor 1
""")


@pytest.mark.parametrize("verbose", [False, True])
def test_nothing_of_ray_reaches_standard_output(tmp_path, verbose):
    """Issue 36: after an interrupt, Ray's coloured raylet lines reached textdp's stdout (the
    data stream of ``-o -``). While Ray runs descriptor 1 is where Ray's lines go; textdp's own
    output reaches the real standard output, and a Ray process that outlives the driver holds the
    log file (or stderr), never the data stream."""
    proc = subprocess.run([sys.executable, "-c", STDOUT_CHILD, str(tmp_path),
                           "1" if verbose else "0"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "DATA\nAFTER\n"
    if verbose:  # shown, on stderr
        assert "printed by the driver" in proc.stderr and "late line" in proc.stderr
    else:
        assert "raylet" not in proc.stderr
        log = next(tmp_path.glob("textdp-driver-*.log")).read_text()
        assert "printed by the driver" in log and "written to descriptor 1" in log
