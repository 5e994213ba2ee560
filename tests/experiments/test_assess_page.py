"""The assess results page (issue 24 item 5): its committed results give back its committed page,
and the re-run check it reports is computed with the recommended setting's own keywords."""

import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def test_page_from_the_committed_results_is_the_committed_page(tmp_path):
    from experiments import assess_page

    out = tmp_path / "assess.md"
    assert assess_page.main(["--from-results", str(RESULTS / "assess" / "results.json"),
                             "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (RESULTS / "assess.md").read_text(encoding="utf-8")
    assert {"frontier_tickets.png", "frontier_sentiment.png"} <= {
        p.name for p in (tmp_path / "assess").iterdir()}


def test_the_check_released_the_chosen_setting():
    saved = json.loads((RESULTS / "assess" / "results.json").read_text(encoding="utf-8"))
    rec = saved["tickets"]["recommendation"]
    index = rec["index"] if rec["met"] else rec["nearest"][0]["index"]
    assert saved["check"]["release"] == saved["tickets"]["rows"][index]["release"]
    # Fresh tickets: another generator seed than the assessed ones.
    assert saved["check"]["generator_seed"] != saved["settings"]["seed"]
