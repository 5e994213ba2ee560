"""Identifiers as units (issue 12 item 4): one token each, one placeholder each, counted by kind."""

import numpy as np
import pytest

import textdp
from textdp.text._codes import _classes, encode_batch
from textdp.text.identifiers import Identifiers

KW = dict(epsilon=1e6, seed=0, mechanism="diffractor", entities="none")  # identifiers only

CASES = [
    ("jsmith@acme.com", "email"), ("first.last+tag@mail.example.co.uk", "email"),
    ("https://acme.com/a/b?x=1", "url"), ("www.example.org", "url"), ("HTTP://ACME.COM", "url"),
    ("192.168.0.1", "ip"), ("2001:db8::ff00:42:8329", "ip"), ("fe80::1", "ip"), ("::1", "ip"),
    ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", "ip"),
    ("DE89 3704 0044 0532 0130 00", "iban"), ("GB29NWBK60161331926819", "iban"),
    ("4111 1111 1111 1111", "card"), ("4111-1111-1111-1111", "card"), ("4111111111111111", "card"),
    ("+44 20 7946 0958", "phone"), ("(555) 123-4567", "phone"), ("555-123-4567", "phone"),
    ("+1-202-555-0173", "phone"), ("+49 30 1234567", "phone"), ("555.123.4567", "phone"),
]


def _spans(texts, ids=None):
    ids = ids or Identifiers()
    batch = encode_batch(texts, ids)
    return [(batch.token(int(t)), ids.kinds[k])
            for t, k in zip(batch.identifiers.tolist(), batch.identifier_kinds.tolist(), strict=False)]


@pytest.mark.parametrize("text,kind", CASES)
def test_each_recogniser_finds_its_identifier_as_one_token(text, kind):
    assert _spans([f"see {text}, thanks"]) == [(text, kind)]
    assert _spans([text]) == [(text, kind)]  # at both document edges


@pytest.mark.parametrize("text", ["2024-01-15", "in 1999 and 2000", "42", "4111111111111112",
                                  "std::vector", "1.2.3.4.5", "999.1.1.1", "version 3.10.2",
                                  "x@y", "hello world", "a:b:c",
                                  "1024-1280", "12 345"])
def test_non_identifiers_are_left_alone(text):
    assert _spans([text]) == []


def test_email_is_one_placeholder_not_word_parts():
    out = textdp.privatize(["Write to jsmith@acme.com today"], **KW)
    assert out.texts == ["Write to [EMAIL] today"]
    assert out.report["identifiers"]["by_kind"]["email"] == 1
    assert out.report["tokens"]["by_class"]["identifier"] == 1
    assert out.report["tokens"]["by_policy"]["identifiers_masked"] == 1


def test_policies_labels_and_counts():
    text = ["mail jsmith@acme.com, call 555-123-4567"]
    assert textdp.privatize(text, oov="drop", **KW).texts == ["mail , call "]
    assert textdp.privatize(text, oov="random", **KW).texts == ["mail [EMAIL], call [PHONE]"]
    labels = {"email": "<e>", "phone": "<p>"}
    assert textdp.privatize(text, identifier_labels=labels, **KW).texts == ["mail <e>, call <p>"]
    kept = textdp.privatize(text, oov="keep", **KW)
    assert kept.texts == text
    extra = [u for u in kept.report["unprotected"] if u["kind"] == "identifiers"]
    assert extra == [{"kind": "identifiers", "count": 2, "by_kind": {"email": 1, "phone": 1},
                      "why": "oov=keep releases them unchanged"}]
    assert any("2 identifier(s)" in w for w in kept.report["warnings"])
    assert kept.report["tokens"]["by_policy"]["identifiers_kept"] == 2


def test_off_restores_word_runs():
    out = textdp.privatize(["jsmith@acme.com"], identifiers=False, oov="mask", **KW)
    assert out.texts[0].count("@") == 1 and "[EMAIL]" not in out.texts[0]
    assert "identifiers" not in out.report


def test_user_patterns_and_deny_list_always_masked():
    text = ["Ticket TK-123456 from Falcon (jsmith@falcon.io)"]
    out = textdp.privatize(text, oov="keep", identifier_patterns={"ticket": r"TK-\d{6}"},
                           deny_list=["falcon"], **KW)
    # The deny-listed term is masked even under keep, and so is the address holding it.
    assert out.texts == ["Ticket TK-123456 from [REDACTED] ([REDACTED])"]
    assert out.report["identifiers"]["by_kind"]["denied"] == 2
    masked = textdp.privatize(text, identifier_patterns={"ticket": r"TK-\d{6}"}, **KW).texts
    assert masked == ["Ticket [TICKET] from Falcon ([EMAIL])"]


def test_bad_options_are_one_sentence_errors():
    with pytest.raises(ValueError, match="not a valid regular expression"):
        Identifiers(patterns={"x": "("})
    with pytest.raises(ValueError, match="empty string"):
        Identifiers(patterns={"x": "a*"})
    with pytest.raises(ValueError, match="no identifier kind 'nope'"):
        Identifiers(labels={"nope": "x"})
    with pytest.raises(TypeError, match="single string"):
        textdp.privatize(["x"], deny_list="falcon", **KW)


def test_spans_never_cross_documents_and_windowing_equals_a_full_scan():
    """The built-ins run only on stretches around anchors; a full scan of each document alone
    (every candidate of the whole document validated, spelled-out addresses included) agrees,
    and so does spans() of it."""
    from textdp.text._spelled import SPELLED
    from textdp.text.identifiers import BUILTIN_KINDS, _merge_words, _resolve
    from textdp.text.recognisers.identifiers import _tlds

    rng = np.random.default_rng(3)
    parts = [c for c, _ in CASES] + ["word", " ", ", ", "12", "3", ".", ":", "@", "(", "-", "\n",
                                     "microsoft.com", "file.txt", "10.0.0.1:8080", "::"]
    texts = ["".join(rng.choice(parts, size=rng.integers(0, 8))) for _ in range(300)]
    ids = Identifiers()
    batch = encode_batch(texts, ids)
    got = [(int(batch.starts[t]), int(batch.ends[t]), k)
           for t, k in zip(batch.identifiers.tolist(), batch.identifier_kinds.tolist(), strict=False)]
    expected = []
    for d, text in enumerate(texts):
        base = int(batch.doc_bounds[d])
        rows = ids._scan(text, BUILTIN_KINDS)
        email = ids.kinds.index("email")
        rows += [(email, *m.span(), email) for m in SPELLED.finditer(text)
                 if m.group("tld").casefold() in _tlds() and m.group("at").strip() != "at"]
        if rows:
            s, e, k = _merge_words(text, *_resolve(np.array(rows, dtype=np.int64)),
                                   np.array([0, len(text)]))
            expected += list(zip((s + base).tolist(), (e + base).tolist(), k.tolist(), strict=False))
        s, e, k = ids.spans(text)
        assert [(a + base, b + base, c) for a, b, c in zip(s.tolist(), e.tolist(), k.tolist(),
                                                           strict=True)] == \
            [g for g in got if base <= g[0] < base + len(text)]
    assert got == expected
    assert len(got) > 100


def test_a_user_pattern_never_matches_across_documents():
    ids = Identifiers(builtin=False, patterns={"pair": r"ab\ncd|ab"})
    texts = ["xx ab", "cd yy"]
    batch = encode_batch(texts, ids)
    assert [batch.token(int(t)) for t in batch.identifiers] == ["ab"]
    s, e, _ = ids.find(texts, batch.text, batch.codes, _classes(batch.codes)[0], batch.doc_bounds)
    assert (s.tolist(), e.tolist()) == ([3], [5])


@pytest.mark.parametrize("batch_size", [1, 2, 5])
def test_seeded_output_does_not_depend_on_the_batch_size(batch_size):
    texts = ["a jsmith@acme.com b", "", "call +44 20 7946 0958 now", "Zzyzxq 42 house"] * 2
    ref = textdp.privatize(texts, epsilon=1, seed=4, oov="random").texts
    assert textdp.privatize(texts, epsilon=1, seed=4, oov="random", batch_size=batch_size).texts == ref
    assert ref[0].startswith("A ") is False and "[EMAIL]" in ref[0] and "[PHONE]" in ref[2]


# Issue 22: identifiers on maintained validators. Each case below failed on the regex-only
# recognisers (missed, wrong kind, cut into pieces, or flagged when it is no identifier).
FOUND = [
    # phones in international form without separators, and national numbers of the regions
    ("+14155550132", "phone"), ("+905321234567", "phone"), ("07911 123456", "phone"),
    ("030 1234567", "phone"), ("0532 123 45 67", "phone"), ("+33 1 23 45 67 89", "phone"),
    # IPs: ports, CIDR, zone ids, embedded IPv4, [v6]:port
    ("10.0.0.1:8080", "ip"), ("10.0.0.0/8", "ip"), ("fe80::1%eth0", "ip"),
    ("2001:db8:85a3::8a2e:192.168.0.1", "ip"), ("[2001:db8::1]:443", "ip"),
    ("2001:db8::/32", "ip"), ("[::1]:8000", "ip"),
    # IBANs: lower case, dashes, a trailing group of letters
    ("gb82 west 1234 5698 7654 32", "iban"), ("DE89-3704-0044-0532-0130-00", "iban"),
    ("SC18 SSCB 1101 0000 0000 0000 1497 USD", "iban"), ("fr1420041010050500013m02606", "iban"),
    ("LI69 6613 6YOO WXQW TI5F X", "iban"), ("QA94-IXOU-W8RZ-ILZL-VH6Q-UJGJ-Z70U-1", "iban"),
    # cards in dotted groups, Amex 4-6-5
    ("4111.1111.1111.1111", "card"), ("3782 822463 10005", "card"),
    # URLs without a scheme: bare domains and domain paths
    ("microsoft.com", "url"), ("github.com/microsoft/presidio", "url"), ("bit.ly/3xYzAbC", "url"),
    ("docs.python.org/3/library/re.html", "url"), ("//evil.example.com/x", "url"),
    ("https://en.wikipedia.org/wiki/Foo_(bar)", "url"),
    # e-mails with quoted or apostrophe local parts, IDN domains
    ("o'brien@example.ie", "email"), ('"john doe"@example.com', "email"),
    ("josé@bücher.de", "email"), ("info@xn--bcher-kva.de", "email"),
]
NOT_FOUND = [
    "15.01.2023", "10.0.19045.2965", "48.8566 2.3522", "4111 1111 1111 1112", "4111.1111.1111.1112",
    "DE89 3704 0044 0532 0130 01", "GB82 WEST 1234 5698 7654 33", "e.g. this", "file.txt",
    "setup.py", "notes.md", "end.It works", "::", "i.e. that", "U.S. dollars", "3.14 or 2.72",
]


@pytest.mark.parametrize("text,kind", FOUND)
def test_validated_identifiers_are_found_whole(text, kind):
    assert _spans([f"see {text}, thanks"]) == [(text, kind)]
    assert _spans([text]) == [(text, kind)]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_dates_versions_coordinates_and_invalid_checksums_are_not_identifiers(text):
    assert _spans([f"see {text} now"]) == []


def test_an_identifier_never_leaves_pieces_of_itself():
    """An IBAN ending in letters is not cut before them, an IPv6 with an embedded IPv4 is one
    token, a span whose edge touches a letter grows over the word."""
    out = textdp.privatize(["account SC18 SSCB 1101 0000 0000 0000 1497 USD, host "
                            "2001:db8:85a3::8a2e:192.168.0.1 and 10.0.0.1:8080"], **KW).texts
    assert out == ["account [IBAN], host [IP] and [IP]"]
    assert _spans(["see [2001:db8::/48] and [[::1]:8000]"]) == [("2001:db8::/48", "ip"),
                                                                ("[::1]:8000", "ip")]
    ticket = Identifiers(patterns={"ticket": r"TK-\d{3}"})
    assert _spans(["see xTK-123abc."], ticket) == [("xTK-123abc", "ticket")]


def test_phone_regions_are_configurable():
    assert _spans(["030 1234567"], Identifiers(phone_regions=["US"])) == []
    assert _spans(["030 1234567"], Identifiers(phone_regions=["de"])) == [("030 1234567", "phone")]
    assert _spans(["+49 30 1234567"], Identifiers(phone_regions=["US"])) == [("+49 30 1234567",
                                                                              "phone")]
    with pytest.raises(ValueError, match="unknown phone region"):
        Identifiers(phone_regions=["XX"])
    with pytest.raises(ValueError, match="identifiers are off"):
        textdp.privatize(["x"], identifiers=False, phone_regions=["US"], **KW)
    out = textdp.privatize(["call 030 1234567"], phone_regions=["US"], **KW)
    assert out.report["identifiers"]["phone_regions"] == ["US"]


# Gaps found by Presidio's own recogniser tests (experiments/identifiers_peer.py); the cases
# here are written for this project.
def test_a_card_right_after_another_card_is_found_too():
    assert _spans(["cards 5500000000000004 5105-1051-0510-5100 and 4111 1111 1111 1111"]) == [
        ("5500000000000004", "card"), ("5105-1051-0510-5100", "card"),
        ("4111 1111 1111 1111", "card")]


def test_uatp_cards_start_with_1_and_have_15_digits():
    from stdnum import luhn

    uatp = "19001234567890" + luhn.calc_check_digit("19001234567890")
    assert _spans([f"airline card {uatp}"]) == [(uatp, "card")]
    assert _spans([f"number {uatp}1 and {uatp[:-1]}"]) == []  # 16 and 14 digits: no card


def test_an_iban_of_a_bank_missing_from_the_registry_is_an_iban():
    from stdnum import iban
    from stdnum.exceptions import ValidationError

    account = "5390012345"
    bban = account + f"{int(account) % 97 or 97:02d}"
    number = "BE" + iban.calc_check_digits("BE00" + bban) + bban
    with pytest.raises(ValidationError):
        iban.validate(number)  # python-stdnum's bank registry does not know bank 539
    assert _spans([f"pay to {number} today"]) == [(number, "iban")]


def test_an_address_with_an_impossible_prefix_length_is_still_an_address():
    assert _spans(["route 192.168.10.7/40 down"]) == [("192.168.10.7", "ip")]
    assert _spans(["net fd00:ab::/200 down"]) == [("fd00:ab::", "ip")]
    assert _spans(["net fd00:ab::/4096 and 10.20.30.40/65535"]) == [("fd00:ab::", "ip"),
                                                                    ("10.20.30.40", "ip")]


def test_a_scheme_or_www_before_a_bare_word_is_no_url():
    assert _spans(["see www.intranet and https://intranet or ftp://backup."]) == []
    assert _spans(["see www.intranet.de and https://intranet/wiki/Home"]) == [
        ("www.intranet.de", "url"), ("https://intranet/wiki/Home", "url")]


def test_a_dotted_quad_after_a_colon_is_an_address():
    """ifconfig's ``addr:``/``Mask:`` fields, and the IPv4 tail of an IPv6 address glued to a
    word (the word is no address; the dotted quad, delimited by a colon, is one)."""
    assert _spans(["inet addr:172.16.4.20  Bcast:172.16.4.255  Mask:255.255.255.0"]) == [
        ("172.16.4.20", "ip"), ("172.16.4.255", "ip"), ("255.255.255.0", "ip")]
    assert _spans(["upstream:10.1.2.3:8443 down"]) == [("10.1.2.3:8443", "ip")]
    assert _spans(["see cafe2001:db8::172.16.0.9 and x::ffff:203.0.113.7"]) == [
        ("172.16.0.9", "ip"), ("203.0.113.7", "ip")]
    # Five dotted numbers are no address (an OID, a version), after a colon or not.
    assert _spans(["oid:1.3.6.1.4 and 1.3.6.1.4"]) == []
    assert _spans(["see ab2001:db8::1 and std::vector"]) == []


def test_a_country_code_without_its_plus_is_read_as_an_international_number():
    # Valid Indian and British numbers, grouped as North America groups its numbers (so not
    # as their own regions write them, which a national number needs).
    assert _spans(["call 91-987-654-3210 or 44-207-946-0958"]) == [
        ("91-987-654-3210", "phone"), ("44-207-946-0958", "phone")]
    # Too short for France; the codes are those of the configured regions only.
    assert _spans(["ref 33 12 34 56 78"]) == []
    assert _spans(["call 44-207-946-0958"], Identifiers(phone_regions=["US"])) == []


def test_international_numbers_of_any_region_are_found_whatever_the_regions():
    for number in ("+972 3-555-1234", "+86 139 1234 5678", "+8613912345678", "+81 90-1234-5678"):
        assert _spans([f"call {number} now"], Identifiers(phone_regions=["US"])) == [
            (number, "phone")]
