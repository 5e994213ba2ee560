"""The token sampler of the generation adapter: temperature and top-p, tested against the exact
law (chi-square, with a power check), and rows that draw from their own generators."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from textdp.synthesis.generation import NucleusSampler, row_generators

LOGITS = np.array([2.0, 1.5, 1.4, 0.3, 0.0, -0.5, -1.0, -3.0, 1.45, 0.2])


def _exact(logits, temperature, top_p):
    """The nucleus law written out independently: sorted softmax, the smallest prefix whose mass
    reaches top_p, renormalised."""
    p = np.exp((logits - logits.max()) / temperature)
    p /= p.sum()
    order = np.argsort(-p, kind="stable")
    out = np.zeros_like(p)
    mass = 0.0
    for i in order:
        out[i] = p[i]
        mass += p[i]
        if mass >= top_p:
            break
    return out / out.sum()


def _draw(temperature, top_p, n=100_000, seed=3):
    rng = np.random.default_rng(seed)
    sampler = NucleusSampler([rng], temperature=temperature, top_p=top_p)
    logits = np.tile(LOGITS, (n, 1))
    return np.bincount(sampler.sample(logits, np.zeros(n, dtype=np.int64), np.zeros(n)),
                       minlength=LOGITS.size)


def _pvalue(counts, law):
    keep = law > 0
    assert counts[~keep].sum() == 0  # nothing outside the nucleus
    return stats.chisquare(counts[keep], law[keep] * counts.sum()).pvalue


@pytest.mark.statistical
@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.7, 0.8), (1.3, 0.95)])
def test_samples_follow_the_nucleus_law_and_a_wrong_temperature_is_rejected(temperature, top_p):
    counts = _draw(temperature, top_p)
    assert _pvalue(counts, _exact(LOGITS, temperature, top_p)) > 1e-6
    # Power: the law at a temperature 10% off is rejected by the same test.
    wrong = _exact(LOGITS, temperature * 1.1, top_p)
    if (wrong > 0).sum() == (_exact(LOGITS, temperature, top_p) > 0).sum():
        assert _pvalue(counts, wrong) < 1e-6


def test_a_wide_vocabulary_uses_the_full_sort_when_the_nucleus_needs_it():
    rng = np.random.default_rng(0)
    logits = np.zeros((4, 5000))  # flat: the nucleus holds 95% of 5000 tokens, past the partial sort
    sampler = NucleusSampler([rng] * 4, temperature=1.0, top_p=0.9513)
    ids, p = sampler.probabilities(logits)
    assert ((p > 0).sum(axis=1) == 4757).all()  # mass 0.9512 before the 4757th token
    assert np.allclose(p.sum(axis=1), 1.0)


def test_seeded_rows_draw_from_their_own_streams():
    a = row_generators(3, seed=5, stage=1)
    b = row_generators(3, seed=5, stage=1)
    assert [g.random() for g in a] == [g.random() for g in b]
    assert row_generators(1, seed=5, stage=2)[0].random() != row_generators(
        1, seed=5, stage=1)[0].random()
    secure = row_generators(2, seed=None, stage=0)
    assert secure[0] is secure[1] and type(secure[0].bit_generator).__name__ in (
        "AESCounter", "ChaCha")


@pytest.mark.parametrize("temperature,top_p,scale", [(1.0, 0.95, 3.0), (0.7, 0.8, 3.0),
                                                     (1.3, 1.0, 3.0), (1.0, 0.9, 0.01)])
def test_the_device_law_picks_the_same_tokens_as_the_numpy_law(temperature, top_p, scale):
    # The GPU path (torch_nucleus) against NucleusSampler.sample on the same logits and the same
    # uniforms: identical tokens, row by row (continuous logits: no ties). scale 0.01 makes the
    # nucleus wider than the 256-token partial sort, so the full-sort branch is compared too.
    torch = pytest.importorskip("torch")
    from textdp.synthesis.generation import torch_nucleus

    logits = np.random.default_rng(7).normal(0, scale, (64, 3000))
    u = np.random.default_rng(8).random(64)
    expected = NucleusSampler([np.random.default_rng(8)], temperature=temperature,
                              top_p=top_p).sample(logits, np.zeros(64, dtype=np.int64),
                                                  np.zeros(64))
    got = torch_nucleus(torch.from_numpy(logits), u, temperature, top_p).numpy()
    assert (got == expected).all()
    # The same check fails for a temperature 10% off (it can see a wrong law).
    off = torch_nucleus(torch.from_numpy(logits), u, temperature * 1.1, top_p).numpy()
    assert (off != expected).any()


def test_the_fast_path_on_the_cpu_is_the_numpy_law_itself():
    torch = pytest.importorskip("torch")
    logits = np.random.default_rng(1).normal(0, 2, (5, 400))
    rows = np.arange(5)
    a = NucleusSampler(row_generators(5, seed=3, stage=0), temperature=0.9, top_p=0.9)
    b = NucleusSampler(row_generators(5, seed=3, stage=0), temperature=0.9, top_p=0.9)
    assert (a.sample_torch(torch.from_numpy(logits), rows, rows) == b.sample(logits, rows, rows)
            ).all()
