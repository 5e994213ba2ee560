"""Dataset-level releases in the ledger (issue 32, deliverable 2): their own notion family,
composed across releases of the same input by dp-accounting, refused before anything runs."""

from __future__ import annotations

import json

import pytest

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402

from textdp.cli import main  # noqa: E402
from textdp.ledger import Ledger, LedgerRefused, iter_inputs  # noqa: E402
from textdp.privacy import format_up  # noqa: E402
from textdp.privacy.accounting import DISCRETISATION  # noqa: E402
from textdp.runner import Outcome, run_release  # noqa: E402
from textdp.synthesis import TextSource  # noqa: E402
from textdp.synthesis.accountant import plan  # noqa: E402

TEXTS = [f"document number {i}" for i in range(100)]
FAMILY = "(ε, δ)-DP, dataset level"


class _Spec:
    """A spec whose measurement is fixed (the run's planning is tested elsewhere)."""

    seed = None

    def __init__(self, measurement):
        self.measurement = measurement

    def measure(self, source):
        return self.measurement


class _Engine:
    def __init__(self):
        self.runs = 0

    def run(self, spec, source, measurement):
        self.runs += 1
        return Outcome(["synthetic"], {"guarantee": measurement.guarantee.to_dict(),
                                       "warnings": []})


@pytest.fixture(scope="module")
def plans():
    return {"e2": plan(epsilon=2.0, delta=1e-5, rounds=3, units=100),
            "e3": plan(epsilon=3.0, delta=1e-5, rounds=4, units=100),
            "p2": plan(epsilon=2.0, delta=1e-5, rounds=3, units=100, unit="person")}


def _direct(events, delta):
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=DISCRETISATION)
    accountant.compose(dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(s), k)
        for s, k in events]))
    return accountant.get_epsilon(delta)


def test_two_releases_compose_by_the_accountant_not_by_the_sum(tmp_path, plans):
    book = Ledger(tmp_path / "book.jsonl")
    source = TextSource.build(TEXTS, name="tickets")
    for key in ("e2", "e3"):
        run_release(_Spec(plans[key]), source, _Engine(), ledger=book)
    (fingerprint, entries, composition), = list(iter_inputs(book.read()))
    (group,) = composition.groups
    assert group.family == FAMILY
    assert group.metric_id == "dataset-add-remove:document"
    assert group.delta == pytest.approx(2e-5)
    e2, e3 = plans["e2"], plans["e3"]
    direct = _direct([(e2.noise_multiplier, 3), (e3.noise_multiplier, 4)], 2e-5)
    assert group.epsilon == float(format_up(direct))
    assert direct <= group.epsilon < e2.epsilon + e3.epsilon
    assert [e["accounting"]["events"][0]["count"] for e in entries] == [3, 4]


def test_the_budget_refuses_before_the_engine_runs(tmp_path, plans):
    path = tmp_path / "book.jsonl"
    source = TextSource.build(TEXTS)
    run_release(_Spec(plans["e3"]), source, _Engine(), ledger=Ledger(path))
    before = path.read_bytes()
    engine = _Engine()
    refuse = Ledger(path, policy="refuse", budget=3.2)
    with pytest.raises(LedgerRefused, match=FAMILY.replace("(", r"\(").replace(")", r"\)")):
        run_release(_Spec(plans["e2"]), source, engine, ledger=refuse)
    assert engine.runs == 0
    assert path.read_bytes() == before  # nothing recorded
    # Within the budget the same release goes through and is completed.
    run_release(_Spec(plans["e2"]), source, engine, ledger=Ledger(path, policy="refuse",
                                                                   budget=20.0))
    assert engine.runs == 1 and '"type":"complete"' in path.read_text().splitlines()[-1]


def test_person_and_document_releases_are_listed_side_by_side(tmp_path, plans):
    book = Ledger(tmp_path / "book.jsonl")
    source = TextSource.build(TEXTS)
    run_release(_Spec(plans["e2"]), source, _Engine(), ledger=book)
    run_release(_Spec(plans["p2"]), source, _Engine(), ledger=book)
    (_, _, composition), = list(iter_inputs(book.read()))
    assert sorted(g.metric_id for g in composition.groups) == [
        "dataset-add-remove:document", "dataset-add-remove:person"]
    assert all(g.epsilon == plans["e2"].epsilon for g in composition.groups)


def test_a_word_release_of_the_same_input_stays_in_its_own_family(tmp_path, plans):
    import textdp

    path = tmp_path / "book.jsonl"
    textdp.privatize(TEXTS, mechanism="mvc", epsilon=10, ledger=path, entities="none", seed=1)
    run_release(_Spec(plans["e2"]), TextSource.build(TEXTS), _Engine(), ledger=Ledger(path))
    (_, entries, composition), = list(iter_inputs(Ledger(path).read()))
    assert len(entries) == 2
    assert {g.family for g in composition.groups} == {"metric DP per word", FAMILY}


def test_ledger_show_prints_the_family_and_an_edited_event_is_invalid(tmp_path, plans, capsys):
    path = tmp_path / "book.jsonl"
    book = Ledger(path)
    source = TextSource.build(TEXTS)
    for key in ("e2", "e3"):
        run_release(_Spec(plans[key]), source, _Engine(), ledger=book)
    assert main(["ledger", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "private_evolution" in out and f"{FAMILY}: ε = " in out
    lines = path.read_text().splitlines()
    entry = json.loads(lines[0])
    entry["accounting"]["events"][0]["noise_multiplier"] = 1e9  # less spend, same id
    path.write_text("\n".join([json.dumps(entry)] + lines[1:]) + "\n")
    contents = Ledger(path).read()
    assert contents.invalid and "does not match" in contents.invalid[0]["why"]
    entry["accounting"]["events"][0]["noise_multiplier"] = -1
    path.write_text("\n".join([json.dumps(entry)] + lines[1:]) + "\n")
    assert "noise_multiplier" in Ledger(path).read().invalid[0]["why"]
