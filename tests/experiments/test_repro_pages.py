"""mvc300 and diffractor (issue 14 item 3): the committed results give back the committed pages.

Nothing here runs the experiments (minutes on 2 cores); ``--from-results`` redraws figures and page.
The matched-N_w helper of mvc300 is checked on a hand-made grid.
"""

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


@pytest.mark.parametrize("name, figures", [("mvc300", {"fig2_300d.png", "fig3_50d_300d.png"}),
                                           ("diffractor", {"table2.png"})])
def test_page_from_the_committed_results_is_the_committed_page(name, figures, tmp_path):
    import importlib

    module = importlib.import_module(f"experiments.{name}")
    out = tmp_path / f"{name}.md"
    assert module.main(["--from-results", str(RESULTS / name / "results.json"),
                        "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (RESULTS / f"{name}.md").read_text(encoding="utf-8")
    assert figures <= {p.name for p in (tmp_path / name).iterdir()}


def test_matched_point_interpolates_in_log_epsilon_and_refuses_to_extrapolate():
    from experiments.mvc300 import matched_point

    rows = [{"epsilon": e, "n_w": {"mean": n}, "distinct": {"mean": s}}
            for e, n, s in ((1, 0.0, 900), (4, 0.4, 500), (16, 0.8, 100))]
    eps, s_w = matched_point(rows, 0.6)
    assert eps == pytest.approx(8.0) and s_w == pytest.approx(300.0)
    assert matched_point(rows, 0.9) is None
