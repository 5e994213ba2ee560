"""textdp.synthesize with the tiny test model and a small encoder stub: reproducibility, labels,
persons, masking before anything sees the private text, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dp_accounting")
pytest.importorskip("transformers")

import textdp  # noqa: E402
from textdp.synthesis import DataRefused  # noqa: E402
from textdp.synthesis.screen import build_masker  # noqa: E402

TEXTS = [f"w{i % 7} w{i % 5} w{i % 3} ticket" for i in range(80)]
LABELS = ["billing" if i % 2 else "delivery" for i in range(80)]
FAST = {"max_new_tokens": 6, "entities": "none", "rounds": 2}


class Encoder:
    """Bag of hashed words in 16 dimensions; records every text it is given."""

    def __init__(self):
        self.seen: list[str] = []

    def __call__(self, texts):
        self.seen += list(texts)
        out = np.zeros((len(texts), 16))
        for i, t in enumerate(texts):
            for w in t.split():
                out[i, sum(map(ord, w)) % 16] += 1.0
        return out


def _run(tiny_lm, **kw):
    options = {"labels": LABELS, "epsilon": 8.0, "n": 12, "seed": 7, "model": tiny_lm,
               "encoder": Encoder(), **FAST, **kw}
    return textdp.synthesize(options.pop("texts", TEXTS), **options)


def test_a_seeded_run_is_reproducible_whatever_the_batch_size(tiny_lm):
    a = _run(tiny_lm)
    b = _run(tiny_lm, batch_size=3)
    assert (a.texts, a.labels) == (b.texts, b.labels)
    assert len(a.texts) == 12 and set(a.labels) <= set(LABELS)
    c = _run(tiny_lm, seed=8)
    assert c.texts != a.texts
    assert a.report["randomness"]["seeded"] is True


def test_the_report_states_the_guarantee_and_the_accounting(tiny_lm):
    r = _run(tiny_lm).report
    assert r["kind"] == "synthesis"
    g = r["guarantee"]
    assert g["notion"].startswith("(ε, δ)-DP, dataset level") and g["epsilon"] <= 8.0
    assert g["delta"] == 0.001  # largest power of ten ≤ 80^-1.1 = 0.0081
    a = r["accounting"]
    assert a["epsilon_accountant"] <= a["epsilon_reported"] == g["epsilon"]
    assert a["rounds"] == 2 and len(r["mechanism"]["rounds"]) == 2
    assert r["counts"]["synthetic_documents"] == 12
    assert "screening" in r and r["screening"]["action"] == "mask"
    from textdp.privacy.report import summary_line

    assert summary_line(r).startswith("private_evolution: (ε, δ)-DP")


def test_persons_are_the_unit_with_unit_field(tiny_lm):
    units = [f"customer{i % 20}" for i in range(80)]  # 20 persons, under both labels
    r = _run(tiny_lm, units=units)
    assert r.report["mechanism"]["parameters"]["unit"] == "person"
    assert r.report["accounting"]["units"] == 20
    assert r.report["guarantee"]["metric"].startswith("datasets that differ by adding or "
                                                      "removing one person")


def test_private_text_is_masked_before_the_encoder_and_never_prompted(tiny_lm, monkeypatch):
    texts = [f"write to ann{i}@example.com about w{i % 4}" for i in range(40)]
    prompts: list[str] = []
    original = type(tiny_lm).prompt_ids

    def spy(self, documents, template):
        prompts.extend(documents)
        return original(self, documents, template)

    monkeypatch.setattr(type(tiny_lm), "prompt_ids", spy)
    encoder = Encoder()
    r = textdp.synthesize(texts, epsilon=8.0, n=6, seed=1, model=tiny_lm, encoder=encoder,
                          **FAST)
    assert not any("example.com" in t for t in encoder.seen)
    assert sum("[EMAIL]" in t for t in encoder.seen) == 40
    assert prompts and not any("ann" in p or "example" in p for p in prompts)
    assert r.report["counts"]["masked_in_private_input"] == {"email": 40}


def test_the_output_screen_masks_and_counts():
    masker = build_masker(entities="none")
    masked, counts = masker.mask(["mail b.c@example.org or call +1 415 555 0134", "nothing"])
    assert "example.org" not in masked[0] and "[EMAIL]" in masked[0]
    assert counts["email"] == 1 and masked[1] == "nothing"
    assert build_masker(identifiers=False, entities="none").mask(["a@b.example.com"])[0] == [
        "a@b.example.com"]


@pytest.mark.parametrize("texts,labels,kw,match", [
    ([], None, {}, "empty"),
    (TEXTS + ["lonely"], LABELS + ["refund"], {}, "label 'refund' has only one document"),
    (TEXTS, LABELS, {"delta": 0.02}, "1/n"),
    (TEXTS, LABELS, {"epsilon": 0.1}, "too few for the asked ε"),
    (TEXTS, LABELS, {"label_descriptions": {"refund": "money back"}}, "'refund', which no"),
    (TEXTS, None, {"label_descriptions": {"billing": "charged"}}, "has no labels"),
])
def test_data_that_cannot_be_released_is_refused_before_anything_runs(texts, labels, kw, match):
    class Never:
        def __call__(self, texts):
            raise AssertionError("the encoder ran")

    options = {"epsilon": 4.0, "n": 10, "model": object(), "encoder": Never(), **kw}
    with pytest.raises(DataRefused, match=match):
        textdp.synthesize(texts, labels=labels, **options)


def test_the_signal_bound_names_the_units_needed():
    with pytest.raises(DataRefused) as info:
        textdp.synthesize(TEXTS, labels=LABELS, epsilon=0.1, n=10, model=object(),
                          encoder=Encoder())
    message = str(info.value)
    assert "σ·√P" in message and "units per label are needed" in message


def test_variations_are_sampled_at_their_own_temperature_and_descriptions_reach_the_prompts(
        tiny_lm, monkeypatch):
    from textdp.synthesis import generation

    temperatures: dict[int, set[float]] = {}
    prompts: list[str] = []
    sampler, rows = generation.NucleusSampler, generation.row_generators
    original = type(tiny_lm).prompt_ids

    def spy_rows(count, seed, stage):
        temperatures.setdefault(stage, set())
        return rows(count, seed, stage)

    def spy_sampler(generators, *, temperature=1.0, top_p=0.95):
        for stage in temperatures:  # the stage whose generators were just made
            if not temperatures[stage]:
                temperatures[stage].add(temperature)
        return sampler(generators, temperature=temperature, top_p=top_p)

    def spy_prompts(self, documents, template):
        prompts.extend(documents)
        return original(self, documents, template)

    monkeypatch.setattr(generation, "row_generators", spy_rows)
    monkeypatch.setattr(generation, "NucleusSampler", spy_sampler)
    monkeypatch.setattr(type(tiny_lm), "prompt_ids", spy_prompts)
    r = _run(tiny_lm, temperature=0.9, variation_temperature=0.5,
             label_descriptions={"billing": "charged twice"})
    assert temperatures[0] == {0.9} and temperatures.keys() - {0}
    assert all(temperatures[s] == {0.5} for s in temperatures if s > 0)
    first = [p for p in prompts if p.startswith("Write one")]
    assert first and all(("charged twice." in p) == ('"billing"' in p) for p in first)
    assert r.report["inputs"]["prompts"]["label_descriptions"] == {"billing": "charged twice"}
    with pytest.raises(ValueError, match="temperature"):
        _run(tiny_lm, variation_temperature=0.0)
