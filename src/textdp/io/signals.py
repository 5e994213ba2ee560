"""Signals around output that must not be cut in two: SIGTERM handled as Ctrl-C, so that cleanup
runs (:func:`sigterm_as_interrupt`), and SIGINT/SIGTERM held over a short critical section such
as a group's renames (:func:`signals_held`; :mod:`textdp.io.atomic`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["sigterm_as_interrupt", "signals_held"]


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that cleanup runs as for Ctrl-C."""


def _raise_terminated(signum: int, _frame: object) -> None:
    raise _Terminated(f"signal {signum}")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` (as SIGINT does), so that every
    ``except``/``finally`` — the removal of temporary files included — runs before the process
    ends. Outside the main thread (where signals cannot be handled) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def signals_held(hold: bool) -> Iterator[None]:
    """Within the block (``hold``: short work that must not be cut in two), SIGINT and SIGTERM
    are noted instead of handled; the first is raised again, to its own handler, when the block
    ends. Only in the main thread, and only where both handlers were set from Python."""
    names = (signal.SIGINT, signal.SIGTERM)
    if not hold or threading.current_thread() is not threading.main_thread() or \
            any(signal.getsignal(s) is None for s in names):
        yield
        return
    held: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: held.append(signum)) for s in names}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if held:
            signal.raise_signal(held[0])
