"""The measurement protocol (issue 23, item 2): stable ids for every mechanism's input metric and
notion, privacy maps that agree with the mechanisms' guarantees in exact arithmetic, composed and
allocated measurements, and old ledger lines mapped to the ids new lines record."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from textdp.mechanisms import create
from textdp.mechanisms.document.truncation import Truncation
from textdp.mechanisms.embedding.privemb import LaplaceVector, PrivEmb
from textdp.mechanisms.prompt import DPPrompt
from textdp.privacy import Notion
from textdp.privacy.measurement import (
    NOTION_IDS,
    InputSpace,
    allocated,
    composed,
    document_map,
    legacy_metric_id,
    measurement_of,
    notion_from_id,
    notion_id,
    space_id,
)
from textdp.vocab import Vocabulary

WORD = ("mvc", "mahalanobis", "vickrey", "tem", "santext", "santext_plus", "custext",
        "custext_plus", "diffractor")


def toy(seed: int = 0, n: int = 60, dim: int = 5) -> Vocabulary:
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, dim)), name="toy")


def word(name: str, vocabulary: Vocabulary, epsilon: float = 2.0):
    params = {"k": 5, "cache": False} if name.startswith("custext") else {}
    if name == "diffractor":
        params = {"cache": False}
    return create(name, vocabulary, epsilon=epsilon, **params)


_SCRIPT = """
import json, sys
import numpy as np
from textdp.mechanisms import create
from textdp.vocab import Vocabulary
rng = np.random.default_rng(0)
v = Vocabulary([f"w{i}" for i in range(60)], rng.standard_normal((60, 5)), name="toy")
out = {}
for name in sys.argv[1:]:
    params = {"k": 5, "cache": False} if name.startswith("custext") else {}
    if name == "diffractor":
        params = {"cache": False}
    m = create(name, v, epsilon=2.0, **params).measurement
    out[name] = [m.input_metric, m.notion]
print(json.dumps(out))
"""


def test_ids_are_stable_across_processes_and_name_the_vocabulary():
    here = {n: list(word(n, toy()).measurement.key[::-1]) for n in WORD}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *WORD], check=True,
                          capture_output=True, text=True)
    assert json.loads(done.stdout) == here
    other = {n: word(n, toy(seed=1)).measurement.input_metric for n in WORD}
    for name in WORD:  # another vocabulary, another metric
        assert other[name] != here[name][0]
        assert here[name][0].startswith("word-")
    # The same metric for mechanisms that state their guarantee in it: their budgets add.
    assert len({here[n][0] for n in ("mvc", "vickrey", "tem", "santext")}) == 1
    assert here["custext"][0] != here["custext_plus"][0]  # other output sets
    assert here["mahalanobis"][0] != here["mvc"][0]


def test_notion_ids_cover_every_notion_and_round_trip():
    assert set(NOTION_IDS) == set(Notion)
    assert len(set(NOTION_IDS.values())) == len(Notion)
    for notion, ident in NOTION_IDS.items():
        assert notion_id(notion) == notion_id(str(notion)) == ident
        assert notion_from_id(ident) is notion
    with pytest.raises(ValueError):
        notion_from_id("metric DP (d_χ-privacy)")  # the prose is no id


def _exact_epsilon_times(eps: float, d: float) -> Fraction:
    return Fraction(eps) * Fraction(d)


@pytest.mark.parametrize("name", WORD)
def test_word_privacy_maps_agree_with_the_guarantee_in_exact_arithmetic(name):
    mech = word(name, toy(), epsilon=1.7)
    m = mech.measurement
    assert m.notion == notion_id(mech.guarantee.notion)
    if m.notion == "none":  # Vickrey excluding the input word: no bound (its docstring)
        assert m.privacy_map(1.0).epsilon == math.inf
        return
    assert m.privacy_map(1.0).epsilon == mech.guarantee.epsilon
    rng = np.random.default_rng(3)
    for d in (10.0 ** rng.uniform(-3, 3, 200)).tolist():
        got = m.privacy_map(d)
        assert got.epsilon == mech.privacy_map(d).epsilon
        exact = _exact_epsilon_times(1.7, d)
        # the smallest float at least the exact ε·d
        assert Fraction(got.epsilon) >= exact
        assert Fraction(math.nextafter(got.epsilon, 0.0)) < exact


def test_the_euclidean_map_bounds_the_privacy_loss_at_the_exact_distance():
    """privacy_loss(a, b) ≥ ε·‖φ(a) − φ(b)‖ computed at 60 digits from the float32 vectors."""
    vocab = toy(seed=4)
    mech = word("mvc", vocab, epsilon=0.9)
    v = vocab.vectors
    with mpmath.workdps(60):
        for a, b in [(0, 1), (2, 7), (10, 59), (33, 34)]:
            exact = mpmath.sqrt(sum((mpmath.mpf(float(x)) - mpmath.mpf(float(y))) ** 2
                                    for x, y in zip(v[a], v[b], strict=True)))
            loss = float(mech.privacy_loss(a, b))
            assert mpmath.mpf(loss) >= mpmath.mpf(0.9) * exact
            bound = mech.measurement.privacy_map(float(mech.distance(a, b))).epsilon
            assert loss >= bound


def test_vector_document_and_prompt_measurements():
    lv = LaplaceVector(epsilon=2.0)
    pe = PrivEmb(epsilon=1.0, delta=1e-3, beta=0.5, dim=4, domain_size=100)
    tr = Truncation.from_public(np.random.default_rng(3).normal(size=(20, 4)), epsilon=1.5)
    dp = DPPrompt(epsilon=50.0)
    assert lv.measurement.key == ("pure-lipschitz", "vector-l2")
    assert pe.measurement.key == ("approx-lipschitz", "vector-l2")
    assert tr.measurement.key == ("sentence-dp", "sentence-substitution")
    assert dp.measurement.key == ("local-dp", "document-substitution")
    for mech in (lv, pe, tr, dp):
        g, b = mech.guarantee, mech.measurement.privacy_map(1)
        assert (b.epsilon, b.delta) == (g.epsilon, g.delta)
        assert mech.measurement.privacy_map(3).epsilon == mech.privacy_map(3).epsilon
    # The input space completes a metric the mechanism cannot see (an encoder, a splitter) ...
    assert measurement_of(lv, "encoder:glove-mean:ab").input_metric == \
        "vector-l2@encoder:glove-mean:ab"
    assert measurement_of(tr, "splitter:pysbd").input_metric == \
        "sentence-substitution@splitter:pysbd"
    # ... and never a word metric or DP-Prompt's (any two documents)
    mvc = word("mvc", toy())
    assert measurement_of(mvc, "vocabulary:" + "0" * 64).input_metric == \
        mvc.measurement.input_metric
    assert measurement_of(dp, "encoder:x").input_metric == "document-substitution"


def test_space_ids_of_the_words_fronts_record():
    fp = "ab" * 32
    assert space_id(f"vocabulary sha256 {fp}") == f"vocabulary:{fp}"
    assert space_id("the input vectors themselves (R^384)") == "vectors"
    assert space_id("encoder glove-mean " + fp) == f"encoder:glove-mean:{fp}"
    assert space_id("sentence splitter pysbd") == "splitter:pysbd"
    assert space_id("any two documents") == "" and space_id(None) == ""
    assert space_id("something else").startswith("prose:")
    assert space_id("something else") != space_id("something other")


def test_typed_spaces_render_the_words_and_ids_old_lines_are_read_with():
    """A release records the prose and the id of its typed space, both rendered from the
    fields; a line written before ids were recorded is read back from that same prose (the
    legacy reader) to the same id, so old and new releases of one input compose."""
    fp = "cd" * 32
    spaces = {InputSpace.vocabulary(fp): (f"vocabulary sha256 {fp}", f"vocabulary:{fp}"),
              InputSpace.vectors(384): ("the input vectors themselves (R^384)", "vectors"),
              InputSpace.encoder("glove-mean", fp): (f"encoder glove-mean {fp}",
                                                     f"encoder:glove-mean:{fp}"),
              InputSpace.encoder("sbert"): ("encoder sbert", "encoder:sbert"),
              InputSpace.splitter("pysbd"): ("sentence splitter pysbd", "splitter:pysbd"),
              InputSpace.any_documents(): ("any two documents", ""),
              InputSpace(): ("", "")}
    for space, (prose, ident) in spaces.items():
        assert (space.prose, space.id, str(space)) == (prose, ident, prose), space
        assert space_id(space.prose) == space.id, space
    assert InputSpace.text("my own space").id == space_id("my own space")
    assert InputSpace.vectors(3) != InputSpace.vectors(4)


def test_composed_measurement_adds_exactly_and_rounds_up():
    a, b = word("mvc", toy(), 0.1), word("santext", toy(), 0.2)
    both = composed([a.measurement, b.measurement])
    assert both.key == a.measurement.key and len(both.parts) == 2
    e = both.privacy_map(1.0).epsilon
    exact = Fraction(0.1) + Fraction(0.2)
    assert Fraction(e) >= exact and Fraction(math.nextafter(e, 0)) < exact
    assert e > 0.1 + 0.2 or Fraction(0.1 + 0.2) >= exact  # never the float sum below
    arr = both.privacy_map(np.array([0.0, 1.0, 3.0])).epsilon
    assert arr.tolist()[0] == 0.0 and arr.tolist()[1] == e
    with pytest.raises(ValueError, match="different metrics"):
        composed([a.measurement, word("mvc", toy(seed=1)).measurement])
    with pytest.raises(ValueError, match="no composable"):
        composed([word("santext_plus", toy()).measurement])
    lv = LaplaceVector(epsilon=1.0).measurement
    pe = PrivEmb(epsilon=1.0, delta=1e-3, beta=0.5, dim=4, domain_size=100).measurement
    both = composed([lv, pe, lv])  # pure and approximate Lipschitz: (Σε, Σδ), approximate
    assert both.notion == "approx-lipschitz" and both.privacy_map(1).epsilon == 3.0
    assert both.privacy_map(1).delta == pe.privacy_map(1).delta
    with pytest.raises(ValueError, match="no composable"):
        composed([word("vickrey", toy()).measurement])  # excluding the input word: no bound


def test_an_allocation_is_a_measurement_of_its_own():
    base = word("mvc", toy(), 4.0).measurement
    m = allocated(base, epsilon_document=4.0, epsilon_top=0.5, public=True)
    assert m.key == base.key and m.parts == (base,)
    assert m.privacy_map(2.0).epsilon == 1.0
    assert document_map(4.0, 0.3).epsilon >= float(Fraction(4) * Fraction(0.3))
    with pytest.raises(ValueError):
        allocated(base, epsilon_document=0.1, epsilon_top=0.5, public=True)


def _legacy(mech, space: str) -> str:
    from textdp.ledger_lines import _json_value

    return legacy_metric_id(mech.name, _json_value(mech.parameters), mech.guarantee.metric,
                            space)


def test_old_ledger_lines_get_the_ids_new_lines_record():
    """A line written before the ids (no ``measurement``) is keyed as the same release is now."""
    vocab = toy()
    space = f"vocabulary sha256 {vocab.fingerprint}"
    for name in WORD:
        mech = word(name, vocab)
        assert _legacy(mech, space) == measurement_of(mech, space_id(space)).input_metric, name
    for mech, space in [(LaplaceVector(epsilon=2.0), "the input vectors themselves (R^4)"),
                        (LaplaceVector(epsilon=2.0), "encoder glove-mean " + "ab" * 32),
                        (Truncation.from_public(np.arange(6.0).reshape(3, 2), epsilon=1.0),
                         "sentence splitter regex"),
                        (DPPrompt(epsilon=50.0), "any two documents")]:
        assert _legacy(mech, space) == measurement_of(mech, space_id(space)).input_metric
    # A mechanism this textdp cannot map keeps an id of its prose: apart from everything else.
    assert legacy_metric_id("retired", {}, "some metric", "").startswith("prose:")
    custom = word("custext_plus", vocab)
    assert legacy_metric_id("custext_plus", {"k": 5, "stopwords": "3 user-supplied"},
                            custom.guarantee.metric, space).startswith("prose:")


@pytest.mark.parametrize("name", ["custext", "diffractor", "santext", "mahalanobis"])
def test_the_map_at_the_distance_bounds_the_mechanisms_privacy_loss(name):
    """Where a mechanism computes its privacy loss some other way (CusText from its exact laws,
    1-Diffractor from integer positions), the measurement's map at the pair's distance bounds it:
    the map is what the ledger spends, so it must not be below what the mechanism loses."""
    mech = word(name, toy(seed=5), epsilon=1.3)
    rng = np.random.default_rng(6)
    a, b = rng.integers(0, 60, 300), rng.integers(0, 60, 300)
    loss = mech.privacy_loss(a, b)
    bound = mech.measurement.privacy_map(mech.distance(a, b)).epsilon
    if name in ("custext", "diffractor"):  # distances 0/1/∞ and integer positions: exact
        assert (loss <= bound).all()
    else:  # Euclidean-type: the loss is the map at the distance raised past its rounding error
        assert (loss >= bound).all() and (loss <= bound * (1 + 1e-9)).all()
