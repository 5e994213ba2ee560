"""docs/audit.md: every built-in mechanism is audited, and the page is its results rendered."""

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]


def test_the_experiment_audits_every_built_in_mechanism():
    from experiments import _harness, audit
    from textdp.mechanisms import available

    assert {name for _, name, _ in audit.MECHANISMS} == set(available("word"))
    results = _harness.load_json(REPO / "docs" / "audit" / "results.json")
    assert [r["label"] for r in results["mechanisms"]] == [m[0] for m in audit.MECHANISMS]


def test_the_audit_page_from_the_committed_results_is_the_committed_page(tmp_path):
    from experiments import audit

    out = tmp_path / "audit.md"
    assert audit.main(["--from-results", str(REPO / "docs" / "audit" / "results.json"),
                       "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (REPO / "docs" / "audit.md").read_text(
        encoding="utf-8")
    assert (tmp_path / "audit" / "audit.png").stat().st_size > 1000
