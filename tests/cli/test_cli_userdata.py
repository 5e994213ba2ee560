"""``textdp calibrate INPUT`` and ``textdp evaluate INPUT``: the user's own data (issue 24, item 4).

* calibrate: N_w on the words of the data, weighted by their counts — a word repeated k times
  weighs k times (exact law, so the expected mean is computed exactly); without INPUT the output
  is what the library computes with the same seed (today's vocabulary-sample behaviour).
* evaluate: task accuracy on the user's labels in the MVC paper's two protocols, N_w/S_w on the
  data's words, speed on the data; no document of the data in the results or the report.
* One-line errors (exit 2, nothing written) for missing fields and unusable labels.
"""

from __future__ import annotations

import json

import pytest

from textdp import _random
from textdp import mechanisms as registry
from textdp.cli import main
from textdp.evaluation.calibration import calibrate
from textdp.vocab import load_default


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def vocab():
    return load_default(1000)


@pytest.mark.parametrize("k", [1, 9])
def test_calibrate_weighs_a_word_by_its_count(capsys, tmp_path, vocab, k):
    data = tmp_path / "words.txt"
    data.write_text("good " * k + "\ntime\n")
    code, out, err = run(capsys, "calibrate", data, "-m", "santext", "--max-nw", "0.5",
                         "--min-sw", "2", "--vocabulary-size", "1000", "--grid", "1,3",
                         "--refine", "0", "--seed", "0", "--json")
    assert code in (0, 3), err
    result = json.loads(out)
    m = result["measured_on"]
    assert m["source"] == "data" and m["documents"] == 2 and m["privatized_words"] == k + 1
    assert dict(m["most_frequent"]) == {"good": k, "time": 1}
    assert dict(zip(result["words"], result["weights"], strict=True)) == {"good": k, "time": 1}
    for p in result["points"]:
        mech = registry.create("santext", vocab, epsilon=p["epsilon"])
        good, time = (float(mech.output_distribution(vocab.index(w))[vocab.index(w)])
                      for w in ("good", "time"))
        assert p["mean_n_w"] == pytest.approx((k * good + time) / (k + 1), rel=1e-9)
        if k > 1 and p["epsilon"] == 1:  # the plain mean is measurably different
            assert abs(p["mean_n_w"] - (good + time) / 2) > 3e-4
        assert p["max_n_w"] == pytest.approx(max(good, time), rel=1e-12)


def test_calibrate_reports_what_never_reaches_the_mechanism(capsys, tmp_path):
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"body": "good time, mail bob@example.com or call 42"}) + "\n")
    code, out, err = run(capsys, "calibrate", data, "--text-field", "body", "-m", "santext",
                         "--max-nw", "0.5", "--vocabulary-size", "1000", "--grid", "1",
                         "--refine", "0", "--seed", "0")
    assert code in (0, 3), err
    first = out.splitlines()[:3]
    assert first[0].startswith("measured on ") and "1 documents" in first[0]
    assert "weighted by count" in first[0]
    assert "identifiers masked 1" in first[1] and "numbers masked 1" in first[1]
    assert "email 1" in first[2]


def test_calibrate_vocabulary_path_is_todays(capsys):
    args = ["-m", "diffractor", "--max-nw", "0.3", "--min-sw", "5", "--words", "12",
            "--vocabulary-size", "1000", "--grid", "0.3,1,3", "--seed", "4", "--json"]
    code, out, err = run(capsys, "calibrate", *args)
    assert code == 0, err
    got = json.loads(out)
    assert got.pop("measured_on") == {"source": "vocabulary sample", "vocabulary_words": 961}
    vocab = load_default(1000)
    want = calibrate(lambda e: registry.create("diffractor", vocab, epsilon=e), max_n_w=0.3,
                     min_s_w=5, words=12, grid=[0.3, 1, 3], rng=_random.generator(4)).to_dict()
    assert {k: got[k] for k in want} == json.loads(json.dumps(want))
    assert "weights" not in got and all("share_failing" not in p for p in got["points"])


@pytest.mark.parametrize("content, args, message", [
    ('{"body": "good"}\n', ["--text-field", "text"], "t.jsonl:1: no field 'text'"),
    ('{"text": 3}\n', [], "t.jsonl:1: field 'text' is a number"),
    ('{"text": "42 zzqxv"}\n', [], "no word the mechanism would privatise"),
])
def test_calibrate_input_errors(capsys, tmp_path, content, args, message):
    data = tmp_path / "t.jsonl"
    data.write_text(content)
    code, out, err = run(capsys, "calibrate", data, *args, "-m", "santext",
                         "--vocabulary-size", "1000", "--grid", "1")
    assert code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("textdp: error:") and message in last


def test_calibrate_refuses_the_input_as_plot(capsys, tmp_path):
    data = tmp_path / "t.png"
    data.write_bytes(b"\x89PNG")
    code, out, err = run(capsys, "calibrate", data, "--format", "txt", "--plot", data,
                         "--grid", "1")
    assert code == 2 and "t.png" in err and err.count("\n") == 1
    assert data.read_bytes() == b"\x89PNG"


# --- evaluate ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tickets(tmp_path_factory):
    from textdp.datasets.tickets import generate_tickets

    path = tmp_path_factory.mktemp("data") / "tickets.jsonl"
    rows = generate_tickets(60, seed=3)
    path.write_text("".join(json.dumps({"body": t.text, "meta": {"issue": t.issue}}) + "\n"
                            for t in rows))
    return path, rows


@pytest.fixture(scope="module")
def evaluated(tickets, tmp_path_factory):
    path, _ = tickets
    out = tmp_path_factory.mktemp("eval") / "run"
    code = main(["evaluate", str(path), "--text-field", "body", "--label-field", "meta.issue",
                 "-m", "santext", "-e", "1,20", "-o", str(out), "--docs", "50", "--words", "15",
                 "--draws", "20", "--similarity-docs", "5", "--no-efficiency",
                 "--vocabulary-size", "2000", "--seed", "0"])
    assert code == 0
    return out


def test_evaluate_on_the_users_data(evaluated):
    results = json.loads((evaluated / "results.json").read_text())
    data = results["data"]
    assert data["documents"] == 50 and data["documents_read"] == 60
    assert data["label_field"] == "meta.issue" and sum(data["label_counts"].values()) == 50
    assert results["config"]["input"].endswith("tickets.jsonl")
    assert results["tasks"]["label"]["chance_accuracy"] > 0
    words = data["words"]["santext"]
    assert words["not_privatized"]["entities_masked"] > 0  # the entity stage ran
    assert words["selection"]["measured"] == 15
    rows = results["results"]
    assert [(r["mechanism"], r["epsilon"]) for r in rows] == [("santext", 1.0), ("santext", 20.0)]
    for r in rows:
        label = r["utility"]["label"]
        assert set(label) >= {"clean", "train_private", "test_private", "both_private",
                              "chance_accuracy"}
        assert r["deniability"]["weighted"] is True
        assert len(r["deniability"]["per_word"]["weight"]) == 15
        assert r["efficiency"]["words_per_second"] > 0
        assert r["efficiency"]["documents"] == 50
        assert 0 <= r["reidentification"]["rate"] <= 1 and "similarity" in r
    # more ε, more words unchanged
    assert rows[1]["deniability"]["n_w"]["mean"] > rows[0]["deniability"]["n_w"]["mean"]
    md = (evaluated / "report.md").read_text()
    assert "your data" in md and "### your labels" in md and "Speed on your data" in md


def test_evaluate_writes_no_document_of_the_data(evaluated, tickets):
    _, rows = tickets
    written = "".join(p.read_text() for p in evaluated.iterdir() if p.suffix in (".md", ".json",
                                                                               ".html"))
    for t in rows:
        assert t.text not in written and t.values["email"] not in written


@pytest.mark.parametrize("make, args, message", [
    (lambda p: p.write_text('{"body": "a b"}\n{"body": "c"}\n'),
     ["--text-field", "body", "--label-field", "issue"], "d.jsonl:1: no field 'issue'"),
    (lambda p: p.write_text('{"text": "a b", "y": 1}\n{"text": "c", "y": 1}\n'),
     ["--label-field", "y"], "holds one class only"),
    (lambda p: p.write_text('{"text": "a b", "y": 1}\n'), ["--tasks", "sentiment"],
     "built-in sets only"),
    (lambda p: p.write_text('{"text": "a b", "y": 1}\n'), ["--tasks", "label"],
     "needs a label field"),
])
def test_evaluate_input_errors(capsys, tmp_path, make, args, message):
    data = tmp_path / "d.jsonl"
    make(data)
    code = main(["evaluate", str(data), *args, "-m", "mvc", "-e", "1", "-o", str(tmp_path / "o"),
                 "--vocabulary-size", "1000"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and err.startswith("textdp: error:")
    assert not (tmp_path / "o").exists()


def test_evaluate_label_field_needs_input(capsys, tmp_path):
    code = main(["evaluate", "--label-field", "y", "-m", "mvc", "-e", "1", "-o",
                 str(tmp_path / "o")])
    _, err = capsys.readouterr()
    assert code == 2 and "--label-field needs INPUT" in err


def test_evaluate_refuses_an_input_it_would_overwrite(capsys, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    data = out / "report.md"
    data.write_text("a document\nanother one\n")
    code = main(["evaluate", str(data), "--format", "txt", "-m", "mvc", "-e", "1", "-o",
                 str(out), "--vocabulary-size", "1000"])
    _, err = capsys.readouterr()
    assert code == 2 and "report.md" in err and err.count("\n") == 1
    assert data.read_text() == "a document\nanother one\n"
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]
