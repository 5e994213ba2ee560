"""Contractions and clitics (issue 36, item 8): "It's" came back "It'default" — the clitic ``s``
was privatised as a word of its own. A clitic ('s 'd 'm 're 've 'll, and n't with its n) is now
structure, kept with its apostrophe, and the word it leans on is privatised as a unit
(``It|'s``, ``do|n't``, ``ca|n't``), in the three views of a text (``tokenize``,
``split_batch``, the code arrays) alike; the report counts the clitics kept."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textdp
from textdp.text import TokenClass, count_structure, detokenize, split_batch, tokenize
from textdp.text._codes import encode_batch

#: The contractions of English (standard written forms), with the clitic each must keep.
CONTRACTIONS = {
    "'m": ["I'm"],
    "'re": ["you're", "we're", "they're", "who're", "what're"],
    "'s": ["it's", "he's", "she's", "that's", "there's", "here's", "what's", "who's", "where's",
           "how's", "let's", "when's", "why's", "everybody's", "somebody's", "nobody's"],
    "'ve": ["I've", "you've", "we've", "they've", "would've", "could've", "should've",
            "might've", "must've", "who've"],
    "'ll": ["I'll", "you'll", "he'll", "she'll", "it'll", "we'll", "they'll", "that'll",
            "who'll", "there'll"],
    "'d": ["I'd", "you'd", "he'd", "she'd", "it'd", "we'd", "they'd", "who'd", "that'd"],
    "n't": ["isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't", "haven't",
            "hasn't", "hadn't", "won't", "wouldn't", "can't", "couldn't", "shouldn't", "mustn't",
            "needn't", "mightn't", "shan't", "ain't", "daren't", "oughtn't"],
}
ALL = [(clitic, word) for clitic, words in CONTRACTIONS.items() for word in words]


def _forms(word: str) -> list[str]:
    """lower, Title, UPPER, each with the ASCII and the curly apostrophe."""
    cased = {word, word[:1].upper() + word[1:], word.upper()}
    return sorted(cased | {w.replace("'", "\u2019") for w in cased})


@pytest.mark.parametrize("clitic,word", ALL, ids=[w for _, w in ALL])
def test_every_contraction_keeps_its_clitic_and_privatises_its_stem(clitic, word):
    forms = _forms(word)
    texts = [f"{form} ok." for form in forms] * 8
    out = textdp.privatize(texts, "mvc", 1.0, seed=11, entities="none").texts
    for src, got in zip(texts * 1, out, strict=True):
        form = src.split(" ")[0]
        apostrophe = "’" if "’" in form else "'"
        kept = clitic.replace("'", apostrophe)
        released = got.rsplit(" ", 1)[0]
        # The clitic comes back as it was written (its case too), nothing privatised after it.
        assert released.lower().endswith(kept.lower()), (src, got)
        assert released[len(released) - len(kept):] == form[len(form) - len(kept):], (src, got)
        stem = released[:len(released) - len(kept)]
        assert apostrophe not in stem and " " not in stem, (src, got)
    # ε = 1 privatises the stems: most of them change (the clitic alone stays).
    changed = sum(o.split(" ")[0] != t.split(" ")[0] for t, o in zip(texts, out, strict=True))
    assert changed > len(texts) // 2


def test_it_s_never_becomes_a_word_after_the_apostrophe():
    """The reported case: with the clitic privatised, "It's" came back "It'default"."""
    out = textdp.privatize(["It's a test."] * 200, "mvc", 0.5, seed=1, entities="none").texts
    assert all(re.match(r"^[^\s']*'s ", o) for o in out), [o for o in out
                                                           if not re.match(r"^[^\s']*'s ", o)][:3]


def test_identifier_then_clitic():
    out = textdp.privatize(["write to bob@example.com's inbox"], "mvc", 1.0, seed=2,
                           entities="none").texts[0]
    assert "[EMAIL]'s " in out


def test_not_clitics():
    """An apostrophe inside a name or after a space is no contraction: those words stay words."""
    words = [t.text for t in tokenize("O'Neill o'clock rock 'n' roll y'all 5's James' 'sup")
             if t.kind is TokenClass.WORD]
    assert words == ["O", "Neill", "o", "clock", "rock", "n", "roll", "y", "all", "s", "James",
                     "sup"]


def test_report_counts_clitics_kept():
    r = textdp.privatize(["It's fine, we're here and don't worry."], "mvc", 5.0, seed=0,
                         entities="none")
    assert r.report["counts"]["tokens"]["by_policy"]["clitics_kept"] == 3
    kinds = {u["kind"]: u["count"] for u in r.report["unprotected"]}
    assert kinds["clitics"] == 3


_ALPHABET = "aAnNtTsSdDmMrReEvVlL'’ 1_.\u0301"


@settings(max_examples=600, deadline=None)
@given(st.lists(st.text(alphabet=_ALPHABET, max_size=24), max_size=6))
def test_three_views_agree_on_clitics(texts):
    """tokenize, split_batch and the code arrays find the same words, and the same structure
    counts, on text dense with apostrophes and clitic letters."""
    batch = split_batch(texts)
    assert batch.join(list(batch.words)) == texts
    assert all(detokenize(tokenize(s)) == s for s in texts)
    expected = [t.text for s in texts for t in tokenize(s)
                if t.kind in (TokenClass.WORD, TokenClass.NUMBER)]
    assert batch.words == expected
    codes = encode_batch(texts)
    assert [codes.token(i) for i in range(codes.n_tokens)] == expected
    counts = count_structure(batch.structure())
    for kind, got in ((TokenClass.WHITESPACE, codes.whitespace),
                      (TokenClass.PUNCTUATION, codes.punctuation),
                      (TokenClass.OTHER, codes.other)):
        assert counts[kind] == sum(t.kind is kind for s in texts for t in tokenize(s)) == got


def test_clitic_count_matches_the_pattern():
    text = "It's I'd've can't won't y'all DON’T we'RE 5's"
    assert encode_batch([text]).clitics == 7  # 's 'd 've n't n't N’T 'RE
    assert np.array_equal(encode_batch([text, ""]).doc_bounds, [0, len(text), len(text)])
