"""Every release form in the grid: PrivEmb (``embeddings``) and DeepCandidate (``documents``)
rows, their attacks, their document-level guarantee and the forms option."""

from __future__ import annotations

import math

import numpy as np
import pytest

import textdp
from textdp.assess.vectors import (
    BoundedDomain,
    resolve_forms,
    vector_attacks,
    vector_grid,
)


def _unit(n, d, seed):
    x = np.random.default_rng(seed).normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_vector_linkage_finds_the_original_and_a_constant_scores_chance():
    from textdp.assess.linkage import rates

    clean = _unit(30, 16, 0)
    exact = rates(vector_attacks(clean, clean + 1e-3 * _unit(30, 16, 1)), 30)
    assert exact["top1"] == 1.0
    constant = rates(vector_attacks(clean, np.ones_like(clean)), 30)
    assert constant["top1"] == pytest.approx(1 / 30)
    # A release that swaps each vector with its neighbour's links nothing.
    swapped = rates(vector_attacks(clean, np.roll(clean, 1, axis=0)), 30)
    assert swapped["top1"] == 0.0


def test_privemb_guarantee_is_the_ledgers_at_the_unit_sphere_diameter():
    from textdp.mechanisms.embedding import PrivEmb
    from textdp.privacy.documents import unit_guarantee

    mech = PrivEmb(epsilon=10.0, delta=1e-6, beta=0.9, dim=384)
    assert math.isinf(unit_guarantee(mech).epsilon)  # the ledger alone: no bound
    unit = unit_guarantee(BoundedDomain(mech, 2.0))
    assert unit.scale == "one" and unit.epsilon >= 20.0 and unit.epsilon < 20.001
    assert unit.delta == mech.privacy_map(2.0).delta > 0


def test_forms_are_checked():
    assert resolve_forms(None, None, None) == ("words", "embeddings")
    assert resolve_forms(None, ["mvc"], None) == ("words",)
    assert resolve_forms("embeddings, words", None, None) == ("embeddings", "words")
    with pytest.raises(ValueError, match="unknown release form 'pictures'"):
        resolve_forms("words,pictures", None, None)
    with pytest.raises(ValueError, match="needs public candidates"):
        resolve_forms(["documents"], None, None)
    with pytest.raises(ValueError, match="add 'words'"):
        resolve_forms("embeddings", ["mvc"], None)
    grid = vector_grid(("embeddings",), {"privemb": [5, 50]})
    assert [(s.form, s.epsilon) for s in grid] == [("embeddings", 5.0), ("embeddings", 50.0)]


def test_bad_form_on_the_command_line_is_one_line_exit_2(capsys, tmp_path):
    from textdp.cli import main

    src = tmp_path / "t.txt"
    src.write_text("one text\nanother text\n", encoding="utf-8")
    assert main(["assess", str(src), "--forms", "words,pictures"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown release form 'pictures'" in err[0]


def _hashed(texts):
    """A cheap deterministic sentence encoder (character trigrams hashed into 64 dimensions,
    unit norm): DeepCandidate's row does not need MiniLM to be checked."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for j in range(len(t) - 2):
            out[i, sum(map(ord, t[j:j + 3])) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


@pytest.fixture(scope="module")
def tickets_with_issue():
    from textdp.datasets.tickets import generate_tickets

    return generate_tickets(20, seed=3, describe_issue=True)


@pytest.fixture(scope="module")
def vector_assessment(sbert, tickets_with_issue):
    texts = [t.text for t in tickets_with_issue]
    a = textdp.assess(texts, [t.issue for t in tickets_with_issue], forms="embeddings",
                      epsilons={"privemb": [0.01, 1e6]}, sample=len(texts), seed=1,
                      encoder=sbert)
    return a, texts


@pytest.fixture(scope="module")
def document_assessment(tickets_with_issue):
    from textdp.datasets.tickets import generate_tickets
    from textdp.encoders import encode_documents
    from textdp.mechanisms.document import build_candidates

    public = generate_tickets(30, seed=4, describe_issue=True)
    candidates = build_candidates(encode_documents(_hashed, [t.text for t in public]))
    texts = [t.text for t in tickets_with_issue]
    a = textdp.assess(texts, [t.issue for t in tickets_with_issue], forms="documents",
                      candidates=candidates, epsilons={"deepcandidate": [2.0]},
                      sample=len(texts), seed=1, encoder=_hashed)
    return a, texts


def test_privemb_rows_span_no_linkage_to_full_linkage(vector_assessment):
    a, texts = vector_assessment
    weak, strong = a.rows[0], a.rows[1]
    assert weak["form"] == strong["form"] == "embeddings"
    # ε = 1e6: the noise is negligible, every released vector is nearest its own Φx.
    assert strong["linkage_top1"] == 1.0 and strong["similarity"] > 0.999
    # ε = 0.01: noise of norm ~10⁴ against unit vectors, linkage at chance level.
    assert weak["linkage_top1_interval"][0] <= weak["linkage_chance"] * 3
    assert strong["task_accuracy"] > weak["task_accuracy"]
    # Leakage is not applicable: None, not 0, and the report says so.
    assert strong["entities_survived_count"] is None and "not applicable" in strong["leakage"]
    assert strong["document_guarantee"]["unit"] == "vector"
    assert 2e6 <= strong["document_epsilon_median"] < 2.0001e6
    assert "PrivEmb embeddings" in a.to_markdown(image="x.png")


def test_deepcandidate_row_states_epsilon_per_sentence_times_sentences(document_assessment):
    from textdp.sentences import split_sentences

    a, texts = document_assessment
    row = a.rows[0]
    assert row["form"] == "documents" and row["epsilon"] == 2.0
    counts = sorted(len(split_sentences(t)) for t in texts)
    median = int(np.percentile(counts, 50, method="higher"))
    assert row["document_guarantee"]["unit"] == "sentence"
    assert row["document_epsilon_median"] == pytest.approx(2.0 * median)
    assert row["command"].startswith("textdp docembed")
    md = a.to_markdown(image="x.png")
    assert "| n/a |" in md and "DeepCandidate document embeddings" in md
    assert "not applicable" in md and a.meta["forms"] == ["documents"]


# --- the zero-private-data baseline (form "baseline") ---------------------------------------

@pytest.fixture(scope="module")
def baseline_assessment(tiny_lm, tickets_with_issue):
    texts = [t.text for t in tickets_with_issue]
    labels = [t.issue for t in tickets_with_issue]
    seen = []
    original = type(tiny_lm).prompt_ids

    def spy(self, documents, template):
        seen.extend(documents)
        return original(self, documents, template)

    type(tiny_lm).prompt_ids = spy
    try:
        a = textdp.assess(texts, labels, forms="baseline,documents", candidates=_unit(5, 64, 2),
                          epsilons={"deepcandidate": [1.0]}, model=tiny_lm,
                          document_kind="support ticket", sample=len(texts), seed=5,
                          encoder=_hashed)
    finally:
        type(tiny_lm).prompt_ids = original
    return a, texts, labels, seen


def test_baseline_trains_on_label_prompts_alone_and_tests_on_held_out_originals(
        baseline_assessment, tiny_lm):
    from textdp.assess.baseline import generate_from_labels
    from textdp.assess.utility import accuracy, task_split

    a, texts, labels, seen = baseline_assessment
    row = a.rows[-1]
    assert row["form"] == "baseline" and row["reference"] and row["epsilon"] == 0.0
    assert row["document_epsilon_median"] == row["document_epsilon_p90"] == 0.0
    assert row["linkage_top1"] is None and "not applicable" in row["leakage"]
    # The prompts hold label names and the document kind, never a private text.
    assert seen and all("support ticket" in p for p in seen)
    assert not any(t in p for p in seen for t in texts)
    # The same split, the same generated documents: the accuracy recomputed independently.
    split = task_split(labels, 5)
    names = sorted(set(labels))
    train_labels = [names[i % len(names)] for i in range(len(split.train))]
    generated = generate_from_labels(train_labels, model=tiny_lm,
                                     document_kind="support ticket", seed=5)
    right = accuracy(generated, np.asarray(train_labels, dtype=object),
                     [texts[i] for i in split.test], split.labels[split.test])
    assert row["task_accuracy"] == right / len(split.test)
    # A reference is never recommended, and the report shows it as one.
    assert a.recommendation.get("index") != len(a.rows) - 1
    assert all(n["index"] != len(a.rows) - 1 for n in a.recommendation.get("nearest", []))
    md = a.to_markdown(image="x.png")
    assert "reference (no private data)" in md and "Zero-private-data baseline" in md


def test_baseline_needs_labels():
    with pytest.raises(ValueError, match="baseline form needs labels"):
        textdp.assess(["a b", "c d"], forms="baseline")


def test_a_reference_row_is_never_recommended():
    from textdp.assess.recommend import Targets, recommend

    def row(accuracy, reference=False):
        return {"linkage_top1": 0.0, "linkage_top1_interval": (0.0, 0.01),
                "linkage_chance": 0.01, "entities_survived_count": None,
                "similarity": 0.5, "similarity_interval": (0.4, 0.6),
                "task_accuracy": accuracy, "reference": reference}

    rows = [row(0.6), {**row(0.9, True), "linkage_top1_interval": None,
                       "similarity": None, "similarity_interval": None}]
    assert recommend(rows, Targets(min_utility=0.3))["index"] == 0
    missed = recommend([{**rows[0], "linkage_top1_interval": (0.5, 0.9)}, rows[1]], Targets())
    assert [n["index"] for n in missed["nearest"]] == [0]


# --- DP-Prompt (form "prompt") ------------------------------------------------------------

def test_dp_prompt_rows_are_text_rows_with_a_per_document_guarantee(tiny_lm, tickets_with_issue):
    texts = [t.text for t in tickets_with_issue][:8]
    a = textdp.assess(texts, forms="prompt", epsilons={"dp_prompt": [50.0]}, model=tiny_lm,
                      sample=len(texts), seed=2, encoder=_hashed, max_linkage=None)
    row = a.rows[0]
    assert row["form"] == "prompt" and row["mechanism"] == "dp_prompt"
    # Pure ε-DP per document (the ledger's unit_guarantee): one document, ε as given.
    assert row["document_guarantee"]["unit"] == "document"
    assert row["document_epsilon_median"] == row["document_epsilon_p90"] == 50.0
    assert row["privatize_options"].startswith("-m dp_prompt") and "--epsilon 50" in \
        row["privatize_options"]
    # Text is released: leakage is counted (the tiny model writes w0…w60, so nothing survives)
    # and the rewrites do not link back as the originals would.
    assert row["entities_found"] > 0 and row["entities_survived_count"] == 0
    assert row["words_unchanged"] is None and row["linkage_top1"] < 0.5
    assert "guarantee_in_words" in row
    with pytest.raises(ValueError, match="prompt form"):
        textdp.assess(texts, mechanisms=["dp_prompt"])


# --- synthetic text (form "synthetic") ------------------------------------------------------

def test_synthesize_sees_only_the_training_split_and_is_judged_on_the_rest(tiny_lm,
                                                                          monkeypatch):
    from textdp.assess.utility import task_split

    texts = [f"w{i % 7} w{i % 5} w{i % 3} ticket {i}" for i in range(80)]
    labels = ["billing" if i % 2 else "delivery" for i in range(80)]
    seen = []
    original = textdp.synthesize

    def spy(train, **kw):  # one short round: the test checks assess's plumbing, not PE
        seen.append(list(train))
        return original(train, **{**kw, "rounds": 1, "max_new_tokens": 4, "entities": "none"})

    monkeypatch.setattr(textdp, "synthesize", spy)
    a = textdp.assess(texts, labels, forms="synthetic", epsilons={"synthesize": [8.0]},
                      model=tiny_lm, sample=len(texts), seed=3, encoder=_hashed)
    row = a.rows[0]
    split = task_split(labels, 3)
    assert seen == [[texts[i] for i in split.train]]
    assert row["form"] == "synthetic" and not row.get("refused")
    assert 0 < row["document_epsilon_median"] <= 8.0 and row["document_delta_median"] > 0
    assert row["document_guarantee"]["unit"] == "document"
    assert 0 <= row["task_accuracy"] <= 1 and row["near_copies"] is not None
    assert "Synthetic text" in a.to_markdown(image="x.png")
