"""Tokenizer: exact round trip for every Unicode string, classes, case patterns, fast split."""

from hypothesis import given, settings
from hypothesis import strategies as st

from textdp.text import (
    CasePattern,
    TokenClass,
    case_pattern,
    count_structure,
    detokenize,
    restore_case,
    split_batch,
    tokenize,
)

# Every code point hypothesis generates (all but surrogates; lone surrogates are tested below).
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=200)


@settings(max_examples=1500, deadline=None)
@given(any_text)
def test_round_trip_every_unicode_string(s):
    assert detokenize(tokenize(s)) == s


@settings(max_examples=800, deadline=None)
@given(st.lists(any_text, max_size=8))
def test_fast_split_agrees_with_tokenize(texts):
    batch = split_batch(texts)
    assert batch.join(list(batch.words)) == texts
    expected_words = [t.text for s in texts for t in tokenize(s)
                      if t.kind in (TokenClass.WORD, TokenClass.NUMBER)]
    assert batch.words == expected_words
    counts = count_structure(batch.structure())
    for kind in (TokenClass.WHITESPACE, TokenClass.PUNCTUATION, TokenClass.OTHER):
        assert counts[kind] == sum(t.kind is kind for s in texts for t in tokenize(s))


def test_round_trip_edge_cases():
    for s in ["", "\ud800lone surrogate", "a\x00b", "\r\n", "e\u0301", "İstanbul ǅ", "x" * 10_000]:
        assert detokenize(tokenize(s)) == s
        assert split_batch([s]).join(split_batch([s]).words) == [s]


def test_classes():
    toks = tokenize("Hi, Bob_2024  😀\tnaïve")
    assert [(t.text, t.kind.value) for t in toks] == [
        ("Hi", "word"), (",", "punctuation"), (" ", "whitespace"), ("Bob", "word"),
        ("_", "punctuation"), ("2024", "number"), ("  ", "whitespace"), ("😀", "other"),
        ("\t", "whitespace"), ("naïve", "word"),
    ]


def test_tokenize_rejects_non_str():
    import pytest

    with pytest.raises(TypeError):
        tokenize(b"bytes")


def test_case_patterns():
    assert case_pattern("house") is CasePattern.LOWER
    assert case_pattern("House") is CasePattern.TITLE
    assert case_pattern("HOUSE") is CasePattern.UPPER
    assert case_pattern("I") is CasePattern.TITLE  # one capital letter: Title, not UPPER
    assert case_pattern("iPad") is CasePattern.MIXED
    assert case_pattern("東京") is CasePattern.LOWER
    assert restore_case("road", "House") == "Road"
    assert restore_case("road", "HOUSE") == "ROAD"
    assert restore_case("road", "house") == "road"
    assert restore_case("ipad", "iPad") == "iPad"
    assert restore_case("tablet", "iPad") == "tAblet"
    assert restore_case("mcdonald", "McDonald") == "McDonald"
    assert restore_case("a", "McDonald") == "A"


@given(st.text(alphabet=st.characters(categories=["Lu", "Ll"]), min_size=1, max_size=12))
def test_restore_case_of_itself_is_identity(word):
    lower = word.lower()
    if len(lower) == len(word) and lower.upper() == word.upper():
        assert restore_case(lower, word) == word


# Weighted toward what splits words wrongly: format (Cf) and combining (Mn, Me) characters.
_JOINING = ["\u200d", "\u200c", "\u200b", "\ufe0f", "\u0301", "\u0308", "\u20e3", "\u00ad",
            "\u2060", "\u034f", "\u200e", "\ufeff", "\U000e0067"]
_PIECES = _JOINING + ["a", "e", "Z", "1", " ", ".", "👩", "💻", "👍🏽", "ß", "ﬁ", "ｈ", "i̇", "क", "ि"]
joining_text = st.lists(st.one_of(st.sampled_from(_PIECES), st.characters(categories=["Cf", "Mn", "Me"])),
                        max_size=40).map("".join)


@settings(max_examples=1500, deadline=None)
@given(joining_text)
def test_round_trip_with_format_and_combining_characters(s):
    tokens = tokenize(s)
    assert detokenize(tokens) == s
    assert "".join(t.text for t in tokens).count("\u200d") == s.count("\u200d")  # ZWJ never dropped
    for t in tokens:  # a mark that follows a letter stays inside that word
        if t.kind is TokenClass.OTHER:
            assert not (t.text[0] in "\u200d\u0301" and tokens.index(t) and
                        tokens[tokens.index(t) - 1].kind is TokenClass.WORD)


def test_tokenize_keeps_zwj_and_combining_marks_inside_words():
    assert [t.text for t in tokenize("re\u0301sume\u0301 ok")] == ["re\u0301sume\u0301", " ", "ok"]
    assert [t.text for t in tokenize("a\u200db")] == ["a\u200db"]
    assert [t.text for t in tokenize("👩\u200d💻")] == ["👩\u200d💻"]  # an emoji ZWJ sequence: one run
    assert [t.text for t in tokenize("a\u200bb")] == ["a", "\u200b", "b"]  # ZWSP is a boundary
    assert [t.kind for t in tokenize("1\ufe0f\u20e3")] == [TokenClass.NUMBER]  # keycap
    assert detokenize(tokenize("\u200d")) == "\u200d"


def test_lookup_key():
    from textdp.text import lookup_key

    assert lookup_key("ｈｅｌｌｏ") == lookup_key("HELLO") == "hello"
    assert lookup_key("ﬁne") == "fine"
    assert lookup_key("re\u0301sume\u0301") == "résumé"
    assert lookup_key("hy\u00adphen") == "hyphen"
