"""The one error type of textdp's file I/O: which file, which line (or row), what is wrong."""

from __future__ import annotations

import os

__all__ = ["FileError"]


class FileError(ValueError):
    """A problem with a file a user gave us, located as precisely as we know it.

    ``str(error)`` is one line: ``path:line: problem`` for line-based formats, ``path: row N:
    problem`` for Parquet, ``path: problem`` when no position applies. The message never contains a
    newline, so a command line can print it as a single line.

    Attributes:
        path: the file, as the user named it.
        line: 1-based line (or row) number, or None.
        problem: what is wrong, in words.
        unit: ``"line"`` or ``"row"``.
    """

    def __init__(self, path: str | os.PathLike, line: int | None, problem: str, *,
                 unit: str = "line") -> None:
        self.path = os.fspath(path)
        self.line = line
        self.problem = " ".join(str(problem).split())
        self.unit = unit
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.problem}"
        if self.unit == "line":
            return f"{self.path}:{self.line}: {self.problem}"
        return f"{self.path}: {self.unit} {self.line}: {self.problem}"
