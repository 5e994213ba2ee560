"""Physical lines of a UTF-8 file, decoded strictly, counted, with their endings kept."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from textdp.io.errors import FileError

BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")


class Utf8Lines:
    """Iterate over the lines of a binary file as ``str``, each with its ending (``\\n``,
    ``\\r\\n`` or none for a last line without one).

    Lines end at ``\\n`` only — a lone ``\\r`` is a character inside the line — so that writing the
    lines back reproduces the file byte for byte. A UTF-8 byte-order mark at the very start is
    removed from the first line and recorded in :attr:`bom`.

    Raises:
        FileError: a line is not valid UTF-8 (names the line and the byte).
    """

    def __init__(self, fh: BinaryIO, path: str) -> None:
        self._fh = fh
        self._path = path
        self.bom = False
        #: Lines read so far (= the number of the last line read, 1-based).
        self.line = 0
        #: Bytes read so far, for a progress bar.
        self.bytes_read = 0

    def __iter__(self) -> Iterator[str]:
        for raw in self._fh:
            self.line += 1
            self.bytes_read += len(raw)
            if self.line == 1 and raw.startswith(_BOM_BYTES):
                self.bom = True
                raw = raw[len(_BOM_BYTES):]
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = raw[exc.start:exc.start + 1].hex()
                raise FileError(self._path, self.line,
                                f"invalid UTF-8 (byte 0x{bad} at byte {exc.start + 1} of the line)"
                                ) from None


def split_ending(line: str) -> tuple[str, str]:
    """``"abc\\r\\n"`` → ``("abc", "\\r\\n")``; the ending is ``""`` for a last line without one."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""
