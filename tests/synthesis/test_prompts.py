"""The public prompts of Private Evolution: the variation prompt names the document's label (Aug-PE
keeps generation label-conditional), and ``clean`` removes an echoed instruction."""

from __future__ import annotations

import pytest

from textdp.synthesis.prompts import VARIATION, VARIATION_UNLABELLED, Prompts, clean


def test_the_variation_prompt_names_the_label_and_holds_the_document_as_written():
    p = Prompts("customer support ticket")
    prompt = p.vary("My {label} box {kind} arrived late.", "late delivery")
    assert prompt.count('"late delivery"') == 2  # in the preamble and in the instruction
    assert "My {label} box {kind} arrived late." in prompt  # placeholders in a document stay
    assert prompt.index("arrived late") < prompt.index("Rewrite")  # the instruction last
    assert "customer support ticket" in prompt and "{" not in prompt.replace(
        "{label} box {kind}", "")


def test_without_labels_the_default_variation_names_none_and_a_custom_template_is_kept():
    p = Prompts("note")
    assert p.vary("text") == VARIATION_UNLABELLED.replace("{kind}", "note").replace(
        "{document}", "text")
    assert '""' not in p.vary("text") and "about" not in p.vary("text")
    custom = Prompts("note", variation="Say again: {document}")  # no {label}: still valid
    assert custom.vary("text", "a") == "Say again: text"
    assert Prompts("note", variation="[{label}] {document}").vary("t", "b") == "[b] t"
    assert p.describe()["variation"] == VARIATION
    with pytest.raises(ValueError, match="document"):
        Prompts("note", variation="{label} only")


@pytest.mark.parametrize("raw,want", [
    ("Rewrite – The provided customer support ticket with different words –: Crashes.",
     "Crashes."),
    ("Here's the rewritten customer support ticket: When a customer reset the password",
     "When a customer reset the password"),
    ('Sure! Rephrased:\n "My parcel is late."', "My parcel is late."),
    # No echo: a colon in a document is kept, and so is an echo with nothing after it.
    ("Order 4411: the parcel never came. Please rewrite the label.",
     "Order 4411: the parcel never came. Please rewrite the label."),
    ("Here is the rewritten ticket:", "Here is the rewritten ticket:"),
    ('  "two\n lines"  ', "two lines"),
])
def test_clean_removes_an_echoed_instruction_only(raw, want):
    assert clean(raw) == want


def test_a_described_label_gets_its_description_in_the_first_prompt_and_others_do_not():
    from textdp.synthesis.prompts import INITIAL, INITIAL_DESCRIBED

    p = Prompts("ticket", descriptions=(("refund", "the  customer wants\n money back"),
                                        ("late", "My parcel is late!")))
    assert p.first("refund") == INITIAL_DESCRIBED.replace("{kind}", "ticket").replace(
        "{label}", "refund").replace("{description}", "the customer wants money back.")
    assert "My parcel is late! Reply" in p.first("late")  # its own final mark kept
    assert p.first("other") == INITIAL.replace("{kind}", "ticket").replace("{label}", "other")
    # A user template gets {description}, the label name where none is given; vary() too.
    q = Prompts("ticket", initial="{label}: {description}", variation="{description} | {document}",
                descriptions=(("refund", "money back"),))
    assert (q.first("refund"), q.first("late")) == ("refund: money back.", "late: late")
    assert q.vary("{description} stays", "refund") == "money back. | {description} stays"
    assert p.describe()["label_descriptions"] == {"refund": "the  customer wants\n money back",
                                                  "late": "My parcel is late!"}
    assert "label_descriptions" not in Prompts("ticket").describe()


@pytest.mark.parametrize("descriptions,match", [
    ((("refund", "  "),), "empty"),
    ((("refund", "a"), ("refund", "b")), "twice"),
    ((("refund",),), "pairs"),
    ((("refund", 3),), "pairs"),
])
def test_bad_label_descriptions_are_refused(descriptions, match):
    with pytest.raises(ValueError, match=match):
        Prompts("ticket", descriptions=descriptions)
