"""Run one page's blocks in order (the child process of tests/docs/_harness.py).

Python blocks share one namespace; shell blocks run under ``bash -eo pipefail``. On the first
failure, one line ``@@docs-failure {json}`` on stdout names the block; exit status 1.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import time
import traceback


def _shell(code: str) -> tuple[bool, str]:
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", code], capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    return proc.returncode == 0, output + (f"\n[exit status {proc.returncode}]"
                                           if proc.returncode else "")


def _console(code: str) -> str:
    """The ``$ `` lines of a console block (with their continuation lines)."""
    commands, going = [], False
    for line in code.splitlines():
        if line.startswith("$ "):
            commands.append(line[2:])
            going = line.rstrip().endswith("\\")
        elif going:
            commands.append(line)
            going = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


def main(spec: str) -> int:
    namespace: dict = {"__name__": "__docs__"}
    for block in json.load(open(spec, encoding="utf-8")):
        where, kind = f"{block['path']}:{block['line']}", block["kind"]
        print(f"== {where} ({kind})", flush=True)
        started = time.perf_counter()
        if kind == "python":
            buffer = io.StringIO()
            ok = True
            try:
                with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                    for setup in block["setup"]:
                        exec(compile(setup, f"{where} (setup)", "exec"), namespace)
                    exec(compile(block["code"], where, "exec"), namespace)
            except BaseException:  # noqa: BLE001 - the block's own error is the message
                ok = False
                buffer.write(traceback.format_exc())
            output = buffer.getvalue()
        else:
            code = block["code"] if kind == "sh" else _console(block["code"])
            ok, output = _shell("\n".join(block["setup"] + [code]))
        sys.stdout.write(output[-2000:].rstrip("\n") + "\n")
        print(f"== {where}: {time.perf_counter() - started:.1f} s", flush=True)
        if not ok:
            print("@@docs-failure " + json.dumps({"where": where, "kind": kind,
                                                  "code": block["code"], "output": output}))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
