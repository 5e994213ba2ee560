"""``synthesize(method="finetune")`` and ``textdp synthesize --method finetune`` on the tiny test
model: the report and its accounting, persons as units, masking before training, the shared
model left untouched, a seeded run reproduced, and the refusals (one line, exit 2)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("dp_accounting")
torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
pytest.importorskip("peft")

import textdp  # noqa: E402
from textdp.cli import main  # noqa: E402
from textdp.synthesis import DataRefused  # noqa: E402
from textdp.synthesis import finetune as ft  # noqa: E402

TEXTS = [f"w{i % 7} w{i % 5} w{i % 3} ticket" for i in range(40)]
LABELS = ["billing" if i % 2 else "delivery" for i in range(40)]
UNITS = [f"customer{i % 10}" for i in range(40)]  # ten persons, four documents each
# q = 5 / 10 persons = 0.5, T = ⌈1 / 0.5⌉ = 2 steps.
QUICK = {"epochs": 1.0, "train_batch": 5, "min_signal": 0.0}


def _run(tiny_lm, **kw):
    options = {"labels": LABELS, "units": UNITS, "epsilon": 8.0, "n": 6, "seed": 7,
               "model": tiny_lm, "entities": "none", "max_new_tokens": 5, "method": "finetune",
               "finetune": QUICK, **kw}
    return textdp.synthesize(options.pop("texts", TEXTS), **options)


@pytest.fixture(scope="module")
def first(tiny_lm):
    before = {k: v.clone() for k, v in tiny_lm.model.state_dict().items()}
    result = _run(tiny_lm)
    return result, before


def test_the_report_states_the_dpsgd_guarantee_and_its_accounting(first):
    r = first[0].report
    assert r["kind"] == "synthesis" and r["mechanism"]["name"] == "dp_finetune"
    a = r["accounting"]
    assert (a["unit"], a["units"], a["steps"], a["sampling_probability"]) == ("person", 10, 2,
                                                                              0.5)
    assert a["epsilon_accountant"] <= a["epsilon_reported"] == r["guarantee"]["epsilon"] <= 8
    assert a["events"][0]["kind"] == "poisson_gaussian"
    assert r["guarantee"]["metric"].startswith("datasets that differ by adding or removing one "
                                               "person")
    assert r["counts"]["synthetic_by_label"] == {"billing": 3, "delivery": 3}
    from textdp.privacy.report import summary_line

    assert summary_line(r).startswith("dp_finetune: (ε, δ)-DP")


def test_the_output_has_n_documents_with_equal_label_quotas(first):
    result = first[0]
    assert len(result.texts) == 6 and result.labels == ["billing", "delivery"] * 3
    assert all(isinstance(t, str) for t in result.texts)


def test_the_shared_model_is_left_untouched(first, tiny_lm):
    """Training happens on a copy: the process's model (used by DP-Prompt and Private
    Evolution too) keeps its weights and gains no adapter."""
    before = first[1]
    after = tiny_lm.model.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_a_seeded_run_is_reproduced(first, tiny_lm):
    again = _run(tiny_lm)
    assert (again.texts, again.labels) == (first[0].texts, first[0].labels)


def test_private_text_is_masked_before_training(tiny_lm, monkeypatch):
    texts = [f"write to ann{i}@example.com about w{i % 4}" for i in range(20)]
    seen: list[str] = []
    original = ft._examples

    def spy(lm, spec, masked, labels):
        seen.extend(masked)
        return original(lm, spec, masked, labels)

    monkeypatch.setattr(ft, "_examples", spy)
    r = _run(tiny_lm, texts=texts, labels=None, units=None, n=2,
             finetune={"epochs": 1.0, "train_batch": 20, "min_signal": 0.0})
    assert len(seen) == 20 and not any("@" in t for t in seen)
    assert all("[EMAIL]" in t for t in seen)
    assert r.report["counts"]["masked_in_private_input"]["email"] == 20
    assert r.labels is None


@pytest.mark.parametrize("kw,match", [
    ({"texts": [], "labels": None, "units": None}, "no documents"),
    ({"labels": LABELS[:-1] + ["refund"], "units": None}, "label 'refund' has only one"),
    ({"delta": 0.2}, "1/n"),
    ({"epsilon": 0.05, "finetune": {"epochs": 1.0, "train_batch": 10}}, "too few"),
])
def test_data_that_cannot_be_released_is_refused_before_training(tiny_lm, kw, match,
                                                                  monkeypatch):
    monkeypatch.setattr(ft, "_adapted", lambda *a: pytest.fail("training started"))
    with pytest.raises(DataRefused, match=match):
        _run(tiny_lm, **kw)


def test_bad_options_name_the_problem(tiny_lm):
    with pytest.raises(ValueError, match="method must be"):
        _run(tiny_lm, method="gan")
    with pytest.raises(ValueError, match="clip"):
        _run(tiny_lm, finetune={"clip": 0})
    with pytest.raises(ValueError, match="for method='finetune'"):
        _run(tiny_lm, method="evolution")


# --- the command line -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_model_dir(tiny_lm, tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-model")
    tiny_lm.model.save_pretrained(path)
    tiny_lm.tokenizer.save_pretrained(path)
    return path


def _tickets(path, count=12):
    names = ["Maria Garcia", "John Smith", "Aiko Tanaka", "Omar Haddad"]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            label = ("billing", "delivery")[i % 2]
            f.write(json.dumps({"text": f"Hello, this is {names[i % 4]}. My {label} issue "
                                        f"number {i} is still open.", "issue": label,
                                "customer": names[i % 4]}) + "\n")
    return path


def test_the_command_writes_labelled_synthetic_documents_and_a_ledger_line(
        tmp_path, capsys, tiny_model_dir):
    data = _tickets(tmp_path / "in.jsonl")
    out, report, book = tmp_path / "out.jsonl", tmp_path / "report.json", tmp_path / "book.jsonl"
    assert main([str(a) for a in [
        "synthesize", data, "--label-field", "issue", "--method", "finetune", "--epsilon", "8",
        "-n", "4", "--epochs", "1", "--train-batch", "12", "--max-new-tokens", "5",
        "--seed", "3", "--device", "cpu", "--model", tiny_model_dir, "-o", out,
        "--report", report, "--ledger", book]]) == 0
    assert "4 synthetic documents written" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["issue"] for r in rows] == ["billing", "delivery"] * 2
    r = json.loads(report.read_text())
    assert r["mechanism"]["name"] == "dp_finetune" and r["accounting"]["units"] == 12
    assert r["counts"]["masked_in_private_input"].get("person", 0) >= 10  # names masked
    lines = [json.loads(line) for line in book.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["pending", "complete"]
    assert lines[0]["accounting"]["events"][0]["kind"] == "poisson_gaussian"


@pytest.mark.parametrize("extra,expected", [
    (["--epsilon", "0.05"], "too few for the asked ε"),
    (["--epsilon", "8", "--method", "gan"], "--method must be"),
    (["--epsilon", "8", "--delta", "0.5"], "1/n"),
])
def test_refusals_are_one_line_and_exit_2_with_nothing_written(tmp_path, capsys, extra,
                                                               expected):
    data = _tickets(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    argv = ["synthesize", str(data), "--label-field", "issue", "--method", "finetune", "-n", "4",
            "-o", str(out), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("textdp: error: ") and expected in err[0], err
    assert not out.exists()
