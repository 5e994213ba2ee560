"""The identifier evaluation (issue 22): its committed results give back its committed page, and
textdp's own column can be recomputed here (Presidio is not a textdp dependency)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def test_page_from_the_committed_results_is_the_committed_page(tmp_path):
    from experiments import identifiers

    out = tmp_path / "identifiers.md"
    assert identifiers.main(["--from-results", str(RESULTS / "identifiers" / "results.json"),
                             "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (RESULTS / "identifiers.md").read_text(encoding="utf-8")
    assert "python -m experiments.identifiers" in out.read_text(encoding="utf-8")


def test_textdp_scores_match_the_committed_results():
    import json

    from experiments import identifiers
    from textdp.text.identifiers import Identifiers

    committed = json.loads((RESULTS / "identifiers" / "results.json").read_text(encoding="utf-8"))
    ids = Identifiers()
    for set_name in identifiers.SETS:
        positives, negatives = identifiers.cases(committed["seed"], held_out=set_name == "held_out")
        scores = identifiers.score(positives, negatives,
                                   lambda t: identifiers.textdp_spans(t, ids))
        want = committed["sets"][set_name]["recognisers"]["textdp"]["scores"]
        assert json.loads(json.dumps(scores)) == want


def test_scoring_counts_a_partial_span_as_not_fully_masked():
    from experiments import identifiers

    case = identifiers._case("ip", "10.0.0.1:8080", 0)
    partial = identifiers.score([case], [], lambda t: [(case["start"], case["start"] + 8, "ip")])
    assert partial["ip"]["fully_masked"] == 0 and partial["ip"]["right_kind"] == 0
    wrong = identifiers.score([case], [], lambda t: [(case["start"], case["end"], "phone")])
    assert wrong["ip"]["fully_masked"] == 1 and wrong["ip"]["right_kind"] == 0
