"""English Zipf frequencies exactly as ``wordfreq.zipf_frequency(word, "en")`` gives them, for the
entity stage's thresholds, without importing wordfreq for the words that do not need it.

Importing wordfreq (its tokenizer pulls in ``regex``, ``ftfy`` and ``langcodes``) and building
its dictionary of the large English list cost about 0.6 CPU-s and 49 MiB per process: more than
a fifth of a one-line release with entities on (issue 38, Deliver 5). The entity stage only asks
whether a word's Zipf frequency reaches 3, 3.5 or 4, and almost always about a plain word of
ASCII letters (``Maria``, ``LOL``). For such a word wordfreq's English tokenizer returns the word
case-folded (lower case), one token, so its frequency is that of its bucket in the list; this
module reads wordfreq's own data file (``large_en.msgpack.gz``, the list ``"best"`` selects for
English) and keeps the words of frequency at least :data:`FLOOR` on the Zipf scale, with the
value wordfreq computes for their bucket. Below the floor every threshold above gives the same
answer, so such a word reads as 0. Any other word (accents, an apostrophe, a hyphen, digits) is
passed to wordfreq itself. ``tests/text/test_zipf.py`` holds this against wordfreq.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import math
from pathlib import Path

__all__ = ["FLOOR", "zipf_at_least"]

#: The lowest threshold the entity stage compares with; words below it read as 0 here.
FLOOR = 3.0


def _bucket_zipf(index: int) -> float:
    """wordfreq's ``zipf_frequency`` of a one-token word in bucket ``index`` of a cBpack list:
    the same floating-point steps (``cB_to_freq``, the one-token combination ``1 / (1 / f)``,
    rounding to 3 significant digits, ``freq_to_zipf``, rounding to 2 decimals)."""
    freq = 10 ** (-index / 100)
    freq = 1.0 / (1.0 / freq)
    unrounded = max(freq, 10**0 / 1e9)  # minimum: zipf_to_freq(0)
    freq = round(unrounded, math.floor(-math.log(unrounded, 10)) + 3)
    return round(math.log(freq, 10) + 9, 2)


@functools.cache
def _table() -> dict[str, float] | None:
    """Plain lower-case words of Zipf frequency ≥ :data:`FLOOR` → their Zipf frequency, or
    ``None`` where wordfreq's data file or msgpack cannot be found (wordfreq then answers)."""
    spec = importlib.util.find_spec("wordfreq")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "large_en.msgpack.gz"
    out: dict[str, float] = {}
    try:
        import msgpack

        with gzip.open(path, "rb") as stream:
            # One array: a header, then the buckets from the most frequent down. Read one item
            # at a time and stop below the floor (most of the list is never decoded).
            unpacker = msgpack.Unpacker(stream, raw=False)
            size = unpacker.read_array_header()
            header = unpacker.unpack()
            if (not isinstance(header, dict) or header.get("format") != "cB"
                    or header.get("version") != 1):
                return None
            for index in range(size - 1):
                zipf = _bucket_zipf(index)
                if zipf < FLOOR:
                    break
                for word in unpacker.unpack():
                    out[word] = zipf
    except (ImportError, OSError, ValueError):
        return None
    return out


def zipf_frequency(word: str) -> float:
    """``wordfreq.zipf_frequency(word, "en")`` where it is at least :data:`FLOOR`; a value below
    :data:`FLOOR` (0 for a plain word) where it is not."""
    table = _table()
    if table is not None and word.isascii() and word.isalpha():
        return table.get(word.lower(), 0.0)
    from wordfreq import zipf_frequency as exact

    return exact(word, "en")


def zipf_at_least(word: str, threshold: float) -> bool:
    """Whether ``wordfreq.zipf_frequency(word, "en") >= threshold`` (``threshold`` ≥
    :data:`FLOOR`)."""
    if threshold < FLOOR:
        raise ValueError(f"thresholds below {FLOOR} need wordfreq itself")
    return zipf_frequency(word) >= threshold
