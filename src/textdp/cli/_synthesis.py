"""What ``textdp synthesize`` and ``textdp audit-synthesize`` share: the private records read
(with the check of their fields) and the progress of a generation stage on any standard error."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textdp.cli._common import CLIError, say

__all__ = ["label_descriptions", "read_records", "stage_bar"]


def read_records(path: Path, text_field: str, label_field: str | None, unit_field: str | None,
                 format: str | None) -> Any:
    """The :class:`~textdp.synthesis.TextSource` of INPUT
    (:func:`textdp.synthesis.files.read_source`); the three fields must differ."""
    from textdp.synthesis.files import read_source

    fields = [text_field] + [f for f in (label_field, unit_field) if f is not None]
    if len(set(fields)) != len(fields):
        raise CLIError("--text-field, --label-field and --unit-field must be different fields")
    return read_source(path, text_field, label_field, unit_field, format)


def stage_bar(description: str, total: int) -> Any:
    """A bar on a terminal; elsewhere (a log, a pipe) one line when a stage starts and one when
    it ends, so that a long run shows its progress on any standard error."""
    if sys.stderr.isatty():
        from tqdm import tqdm

        return tqdm(total=total, desc=description, unit="doc", file=sys.stderr, leave=False,
                    dynamic_ncols=True)
    return _Lines(description, total)


class _Lines:
    """The progress of one stage as two status lines (see :func:`stage_bar`)."""

    def __init__(self, description: str, total: int) -> None:
        import time

        self.description, self.total, self.done = description, total, 0
        self.t0 = time.perf_counter()
        say(f"{description}: generating {total:,} documents")

    def update(self, k: int) -> None:
        self.done += k

    def close(self) -> None:
        import time

        say(f"{self.description}: {self.done:,} of {self.total:,} documents generated in "
            f"{time.perf_counter() - self.t0:.1f} s")


def label_descriptions(items: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``--label-description LABEL=TEXT`` as (label, text) pairs, split at the first ``=`` (a
    label holding ``=`` cannot be described this way; the library takes any)."""
    pairs = []
    for item in items:
        label, sep, text = item.partition("=")
        if not sep or not label.strip() or not text.strip():
            raise CLIError(f"--label-description must be LABEL=TEXT, got {item!r}")
        pairs.append((label, text))
    return tuple(pairs)
