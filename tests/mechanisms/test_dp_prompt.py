"""DP-Prompt (issue 16, item 1): the law of every token, ε arithmetic, randomness, no network.

The language-model tests use a tiny randomly initialised Llama built from a config (64 tokens,
hidden size 16, one layer) and a word-level tokenizer built in the test: no file from a hub.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from textdp import _random
from textdp.mechanisms.prompt import DPPrompt, clipped_log_probabilities, sample_tokens

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ALPHA = 1e-6


# --- ε arithmetic, both ways ----------------------------------------------------------------
def test_epsilon_per_document_gives_the_temperature():
    m = DPPrompt(epsilon=100.0, max_new_tokens=10, clip_low=0.0, clip_high=5.0)
    assert m.temperature == pytest.approx(1.0)           # T = 2Δn/ε_doc = 2·5·10/100
    assert m.epsilon_per_token >= 10.0 and m.epsilon_per_token == pytest.approx(10.0)
    assert m.epsilon >= 100.0 and m.epsilon == pytest.approx(100.0)


def test_epsilon_per_token_and_temperature_give_epsilon():
    a = DPPrompt(epsilon_per_token=4.0, max_new_tokens=8, clip_low=-1.0, clip_high=1.0)
    assert a.temperature == pytest.approx(1.0) and a.epsilon == pytest.approx(32.0)
    b = DPPrompt(temperature=0.5, max_new_tokens=8, clip_low=-1.0, clip_high=1.0)
    assert b.epsilon_per_token == pytest.approx(8.0) and b.epsilon == pytest.approx(64.0)
    # ε is derived from T and rounded up: never below the exact 2Δn/T.
    c = DPPrompt(temperature=3.0, max_new_tokens=7, clip_low=0.0, clip_high=1.0)
    assert c.epsilon >= 2 * 1.0 * 7 / 3.0
    assert c.privacy_map(2).epsilon >= 2 * c.epsilon and c.privacy_map(0).epsilon == 0.0


@pytest.mark.parametrize("params", [
    {}, {"epsilon": 1.0, "temperature": 1.0}, {"epsilon": -1.0}, {"epsilon": float("nan")},
    {"temperature": 1.0, "clip_low": 2.0, "clip_high": 1.0}, {"temperature": 1.0, "max_new_tokens": 0},
    {"temperature": 1.0, "template": "no field"}, {"epsilon": 1.0, "bogus": 1},
])
def test_bad_parameters_are_refused(params):
    with pytest.raises((TypeError, ValueError)):
        DPPrompt(**params)


def test_guarantee_states_the_notion_and_scope():
    m = DPPrompt(epsilon=50.0, max_new_tokens=5)
    g = m.guarantee.to_dict()
    assert g["notion"].startswith("pure ε-DP per document (local)")
    assert g["epsilon"] == m.epsilon and g["delta"] == 0.0
    assert "whatever the model" in g["assumptions"][0]
    assert "ANY two documents" in g["per_document"] and "EOS" in g["per_document"]


def test_one_step_log_ratio_is_at_most_epsilon_per_token():
    """Any two logit vectors (any two documents' contexts): max_v |ln p_v − ln p'_v| ≤ 2Δ/T."""
    rng = _random.public_generator(3)
    m = DPPrompt(temperature=0.7, max_new_tokens=4, clip_low=-2.0, clip_high=3.0)
    a = rng.normal(0, 5, size=(2000, 50))
    b = rng.normal(0, 5, size=(2000, 50))
    b[:1000, 0], a[:1000, 0] = 100.0, -100.0  # extreme pairs, near the bound
    ratio = np.abs(m.log_probabilities(a) - m.log_probabilities(b)).max()
    assert ratio <= m.epsilon_per_token + 1e-9
    assert ratio > 0.5 * m.epsilon_per_token  # and the bound is not vacuous


def test_sampler_edge_cases():
    assert sample_tokens(np.array([[0.0, 0.0]]), np.array([0.0]), -1, 1, 1.0).tolist() == [0]
    assert sample_tokens(np.array([[0.0, 0.0]]), np.array([1 - 2**-53]), -1, 1, 1.0).tolist() == [1]
    with pytest.raises(ValueError):
        sample_tokens(np.array([[np.nan, 0.0]]), np.array([0.5]), -1, 1, 1.0)
    with pytest.raises(ValueError):
        sample_tokens(np.zeros((2, 3)), np.array([0.5]), -1, 1, 1.0)
    lp = clipped_log_probabilities(np.array([1e300, -np.inf, 0.0]), -1.0, 1.0, 0.5)
    assert np.isfinite(lp).all() and np.exp(lp).sum() == pytest.approx(1.0)


# --- the tiny model (tests/conftest.py) -----------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tiny_lm):
    return tiny_lm


def _first_step_logits(tiny, prompt):
    import torch

    with torch.no_grad():
        return tiny.model(input_ids=torch.tensor([prompt])).logits[0, -1].double().numpy()


def _step_params(logits):
    lo, hi = np.quantile(logits, [0.2, 0.9])
    return {"clip_low": float(lo), "clip_high": float(hi), "max_new_tokens": 1,
            "temperature": float((hi - lo) / 4)}


@pytest.mark.statistical
def test_one_step_law_is_softmax_of_clipped_logits_and_a_wrong_temperature_is_rejected(
        tiny, chisquare_merged):
    """χ² of 100,000 tokens drawn through the generation loop (a batch of 100,000 copies of one
    prompt, left-padded with a shorter one) against softmax(clip(ℓ)/T); the same test on a
    mechanism with T × 1.25 must reject."""
    from textdp.lm import generate_ids

    prompt = [5, 9, 17, 3]
    logits = _first_step_logits(tiny, prompt)
    params = _step_params(logits)
    right = DPPrompt(**params)
    probs = np.exp(right.log_probabilities(logits))
    n = 100_000
    u = _random.seeded_generator(7).random((n, 1))
    prompts = [prompt] * n + [[8]]  # one short prompt forces left padding of all the others
    rows = generate_ids(tiny.model, prompts, right, np.vstack([u, [[0.5]]]), {1}, 0)
    counts = np.bincount([r[0] for r in rows[:n]], minlength=64)
    assert chisquare_merged(counts, probs) > ALPHA
    wrong = DPPrompt(**{**params, "temperature": params["temperature"] * 1.25})
    wrong_counts = np.bincount(wrong.sample(np.broadcast_to(logits, (n, 64)), u[:, 0]),
                               minlength=64)
    assert chisquare_merged(wrong_counts, probs) < ALPHA


def test_padding_and_cache_do_not_change_the_tokens(tiny):
    """A batch (left padding, KV cache) gives each row what it gets alone, for the same draws."""
    from textdp.lm import generate_ids

    m = DPPrompt(temperature=1.0, max_new_tokens=12, clip_low=-30.0, clip_high=30.0)
    prompts = [[5, 9, 17, 3, 22, 40], [8], [11, 12, 13]]
    u = _random.seeded_generator(1).random((3, 12))
    together = generate_ids(tiny.model, prompts, m, u, {1}, 0)
    alone = [generate_ids(tiny.model, [p], m, u[i:i + 1], {1}, 0)[0]
             for i, p in enumerate(prompts)]
    assert together == alone
    assert all(0 < len(r) <= 12 for r in together)


def test_seeded_runs_are_reproducible_and_unseeded_runs_differ(tiny):
    from textdp.lm import Paraphraser

    texts = ["w1 w2 w3", "w7 w8", "w40 w41 w42 w43"]
    kw = {"temperature": 8.0, "max_new_tokens": 10, "clip_low": -30.0, "clip_high": 30.0,
          "template": "{document}"}
    a = Paraphraser(model=tiny, seed=5, batch_size=2, **kw)
    b = Paraphraser(model=tiny, seed=5, batch_size=2, **kw)
    out = a.run(texts)
    assert out == b.run(texts[:2]) + b.run(texts[2:], start=2)  # positions, not batches, count
    runs = {tuple(Paraphraser(model=tiny, batch_size=2, **kw).run(texts)) for _ in range(3)}
    assert len(runs) > 1
    report = a.report()
    assert report["kind"] == "document" and report["counts"]["documents"] == 3
    assert report["mechanism"]["privacy"]["epsilon_per_document"] == report["guarantee"]["epsilon"]
    assert report["randomness"]["seeded"] is True
    assert report["inputs"]["model"]["sha256"] and report["inputs"]["prompt_template"] == "{document}"
    from textdp.privacy.report import REPORT_KEYS, summary_line

    assert tuple(report)[:len(REPORT_KEYS)] == REPORT_KEYS
    assert "3 documents rewritten" in summary_line(report)


def test_single_line_collapses_generated_line_breaks(tiny, monkeypatch):
    from textdp.lm import Paraphraser

    monkeypatch.setattr(type(tiny.tokenizer), "batch_decode",
                        lambda self, rows, **kw: [" a\n\nb \r\n c "] * len(rows))
    kw = {"temperature": 5.0, "max_new_tokens": 2, "clip_low": -9.0, "clip_high": 9.0}
    assert Paraphraser(model=tiny, seed=1, single_line=True, **kw).run(["w1"]) == ["a b c"]
    assert Paraphraser(model=tiny, seed=1, **kw).run(["w1"]) == ["a\n\nb \r\n c"]


def test_the_loop_draws_no_torch_randomness(tiny, monkeypatch):
    """Sampling goes through textdp's uniforms only: torch's global RNG state is untouched."""
    import torch

    from textdp.lm import Paraphraser

    state = torch.get_rng_state().clone()
    Paraphraser(model=tiny, seed=1, temperature=5.0, max_new_tokens=5, clip_low=-9.0,
                clip_high=9.0).run(["w1 w2"])
    assert torch.equal(state, torch.get_rng_state())


def test_model_paths_are_checked(tmp_path):
    pytest.importorskip("transformers")
    from textdp.lm import LanguageModel

    with pytest.raises(ValueError, match="no such file"):
        LanguageModel(tmp_path / "missing")
    (tmp_path / "weights.txt").write_text("x")
    with pytest.raises(ValueError, match=".gguf"):
        LanguageModel(tmp_path / "weights.txt")
    with pytest.raises(ValueError, match="config.json"):
        LanguageModel(tmp_path)


def test_paraphrase_records_its_release_in_a_ledger(tiny, tmp_path):
    """Issue 15 through DP-Prompt's Python API: ε's of pure ε-DP per document add; refuse
    stops before generating."""
    from textdp.ledger import LedgerRefused
    from textdp.lm import paraphrase

    book = tmp_path / "ledger.jsonl"
    texts = ["w1 w2 w3", "w7 w8"]
    kw = {"temperature": 8.0, "max_new_tokens": 4, "clip_low": -30.0, "clip_high": 30.0,
          "template": "{document}"}
    assert len(paraphrase(texts, model=tiny, ledger=book, **kw)) == 2
    eps = 4 * 2 * 60 / 8.0  # n · 2(b_hi − b_lo)/T
    with pytest.raises(LedgerRefused):
        paraphrase(texts, model=tiny, ledger=book, ledger_policy="refuse", budget=1.5 * eps, **kw)
    lines = book.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["guarantee"]["epsilon"] == pytest.approx(eps)
    assert json.loads(lines[1])["type"] == "complete"  # pending line, then its completion


# --- the pipeline: identifiers and entities masked before the model (issue 38, Deliver 4) ------
def _prompted(tiny, monkeypatch, **runner):
    """The texts the model was given (what ``prompt_ids`` received), and the paraphraser."""
    from textdp.lm import Paraphraser

    seen = []
    real = type(tiny).prompt_ids

    def spy(self, documents, template):
        seen.extend(documents)
        return real(self, documents, template)

    monkeypatch.setattr(type(tiny), "prompt_ids", spy)
    kw = {"temperature": 8.0, "max_new_tokens": 3, "clip_low": -30.0, "clip_high": 30.0,
          "template": "{document}"}
    return seen, Paraphraser(model=tiny, seed=2, **kw, **runner)


def test_identifiers_and_entities_are_masked_before_the_model_by_default(tiny, monkeypatch):
    from textdp.spec import TokenPolicy

    texts = ["w1 mail w2@example.com now", "at 1493 Victoria Rd. w3", "w4 w5"]
    seen, runner = _prompted(tiny, monkeypatch,
                             policy=TokenPolicy(entities=("address",), deny_list=("w5",)))
    out = runner.run(texts)
    assert seen == ["w1 mail [EMAIL] now", "at [ADDRESS]. w3", "w4 [REDACTED]"]
    assert len(out) == 3
    report = runner.report()
    assert report["identifiers"]["masked"] == 2 and report["identifiers"]["by_kind"]["email"] == 1
    assert report["entities"]["masked"] == 1 and report["entities"]["by_kind"]["address"] == 1
    placeholders = report["placeholders"]
    assert placeholders["masked_before_the_model"] == 3
    assert placeholders["found_in_output"] == 0  # the tiny model's words hold no "[EMAIL]"
    assert placeholders["by_label"]["[EMAIL]"] == {"in_prompts": 1, "in_output": 0}
    # The default policy (no policy given) masks identifiers too; off, the text goes as it is.
    seen, runner = _prompted(tiny, monkeypatch)
    runner.run(texts[:1])
    assert seen == ["w1 mail [EMAIL] now"]
    seen, runner = _prompted(tiny, monkeypatch,
                             policy=TokenPolicy(identifiers=False, entities="none"))
    runner.run(texts[:1])
    assert seen == texts[:1]
    assert "entity recognition is off" in " ".join(runner.report()["warnings"])


def test_placeholders_in_the_output_are_counted(tiny, monkeypatch):
    monkeypatch.setattr(type(tiny.tokenizer), "batch_decode",
                        lambda self, rows, **kw: ["[EMAIL] and [EMAIL], [PHONE]"] * len(rows))
    _, runner = _prompted(tiny, monkeypatch)
    runner.run(["write to w2@example.com", "w3"])
    body = runner.report()["placeholders"]
    assert body["masked_before_the_model"] == 1 and body["found_in_output"] == 6
    assert body["by_label"]["[EMAIL]"] == {"in_prompts": 1, "in_output": 4}


def test_a_staged_document_is_never_generated_again(tiny, tmp_path):
    """Resuming (textdp.lm.staging): staged documents are taken as they are; the others are
    generated once, with the draws of their positions (the same text as one whole run)."""
    from textdp.lm import Paraphraser
    from textdp.lm.staging import Stage

    kw = {"temperature": 8.0, "max_new_tokens": 5, "clip_low": -30.0, "clip_high": 30.0,
          "template": "{document}", "seed": 9}
    texts = ["w1 w2", "w3 w4 w5", "w6", "w7 w8"]
    whole = Paraphraser(model=tiny, **kw).run(texts)
    stage = Stage(tmp_path / "s.jsonl", "k")
    stage.start(None)
    first = Paraphraser(model=tiny, **kw)
    assert first.run(texts[:2], 0, stage=stage) == whole[:2]
    stage.add([{"i": 2, "text": "STAGED", "tokens": 1, "eos": False}])
    stage.close()
    again = Stage(tmp_path / "s.jsonl", "k")
    assert len(again) == 3
    again.start(None)
    runner = Paraphraser(model=tiny, **kw)
    generated = []
    real = runner._generate
    runner._generate = lambda t, p, g: (generated.extend(p.tolist()), real(t, p, g))[1]
    out = runner.run(texts, 0, stage=again)
    assert generated == [3]  # only the document no run staged
    assert out == [*whole[:2], "STAGED", whole[3]]
    assert runner.report()["counts"]["documents"] == 4
    with pytest.raises(ValueError, match="another job"):
        Stage(tmp_path / "s.jsonl", "other")


def test_a_slow_run_reports_its_rate_not_zero():
    """50 documents in 1,601 s were reported as documents_per_second 0.0 (issue 38)."""
    from textdp.privacy.report import generation_report

    report = generation_report(DPPrompt(epsilon=100.0, max_new_tokens=4), model={"name": "m"},
                               documents=50, generated_tokens=2880, stopped_at_eos=0, seed=None,
                               seconds=1601.0)
    assert report["performance"]["documents_per_second"] == 0.0312
    assert report["performance"]["generated_tokens_per_second"] == 1.8
