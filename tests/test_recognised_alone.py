"""A document is recognised alone (issue 22 item 3): identifiers and deny-list terms are a
function of the document, never of its neighbours, the batch size or the segment cut."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import textdp
from textdp import pipeline
from textdp.mechanisms import create
from textdp.pipeline import Privatizer
from textdp.text._codes import encode_batch
from textdp.text.identifiers import Identifiers

KW = dict(epsilon=1e6, seed=0, mechanism="diffractor")
DENY = ["john smith", "falcon"]
# Pieces that are identifiers, halves of identifiers (anchors at a document's edge), deny-list
# terms in disguise, and plain text.
FRAGMENTS = ["2001:db8::", "::1", "see http:", "//evil.example.com/x", "http:", "//a.b.org/y",
             "www", ".example.com", "jsmith@", "acme.com", "+44 20", " 7946 0958",
             "DE89 3704", " 0044 0532 0130 00", "john", " smith", "John\u00a0Smith", "fal\u00adcon",
             "4111 1111", " 1111 1111", "10.0.0.1:8080", "microsoft.com", " ", "\n", "  ", ":",
             "@", "//", ".", "12", "3456", "word", "the food was great"]
DOCS = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=7).map("".join)
MECH = create("mvc", epsilon=2)


def _found(texts):
    ids = Identifiers(deny_list=DENY)
    batch = encode_batch(texts, ids)
    return [(int(batch.doc_of[t]), batch.token(int(t)), ids.kinds[k])
            for t, k in zip(batch.identifiers.tolist(), batch.identifier_kinds.tolist(), strict=True)]


def _together(texts, batch_size, **kw):
    runner = Privatizer(MECH, seed=5, deny_list=DENY, **kw)
    out = []
    for i in range(0, len(texts), batch_size):
        out += runner.run(texts[i:i + batch_size], start=i)
    return out, runner.report()["identifiers"]["by_kind"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(DOCS, min_size=1, max_size=6), batch_size=st.integers(1, 7),
       segment=st.sampled_from([8, 13, 40, 1 << 16]), batch_chars=st.sampled_from([1, 17, 1 << 18]))
def test_privatising_together_equals_each_alone(texts, batch_size, segment, batch_chars):
    saved = pipeline.SEGMENT_CHARS
    pipeline.SEGMENT_CHARS = segment
    try:
        together, kinds = _together(texts, batch_size, batch_chars=batch_chars)
        alone = Privatizer(MECH, seed=5, deny_list=DENY)
        assert together == [alone.run([t], start=i)[0] for i, t in enumerate(texts)]
        # The segment cut never changes what is recognised.
        pipeline.SEGMENT_CHARS = 1 << 16
        assert _together(texts, batch_size)[1] == kinds
    finally:
        pipeline.SEGMENT_CHARS = saved


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(DOCS, min_size=1, max_size=6))
def test_spans_of_a_batch_are_the_spans_of_each_document(texts):
    assert _found(texts) == [(d, tok, kind) for d, t in enumerate(texts)
                             for _, tok, kind in _found([t])]


# Regressions: each of these failed when anchors were searched over the joined batch.
def test_halves_of_an_address_in_two_documents():
    assert _found(["2001:db8::", "::1"]) == [(0, "2001:db8::", "ip"), (1, "::1", "ip")]


def test_a_scheme_at_the_end_of_one_document_does_not_make_the_next_a_url():
    out = textdp.privatize(["see http:", "//evil.example.com/x"], **KW).texts
    assert "[URL]" not in out[0]
    assert out == [textdp.privatize([t], **KW).texts[0] for t in ["see http:", "//evil.example.com/x"]]


@pytest.mark.parametrize("texts", [["see http:", "//a.example.com/x see http:", "//b.example.com/y"],
                                   ["https:", "//a.b", "https:", "//c.d"],
                                   ["a www", ".example.com b www", ".x.org"]])
def test_hard_wrapped_urls_in_one_batch(texts):
    out = textdp.privatize(texts, **KW).texts  # raised "ValueError: shape mismatch"
    assert out == [textdp.privatize([t], **KW).texts[0] for t in texts]


@pytest.mark.parametrize("batch_size", [1, 2, 3, 4])
def test_seeded_output_does_not_depend_on_the_batch_size(batch_size):
    texts = ["2001:db8::", "::1 and more", "see http:", "//evil.example.com/x", "call +44 20",
             "7946 0958 now"]
    ref = textdp.privatize(texts, epsilon=2, seed=4).texts
    assert textdp.privatize(texts, epsilon=2, seed=4, batch_size=batch_size).texts == ref


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.one_of(DOCS, st.sampled_from(FRAGMENTS)), min_size=30, max_size=80))
def test_a_long_document_read_in_chunks_gives_the_spans_of_one_read(parts):
    """Spans of a document longer than a chunk (here 100 characters, 64 of context): the same
    as reading it whole, for identifiers and terms shorter than the context."""
    from textdp.text import identifiers as module

    text = " ".join(parts)
    assume(len(text) > 150)
    ids = Identifiers(deny_list=DENY)
    whole = ids._whole(text)
    saved = module._CHUNK, module._CONTEXT
    module._CHUNK, module._CONTEXT = 100, 64
    try:
        chunked = ids.spans(text)
    finally:
        module._CHUNK, module._CONTEXT = saved
    assert [c.tolist() for c in chunked] == [c.tolist() for c in whole]


# A reported IndexError in the anchor windows (_stretches) for a batch whose last text ends in
# ":/" (a 40M-word run); not reproduced. Texts ending in every prefix of "://" and in "::",
# last in the batch or not, alone or after others, and one long text read in chunks.
ENDINGS = [":", ":/", "://", "::", " :/", "http:/", "a:/", "1:/", "2001:db8:/", "x::"]
ENDED = st.tuples(DOCS, st.sampled_from(ENDINGS)).map("".join)


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.one_of(DOCS, ENDED), min_size=1, max_size=6).filter(
    lambda t: any(x.endswith((":", ":/")) for x in t)))
def test_texts_ending_in_a_scheme_separator_are_recognised_alone(texts):
    assert _found(texts) == [(d, tok, kind) for d, t in enumerate(texts)
                             for _, tok, kind in _found([t])]
    for t in texts:
        ids = Identifiers(deny_list=DENY)
        assert [c.tolist() for c in ids.spans(t)] == [c.tolist() for c in ids._whole(t)]


@pytest.mark.parametrize("texts", [["see http:/"], ["x", "a:/"], ["a:/", ""], [":/"], [":", "/"],
                                   ["", ":/"], ["ab12:/", "::"], ["2001:db8::", ":/", "://"]])
def test_a_batch_ending_in_a_scheme_separator(texts):
    assert _found(texts) == [(d, tok, kind) for d, t in enumerate(texts)
                             for _, tok, kind in _found([t])]
    assert textdp.privatize(texts, **KW).texts == [textdp.privatize([t], **KW).texts[0]
                                                   for t in texts]
