"""The first 1-Diffractor run on a vocabulary says it builds the word lists (once), with progress;
a cached run is silent; the command line prints the library's progress on stderr."""

import logging

import pytest

from textdp.mechanisms.word.diffractor import Diffractor
from textdp.vocab import Vocabulary, load_default


@pytest.fixture(scope="module")
def small():
    glove = load_default()
    return Vocabulary(glove.words[:3000], glove.vectors[:3000], name="glove-top3000")


def test_first_build_says_so_with_progress_then_cached_is_silent(small, tmp_path, monkeypatch,
                                                                caplog):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    with caplog.at_level(logging.INFO, logger="textdp.diffractor"):
        Diffractor(small, epsilon=1.0, n_lists=2)
    lines = [r.getMessage() for r in caplog.records if r.name == "textdp.diffractor"]
    assert lines[0].startswith("building 1-Diffractor word list 1 of 2 for glove-top3000 "
                               "(3,000 words, seed 0): done once per vocabulary")
    assert "word list: 50% (1,500 of 3,000 words)" in lines
    assert any(m.startswith("word list 2 of 2 built in") for m in lines)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="textdp.diffractor"):
        Diffractor(small, epsilon=1.0, n_lists=2)
    assert not [r for r in caplog.records if r.name == "textdp.diffractor"]


def test_cli_prints_library_progress(capsys):
    from textdp.cli import main

    assert main(["mechanisms"]) == 0
    logging.getLogger("textdp.diffractor").info("word list: 10%% (%d of %d words)", 1, 10)
    assert "textdp: word list: 10% (1 of 10 words)" in capsys.readouterr().err
