"""The context of identifier candidates (issue 35, Deliver 3): a phone-shaped order number is a
``reference`` (still masked), a version, section number or amount is no identifier, a phone cue
keeps a phone number a phone number. No spaCy: the identifier stage alone."""

import pytest

import textdp
from textdp.text._codes import encode_batch
from textdp.text._context import KEEP, NONE, REFERENCE, judge
from textdp.text.identifiers import Identifiers

IDS = Identifiers()


def _found(texts):
    batch = encode_batch(texts, IDS)
    return [(batch.token(int(t)), IDS.kinds[k])
            for t, k in zip(batch.identifiers.tolist(), batch.identifier_kinds.tolist(), strict=True)]


# Numbers that are valid phone numbers of the default regions alone (checked below), after words
# that say they are something else.
REFERENCES = [("Order #07911 123456 has shipped", "07911 123456"),
              ("your order no. 07700 900123", "07700 900123"),
              ("Invoice 4155550132 is overdue", "4155550132"),
              ("tracking number: 212-555-0187", "212-555-0187"),
              ("TICKET 030 1234567 closed", "030 1234567"),
              ("Ref: 0161 496 0732", "0161 496 0732"),
              ("booking reference 646-555-0143", "646-555-0143"),
              ("customer account (#) 0207 946 0321", "0207 946 0321"),
              ("re #3125550199", "3125550199")]


@pytest.mark.parametrize("text,number", REFERENCES)
def test_a_phone_shaped_number_named_by_its_context_is_a_masked_reference(text, number):
    assert _found([number]) == [(number, "phone")]  # a phone number without the context
    assert _found([text]) == [(number, "reference")]


@pytest.mark.parametrize("text,number", [("phone no. 07911 123456", "07911 123456"),
                                         ("order form: call 07911 123456", "07911 123456"),
                                         ("Tel # 4155550132", "4155550132"),
                                         ("my number is 212-555-0187", "212-555-0187"),
                                         ("on the order, 4155550132 is my mobile", "4155550132")])
def test_a_phone_cue_or_no_adjacent_cue_keeps_a_phone_number(text, number):
    assert _found([text]) == [(number, "phone")]


@pytest.mark.parametrize("text,bare", [("build 4155550132 passed", "4155550132"),
                                       ("EUR 4155550132", "4155550132"),
                                       ("4155550132 USD", "4155550132"),
                                       ("paid $ 0800 123 4567", "0800 123 4567"),
                                       ("fw v.212-555-0187", "212-555-0187"),
                                       ("ver. 3.2.1.4", "3.2.1.4"),
                                       ("see § 10.0.0.1", "10.0.0.1"),
                                       ("Section 1.2.3.4 applies", "1.2.3.4"),
                                       ("Fig. 192.168.1.2", "192.168.1.2")])
def test_versions_sections_and_amounts_are_no_identifiers(text, bare):
    assert len(_found([bare])) == 1  # an identifier without the context
    assert _found([text]) == []


def test_image_names_at_a_pixel_density_are_no_addresses():
    assert _found(["logo@2x.png and icon@3x.svg"]) == []
    assert _found(["write to jo@studio.io"]) == [("jo@studio.io", "email")]


def test_context_is_read_in_the_candidates_own_document_only():
    assert _found(["order no. ", "4155550132"]) == [("4155550132", "phone")]
    assert _found(["4155550132", " USD"]) == [("4155550132", "phone")]
    assert _found(["x", "order no. 4155550132"]) == [("4155550132", "reference")]


def test_judge_reads_only_adjacent_words():
    assert judge("order ", "", "phone") == REFERENCE
    assert judge("order ", "", "ip") == KEEP  # an IP address is not re-kinded
    assert judge("order form: call ", "", "phone") == KEEP
    assert judge("the order was placed, ", "", "phone") == KEEP
    assert judge("version ", "", "ip") == NONE
    assert judge("", " eur", "phone") == NONE


def test_a_reference_is_masked_with_its_own_label_and_counted():
    kw = dict(epsilon=1e6, seed=0, mechanism="diffractor", entities="none")
    out = textdp.privatize(["order no. 4155550132, call 212-555-0187"], **kw)
    assert out.texts == ["order no. [REF], call [PHONE]"]
    assert out.report["identifiers"]["by_kind"]["reference"] == 1
    assert out.report["identifiers"]["by_kind"]["phone"] == 1
    relabelled = textdp.privatize(["order no. 4155550132"], identifier_labels={"reference": "<o>"},
                                  **kw)
    assert relabelled.texts == ["order no. <o>"]


@pytest.mark.parametrize("text,code", [
    ("ref INV-2231 is late", "INV-2231"),                # a code of letters and digits, cued
    ("please check invoice no. 88A-1X7", "88A-1X7"),
    ("order #A-77812 never arrived", "A-77812"),
    ("we still have po 20931-b open", "20931-b"),        # lower case
    ("Booking ref: QRX_554213", "QRX_554213"),
])
def test_order_and_invoice_codes_are_references(text, code):
    assert _found([text]) == [(code, "reference")]


@pytest.mark.parametrize("text", [
    "COVID-19 and SHA-256 and F-150",  # codes with no cue: the user's recognisers' to claim
    "see TK-123456 today",
    "order 2 items please",            # one digit
    "order 4711-0815",                 # digits alone stay numbers (masked as numbers are)
    "my ticket was late",
])
def test_short_codes_and_counts_are_no_references(text):
    assert _found([text]) == []


def test_a_code_is_read_in_its_own_document():
    # "invoice" ends one document and the code starts the next: the cue does not reach it, and
    # a code never runs on into the next document.
    assert _found(["see invoice", "4X-29 is fine"]) == []
    assert _found(["ref INV-2231", "order 5"]) == [("INV-2231", "reference")]
