"""The recogniser registry (textdp.text.recognisers): built-in families, users' recognisers, the
allow-list over them (module sizes: tests/test_structure.py). No test here loads spaCy."""

from __future__ import annotations

import dataclasses
import pickle
import re

import pytest

from textdp.text import recognisers
from textdp.text.entities import ALLOWED, ENTITY_KINDS, Entities, Recognisers
from textdp.text.identifiers import BUILTIN_KINDS, DENIED, Identifiers


def _ticket_ok(m: re.Match) -> bool:
    """A validator reading the context: no ticket right after the word "not"."""
    return not m.string[:m.start()].rstrip().endswith("not")


#: A module-level recogniser (so it pickles): a pattern and a validator.
TICKET = recognisers.PatternRecogniser(r"TK-\d{6}", name="ticket", label="[TICKET]",
                                       validate=_ticket_ok)


class Shouting(recognisers.Recogniser):
    """Not a regex: a class that finds words in capitals of five letters or more."""

    name = "shouting"
    kinds = ("shout",)
    labels = {"shout": "[SHOUT]"}

    def find_one(self, text):
        out, i = [], 0
        for word in text.split(" "):
            if len(word) >= 5 and word.isalpha() and word.isupper():
                out.append((i, i + len(word), "shout"))
            i += len(word) + 1
        return out


def _spans(stage: Recognisers, text: str) -> list[tuple[str, str]]:
    s, e, k = stage.spans(text)
    return [(text[a:b], stage.kinds[c]) for a, b, c in zip(s.tolist(), e.tolist(), k.tolist(),
                                                            strict=True)]


def test_the_reserved_kinds_are_the_built_in_stages_kinds():
    assert recognisers.RESERVED_KINDS == {*BUILTIN_KINDS, DENIED, *ENTITY_KINDS, ALLOWED}


def test_every_built_in_name_is_registered_by_its_family_module():
    names = recognisers.available()
    assert set(recognisers._FAMILIES) <= set(names)
    for name in recognisers._FAMILIES:
        found = recognisers.get(name)
        assert found.name == name
        family = "identifiers" if name in recognisers.available("identifiers") else "entities"
        assert found.family == family
        assert set(found.kinds) <= recognisers.RESERVED_KINDS
    assert recognisers.get("phone").kinds == ("phone", "reference")
    with pytest.raises(ValueError, match="no recogniser named 'nope'"):
        recognisers.get("nope")


def test_a_built_in_identifier_recogniser_runs_on_its_own():
    [spans] = recognisers.get("email").find(["write to maria@example.com today"])
    assert spans == [(9, 26, "email")]
    # Pickled, it comes back as the registry's own, configured the same.
    phone = recognisers.get("phone").configure(phone_regions=("GB",))
    back = pickle.loads(pickle.dumps(phone))
    assert back.regions == ("GB",) and back.validator is not None


def test_a_users_pattern_and_class_mask_their_spans_and_the_allow_list_wins():
    entities = Entities(kinds="none", allow_list=["TK-777777", "PUBLIC"],
                        recognisers=[TICKET, Shouting])
    assert entities.kinds == ("ticket", "shout") and not entities.uses_model
    stage = Recognisers(Identifiers(), entities)
    text = "see TK-123456, not TK-999999, and TK-777777 ALWAYS PUBLIC; mail tk@TK-555555.com"
    got = _spans(stage, text)
    assert ("TK-123456", "ticket") in got and ("ALWAYS", "shout") in got
    assert not any(t == "TK-999999" for t, _ in got)  # the validator said no
    assert ("TK-777777", ALLOWED) in got and ("PUBLIC", ALLOWED) in got  # the allow-list wins
    assert ("tk@TK-555555.com", "email") in got  # an identifier wins over a user's recogniser
    assert stage.label("ticket") == "[TICKET]" and stage.label("shout") == "[SHOUT]"


def test_a_users_recogniser_reads_the_folded_text_and_masks_the_original_characters():
    stage = Recognisers(None, Entities(kinds="none", recognisers=[TICKET]))
    text = "ref ＴＫ-１２３４５６ ok"  # full width: folds to TK-123456
    assert _spans(stage, text) == [("ＴＫ-１２３４５６", "ticket")]


def test_registered_names_among_the_kinds_and_a_replace_round_trip():
    recognisers.register(TICKET)
    try:
        entities = Entities(kinds="address,ticket")
        assert entities.kinds == ("address", "ticket") and entities.recognisers == (TICKET,)
        assert Entities(kinds="ticket").kinds == ("ticket",)
        assert dataclasses.replace(entities, margin=8).kinds == entities.kinds
        assert entities.describe()["recognisers"][0]["pattern"] == r"TK-\d{6}"
        back = pickle.loads(pickle.dumps(entities))
        assert back.find(["x TK-123456"]) == entities.find(["x TK-123456"]) == [[(2, 11, "ticket")]]
    finally:
        recognisers.unregister("ticket")
    with pytest.raises(ValueError, match="unknown entity kind 'ticket'"):
        Entities(kinds="address,ticket")


def test_bad_recognisers_are_one_sentence_errors():
    with pytest.raises(ValueError, match="built-in kind"):
        recognisers.register(r"\d+", name="person")
    with pytest.raises(ValueError, match="registered already"):
        recognisers.register(r"\d+", name="email", kind="mail")
    with pytest.raises(ValueError, match="empty string"):
        recognisers.PatternRecogniser(r"\d*", name="digits")
    with pytest.raises(ValueError, match="recogniser name"):
        recognisers.resolve(lambda text: [])  # a lambda has no usable name
    with pytest.raises(TypeError, match="not int"):
        recognisers.resolve(3)
    out_of_range = recognisers.resolve(lambda text: [(0, 99)], name="far")
    with pytest.raises(ValueError, match="outside"):
        Entities(kinds="none", recognisers=[out_of_range]).find(["short"])
    with pytest.raises(ValueError, match="same kind"):
        Entities(kinds="none", recognisers=[TICKET, recognisers.resolve(r"x", name="ticket2",
                                                                        kind="ticket")])
    with pytest.raises(ValueError, match="both an identifier kind and an entity kind"):
        Recognisers(Identifiers(builtin=False, patterns={"ticket": "TK"}),
                    Entities(kinds="none", recognisers=[TICKET]))


def test_the_report_names_built_in_kinds_left_off_beside_a_users_kinds():
    from textdp.token_policy import OOVPolicy, policy_sections

    # Four kinds or more, one of them built-in and off: the report still says so.
    entities = Entities(kinds="location,org,address", recognisers=[TICKET, Shouting])
    [section] = policy_sections(None, entities, OOVPolicy.MASK, {}, {})
    assert section.warnings == ("entity recognition is off for: person (they may pass through)",)
    assert section.body["by_kind"] == {"location": 0, "org": 0, "address": 0, "ticket": 0,
                                       "shout": 0}

