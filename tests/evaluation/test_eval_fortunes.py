"""Debian fortunes: parsing (attribution, overstrike, authors), the cache path, a clear error
without apt, and the real collection when it can be had (43 categories, ~15k entries)."""

from __future__ import annotations

import pytest

from textdp.datasets import fortunes
from textdp.datasets.fortunes import FortunesUnavailable, author_name


def _fake_dir(tmp_path, n_files=43):
    d = tmp_path / "fortunes"
    d.mkdir()
    body = ("A plain quote\nover two lines.\n%\nTo be or not\n\t\t-- William Shakespeare, \"Hamlet\"\n"
            "%\nb\bbold text\n%\nSeen it all.\n\t\t-- Seen on #debian\n%\n"
            "Long attribution.\n\t\t-- Mark Twain, \"Pudd'nhead Wilson's\n\t\t   Calendar\"\n")
    for i in range(n_files):
        (d / f"cat{i:02d}").write_text(body, encoding="utf-8")
        (d / f"cat{i:02d}.dat").write_bytes(b"\x00binary")
    return d


def test_parse_synthetic(tmp_path, monkeypatch):
    d = _fake_dir(tmp_path)
    monkeypatch.setenv("TEXTDP_FORTUNES_DIR", str(d))
    entries = fortunes.load_fortunes(["cat00"])
    assert [e.text for e in entries] == ["A plain quote\nover two lines.", "To be or not",
                                         "bold text", "Seen it all.", "Long attribution."]
    assert [e.author for e in entries] == [None, "William Shakespeare", None, None, "Mark Twain"]
    assert entries[4].attribution == "Mark Twain, \"Pudd'nhead Wilson's Calendar\""
    assert len(fortunes.fortune_categories()) == 43
    assert len(fortunes.attributed_quotes(min_quotes=43)) == 86
    with pytest.raises(ValueError, match="unknown fortunes category"):
        fortunes.load_fortunes(["nope"])


def test_author_names():
    assert author_name("Steve Jobs (1955-2011)") == "Steve Jobs"
    assert author_name("Jack Handey, The New Mexican, 1988.") == "Jack Handey"
    assert author_name("\"Sniglets\", Rich Hall & Friends") is None
    assert author_name("Anonymous") is None


def test_env_dir_must_hold_the_files(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_FORTUNES_DIR", str(tmp_path))
    with pytest.raises(FortunesUnavailable, match="TEXTDP_FORTUNES_DIR"):
        fortunes.fortunes_dir()


def test_without_apt_the_error_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("TEXTDP_FORTUNES_DIR", raising=False)
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(fortunes, "SYSTEM_DIR", tmp_path / "none")
    monkeypatch.setattr(fortunes.shutil, "which", lambda name: None)
    with pytest.raises(FortunesUnavailable, match="apt-get") as info:
        fortunes.fortunes_dir()
    assert "TEXTDP_FORTUNES_DIR" in str(info.value)


def test_real_collection():
    try:
        entries = fortunes.load_fortunes()
    except FortunesUnavailable as exc:
        pytest.skip(str(exc))
    cats = fortunes.fortune_categories()
    assert len(cats) == 43 and 14_000 < len(entries) < 17_000
    quotes = fortunes.attributed_quotes(20)
    assert len({q.author for q in quotes}) >= 20
    assert all(q.text and "\b" not in q.text for q in entries)
