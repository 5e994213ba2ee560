"""``textdp privatize -m dp_prompt`` in the same pipeline as every mechanism (issue 38, Deliver 4):
identifiers and entities masked before the model (on by default, ``--entities`` accepted), a
progress line per batch on stderr when it is not a terminal, and ``--resume`` — a stopped job
continues from its staged documents, never generating one again, its output committed whole and
its ledger release recorded once.

The tiny test model (tests/conftest.py), saved to a directory and given with ``--model``.
"""

from __future__ import annotations

import json

import pytest

from textdp.cli import main

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def model_dir(tiny_lm, tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny-lm")
    tiny_lm.model.save_pretrained(d)
    tiny_lm.tokenizer.save_pretrained(d)
    return d


def _args(model_dir, src, out, *extra):
    return ["privatize", str(src), "-o", str(out), "-m", "dp_prompt", "--temperature", "8",
            "--clip", "-30", "30", "--max-new-tokens", "4", "--model", str(model_dir),
            "--batch-size", "1", *extra]


def test_masking_is_on_by_default_and_entities_are_accepted(model_dir, tmp_path, capsys,
                                                            monkeypatch):
    from textdp.lm import LanguageModel

    seen = []
    real = LanguageModel.prompt_ids
    monkeypatch.setattr(LanguageModel, "prompt_ids",
                        lambda self, docs, t: (seen.extend(docs), real(self, docs, t))[1])
    src = tmp_path / "in.txt"
    src.write_text("w1 w2@example.com\nw3 at 1493 Victoria Rd. now\nw4\n", encoding="utf-8")
    out, report = tmp_path / "out.txt", tmp_path / "r.json"
    assert main(_args(model_dir, src, out, "--seed", "1", "--report", str(report),
                      "--entities", "address")) == 0
    assert seen == ["w1 [EMAIL]", "w3 at [ADDRESS]. now", "w4"]
    r = json.loads(report.read_text(encoding="utf-8"))
    assert r["identifiers"]["masked"] == 1 and r["entities"]["masked"] == 1
    assert r["placeholders"]["masked_before_the_model"] == 2
    assert r["performance"]["documents_per_second"] > 0
    err = capsys.readouterr().err
    # A progress line per batch (4 documents a batch at --batch-size 1), though not a terminal.
    assert "dp_prompt: 3 documents (" in err and "tokens/s" in err
    seen.clear()
    assert main(_args(model_dir, src, out, "--no-identifiers", "--entities", "none")) == 0
    assert seen[0] == "w1 w2@example.com"


def test_a_stopped_job_resumes_from_its_staged_documents(model_dir, tmp_path, capsys,
                                                         monkeypatch):
    from textdp.lm import Paraphraser
    from textdp.lm.staging import stage_path

    src = tmp_path / "in.txt"
    src.write_text("".join(f"w{i} w{i + 1}\n" for i in range(10)), encoding="utf-8")
    out, book = tmp_path / "out.txt", tmp_path / "ledger.jsonl"
    args = _args(model_dir, src, out, "--seed", "5", "--ledger", str(book), "--resume")
    real_run, real_generate = Paraphraser.run, Paraphraser._generate
    calls = []

    def stop_at_the_second_batch(self, texts, start=0, **kw):
        calls.append(start)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_run(self, texts, start, **kw)

    monkeypatch.setattr(Paraphraser, "run", stop_at_the_second_batch)
    assert main(args) == 130
    assert not out.exists()
    staged = stage_path(out).read_text(encoding="utf-8").splitlines()
    assert len(staged) == 1 + 4  # the header, then the first batch's 4 documents
    lines = [json.loads(x) for x in book.read_text(encoding="utf-8").splitlines()]
    assert [x["type"] for x in lines] == ["pending"]  # staged output counts: not voided
    release = lines[0]["id"]

    generated = []
    monkeypatch.setattr(Paraphraser, "run", real_run)
    monkeypatch.setattr(Paraphraser, "_generate", lambda self, t, p, g: (
        generated.extend(p.tolist()), real_generate(self, t, p, g))[1])
    capsys.readouterr()
    assert main(args) == 0
    assert generated == list(range(4, 10))  # the staged documents are not generated again
    assert "resuming: 4 documents staged" in capsys.readouterr().err
    assert not stage_path(out).exists()
    lines = [json.loads(x) for x in book.read_text(encoding="utf-8").splitlines()]
    assert [(x["type"], x.get("release") or x["id"]) for x in lines] == [
        ("pending", release), ("complete", release)]  # one release, recorded once

    # Seeded: the resumed output is the uninterrupted run's, line for line.
    whole = tmp_path / "whole.txt"
    assert main(_args(model_dir, src, whole, "--seed", "5")) == 0
    assert out.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")


def test_resume_keeps_unseeded_staged_text_and_refuses_another_job(model_dir, tmp_path,
                                                                   capsys):
    from textdp.lm.staging import stage_path

    src = tmp_path / "in.txt"
    src.write_text("w1 w2\nw3\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    args = _args(model_dir, src, out, "--resume")
    assert main(args) == 0 and not stage_path(out).exists()
    # A stage left by a stopped unseeded run: its documents are kept as they are.
    from textdp.lm.staging import Stage

    job = _stage_of(model_dir, src, out, args)
    stage = Stage(stage_path(out), job)
    stage.start(None)
    stage.add([{"i": 0, "text": "kept as staged", "tokens": 3, "eos": False}])
    stage.close()
    assert main(args) == 0
    assert out.read_text(encoding="utf-8").splitlines()[0] == "kept as staged"
    # Another job's stage (here: another seed) is refused in one line, nothing written.
    stage = Stage(stage_path(out), job)
    stage.start(None)
    stage.close()
    capsys.readouterr()
    assert main([*args, "--seed", "3"]) == 2
    err = capsys.readouterr().err
    assert "staged by another job" in err and "Traceback" not in err


def _stage_of(model_dir, src, out, args):
    """The stage key the command computes for ``args`` (read from a stopped run's header)."""
    from textdp.lm import Paraphraser
    from textdp.lm.staging import stage_path

    real = Paraphraser.run

    def stop(self, texts, start=0, **kw):
        Paraphraser.run = real
        raise KeyboardInterrupt

    Paraphraser.run = stop
    try:
        assert main(args) == 130
    finally:
        Paraphraser.run = real
    head = json.loads(stage_path(out).read_text(encoding="utf-8").splitlines()[0])
    stage_path(out).unlink()
    return head["key"]
