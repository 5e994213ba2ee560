"""A ledger written by textdp before composition was keyed on stable ids (schema
``textdp.ledger/2``, tests/fixtures/ledger_v2.jsonl: written by the code of commit f061fcb) reads
with the same totals: every group, its releases, its ε and δ, the pending and voided entries."""

from __future__ import annotations

import shutil
from pathlib import Path

from textdp.ledger import Ledger, iter_inputs

FIXTURE = Path(__file__).parent / "fixtures" / "ledger_v2.jsonl"

#: Per input (fingerprint prefix): (family, releases, ε, δ) of each group, as the code that wrote
#: the fixture read it (``textdp ledger show --json``).
EXPECTED = {
    "c07816a579d742d2": [
        ("metric DP per word", ("cd475336eece80f9", "eef80dbf1a3a6d69"), 12.0, 0.0),  # mvc 8 + 4
        ("metric DP per word", ("b1edaf0544e035eb",), 6.0, 0.0),  # mahalanobis
        ("output-set DP per word", ("7e10d88d7ece1827",), 2.0, 0.0),  # custext
    ],
    "df8fbf5a22eaa897": [
        ("metric DP per word", ("36fa8b02652255d8", "0f22b1d35385fbad"), 6.0, 0.0),  # mvc+santext
        ("metric DP per word", ("6c5d3004816a9985",), 1.0, 0.0),  # diffractor
    ],
    "b6694045dcdf4b5a": [  # laplace-vector 2 + 2, privemb (1, δ)
        ("Lipschitz privacy", ("7e77373f18952551", "911aef60ee40042a", "8cebbb9ada5d8ce4"), 5.0,
         0.030772292267065526),
    ],
    "bde5d23dea4df11f": [("ε-SentDP", ("cb3efd84cf970ae7", "f43effd391299a5a"), 3.0, 0.0)],
    "4eec6c351f21d879": [  # dp_prompt: one complete, one pending (counted), one voided
        ("pure ε-DP per document", ("713d2a187dc7f958", "a131297e51464050"), 100.0, 0.0),
    ],
}


def _totals(path: Path) -> dict[str, list[tuple]]:
    contents = Ledger(path).read()
    assert not contents.invalid
    return {fp[:16]: [(g.family, g.releases, g.epsilon, g.delta) for g in composition.groups]
            for fp, _, composition in iter_inputs(contents)
            if composition.bounded}


def test_a_ledger_written_before_reads_with_the_same_totals():
    assert _totals(FIXTURE) == EXPECTED


def test_pending_and_voided_entries_of_the_old_ledger():
    contents = Ledger(FIXTURE).read()
    assert [e["id"] for e in contents.pending] == ["a131297e51464050"]
    assert [e["id"] for e in contents.voided] == ["45b03857952e3213"]
    assert len(contents.entries) == 14


def test_a_new_release_composes_with_the_old_entries_of_its_metric(tmp_path):
    """A release made now of an input the old ledger holds adds to the old group of its metric
    (the same vocabulary and metric), not to a new group beside it."""
    import textdp

    path = tmp_path / "ledger.jsonl"
    shutil.copyfile(FIXTURE, path)
    texts = ["Alice met Bob in Paris on Monday.", "The patient was seen at noon."]
    result = textdp.privatize(texts, "mvc", 1.0, seed=1, ledger=Ledger(path))
    groups = result.report["ledger"]["cumulative"]["groups"]
    mvc = [g for g in groups if "cd475336eece80f9" in g["releases"]]
    assert len(mvc) == 1 and mvc[0]["epsilon"] == 13.0 and mvc[0]["count"] == 3
    assert len(groups) == 3
