"""privatize()/Privatizer: token policy, seeds, batch independence, case, report."""

import json

import numpy as np
import pytest

import textdp
from textdp import _random
from textdp.mechanisms import create
from textdp.pipeline import Privatizer

TEXTS = [
    "The Food was GREAT, but the waiter, Zzyzxq, charged 42 dollars!",
    "",
    "I loved it. iPad users   will too.\n",
    "naïve 😀 ☃ __init__ 3rd",
    "Short one",
] * 7


def test_n_in_n_out_and_structure_kept():
    r = textdp.privatize(TEXTS, epsilon=5, seed=1, entities="none")  # structure, not entities
    assert len(r.texts) == len(TEXTS)
    for a, b in zip(TEXTS, r.texts, strict=True):
        strip = lambda s: "".join(c for c in s if not c.isalnum())  # noqa: E731
        assert strip(a) == strip(b.replace("[MASK]", ""))


@pytest.mark.parametrize("batch_size", [1, 3, 16, 1000])
def test_same_seed_same_output_whatever_the_batch_size(batch_size):
    ref = textdp.privatize(TEXTS, epsilon=3, seed=99, oov="random").texts
    assert textdp.privatize(TEXTS, epsilon=3, seed=99, oov="random", batch_size=batch_size).texts == ref


def test_same_seed_same_output_whatever_the_split():
    ref = textdp.privatize(TEXTS, epsilon=3, seed=5).texts
    mech = create("mvc", epsilon=3)
    # Out of order, uneven pieces, each from a fresh Privatizer (as separate workers would).
    pieces = [(20, 35), (0, 1), (1, 20)]
    got = {}
    for a, b in pieces:
        got[a] = Privatizer(mech, seed=5).run(TEXTS[a:b], start=a)
    assert got[0] + got[1] + got[20] == ref


def test_different_seeds_differ_and_unseeded_runs_differ():
    a = textdp.privatize(TEXTS, epsilon=1, seed=1).texts
    assert a != textdp.privatize(TEXTS, epsilon=1, seed=2).texts
    assert textdp.privatize(TEXTS, epsilon=1).texts != textdp.privatize(TEXTS, epsilon=1).texts


def test_oov_policies():
    text = ["Zzyzxq paid 42 at Qwxzv"]
    kw = dict(epsilon=1e6, seed=0, entities="none")  # the OOV policy, not entities
    assert textdp.privatize(text, oov="mask", **kw).texts == ["[MASK] paid [MASK] at [MASK]"]
    assert textdp.privatize(text, oov="mask", mask_token="<x>", **kw).texts == ["<x> paid <x> at <x>"]
    assert textdp.privatize(text, oov="keep", **kw).texts == text
    assert textdp.privatize(text, oov="drop", **kw).texts == [" paid  at "]
    rnd = textdp.privatize(text, oov="random", **kw).texts[0].split()
    vocab = textdp.vocab.load_default()
    assert rnd[0][0].isupper() and rnd[0].lower() in vocab and rnd[2].lower() in vocab
    with pytest.raises(ValueError, match="oov policy 'hide'"):
        textdp.privatize(text, oov="hide", epsilon=1)


def test_keep_policy_warns_and_reports_unprotected():
    r = textdp.privatize(["Zzyzxq paid 42"], epsilon=1, oov="keep", entities="none")
    kinds = {u["kind"]: u["count"] for u in r.report["unprotected"]}
    assert kinds["out-of-vocabulary words"] == 1 and kinds["numbers"] == 1
    assert any("unprotected" in w for w in r.report["warnings"])


def test_keep_stopwords():
    r = textdp.privatize(["the cat and the dog"], epsilon=1e6, keep_stopwords=True)
    assert r.texts == ["the cat and the dog"]
    assert r.report["tokens"]["by_policy"]["stopwords_kept"] == 3
    assert r.report["tokens"]["by_policy"]["privatized"] == 2


def test_case_restoration():
    r = textdp.privatize(["House HOUSE house"] * 50, epsilon=0.5, seed=4, entities="none")
    for t in r.texts:
        a, b, c = t.split(" ")
        assert a[0].isupper() and a[1:].islower()
        assert b.isupper() or len(b) == 1
        assert c.islower()


def test_report_counts_every_token():
    r = textdp.privatize(TEXTS, epsilon=2, seed=3, entities="none")
    rep = r.report
    json.dumps(rep)  # JSON-ready
    by_class = rep["tokens"]["by_class"]
    n_tokens = sum(len(textdp.text.tokenize(t)) for t in TEXTS)
    assert sum(by_class.values()) == rep["tokens"]["total"] == n_tokens
    pol = rep["tokens"]["by_policy"]
    assert pol["privatized"] + pol["oov_words_masked"] + pol["numbers_masked"] == \
        by_class["word"] + by_class["number"]
    assert rep["randomness"] == {**rep["randomness"], "seeded": True, "seed": 3}
    assert "not for production" in rep["randomness"]["note"]
    assert rep["vocabulary"]["fingerprint"] == textdp.vocab.load_default().fingerprint
    assert rep["documents"]["count"] == len(TEXTS) and rep["documents"]["empty"] == 7
    assert rep["mechanism"] == {"name": "mvc", "parameters": {"epsilon": 2.0}}
    assert rep["guarantee"]["epsilon"] == 2.0
    assert rep["performance"]["tokens_per_second"] > 0
    unseeded = textdp.privatize(["x"], epsilon=1).report["randomness"]
    assert unseeded == {"source": "os-entropy", "seeded": False,
                        "bit_generator": _random.secure_bit_generator_name(),
                        "cryptographically_secure": True}
    assert rep["randomness"]["bit_generator"] == "PCG64"
    assert rep["randomness"]["cryptographically_secure"] is False


@pytest.mark.parametrize("bad,exc,match", [
    ("just a string", TypeError, "not one string"),
    (["ok", 3], TypeError, r"texts\[1\] is int"),
])
def test_bad_texts(bad, exc, match):
    with pytest.raises(exc, match=match):
        textdp.privatize(bad, epsilon=1)


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "ten", None])
def test_bad_epsilon(eps):
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        textdp.privatize(["a"], epsilon=eps)


def test_bad_seed_and_batch_size():
    with pytest.raises(ValueError, match="seed"):
        textdp.privatize(["a"], epsilon=1, seed=-3)
    with pytest.raises(ValueError, match="batch_size"):
        textdp.privatize(["a"], epsilon=1, batch_size=0)


def test_rng_argument_is_a_generator():
    mech = create("mvc", epsilon=1)
    ids = np.arange(5)
    a = mech.privatize_ids(ids, np.random.default_rng(1))
    np.testing.assert_array_equal(a, mech.privatize_ids(ids, np.random.default_rng(1)))
    with pytest.raises(TypeError, match="Generator"):
        mech.privatize_ids(ids, rng=1)


def test_tally_difference_gives_one_batch_s_tallies():
    """A batch's tallies (what Ray and datasets send home) equal those of a fresh Privatizer
    that ran only that batch; summed back they give the whole run's."""
    from textdp.pipeline import Privatizer

    mech = textdp.mechanisms.create("mvc", epsilon=10)
    first, second = ["The food was great."] * 3, ["Slow service, cold soup.", "", "A quiet night."]
    whole = Privatizer(mech, seed=1)
    whole.run(first)
    before = whole.tallies()
    whole.run(second, start=3)
    batch = whole.tallies() - before
    alone = Privatizer(mech, seed=1)
    alone.run(second, start=3)
    expected = alone.tallies().to_json()
    for key in ("by_policy", "by_class", "by_kind", "documents", "empty_documents", "word_ids",
                "word_counts"):
        assert batch.to_json()[key] == expected[key], key
    head = Privatizer(mech, seed=1)
    head.run(first)
    summed = (head.tallies() + batch).to_json()
    for key in ("by_policy", "documents", "word_ids", "word_counts"):
        assert summed[key] == whole.tallies().to_json()[key], key
    report = head.report(head.tallies() + batch)
    assert report["tokens"] == whole.report()["tokens"]
