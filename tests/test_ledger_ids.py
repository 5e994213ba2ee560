"""The ledger keys composition on the measurement's stable ids (issue 23, item 4), records what a
person needs to find a release again, and is the one guarded release every front uses."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import textdp
from textdp.cli import main
from textdp.ledger import Ledger, LedgerRefused, _digest, _encode, iter_inputs
from textdp.mechanisms.word.mvc import MVC
from textdp.vocab import Vocabulary

TEXTS = ["the food was great but the waiter was rude", "bad service here"]


@pytest.fixture
def vocab() -> Vocabulary:
    words = sorted({w for t in TEXTS for w in t.split()} | {f"x{i}" for i in range(30)})
    rng = np.random.default_rng(0)
    return Vocabulary(words, rng.standard_normal((len(words), 6)), name="toy")


def test_rewording_the_metric_does_not_split_the_budget(tmp_path, vocab, monkeypatch):
    """Two releases in the same metric whose prose differs (a reworded sentence in a later
    textdp) add up in one group; keyed on the prose they were two groups beside each other."""
    path = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", 3.0, vocabulary=vocab, seed=1, ledger=Ledger(path))
    monkeypatch.setattr(MVC, "metric", property(lambda self: "‖φ(w) − φ(w′)‖₂, reworded"))
    result = textdp.privatize(TEXTS, "mvc", 4.0, vocabulary=vocab, seed=2, ledger=Ledger(path))
    groups = result.report["ledger"]["cumulative"]["groups"]
    assert [(g["count"], g["epsilon"]) for g in groups] == [(2, 7.0)]
    assert groups[0]["metric_id"] == f"word-euclidean:{vocab.fingerprint}"
    with pytest.raises(LedgerRefused, match="cumulative ε = 8"):
        textdp.privatize(TEXTS, "mvc", 1.0, vocabulary=vocab, seed=3,
                         ledger=Ledger(path, policy="refuse", budget=7.5))


def test_the_same_prose_in_other_metrics_stays_apart(tmp_path, vocab):
    """CusText and CusText+ state their metric in the same words and the same vocabulary, but
    their output sets differ (CusText+ leaves the stop words out): other metrics, not summed."""
    path = tmp_path / "ledger.jsonl"
    for name in ("custext", "custext_plus"):
        textdp.privatize(TEXTS, name, 2.0, vocabulary=vocab, seed=1, k=4, cache=False,
                         ledger=Ledger(path))
    [(_, entries, composition)] = list(iter_inputs(Ledger(path).read()))
    assert entries[0]["guarantee"]["metric"] == entries[1]["guarantee"]["metric"]
    assert len(composition.groups) == 2


def test_new_lines_record_the_measurement_and_where_the_release_is(tmp_path, vocab):
    path = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", 3.0, vocabulary=vocab, ledger=Ledger(path),
                     input_name="notes.txt")
    [entry] = Ledger(path).read().entries
    assert entry["schema"] == "textdp.ledger/2"
    assert entry["measurement"] == {"name": "mvc", "notion": "metric-dp",
                                    "input_metric": f"word-euclidean:{vocab.fingerprint}"}
    assert entry["input"]["name"] == "notes.txt" and entry["input"]["output"] is None
    assert entry["input"]["records"] == 2


def _line(entry: dict) -> bytes:
    entry = {k: v for k, v in entry.items() if not k.startswith("_") and k != "id"}
    return _encode({"schema": entry["schema"], "id": _digest(entry), **entry}) + b"\n"


def test_a_line_with_a_bad_measurement_is_invalid_and_refuse_fails_closed(tmp_path, vocab):
    path = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", 3.0, vocabulary=vocab, ledger=Ledger(path))
    [entry] = Ledger(path).read().entries
    for bad in ({**entry, "measurement": "metric-dp"},
                {**entry, "measurement": {"notion": "metric-dp", "input_metric": ""}},
                {**entry, "input": {**entry["input"], "name": 3}}):
        broken = tmp_path / "broken.jsonl"
        broken.write_bytes(_line(bad))
        contents = Ledger(broken).read()
        assert len(contents.invalid) == 1 and not contents.entries
        with pytest.raises(LedgerRefused, match="cannot be validated"):
            textdp.privatize(TEXTS, "mvc", 1.0, vocabulary=vocab,
                             ledger=Ledger(broken, policy="refuse", budget=100))


def test_the_runner_without_a_ledger_runs_unguarded(vocab):
    from textdp.runner import Call, Outcome, Texts, run_release
    from textdp.spec import release_spec

    seen = []

    class Unreadable(Texts):
        def fingerprint(self):  # an unguarded release reads its input once: no first pass
            raise AssertionError("fingerprinted without a ledger")

    engine = Call(lambda spec, source, m: seen.append(m) or Outcome("out", None))
    spec = release_spec("mvc", 1.0, vocabulary=vocab, entities="none")
    assert run_release(spec, Unreadable(TEXTS), engine, entered=seen.append).output == "out"
    assert seen == [spec.mechanism_object()]  # measured, never entered


def test_ledger_show_prints_the_input_and_the_output(capsys, tmp_path):
    corpus = tmp_path / "in.txt"
    corpus.write_text("The food was great.\nBad service here.\n", encoding="utf-8")
    path, out = tmp_path / "ledger.jsonl", tmp_path / "out.txt"
    assert main(["privatize", str(corpus), "--epsilon", "8", "--ledger", str(path),
                 "-o", str(out)]) == 0
    capsys.readouterr()
    [entry] = Ledger(path).read().entries
    assert entry["input"]["name"] == str(corpus) and entry["input"]["output"] == str(out)
    assert main(["ledger", "show", str(path)]) == 0
    text = capsys.readouterr().out
    assert f"input {corpus}, 2 record(s) → output {out}" in text
    assert main(["ledger", "show", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"][0]["names"] == [str(corpus)]
    assert doc["inputs"][0]["cumulative"]["groups"][0]["metric_id"].startswith("word-euclidean:")


def test_pandas_records_the_column(tmp_path, vocab):
    pd = pytest.importorskip("pandas")
    import textdp.pandas  # noqa: F401  (registers the accessor)

    path = tmp_path / "ledger.jsonl"
    series = pd.Series(TEXTS, name="review")
    series.textdp.privatize("mvc", 2.0, vocabulary=vocab, ledger=str(path))
    [entry] = Ledger(path).read().entries
    assert entry["input"]["name"] == "DataFrame column 'review'"


SRC = Path(textdp.__file__).parent


def test_only_the_ledger_writes_ledger_lines():
    """One guarded release: every front goes through ``Ledger.release`` (from
    :func:`textdp.runner.guard`); no other module builds a ``Release`` or a ledger line."""
    private = {"Release", "_entry", "_append", "_encode", "_close_with"}
    offenders = []
    for path in SRC.rglob("*.py"):
        if path in (SRC / "ledger.py", SRC / "ledger_lines.py"):  # the ledger, split in two
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("textdp.ledger",
                                                                    "textdp.ledger_lines"):
                offenders += [f"{path.name}: imports {a.name}" for a in node.names
                              if a.name in private]
    assert offenders == []


@pytest.mark.parametrize("rule", ["uniform", "position"])
def test_an_allocated_release_records_its_allocation_measurement(tmp_path, vocab, rule):
    from textdp.allocation import Allocation, Allocator

    path = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", vocabulary=vocab, allocation=rule, epsilon_document=6.0,
                     epsilon_ceiling=2.5, ledger=Ledger(path))
    [entry] = Ledger(path).read().entries
    measured = Allocator(Allocation(rule, 6.0, None, 2.5), MVC(vocab, epsilon=2.5)).measurement
    assert entry["guarantee"]["epsilon"] == measured.privacy_map(1.0).epsilon == 2.5
    assert entry["measurement"]["input_metric"] == measured.input_metric


def test_a_later_release_names_where_the_earlier_one_came_from(tmp_path, vocab):
    path = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", 3.0, vocabulary=vocab, ledger=Ledger(path),
                     input_name="notes.txt")
    again = textdp.privatize(TEXTS, "mvc", 3.0, vocabulary=vocab, ledger=Ledger(path))
    [earlier] = again.report["ledger"]["earlier"]
    assert earlier["input_name"] == "notes.txt" and earlier["output"] is None
    assert any("from notes.txt" in w for w in again.report["warnings"])


def test_datasets_records_the_column(tmp_path, vocab):
    datasets = pytest.importorskip("datasets")
    from textdp.integrations.datasets import privatize

    path = tmp_path / "ledger.jsonl"
    ds = datasets.Dataset.from_dict({"review": TEXTS})
    privatize(ds, "review", "mvc", 2.0, vocabulary=vocab, ledger=str(path))
    [entry] = Ledger(path).read().entries
    assert entry["input"]["name"] == "dataset column 'review'"
