"""The synthetic-text results page (issue 32, Deliver 4): its committed results give back its
committed page, and the statistics it prints are the ones computed here."""

import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def test_page_from_the_committed_results_is_the_committed_page(tmp_path):
    from experiments import synthesize_results

    out = tmp_path / "synthesize.md"
    assert synthesize_results.main(["--from-results", str(RESULTS / "synthesize" /
                                                          "results.json"),
                                    "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == (RESULTS / "synthesize.md").read_text(encoding="utf-8")
    assert "python -m experiments.synthesize_results" in text and "## Time" in text
    assert "zero private data" in text and "Not done here" in text


def test_the_two_proportion_test():
    from experiments.synthesize_results import two_proportion

    a = {"correct": 60, "n": 100, "accuracy": 0.6}
    b = {"correct": 45, "n": 100, "accuracy": 0.45}
    got = two_proportion(a, b)
    p = 105 / 200
    z = 0.15 / math.sqrt(p * (1 - p) * (2 / 100))
    assert math.isclose(got["z"], z) and math.isclose(got["p_one_sided"],
                                                      0.5 * math.erfc(z / math.sqrt(2)))
    assert got["p_one_sided"] < 0.05 < two_proportion(b, a)["p_one_sided"]
