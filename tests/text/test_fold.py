"""The one folding every matcher reads (textdp.text.fold): what it folds, and the exact way back."""

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textdp.text import fold as F


@pytest.mark.parametrize("written, cased, key", [
    ("Mari\u0301a Garci\u0301a", "Maria Garcia", "maria garcia"),  # NFD
    ("María García", "Maria Garcia", "maria garcia"),  # NFC
    ("Ma\u0323ri\u0308a", "Maria", "maria"),  # marks added inside the word
    ("Ma\u200dri\u00ada\u200b", "Maria", "maria"),  # ZWJ, soft hyphen, ZWSP
    ("M\u0430ri\u0430", "Maria", "maria"),  # Cyrillic а
    ("\u0399\u039f\u039d", "ION", "ion"),  # Greek capitals
    ("Łukasz Øster", "Lukasz Oster", "lukasz oster"),  # stroked letters
    ("ＭＡＲＩＡ＠ｅｘ.com", "MARIA@ex.com", "maria@ex.com"),  # full width
    ("𝐌𝐚𝐫𝐢𝐚", "Maria", "maria"),  # mathematical bold
    ("Straße", "Straße", "strasse"),
    ("Maria-Garcia", "Maria-Garcia", "maria garcia"),  # a dash is a space in keys
    ("a\u00a0 \u3000b", "a   b", "a b"),
    ("\u0663\u0664", "34", "34"),  # Arabic-Indic digits
    ("한국어 テスト", "한국어 テスト", "한국어 テスト"),
])
def test_what_is_folded(written, cased, key):
    assert F.fold(written).text == cased
    assert F.fold_key(written).text == key


def test_ascii_is_not_copied():
    text = "Plain ASCII text, untouched."
    folded = F.fold(text)
    assert folded.identity and folded.text is text and folded.source is None


def test_confusables_map_to_ascii_of_the_same_case_and_never_touch_ascii():
    table = F._confusables()
    assert table["\u0430"] == "a" and table["\u0410"] == "A" and table["\u0406"] == "I"
    assert table["\u03bf"] == "o" and table["\u0142"] == "l"
    assert all(not k.isascii() and v.isascii() for k, v in table.items())
    letters = [(k, v) for k, v in table.items() if k.isalpha() and len(v) == 1 and k.isupper()]
    assert letters and all(v.isupper() for _, v in letters)


@pytest.mark.parametrize("c", [0x00E9, 0x0301, 0x200D, 0x00AD, 0xFE0F, 0xFB01, 0x1D400, 0x0430,
                               0x0663, 0x1F600, 0xE0041, 0x10FFFD, 0x0378, 0xD800, 0x0041])
def test_the_tables_equal_the_definition(c):
    ch = chr(c)
    assert F.fold(ch).text == F._fold_char(ch)
    assert F.fold_key(ch).text == F._key_char(ch).replace("\u3000", " ") or ch.isspace()


_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(
    ["\u0301", "\u200d", "\u00ad", "ﬁ", "\u0430", "Ⅻ", " ", "\u00a0", "-", "ß", "İ"]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(docs=st.lists(_TEXT, max_size=4))
def test_a_batch_folds_as_its_documents_and_every_span_maps_back_inside_its_document(docs):
    text = "".join(docs)
    bounds = np.cumsum([0, *map(len, docs)])
    for function in (F.fold, F.fold_key):
        whole = function(text, bounds)
        alone = [function(d) for d in docs]
        assert whole.docs() == [f.text for f in alone]
        n = len(whole.text)
        if not n:
            continue
        starts = np.arange(n)
        a, b = whole.back(starts, starts + 1)
        assert (a < b).all() and (np.diff(a) >= 0).all()
        doc = np.searchsorted(bounds, a, "right") - 1
        assert (b <= bounds[doc + 1]).all()  # never into the next document
        # The whole folded document maps back to its whole original, less what it dropped
        # at its start.
        for d, f in enumerate(alone):
            if f.text:
                lo, hi = whole.bounds[d], whole.bounds[d + 1]
                s, e = whole.back(np.array([lo]), np.array([hi]))
                assert e[0] == bounds[d + 1]
                assert all(unicodedata.category(c) in ("Mn", "Me", "Cf") or F._dropped(c)
                           or c.isspace() for c in text[bounds[d]:s[0]])


def test_a_span_takes_the_marks_and_invisible_characters_after_it():
    text = "Jose\u0301\u200d said"
    folded = F.fold(text)
    assert folded.text == "Jose said"
    a, b = folded.back(np.array([0]), np.array([4]))
    assert text[a[0]:b[0]] == "Jose\u0301\u200d"
