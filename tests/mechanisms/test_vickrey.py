"""Vickrey (Xu et al. 2021): the paper's selection formula (plain distances, not a softmax), the
input word excluded from the candidates, equality with a brute-force reference, the guarantee."""

import numpy as np
import pytest
from scipy import special

import textdp
from textdp.mechanisms.word.vickrey import Vickrey, first_choice_probability
from textdp.vocab import Vocabulary


def _vocab(n=60, d=5, seed=3):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


def _reference(m, ids, z, coin):
    """Brute force in float64: two nearest of φ(w)+z (excluding w when asked), the formula."""
    x = m.vocabulary.vectors.astype(np.float64)
    q = (m.vocabulary.vectors[ids] + z).astype(np.float32).astype(np.float64)
    d = np.sqrt(((x[None] - q[:, None]) ** 2).sum(-1))
    if m.exclude_input:
        d[np.arange(ids.size), ids] = np.inf
    out = np.empty(ids.size, dtype=np.int64)
    for i in range(ids.size):
        first, second = np.lexsort((np.arange(x.shape[0]), d[i]))[:2]
        p = (1 - m.t) * d[i, second] / (m.t * d[i, first] + (1 - m.t) * d[i, second])
        out[i] = first if coin[i] < p else second
    return out


def test_first_choice_probability():
    assert first_choice_probability(1.0, 3.0, 0.75) == pytest.approx(0.5)
    assert first_choice_probability(1.0, 3.0, 0.5) == pytest.approx(0.75)
    assert first_choice_probability(2.0, 2.0, 0.75) == pytest.approx(0.25)
    assert first_choice_probability(1.0, 2.0, 0.0) == 1.0
    assert first_choice_probability(1.0, 2.0, 1.0) == 0.0
    # Degenerate denominators take the limit along d₁ = d₂: 1 − t.
    assert first_choice_probability(0.0, 0.0, 0.3) == pytest.approx(0.7)
    assert first_choice_probability(0.0, 2.0, 1.0) == 0.0


def test_formula_is_not_the_reference_codes_softmax():
    """The public code uses softmax(−t·d²); the paper's p differs from it."""
    d1, d2, t = 1.0, 1.5, 0.75
    softmax_p = special.softmax([-t * d1**2, -t * d2**2])[0]
    assert abs(first_choice_probability(d1, d2, t) - softmax_p) > 0.2


@pytest.mark.parametrize("exclude", [True, False])
@pytest.mark.parametrize("t", [0.0, 0.3, 0.75, 1.0])
def test_apply_equals_brute_force_reference(exclude, t):
    m = Vickrey(_vocab(), epsilon=3.0, t=t, exclude_input=exclude)
    rng = np.random.default_rng(int(10 * t) + exclude)
    ids = rng.integers(0, 60, 2000)
    z, coin = m.draw(ids, rng)
    got = m.apply(ids, (z, coin))
    np.testing.assert_array_equal(got, _reference(m, ids, z, coin))
    if exclude:
        assert not (got == ids).any()
    elif t < 1:
        assert (got == ids).any()


def test_t_extremes_pick_the_first_or_second_candidate():
    v = _vocab()
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 60, 500)
    noise = Vickrey(v, epsilon=2.0).draw(ids, rng)
    first = Vickrey(v, epsilon=2.0, t=0.0).apply(ids, noise)
    second = Vickrey(v, epsilon=2.0, t=1.0).apply(ids, noise)
    mid = Vickrey(v, epsilon=2.0, t=0.75).apply(ids, noise)
    assert (first != second).all()
    assert ((mid == first) | (mid == second)).all()


def test_guarantee_depends_on_the_exclusion():
    v = _vocab()
    g = Vickrey(v, epsilon=2.0).guarantee
    assert not g.verified and g.notion == "no formal guarantee verified"
    assert "excluded" in g.per_word
    g = Vickrey(v, epsilon=2.0, exclude_input=False).guarantee
    assert g.verified and g.notion.startswith("metric DP") and g.epsilon == 2.0


def test_pipeline_and_report():
    texts = ["the house is on the hill", "A small DOG."]
    a = textdp.privatize(texts, mechanism="vickrey", epsilon=5.0, seed=2)
    b = textdp.privatize(texts, mechanism="vickrey", epsilon=5.0, seed=2, batch_size=1)
    assert a.texts == b.texts
    assert a.report["guarantee"]["verified"] is False
    assert a.report["mechanism"]["parameters"] == {"epsilon": 5.0, "t": 0.75,
                                                   "exclude_input": True}
    words = a.texts[0].split()
    assert all(w not in ("the", "house", "is", "on", "hill") for w in words)
    c = textdp.privatize(texts, mechanism="vickrey", epsilon=5.0, seed=2, t=0.0,
                         exclude_input=False)
    assert c.report["guarantee"]["verified"] is True


def test_bad_parameters():
    v = _vocab()
    for t in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="t must"):
            Vickrey(v, epsilon=1.0, t=t)
    with pytest.raises(TypeError):
        Vickrey(v, epsilon=1.0, exclude_input="yes")
    with pytest.raises(ValueError, match="at least 3"):
        Vickrey(Vocabulary(["a", "b"], np.eye(2)), epsilon=1.0)
    Vickrey(Vocabulary(["a", "b"], np.eye(2)), epsilon=1.0, exclude_input=False)
