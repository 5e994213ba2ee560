"""Memory bounded by characters, not documents: long documents are privatised in canonical
segments that continue their document's generator, so a seeded run's output does not depend on
the batch size (documents or characters)."""

import numpy as np
import pytest

import textdp
from textdp import pipeline
from textdp.mechanisms import create
from textdp.pipeline import Privatizer, _segments

WORDS = "the food was great but a waiter named Zzyzxq charged 42 dollars and I loved it".split()


def _corpus(seed=0):
    rng = np.random.default_rng(seed)

    def doc(n):
        return " ".join(rng.choice(WORDS, size=n).tolist())

    return [doc(900), "", "short one", doc(20) + "\n" + doc(700), doc(3), "ünïcode re\u0301sume\u0301"]


@pytest.fixture
def small_segments(monkeypatch):
    monkeypatch.setattr(pipeline, "SEGMENT_CHARS", 500)


@pytest.mark.parametrize("mechanism,kw", [("mvc", {}), ("vickrey", {}), ("santext", {}),
                                          ("mvc", {"oov": "random", "keep_stopwords": True})])
def test_output_does_not_depend_on_the_cut(small_segments, mechanism, kw):
    texts = _corpus()
    mech = create(mechanism, epsilon=3)
    ref = Privatizer(mech, seed=7, **kw)
    want = ref.run(texts)
    assert len(want) == len(texts) and want[1] == ""
    for batch_chars in (1, 499, 4000):
        for split in (1, 6):
            runner = Privatizer(mech, seed=7, batch_chars=batch_chars, **kw)
            got = []
            for a in range(0, len(texts), split):
                got += runner.run(texts[a:a + split])
            assert got == want, (batch_chars, split)
            r, w = runner.report(), ref.report()
            assert r["tokens"] == w["tokens"] and r["documents"] == w["documents"]


def test_long_document_counts_and_structure(small_segments):
    texts = _corpus(1)
    out = textdp.privatize(texts, epsilon=3, seed=2, batch_chars=300, entities="none")
    rep = out.report
    mech = create("mvc", epsilon=3)
    words = [textdp.privatize([t], mech, seed=2, entities="none").report["tokens"]["by_policy"]["privatized"]
             for t in texts]
    assert rep["documents"]["max_privatized_words_per_document"] == max(words) > 500
    assert rep["tokens"]["by_policy"]["privatized"] == sum(words)
    for a, b in zip(texts, out.texts, strict=True):
        assert [c for c in a if c.isspace()] == [c for c in b if c.isspace()]


def test_segments_are_canonical_and_cut_between_tokens(small_segments):
    text = " ".join(["word"] * 1000)
    segs = list(_segments(text))
    assert "".join(segs) == text and len(segs) > 5
    assert all(s[0] != " " and s[-1] == " " for s in segs[:-1])  # cut after whitespace
    assert all(500 <= len(s) < 1000 for s in segs[:-1])
    # No whitespace at all: a hard cut, never before a combining mark.
    glued = "e\u0301" * 800
    segs = list(_segments(glued))
    assert "".join(segs) == glued and all(not s.startswith("\u0301") for s in segs)


def test_real_segment_size_unchanged_for_short_documents():
    assert pipeline.SEGMENT_CHARS == 1 << 16
    texts = _corpus()
    long_doc = " ".join(WORDS * 1800)  # ~140k characters: 3 segments
    mech = create("mvc", epsilon=3)
    a = Privatizer(mech, seed=3).run([*texts, long_doc])
    b = Privatizer(mech, seed=3, batch_chars=50_000).run([*texts, long_doc])
    assert a == b
    assert a[:-1] == Privatizer(mech, seed=3).run(texts)  # short documents: the one-piece stream


def test_bad_batch_chars():
    with pytest.raises(ValueError, match="batch_chars"):
        textdp.privatize(["a"], epsilon=1, batch_chars=0)


def test_a_later_segment_after_a_silent_one_starts_its_document_stream(small_segments):
    """Segment 0 privatises nothing, so segment 1 opens the document's stream, whatever ran before
    on the same Privatizer (no state left from an earlier call)."""
    silent = "123 " * 200  # numbers only: nothing drawn (oov=mask)
    text = silent + " ".join(["good"] * 300)
    mech = create("mvc", epsilon=2)
    fresh = Privatizer(mech, seed=9).run([text])
    reused = Privatizer(mech, seed=9)
    reused.run([text.replace("123", "bad")])  # leaves generator state behind for position 0
    assert reused.run([text], start=0) == fresh
