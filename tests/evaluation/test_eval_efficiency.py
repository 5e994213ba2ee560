"""Efficiency measured in a fresh process: every field present and sane."""

from __future__ import annotations

import sys

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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM and exec semantics are Linux's")
def test_child_peak_rss_is_its_own_not_the_parents():
    """ru_maxrss survives exec on Linux; the child must report VmHWM, its own peak."""
    import resource
    import subprocess

    import numpy as np

    big = np.ones(40_000_000)  # ~305 MiB resident in this (parent) process
    big[::512] = 2.0
    code = ("import resource; from textdp.evaluation.efficiency import _peak_rss_mib; "
            "print(_peak_rss_mib(-1.0), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ours, inherited = map(float, out.stdout.split())
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del big
    assert 0 < ours < 250 < parent
    assert inherited >= 300  # the planted bug: getrusage alone reports the parent's peak
