"""Leakage counted with recognisers the release did not use (issue 37, Deliver 5)."""

from __future__ import annotations

from textdp.assess.independent import independent_mentions, independent_survival


def test_patterns_find_names_and_numbers_the_recognisers_may_miss():
    found = independent_mentions(["Thanks, my friend Zorblat wrote from 12345 about order 77. "
                                  "Please call Team Qwimby."])
    assert sorted(found[0]) == [("number", "12345"), ("proper", "qwimby"), ("proper", "zorblat")]


def test_survivors_are_read_on_the_folded_text_and_placeholders_never_count():
    """A look-alike Cyrillic "о" does not hide the name; "[IBAN]" is not the word "IBAN".
    Shown to fail: with str.casefold in place of the key folding the look-alike name is not
    counted (1 survivor, not 2); without the placeholders removed "IBAN" counts (3)."""
    originals = ["Yesterday Zorblat sent 123456 to my IBAN DE89370400440532013000 here."]
    private = ["Yesterday Zоrblat sent 123456 to my [IBAN] [IBAN] here."]  # Cyrillic о
    mentions = independent_mentions(originals)
    assert ("proper", "iban") in mentions[0]
    out = independent_survival(originals, private, mentions, placeholders=("[IBAN]",))
    assert out["survived"] == 2 and out["by_kind"]["number"] == {"found": 2, "survived": 1}
    assert out["documents_leaking"] == 1 and out["model_survivors"] == 0
    gone = independent_survival(originals, ["the the the"], mentions)
    assert gone["survived"] == 0 and gone["documents_leaking"] == 0


def test_the_entity_model_reads_the_private_text():
    """A name in the private text that is in the original counts (the model on the private
    side), once: the model also gives its parts ("Barack", "Obama"), which counted as three
    survivors before they were folded into their whole; a substituted name does not count."""
    from textdp.text.entities import Entities

    originals = ["i met barack obama in Paris last week.", "i met someone in Paris."]
    private = ["I met Barack Obama in London last week.", "I met Angela Merkel in Rome."]
    out = independent_survival(originals, private, [[], []],
                               entities=Entities(kinds=("person", "location", "org")))
    assert out["model_survivors"] == 1 and out["documents_leaking"] == 1
