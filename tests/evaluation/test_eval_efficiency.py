"""Efficiency measured in a fresh process: every field present and sane."""

from __future__ import annotations

import pytest

from textdp.evaluation.efficiency import efficiency_table, measure_efficiency


def test_measure_mvc_small():
    r = measure_efficiency("mvc", 10.0, n_words=200, n_tokens=2000, repeats=1, text=True,
                           n_texts=50, vocabulary_size=1000)
    assert r["mechanism"] == "mvc" and r["vocabulary"]["size"] < 1000
    assert r["words_per_second"] > 0 and r["words_per_day"] == pytest.approx(
        r["words_per_second"] * 86_400)
    assert r["peak_mib_per_1000_words"] > 0 and r["setup_seconds"] >= 0
    assert r["text_tokens"] > r["text_documents"] > 0 and r["max_rss_mib"] > 10
    assert "| mvc | 10 |" in efficiency_table([r])


def test_failure_is_one_clear_error():
    with pytest.raises(RuntimeError, match="efficiency measurement of 'nope' failed"):
        measure_efficiency("nope", 1.0, n_tokens=100, text=False, vocabulary_size=1000)
