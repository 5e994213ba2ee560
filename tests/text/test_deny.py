"""The deny-list on a lookup key (issue 22 item 4): spelling tricks do not let a term through,
and a match maps back to exactly the characters it came from."""

import pytest

import textdp
from textdp import pipeline
from textdp.text._codes import encode_batch
from textdp.text.deny import DenyList, deny_key
from textdp.text.identifiers import Identifiers

KW = dict(epsilon=1e6, seed=0, mechanism="diffractor")


def _denied(text, terms):
    ids = Identifiers(builtin=False, deny_list=terms)
    batch = encode_batch([text], ids)
    return [batch.token(int(t)) for t in batch.identifiers.tolist()]


@pytest.mark.parametrize("written", [
    "jo\u00adhn",      # soft hyphen
    "jo\u200dhn",      # zero-width joiner
    "jo\u200bhn",      # zero-width space
    "jo\u2060hn",      # word joiner
    "jo\ufe0fhn",      # variation selector
    "ＪＯＨＮ",         # fullwidth forms
    "JOHN", "John",
])
def test_a_term_is_found_however_it_is_spelled(written):
    assert _denied(f"Dear {written}, thanks", ["john"]) == [written]


@pytest.mark.parametrize("space", ["\u00a0", "  ", "\n", "\r\n", "\t", " \u200b ", "\u3000"])
def test_a_multiword_term_matches_any_whitespace_run(space):
    assert _denied(f"ask John{space}Smith today", ["john smith"]) == [f"John{space}Smith"]


def test_whole_words_only_and_exact_spans():
    assert _denied("johnny and john's", ["john"]) == ["john"]
    assert _denied("the ﬁne print", ["fine"]) == ["ﬁne"]  # ligature: one character, mapped back
    assert _denied("Stra\u00dfe 5 and STRASSE", ["strasse"]) == ["Stra\u00dfe", "STRASSE"]
    assert _denied("cafe\u0301 au lait", ["café"]) == ["cafe\u0301"]  # composed on the key
    assert deny_key("  Acme\u00a0 Inc.  ") == "acme inc."


def test_privatize_masks_every_variant_even_under_keep():
    texts = ["Mr jo\u00adhn called", "ＪＯＨＮ again", "John\u00a0Smith wrote", "John \nSmith"]
    out = textdp.privatize(texts, oov="keep", deny_list=["john", "john smith"], **KW).texts
    assert out == ["Mr [REDACTED] called", "[REDACTED] again", "[REDACTED] wrote", "[REDACTED]"]


def test_a_term_straddling_the_segment_cut_is_found(monkeypatch):
    """The 64 Ki segment cut (here 50 characters) would fall between "john" and "smith"."""
    monkeypatch.setattr(pipeline, "SEGMENT_CHARS", 50)
    text = "a " * 25 + "john smith" + " b" * 40
    assert list(pipeline._segments(text))[0].endswith("john ")  # where the cut used to be
    out = textdp.privatize([text], deny_list=["john smith"], **KW).texts[0]
    assert "[REDACTED]" in out and "john" not in out and "smith" not in out


def test_many_terms_one_automaton():
    terms = [f"term{i:06d}" for i in range(100_000)] + ["jo hn"]
    deny = DenyList(terms)
    assert len(deny) == 100_001
    text = "x term042042 y term0420420 jo\u00a0hn"
    assert [text[a:b] for a, b in deny.spans(text)] == ["term042042", "jo\u00a0hn"]
