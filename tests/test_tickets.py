"""The support-ticket generator (textdp.datasets.tickets): seeded, spans point at the values."""

import pytest

from textdp.datasets.tickets import FIRST_NAMES, generate_tickets


def test_seeded_and_spans_hold_the_values():
    a, b = generate_tickets(50, seed=3), generate_tickets(50, seed=3)
    assert [t.text for t in a] == [t.text for t in b]
    assert [t.text for t in a] != [t.text for t in generate_tickets(50, seed=4)]
    for t in a:
        assert t.values["first_name"] in FIRST_NAMES
        for start, end, kind in t.spans:
            value = t.values["street_name" if kind == "street_name" else kind]
            assert t.text[start:end] == value
        assert {"first_name", "last_name"} <= {k for _, _, k in t.spans}


def test_bad_size():
    with pytest.raises(ValueError, match="non-negative"):
        generate_tickets(-1)
