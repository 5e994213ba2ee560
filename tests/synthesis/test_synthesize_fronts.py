"""The fronts of ``synthesize`` beyond the library call: pandas and datasets (the same release as
``textdp.synthesize`` on the rows that are documents, labels given back as stored), and the
command line's integer label and person fields, ``--device`` and its progress lines on a
standard error that is not a terminal."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("dp_accounting")
pytest.importorskip("transformers")

import textdp  # noqa: E402
from textdp.cli import main  # noqa: E402

FAST = {"max_new_tokens": 6, "entities": "none", "rounds": 2, "seed": 5}


def _encoder(texts):
    out = np.zeros((len(texts), 16))
    for i, t in enumerate(texts):
        for w in t.split():
            out[i, sum(map(ord, w)) % 16] += 1.0
    return out


def _rows(count=60):
    return ([f"w{i % 7} w{i % 5} ticket {i % 3}" for i in range(count)],
            [i % 2 for i in range(count)], [i % 20 for i in range(count)])


def test_the_pandas_front_is_the_library_release_on_its_documents(tiny_lm):
    pd = pytest.importorskip("pandas")
    import textdp.pandas  # noqa: F401  (registers the accessor)

    texts, labels, units = _rows()
    frame = pd.DataFrame({"body": texts + [None], "issue": labels + [1],
                          "who": units + [3]})
    out = frame.textdp.synthesize("body", "issue", "who", epsilon=8.0, n=10, model=tiny_lm,
                                  encoder=_encoder, **FAST)
    same = textdp.synthesize(texts, labels=labels, units=units, epsilon=8.0, n=10,
                             model=tiny_lm, encoder=_encoder, **FAST)
    assert out["body"].tolist() == same.texts
    assert out["issue"].tolist() == [int(x) for x in same.labels]  # integers stay integers
    report = out.attrs["textdp_report"]
    assert report["engine"] == "pandas" and report["pandas"]["documents"] == 60
    assert report["accounting"]["unit"] == "person" and report["accounting"]["units"] == 20
    with pytest.raises(KeyError, match="no such column"):
        frame.textdp.synthesize("text", epsilon=8.0, n=10)


def test_the_datasets_front_keeps_a_class_label(tiny_lm):
    datasets = pytest.importorskip("datasets")
    from textdp.integrations.datasets import synthesize

    texts, labels, _ = _rows()
    ds = datasets.Dataset.from_dict(
        {"text": texts, "label": labels},
        features=datasets.Features({"text": datasets.Value("string"),
                                    "label": datasets.ClassLabel(names=["neg", "pos"])}))
    out, report = synthesize(ds, "text", "label", epsilon=8.0, n=8, model=tiny_lm,
                             encoder=_encoder, **FAST)
    same = textdp.synthesize(texts, labels=labels, epsilon=8.0, n=8, model=tiny_lm,
                             encoder=_encoder, **FAST)
    assert out["text"] == same.texts and out["label"] == [int(x) for x in same.labels]
    assert out.features["label"] == ds.features["label"]
    assert report["engine"] == "datasets" and report["kind"] == "synthesis"


@pytest.fixture(scope="module")
def tiny_model_dir(tiny_lm, tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-model-fronts")
    tiny_lm.model.save_pretrained(path)
    tiny_lm.tokenizer.save_pretrained(path)
    return path


def test_cli_reads_integer_labels_and_persons_and_prints_a_line_per_round(
        tmp_path, capsys, tiny_model_dir):
    pytest.importorskip("sentence_transformers")
    texts, labels, units = _rows()
    data, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps({"text": t, "issue": y, "customer": u}) + "\n"
                            for t, y, u in zip(texts, labels, units, strict=True)))
    assert main([str(a) for a in [
        "synthesize", data, "--label-field", "issue", "--unit-field", "customer",
        "--epsilon", "8", "-n", "6", "--rounds", "2", "--max-new-tokens", "4", "--seed", "1",
        "--entities", "none", "--device", "cpu", "--model", tiny_model_dir, "-o", out]]) == 0
    err = capsys.readouterr().err  # captured: not a terminal, so lines rather than a bar
    for stage in ("initial population", "round 1/2", "round 2/2"):
        assert f"textdp: {stage}: generating" in err
        assert f"textdp: {stage}: " in err and "generated in" in err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6 and {r["issue"] for r in rows} <= {"0", "1"}


def test_cli_refuses_an_unknown_device(tmp_path, capsys):
    data, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in _rows()[0]))
    assert main(["synthesize", str(data), "--epsilon", "8", "-n", "4", "--device", "gpu",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "device must be auto, cpu or cuda" in err[0]
    assert not out.exists()


def test_audit_synthesize_end_to_end(tmp_path, capsys, tiny_model_dir):
    pytest.importorskip("sentence_transformers")
    texts, labels, _ = _rows(80)
    data, out = tmp_path / "in.jsonl", tmp_path / "audit"
    data.write_text("".join(json.dumps({"text": t, "issue": y}) + "\n"
                            for t, y in zip(texts, labels, strict=True)))
    assert main([str(a) for a in [
        "audit-synthesize", data, "--label-field", "issue", "--epsilon", "8", "-n", "6",
        "--rounds", "1", "--max-new-tokens", "4", "--candidates", "200", "--seed", "2",
        "--entities", "none", "--device", "cpu", "--model", tiny_model_dir, "--out", out]]) == 0
    captured = capsys.readouterr()
    assert "| canary copies |" in captured.out and "empirical ε lower bound" in captured.out
    assert "against claimed ε" in captured.err
    saved = json.loads((out / "audit.json").read_text())
    assert [c["copies"] for c in saved["canaries"]] == [1, 10, 100]
    assert saved["membership"]["members"] + saved["membership"]["non_members"] == 80
    assert saved["epsilon_claimed"] <= 8.0 and (out / "audit.md").is_file()
