"""``textdp evaluate`` and ``textdp report`` end to end, and their HTML in headless Chromium.

The sweep runs two mechanisms × three ε on the default assets (default vocabulary, VADER,
fortunes when apt can fetch it, SBERT) with small sizes. The HTML is opened in headless Chromium
(Debian package ``chromium``; the tests skip without it): a copy with a probe script must report
every embedded PNG decoded, and no console message may appear; a screenshot must render.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from textdp.cli import main

MECHANISMS = "mvc,diffractor"
EPSILONS = "1,5,20"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


PROBE = """<script>
window.addEventListener("load", function () {
  var imgs = Array.from(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute("data-probe", ok + "/" + imgs.length);
});
</script>"""


def open_in_chromium(page: Path, work: Path) -> tuple[str, list[str], bytes]:
    """(probe result "ok/total", console lines, screenshot bytes) for ``page``."""
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian package: chromium)")
    work.mkdir(parents=True, exist_ok=True)
    probe = work / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                     encoding="utf-8")
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", f"--user-data-dir={work / 'profile'}", "--enable-logging=stderr",
              "--v=0", "--virtual-time-budget=10000"]
    dom = subprocess.run([*common, "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                         timeout=180)
    m = re.search(r'data-probe="(\d+/\d+)"', dom.stdout)
    shot = work / "shot.png"
    plain = subprocess.run([*common, f"--screenshot={shot}", "--window-size=1200,2400",
                            page.as_uri()], capture_output=True, text=True, timeout=180)
    console = [line for line in (dom.stderr + plain.stderr).splitlines() if ":CONSOLE" in line]
    return (m.group(1) if m else "no probe"), console, shot.read_bytes() if shot.exists() else b""


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval") / "run"
    code = main(["evaluate", "--mechanisms", MECHANISMS, "--epsilons", EPSILONS, "--out", str(out),
                 "--words", "10", "--draws", "30", "--docs", "60", "--similarity-docs", "10",
                 "--efficiency-tokens", "1000", "--seed", "0"])
    assert code == 0
    return out


def test_evaluate_writes_everything(evaluation):
    files = {p.name for p in evaluation.iterdir()}
    assert {"results.json", "report.md", "report.html"} <= files
    pngs = {f for f in files if f.endswith(".png")}
    assert {"deniability_curves.png", "deniability_mvc.png", "deniability_diffractor.png",
            "utility.png", "privacy.png", "efficiency.png"} <= pngs
    results = json.loads((evaluation / "results.json").read_text())
    assert results["schema"] == "textdp.evaluation/1"
    rows = results["results"]
    assert {(r["mechanism"], r["epsilon"]) for r in rows} == {
        (m, e) for m in MECHANISMS.split(",") for e in (1.0, 5.0, 20.0)}
    for r in rows:
        assert 0 <= r["deniability"]["max_n_w"] <= 1
        assert set(r["utility"]) >= {"sentiment"} and "test_private" in r["utility"]["sentiment"]
        assert "source" in r["attacks"] and 0 <= r["reidentification"]["rate"] <= 1
    if not any("fortunes" in note for note in results["notes"]):  # fortunes could be fetched
        assert all("topic" in r["utility"] and "author" in r["attacks"] for r in rows)
    diffractor = [r for r in rows if r["mechanism"] == "diffractor"]
    assert all(r["deniability"]["method"] == "exact" for r in diffractor)
    assert {r["mechanism"] for r in results["efficiency"]} == set(MECHANISMS.split(","))
    md = (evaluation / "report.md").read_text()
    for png in pngs:
        assert f"]({png})" in md
    page = (evaluation / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(pngs) and "<script" not in page


def test_no_private_text_unless_asked(evaluation):
    results = json.loads((evaluation / "results.json").read_text())
    assert "examples" not in results
    assert "Examples" not in (evaluation / "report.md").read_text()


def test_include_text(tmp_path):
    from textdp.evaluation.sweep import SweepConfig, run_sweep

    cfg = SweepConfig(mechanisms=["diffractor"], epsilons=[1.0], words=5, draws=10, docs=30,
                      tasks=["sentiment", "reidentification"], efficiency=False, include_text=True)
    results = run_sweep(cfg, tmp_path)
    assert len(results["examples"]) == 3 and "Examples" in (tmp_path / "report.md").read_text()


def test_evaluate_html_opens_in_chromium(evaluation, tmp_path):
    probe, console, shot = open_in_chromium(evaluation / "report.html", tmp_path)
    n = (evaluation / "report.html").read_text().count("<img ")
    assert probe == f"{n}/{n}", probe
    assert console == []
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_renders_a_run(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The food was great, but the waiter charged 42 dollars!\nI LOVED it.\n")
    run = tmp_path / "run.json"
    assert main(["privatize", str(src), "-o", str(tmp_path / "out.txt"), "--epsilon", "1",
                 "-m", "diffractor", "--report", str(run), "--seed", "1"]) == 0
    assert main(["report", str(run), "--deniability", "20", "--draws", "100", "--seed", "0"]) == 0
    out = tmp_path / "run-report"
    assert {"report.md", "report.html", "tokens.png", "deniability.png"} <= {
        p.name for p in out.iterdir()}
    md = (out / "report.md").read_text()
    assert "## Guarantee" in md and "Released without protection" in md
    assert "waiter" not in md and "food" not in md  # no text from the run
    assert "Not measured" not in md
    probe, console, _ = open_in_chromium(out / "report.html", tmp_path / "chromium")
    assert probe == "2/2" and console == []


@pytest.mark.parametrize("args, message", [
    (["--mechanisms", "nope", "--epsilons", "1"], "unknown mechanism"),
    (["--mechanisms", "mvc", "--epsilons", "0"], "> 0"),
    (["--mechanisms", "mvc", "--epsilons", "1", "--tasks", "poetry"], "unknown task"),
    (["--mechanisms", "mvc", "--epsilons", "1", "--param", "mvc:beta=1"], "no parameter"),
    (["--mechanisms", "mvc", "--epsilons", "1", "--param", "beta=1"], "MECHANISM:NAME=VALUE"),
    (["--mechanisms", "mvc", "--epsilons", "1", "--features", "bow"], "--features"),
])
def test_evaluate_errors(tmp_path, capsys, args, message):
    code = main(["evaluate", *args, "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_report_errors(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    assert main(["report", str(bad)]) == 2
    assert "not a textdp privacy report" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.json")]) == 2
    bad.write_text("{")
    assert main(["report", str(bad)]) == 2
    assert "not a JSON file" in capsys.readouterr().err


def test_results_written_before_a_failing_figure(tmp_path, monkeypatch):
    # The measurements reach results.json before anything that can fail afterwards (issue 12, item 1).
    from textdp.evaluation import sweep

    def broken(*_args, **_kwargs):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(sweep, "draw_figures", broken)
    cfg = sweep.SweepConfig(mechanisms=["diffractor"], epsilons=[1.0], words=5, draws=10, docs=30,
                            tasks=["sentiment"], efficiency=False)
    with pytest.raises(RuntimeError, match="figure failed"):
        sweep.run_sweep(cfg, tmp_path)
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["results"] and "figures" not in results
