"""``textdp synthesize``: bad input gets one line and exit 2 with nothing written; one run end to
end with the real MiniLM encoder and the tiny test model saved to a directory."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("dp_accounting")

from textdp.cli import main  # noqa: E402

NAMES = ["Maria Garcia", "John Smith", "Aiko Tanaka", "Omar Haddad", "Lena Fischer",
         "Carlos Ruiz", "Grace Kim", "Peter Novak", "Sara Rossi", "Tom Brown"]


def _tickets(path, count=60, labels=("billing", "delivery")):
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            name = NAMES[i % len(NAMES)]
            label = labels[i % len(labels)]
            f.write(json.dumps({"text": f"Hello, this is {name}. My {label} issue number {i} "
                                        f"is still open, please help.",
                                "issue": label, "customer": name}) + "\n")
    return path


def _fails(capsys, argv, *unwritten):
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("textdp: error: "), err
    for path in unwritten:
        assert not path.exists()
    return err[0]


@pytest.mark.parametrize("case,expected", [
    ("empty", "empty file"),
    ("no records", "no documents"),
    ("one document label", "label 'refund' has only one document"),
    ("delta", "1/n"),
    ("too few", "too few for the asked ε"),
    ("txt labels", "holds no labels"),
    ("description form", "must be LABEL=TEXT"),
    ("description label", "'refund', which no document has"),
    ("variation prompt", "must hold {document}"),
    ("finetune variation", "Private Evolution's"),
    ("variation temperature", "temperature must be > 0"),
])
def test_bad_input_is_one_line_and_exit_2_with_nothing_written(tmp_path, capsys, case,
                                                               expected):
    data = tmp_path / "in.jsonl"
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    args = ["synthesize", data, "--label-field", "issue", "--epsilon", "4", "-n", "10", "-o",
            out, "--report", report]
    if case == "empty":
        data.write_bytes(b"")
    elif case == "no records":
        data.write_text("\n")
        args = ["synthesize", data, "--epsilon", "4", "-n", "10", "-o", out]
    else:
        _tickets(data)
    if case == "one document label":
        with open(data, "a") as f:
            f.write(json.dumps({"text": "a refund please", "issue": "refund"}) + "\n")
    elif case == "delta":
        args += ["--delta", "0.05"]
    elif case == "too few":
        args[args.index("4")] = "0.05"
    elif case == "txt labels":
        args[args.index(out)] = out = tmp_path / "out.txt"
    elif case == "description form":
        args += ["--label-description", "billing"]
    elif case == "description label":
        args += ["--label-description", "refund=money back"]
    elif case == "variation prompt":
        args += ["--variation-prompt", "Rewrite: {label}"]
    elif case == "finetune variation":
        args += ["--method", "finetune", "--variation-temperature", "0.7"]
    elif case == "variation temperature":
        args += ["--variation-temperature", "0"]
    assert expected in _fails(capsys, args, out, report)


def test_a_budget_the_ledger_refuses_writes_nothing_and_records_nothing(tmp_path, capsys):
    from textdp.ledger import Ledger
    from textdp.runner import Outcome, run_release
    from textdp.synthesis import TextSource
    from textdp.synthesis.accountant import plan

    data = _tickets(tmp_path / "in.jsonl")
    texts = [json.loads(line)["text"] for line in data.read_text().splitlines()]
    book = tmp_path / "book.jsonl"

    class Spec:
        seed = None

        def measure(self, source):
            return plan(epsilon=3.0, delta=1e-3, rounds=3, units=60)

    class Engine:
        def run(self, spec, source, measurement):
            return Outcome(None, {"warnings": []})

    run_release(Spec(), TextSource.build(texts), Engine(), ledger=Ledger(book))
    before = book.read_bytes()
    out = tmp_path / "out.jsonl"
    message = _fails(capsys, ["synthesize", data, "--label-field", "issue", "--epsilon", "3",
                              "--delta", "1e-3", "-n", "10", "-o", out, "--ledger", book,
                              "--ledger-policy", "refuse", "--budget", "4"], out)
    assert "refused" in message and "dataset level" in message
    assert book.read_bytes() == before


@pytest.fixture(scope="module")
def tiny_model_dir(tiny_lm, tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-model")
    tiny_lm.model.save_pretrained(path)
    tiny_lm.tokenizer.save_pretrained(path)
    return path


def test_end_to_end_with_minilm_the_tiny_model_persons_labels_and_a_ledger(
        tmp_path, capsys, tiny_model_dir):
    pytest.importorskip("sentence_transformers")
    data = _tickets(tmp_path / "in.jsonl")
    out, report, book = tmp_path / "out.jsonl", tmp_path / "report.json", tmp_path / "book.jsonl"
    assert main([str(a) for a in [
        "synthesize", data, "--label-field", "issue", "--unit-field", "customer",
        "--epsilon", "8", "-n", "8", "--rounds", "2", "--max-new-tokens", "6", "--seed", "3",
        "--model", tiny_model_dir, "-o", out, "--report", report, "--ledger", book,
        "--document-kind", "customer support ticket", "--label-description",
        "billing=I was charged twice.", "--variation-prompt", "Again ({label}): {document}",
        "--variation-temperature", "0.7"]]) == 0
    err = capsys.readouterr().err
    assert "8 synthetic documents written" in err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 8 and {r["issue"] for r in rows} <= {"billing", "delivery"}
    assert set(rows[0]) == {"text", "issue"}
    r = json.loads(report.read_text())
    assert r["kind"] == "synthesis" and r["inputs"]["encoder"]["name"] == "sbert"
    assert r["inputs"]["prompts"]["label_descriptions"] == {"billing": "I was charged twice."}
    assert r["inputs"]["prompts"]["variation"] == "Again ({label}): {document}"
    assert r["inputs"]["generation"]["variation_temperature"] == 0.7
    assert r["accounting"]["unit"] == "person" and r["accounting"]["units"] == 10
    assert r["counts"]["masked_in_private_input"].get("person", 0) >= 50  # names masked
    assert r["ledger"]["release_id"]
    lines = [json.loads(line) for line in book.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["pending", "complete"]
    assert lines[0]["measurement"]["input_metric"] == "dataset-add-remove:person"
    assert lines[0]["input"]["name"] == str(data)
