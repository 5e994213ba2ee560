"""A printed ε is never below the true one (issue 36, deliver 5): the one-line summary printed ε
with ``:g`` (nearest: ``0.1 + 0.2`` printed as 0.3, below 0.30000000000000004) and the ledger's
budget messages with ``:.6g``. Every such message now goes through
:func:`textdp.privacy.format_up`; the checks here are in exact arithmetic (``Fraction`` of the
printed decimal against ``Fraction`` of the float)."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textdp
from textdp.ledger import Ledger, LedgerRefused
from textdp.privacy import format_up
from textdp.privacy.composition import Spend, compose
from textdp.privacy.report import summary_line

_NUMBER = re.compile(r"ε(?:_doc)? = ([0-9.e+\-]+|inf)")
#: ε's that print below themselves with :g (the nearest 6-digit decimal is below them).
TRICKY = [0.1 + 0.2, 1.0000004, 2.0000001, 1 / 3, 8.0000000000000011, 123456.7]


def _printed(text: str) -> list[Fraction]:
    found = _NUMBER.findall(text)
    assert found, text
    return [Fraction(Decimal(x)) for x in found]


def _exact(x: float) -> Fraction:
    return Fraction(x)


@settings(max_examples=3000, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False),
       st.integers(min_value=1, max_value=15))
def test_format_up_never_below(x, digits):
    assert Fraction(Decimal(format_up(x, digits))) >= _exact(x)


@pytest.fixture(scope="module")
def report():
    return textdp.privatize(["the food was great"], "mvc", 5.0, seed=0,
                            entities="none").report.to_dict()


@pytest.mark.parametrize("eps", TRICKY)
def test_summary_line_rounds_up(report, eps):
    line = summary_line({**report, "guarantee": {**report["guarantee"], "epsilon": eps}})
    (printed,) = _printed(line)
    assert printed >= _exact(eps), line


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_summary_line_never_below(report, eps):
    line = summary_line({**report, "guarantee": {**report["guarantee"], "epsilon": eps}})
    assert _printed(line)[0] >= _exact(eps)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=1e-6, max_value=1e3, allow_nan=False), min_size=1,
                max_size=6))
def test_composition_messages_never_below(epsilons):
    spends = [Spend(release=f"r{i}", notion="metric DP (d_χ-privacy)", epsilon=e,
                    metric="Euclidean", metric_id="word-euclidean:v") for i, e in enumerate(epsilons)]
    composed = compose(spends)
    exact = sum((_exact(e) for e in epsilons), Fraction(0))
    (total,) = _printed(composed.summary())
    assert total >= exact, composed.summary()
    budget = float(sum(epsilons)) * 0.999999
    for reason in composed.over_budget(budget):
        assert _printed(reason.split(" > budget")[0])[0] >= exact, reason


def test_ledger_refusal_prints_cumulative_up(tmp_path):
    """0.1 then 0.2 against a budget of 0.3: refused (0.1 + 0.2 > 0.3 exactly), and the message
    must not say the cumulative ε is 0.3."""
    path = tmp_path / "ledger.jsonl"
    texts = ["the food was great"]
    textdp.privatize(texts, "mvc", 0.1, seed=0, entities="none", ledger=path)
    with pytest.raises(LedgerRefused) as info:
        textdp.privatize(texts, "mvc", 0.2, seed=0, entities="none",
                         ledger=Ledger(path, policy="refuse", budget=0.3))
    message = str(info.value)
    exact = _exact(0.1) + _exact(0.2)
    cumulative = re.search(r"cumulative ε = (\S+) > budget", message).group(1)
    assert Fraction(Decimal(cumulative)) >= exact, message


def test_ledger_show_rounds_up(tmp_path):
    from textdp.cli.ledger import _eps

    for eps in TRICKY:
        assert Fraction(Decimal(_eps(eps))) >= _exact(eps)
    assert _eps(10**400) == "inf"
