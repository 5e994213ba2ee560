"""Debian's ``fortunes`` collection: 43 category files (topic labels) and attributed quotes (authors).

The quotes come from the Debian packages ``fortunes`` (40 categories) and ``fortunes-min`` (its
dependency: ``fortunes``, ``literature``, ``riddles``), about 15,200 entries in all, of which about
7,300 end in an attribution line (``\\t\\t-- Mark Twain``). Nothing is committed to this
repository; the files are found, in this order:

1. ``TEXTDP_FORTUNES_DIR`` — a directory holding the category files (e.g. ``/usr/share/games/fortunes``);
2. the extracted copy in ``<textdp cache>/datasets/fortunes/``;
3. an installed copy in ``/usr/share/games/fortunes`` (``apt-get install fortunes``);
4. otherwise ``apt-get download fortunes fortunes-min`` into a temporary directory (the package
   manager's normal fetch; no root needed) and ``dpkg-deb -x`` of the category files into the
   cache. Without apt/dpkg this raises :class:`FortunesUnavailable` with what to do instead.

Each entry is one :class:`Fortune`: its category, its text without the attribution, and the
attribution with the author's name (the part before the first comma, quote or parenthesis:
``Mark Twain, "Pudd'nhead Wilson's Calendar"`` → ``Mark Twain``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from textdp.vocab import cache_dir

__all__ = ["Fortune", "FortunesUnavailable", "load_fortunes", "fortune_categories",
           "attributed_quotes", "fortunes_dir", "PACKAGES", "SYSTEM_DIR"]

PACKAGES = ("fortunes", "fortunes-min")
SYSTEM_DIR = Path("/usr/share/games/fortunes")
_MIN_FILES = 40  # a directory with fewer category files is not a complete copy
_EXCLUDE_SUFFIXES = (".dat", ".u8", ".pdat", ".txt")


class FortunesUnavailable(RuntimeError):
    """The Debian fortunes files could not be found or fetched (message says what to do)."""


@dataclass(frozen=True, slots=True)
class Fortune:
    category: str
    text: str
    author: str | None
    attribution: str | None


def _category_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    out = []
    for p in sorted(directory.iterdir()):
        if p.name.startswith(".") or p.suffix in _EXCLUDE_SUFFIXES or p.name.endswith(_EXCLUDE_SUFFIXES):
            continue
        if p.is_file():  # follows symlinks
            out.append(p)
    return out


def _cache_copy() -> Path:
    return cache_dir() / "datasets" / "fortunes"


def _fetch_with_apt(target: Path) -> None:
    apt, dpkg = shutil.which("apt-get"), shutil.which("dpkg-deb")
    if apt is None or dpkg is None:
        raise FortunesUnavailable(
            "the fortunes data set needs the Debian packages 'fortunes' and 'fortunes-min', but "
            "apt-get/dpkg-deb are not available here; copy their category files (normally "
            f"{SYSTEM_DIR}) to a directory and set TEXTDP_FORTUNES_DIR to it")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([apt, "download", *PACKAGES], cwd=tmp, capture_output=True,
                              text=True)
        debs = sorted(Path(tmp).glob("*.deb"))
        if proc.returncode != 0 or len(debs) < len(PACKAGES):
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise FortunesUnavailable(
                f"'apt-get download {' '.join(PACKAGES)}' failed ({last}); run 'apt-get update' "
                "first, or install the package (apt-get install fortunes) or set "
                "TEXTDP_FORTUNES_DIR to a directory holding its category files")
        root = Path(tmp) / "root"
        for deb in debs:
            subprocess.run([dpkg, "-x", str(deb), str(root)], check=True, capture_output=True)
        files = _category_files(root / "usr/share/games/fortunes")
        if len(files) < _MIN_FILES:
            raise FortunesUnavailable(f"the downloaded packages hold only {len(files)} category files")
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".fortunes-"))
        try:
            for f in files:
                shutil.copyfile(f, staging / f.name)
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def fortunes_dir() -> Path:
    """The directory holding the category files, fetching them with apt into the cache if needed."""
    env = os.environ.get("TEXTDP_FORTUNES_DIR")
    if env:
        path = Path(env)
        if len(_category_files(path)) < _MIN_FILES:
            raise FortunesUnavailable(f"TEXTDP_FORTUNES_DIR={env!r} does not hold the fortunes "
                                      f"category files (need ≥ {_MIN_FILES})")
        return path
    cached = _cache_copy()
    if len(_category_files(cached)) >= _MIN_FILES:
        return cached
    if len(_category_files(SYSTEM_DIR)) >= 43:
        return SYSTEM_DIR
    cached.parent.mkdir(parents=True, exist_ok=True)
    _fetch_with_apt(cached)
    return cached


_OVERSTRIKE = re.compile(r".\x08")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ATTRIBUTION = re.compile(r"^\s+-{2,3}\s*(\S.*)$")
_AUTHOR_CUT = re.compile(r"[,(\[\"“]|\s-\s|\s+on\s|\s+in\s")
# Attributions that name a place or a source, not a person ("Seen on #Debian", "From a sign").
_NOT_AN_AUTHOR = re.compile(r"(?i)^(seen|found|from|overheard|heard|sign|graffiti|anonymous|unknown)\b")


def _clean(text: str) -> str:
    return _CONTROL.sub("", _OVERSTRIKE.sub("", text))


def author_name(attribution: str) -> str | None:
    """The author in an attribution line: the text before the first comma, quote or parenthesis."""
    a = attribution.strip()
    if not a or a[0] in "\"“'(" or _NOT_AN_AUTHOR.match(a):
        return None
    name = _AUTHOR_CUT.split(a, maxsplit=1)[0].strip().rstrip(".:;")
    return name or None


def _parse(category: str, raw: str) -> Iterable[Fortune]:
    for entry in re.split(r"^%[ \t]*$\n?", _clean(raw), flags=re.M):
        lines = entry.rstrip().split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            continue
        attribution = None
        # The attribution is the last line starting with (indented) "--", plus its indented
        # continuation lines; only at the end of the entry.
        for i in range(len(lines) - 1, max(-1, len(lines) - 4), -1):
            m = _ATTRIBUTION.match(lines[i])
            if m and i > 0 and all(ln.startswith((" ", "\t")) for ln in lines[i:]):
                attribution = " ".join([m.group(1)] + [ln.strip() for ln in lines[i + 1:]])
                lines = lines[:i]
                break
        text = "\n".join(lines).strip("\n")
        if not text.strip():
            continue
        yield Fortune(category, text, author_name(attribution) if attribution else None,
                      attribution)


_CACHE: dict[Path, list[Fortune]] = {}


def load_fortunes(categories: Iterable[str] | None = None) -> list[Fortune]:
    """Every entry of the given categories (default: all 43), in file order.

    Raises:
        FortunesUnavailable: the files are not here and apt could not fetch them.
        ValueError: an unknown category.
    """
    directory = fortunes_dir()
    if directory not in _CACHE:
        out: list[Fortune] = []
        for f in _category_files(directory):
            out.extend(_parse(f.name, f.read_text(encoding="utf-8", errors="replace")))
        _CACHE[directory] = out
    entries = _CACHE[directory]
    if categories is None:
        return list(entries)
    wanted = set(categories)
    known = {e.category for e in entries}
    unknown = wanted - known
    if unknown:
        raise ValueError(f"unknown fortunes categor{'y' if len(unknown) == 1 else 'ies'}: "
                         f"{', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    return [e for e in entries if e.category in wanted]


def fortune_categories() -> dict[str, int]:
    """Category → number of entries."""
    return dict(Counter(e.category for e in load_fortunes()))


def attributed_quotes(min_quotes: int = 20) -> list[Fortune]:
    """Entries whose author has at least ``min_quotes`` attributed entries (author attribution)."""
    quotes = [e for e in load_fortunes() if e.author]
    counts = Counter(e.author for e in quotes)
    return [e for e in quotes if counts[e.author] >= min_quotes]
