"""Say on stderr what is loading when a first call takes long.

The first ``textdp.privatize`` of a process loads the entity model (spaCy and its pipeline) and
the default vocabulary: 10–40 s on a busy machine, during which a new user sees nothing and may
think it hung. :func:`loading` wraps such a load: if it is still running after
:data:`NOTICE_AFTER` seconds, one line says what is loading and that it happens once per process,
and a second line says when it is done. Fast loads (a warm cache) print nothing.

``TEXTDP_QUIET=1`` silences it; the command line silences it too (:func:`quiet`): its own status
lines say what it does, and its errors must stay one line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator

__all__ = ["NOTICE_AFTER", "loading", "quiet"]

#: Seconds a load may take before it is announced.
NOTICE_AFTER = 2.0

_quiet = False


def quiet(value: bool = True) -> None:
    """Turn the notices off (the command line does) or back on."""
    global _quiet
    _quiet = value


def _silenced() -> bool:
    return _quiet or os.environ.get("TEXTDP_QUIET", "") not in ("", "0")


@contextlib.contextmanager
def loading(what: str, hint: str = "", *, after: float | None = None) -> Iterator[None]:
    """Announce ``what`` on stderr if the block is still running after ``after`` seconds
    (default :data:`NOTICE_AFTER`), with ``hint`` (how to avoid it), and its duration when it
    ends."""
    if _silenced():
        yield
        return
    start = time.monotonic()
    said = threading.Event()

    def announce() -> None:
        said.set()
        _write(f"textdp: loading {what}, once per process (later calls reuse it"
               + (f"; {hint}" if hint else "") + ")…")

    timer = threading.Timer(NOTICE_AFTER if after is None else after, announce)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            _write(f"textdp: {what} loaded in {time.monotonic() - start:.1f} s")


def _write(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: the notice is a courtesy, never an error
        pass
