"""Deliverable of issue 26: every results page is its committed results rendered, byte for byte,
and a ``--quick`` smoke run never writes into docs/results/."""

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"

#: Every page under docs/results/ with the figures its render must draw.
PAGES = {
    "privemb": {"distance.png", "inner_product.png", "svm.png", "sentences.png"},
    "privemb300": {"distance.png", "inner_product.png", "svm.png", "sentences.png"},
    "deepcandidate": {"amazon.png", "bible.png", "nyt.png"},
    "deepcandidate300": {"amazon.png", "nyt.png"},
    "word_mechanisms": {"mvc_curves.png", "fig4_deniability.png", "utility.png", "attacks.png",
                        "efficiency.png"},
    "mvc300": {"fig2_300d.png", "fig3_50d_300d.png"},
    "diffractor": {"table2.png"},
    "beyond_words": {"similarity_accuracy.png"},
    "mvc_utility": {"utility.png"},
    "baselines300": set(),
    "provenance": {"auc.png"},
    "mvc_worstcase": {"fig1_distances.png"},
    "differences": set(),
}


#: Pages under docs/results/ that are not a paper's experiment, and what keeps each true.
OTHER_PAGES = {
    "identifiers": "python -m experiments.identifiers; re-rendered by test_identifiers_page.py",
    "entities": "python -m benchmarks.run entities; its figures are BENCHMARKS.md's entities section",
    "assess": "python -m experiments.assess_page; re-rendered by test_assess_page.py",
    "synthesize": "python -m experiments.synthesize_results; re-rendered by "
                  "test_synthesize_page.py",
    "synthesize_device": "benchmarks/device_session.sh on a lent GPU, then python -m "
                         "experiments.synthesize_device; re-rendered below",
}


def test_the_device_page_is_its_committed_results_rendered(tmp_path):
    from experiments import synthesize_device

    out = tmp_path / "synthesize_device.md"
    assert synthesize_device.main(["--from-results", "--out", str(out)]) == 0
    assert out.read_bytes() == (RESULTS / "synthesize_device.md").read_bytes()


def test_every_page_is_listed():
    from textdp.cli.experiment import EXPERIMENTS

    assert set(PAGES) == set(EXPERIMENTS)
    assert {p.stem for p in RESULTS.glob("*.md")} == set(PAGES) | set(OTHER_PAGES)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_from_the_committed_results_is_the_committed_page(name, tmp_path):
    import importlib

    module = importlib.import_module(f"experiments.{name}")
    saved = RESULTS / name / "results.json"
    assert saved.is_file(), f"{saved} is not committed"
    out = tmp_path / f"{name}.md"
    assert module.main(["--from-results", str(saved), "--out", str(out)]) == 0
    assert out.read_bytes() == (RESULTS / f"{name}.md").read_bytes()
    folder = tmp_path / name
    assert PAGES[name] <= ({p.name for p in folder.iterdir()} if folder.is_dir() else set())
    assert "## Claims against the paper" in out.read_text(encoding="utf-8")


def test_a_quick_run_writes_to_a_temporary_folder_and_never_to_docs_results():
    from experiments import _harness

    ap = _harness.parser("mvc300", None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(["--quick"])
    assert not args.out.resolve().is_relative_to(RESULTS.resolve())
    assert args.out.name == "mvc300.md" and args.out.parent.is_dir()
    args.out.parent.rmdir()
    # Without --quick the default is still the committed page; with --quick an --out inside
    # docs/results/ is refused (exit status 2, argparse's).
    assert ap.parse_args([]).out == RESULTS / "mvc300.md"
    with pytest.raises(SystemExit) as err:
        ap.parse_args(["--quick", "--out", str(RESULTS / "mvc300.md")])
    assert err.value.code == 2
    assert ap.parse_args(["--from-results", "x.json"]).out == RESULTS / "mvc300.md"


def test_the_quick_flag_of_every_experiment_goes_through_the_shared_parser(monkeypatch):
    # Each experiment with --quick builds its options with _harness.parser: stop right after
    # parsing and check where it would write.
    import importlib

    from experiments import _harness

    seen = {}

    class Stop(Exception):
        pass

    def fake_run_or_render(args, run, render, **kw):
        seen["out"] = args.out
        raise Stop

    monkeypatch.setattr(_harness, "run_or_render", fake_run_or_render)
    for name in ("mvc300", "diffractor"):
        module = importlib.import_module(f"experiments.{name}")
        seen.clear()
        with pytest.raises(Stop):
            module.main(["--quick"])
        assert not seen["out"].resolve().is_relative_to(RESULTS.resolve())
