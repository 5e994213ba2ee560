"""textdp.text._zipf: wordfreq's English Zipf frequencies for the entity stage's thresholds,
read from wordfreq's data without importing it, equal to wordfreq's own."""

import gzip
import random

import pytest

wordfreq = pytest.importorskip("wordfreq")
msgpack = pytest.importorskip("msgpack")

from textdp.text import _zipf  # noqa: E402


@pytest.fixture(scope="module")
def buckets() -> list[list[str]]:
    with gzip.open(wordfreq.DATA_PATH / "large_en.msgpack.gz", "rb") as stream:
        return msgpack.load(stream, raw=False)[1:]


def test_the_table_is_wordfreq_above_the_floor(buckets):
    # Every word of a bucket near each threshold, as written, capitalised and shouted: the
    # table's value is wordfreq's.
    near = [w for i, b in enumerate(buckets) if 490 <= i <= 610 for w in b]
    rng = random.Random(0)
    words = rng.sample(near, 1500) + ["Maria", "LOL", "Nice", "Sunny", "Leeds", "the", "Zxqv"]
    for word in words:
        for form in (word, word.capitalize(), word.upper()):
            assert _zipf.zipf_frequency(form) == wordfreq.zipf_frequency(form, "en") or (
                wordfreq.zipf_frequency(form, "en") < _zipf.FLOOR
                and _zipf.zipf_frequency(form) < _zipf.FLOOR), form
    for threshold in (3.0, 3.5, 4.0):
        for word in words:
            assert (_zipf.zipf_at_least(word, threshold)
                    == (wordfreq.zipf_frequency(word, "en") >= threshold)), (word, threshold)


def test_other_words_ask_wordfreq():
    for word in ("O'Brien", "Ji-woo", "Müller", "café", "r2d2", "New York"):
        assert _zipf.zipf_frequency(word) == wordfreq.zipf_frequency(word, "en")
    with pytest.raises(ValueError):
        _zipf.zipf_at_least("maria", 2.0)


def test_the_table_reads_wordfreqs_data_without_importing_it():
    import json
    import subprocess
    import sys

    code = ("import sys, json\nfrom textdp.text import _zipf\n"
            "print(json.dumps([_zipf.zipf_frequency('Maria'), len(_zipf._table()),"
            " 'wordfreq' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    value, size, imported = json.loads(out.stdout)
    assert value == wordfreq.zipf_frequency("Maria", "en") and size > 20_000 and not imported
