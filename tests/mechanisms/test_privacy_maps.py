"""Guarantees as code: every mechanism's privacy map, held against every exact output law.

One generic test over the registry: for each word mechanism with a closed-form law
(``output_distribution``), on every pair of a 100-word vocabulary (4,950 pairs, the closest ones by
the mechanism's own distance included), the exact max_y |ln p(y|a) − ln p(y|b)| must not exceed
``privacy_loss(a, b)``; the same check must reject a map that claims half of it (power). Then unit
tests of the maps themselves: distances, rounding up, ∞ where no guarantee holds, the embedding
and document maps, and the guarantee rendered from the same numbers.
"""

import inspect
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from textdp._checks import REQUIRED
from textdp.mechanisms import available, create, get
from textdp.mechanisms.document import DeepCandidate, Truncation
from textdp.mechanisms.embedding import LaplaceVector, PrivEmb
from textdp.mechanisms.word.gumbel import smallest_feasible_epsilon
from textdp.privacy import Budget, Notion, Numerics, round_up_product
from textdp.vocab import Vocabulary

#: The word mechanisms whose output law has a closed form: each must be checked below.
EXACT = {"custext", "custext_plus", "diffractor", "santext", "santext_plus", "tem"}
#: Mechanisms whose privacy_loss is the exact loss itself (below ε·d, not the bound ε·d).
EXACT_LOSS = {"custext", "custext_plus"}
N_WORDS = 100
#: Float rounding of the exact log-laws only (their logits are at most ~100 in magnitude).
RTOL, ATOL = 1e-9, 1e-12


def _vocab(n=N_WORDS, d=6, seed=7):
    rng = np.random.default_rng(seed)
    return Vocabulary([f"w{i}" for i in range(n)], rng.standard_normal((n, d)), name=f"toy-{n}")


def _freq(n=N_WORDS):
    return np.arange(n, 0, -1, dtype=float)  # word 0 most frequent: the last rows are sensitive


CASES = [
    ("custext", {"epsilon": 1.0, "k": 10, "cache": False}),
    ("custext", {"epsilon": 8.0, "k": 20, "cache": False}),
    ("custext_plus", {"epsilon": 2.0, "k": 7, "stopwords": ["w0", "w5", "w50"], "cache": False}),
    ("tem", {"epsilon": 2.0}),
    ("tem", {"epsilon": 9.0, "beta": 0.05}),  # γ below most distances: truncation at work
    ("santext", {"epsilon": 1.5}),
    ("santext", {"epsilon": 12.0}),
    ("santext_plus", {"epsilon": 3.0, "p": 0.3, "w": 0.5, "frequencies": _freq()}),
    ("santext_plus", {"epsilon": 1.0, "p": 0.05, "w": 0.9, "frequencies": _freq()}),
    ("santext_plus", {"epsilon": 2.0, "p": 1.0, "w": 0.2, "frequencies": _freq()}),
    ("diffractor", {"epsilon": 1.0, "method": "geometric", "cache": False}),
    ("diffractor", {"epsilon": 0.3, "method": "geometric", "n_lists": 3, "cache": False}),
    ("diffractor", {"epsilon": 1.0, "method": "tem", "cache": False}),
    ("diffractor", {"epsilon": 4.0, "method": "tem", "beta": 0.01, "n_lists": 2, "cache": False}),
]


def _case_id(case):
    name, params = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in params.items()
                                 if k not in ("frequencies", "cache", "stopwords"))


@pytest.fixture(scope="module")
def vocab():
    return _vocab()


def _all_pairs(n):
    a, b = np.triu_indices(n, 1)
    return a, b


def exact_losses(mech, a, b):
    """max_y |ln p(y|a) − ln p(y|b)| over the protected outputs, from the exact laws."""
    logp = np.stack([mech.output_distribution(w, log=True) for w in range(len(mech.vocabulary))])
    protected = mech.protected_outputs
    if protected is not None:
        logp = logp[:, protected]
    with np.errstate(invalid="ignore"):
        diff = np.abs(logp[a] - logp[b])
    # −∞ on both sides: an output neither word can give, no loss.
    diff[np.isnan(diff)] = 0.0
    return diff.max(axis=1)


def violations(true, claimed):
    return np.flatnonzero(true > claimed * (1 + RTOL) + ATOL)


def test_the_mechanisms_with_exact_laws_are_the_known_ones():
    have = {n for n in available("word") if callable(getattr(get(n), "output_distribution", None))}
    assert have == EXACT, "a mechanism with an exact law is not checked by this file (or vanished)"
    assert {name for name, _ in CASES} == EXACT


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_privacy_loss_bounds_the_exact_law_and_the_check_has_power(vocab, case):
    name, params = case
    mech = create(name, vocab, **params)
    a, b = _all_pairs(len(vocab))
    d = mech.distance(a, b)
    assert a.size >= 2000
    # The closest pairs by the mechanism's own distance are among them (all pairs are).
    closest = np.argsort(d, kind="stable")[:50]
    assert np.all(d[closest] <= np.partition(d, 49)[49])
    true = exact_losses(mech, a, b)
    claimed = mech.privacy_loss(a, b)
    assert claimed.shape == a.shape
    if name in EXACT_LOSS:  # the exact loss, within the ε·d bound
        assert (claimed <= mech.epsilon * d * (1 + 1e-11)).all()
    else:
        assert (claimed >= mech.epsilon * d * (1 - 1e-15)).all()
    bad = violations(true, claimed)
    assert bad.size == 0, [(int(a[i]), int(b[i]), true[i], claimed[i]) for i in bad[:5]]
    # Power: the same check rejects a map that claims half of the mechanism's loss.
    assert violations(true, claimed / 2).size > 0
    # And the map is not vacuous: the closest pairs get a small, finite loss.
    assert np.isfinite(claimed[closest]).all()


def test_santext_plus_unprotected_outputs_are_only_the_unchanged_input(vocab):
    m = create("santext_plus", vocab, epsilon=2.0, p=0.3, w=0.5, frequencies=_freq())
    unprotected = np.flatnonzero(~m.protected_outputs)
    for x in range(len(vocab)):
        p = m.output_distribution(x)[unprotected]
        assert (p[unprotected != x] == 0).all()
    # The ln(1/p) term: a sensitive/non-sensitive pair gets it, two sensitive words do not.
    sens = np.flatnonzero(m.sensitive)
    non = np.flatnonzero(~m.sensitive)
    mixed = m.privacy_loss(sens[0], non[0]) - 2.0 * m.distance(sens[0], non[0])
    assert mixed == pytest.approx(math.log(1 / 0.3), rel=1e-12)
    assert m.privacy_loss(sens[0], sens[1]) == pytest.approx(2.0 * m.distance(sens[0], sens[1]))


# --- unit tests of the maps ------------------------------------------------------------------

def _every_word_mechanism(vocab):
    x = vocab.vectors.astype(np.float64)
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    d0 = d[np.triu_indices(len(vocab), 1)].min()
    out = []
    for name in available("word"):
        eps = 1.1 * smallest_feasible_epsilon(len(vocab), d0) if name == "gumbel" else 1.5
        params = {"cache": False} if name in ("diffractor", "custext", "custext_plus") else {}
        if name == "santext_plus":
            params["frequencies"] = np.arange(len(vocab), 0, -1.0)
        out.append(create(name, vocab, epsilon=eps, **params))
    return out


@pytest.fixture(scope="module")
def small_mechanisms(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("TEXTDP_CACHE", str(tmp_path_factory.mktemp("cache")))
    try:
        yield _every_word_mechanism(_vocab(n=40, d=5, seed=3))
    finally:
        mp.undo()


def test_distance_is_symmetric_zero_on_the_diagonal_and_vectorised(small_mechanisms):
    assert {m.name for m in small_mechanisms} == set(available("word"))
    for m in small_mechanisms:
        n = len(m.vocabulary)
        a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        d = m.distance(a, b)
        assert d.shape == (n, n) and d.dtype == np.float64, m.name
        np.testing.assert_array_equal(d, d.T)
        assert (np.diag(d) == 0).all() and (d[~np.eye(n, dtype=bool)] > 0).all(), m.name
        loop = np.array([[float(m.distance(i, j)) for j in range(n)] for i in range(3)])
        np.testing.assert_allclose(loop, d[:3], rtol=1e-14, err_msg=m.name)
        loss = m.privacy_loss(a, b)
        assert loss.shape == (n, n) and (np.diag(loss) == 0).all(), m.name
        np.testing.assert_array_equal(loss, loss.T)


def test_guarantee_is_rendered_from_the_map(small_mechanisms):
    for m in small_mechanisms:
        g = m.guarantee
        assert g.numerics is Numerics.IDEALIZED and g.notion is m.notion
        assert g.verified == (m.notion is not Notion.NONE)
        if g.verified:
            assert g.epsilon == m.privacy_map(1.0).epsilon == m.epsilon
            assert g.delta == m.privacy_map(1.0).delta == 0.0
        d = json.loads(json.dumps(g.to_dict()))
        assert d["notion"] == str(m.notion) and d["numerics"] == "idealized float"
        assert {"epsilon", "delta", "metric", "per_word", "per_document", "assumptions",
                "verified", "reference"} <= d.keys()


def test_privacy_map_rounds_up_exactly():
    rng = np.random.default_rng(5)
    eps = 0.1
    d = np.concatenate([rng.random(2000) * 10, [0.0, 1.0, 3.0, 0.3, 7e-300]])
    got = round_up_product(eps, d)
    for e, x in zip(got.tolist(), d.tolist(), strict=True):
        exact = Fraction(eps) * Fraction(x)
        assert Fraction(e) >= exact
        assert Fraction(float(np.nextafter(e, -np.inf))) < exact or e == 0.0
    assert round_up_product(eps, 1.0) == eps and round_up_product(eps, 0.0) == 0.0
    assert round_up_product(eps, np.inf) == np.inf
    mvc = create("mvc", _vocab(n=10), epsilon=eps)
    budget = mvc.privacy_map(d)
    assert isinstance(budget, Budget) and budget.delta == 0.0
    np.testing.assert_array_equal(budget.epsilon, got)
    assert mvc.privacy_map(3.0).epsilon > 0.3 and isinstance(mvc.privacy_map(3.0).epsilon, float)
    with pytest.raises(ValueError, match="distance"):
        mvc.privacy_map(-1.0)
    with pytest.raises(ValueError, match="distance"):
        mvc.privacy_map(np.array([1.0, np.nan]))


def test_vickrey_with_the_input_excluded_has_no_finite_loss():
    v = _vocab(n=20)
    a, b = _all_pairs(20)
    spec = create("vickrey", v, epsilon=2.0)
    assert spec.notion is Notion.NONE
    assert np.isinf(spec.privacy_loss(a, b)).all()
    assert spec.privacy_loss(np.arange(20), np.arange(20)).tolist() == [0.0] * 20
    assert spec.privacy_map(0.5).epsilon == np.inf
    plain = create("vickrey", v, epsilon=2.0, exclude_input=False)
    np.testing.assert_allclose(plain.privacy_loss(a, b), 2.0 * plain.distance(a, b), rtol=1e-14)


def test_mahalanobis_distance_is_its_metric():
    v = _vocab(n=30)
    m = create("mahalanobis", v, epsilon=1.0, lam=0.5)
    x = v.vectors.astype(np.float64)
    sigma_inv = np.linalg.inv(m.sqrt_covariance @ m.sqrt_covariance)
    diff = x[3] - x[7]
    assert m.distance(3, 7) == pytest.approx(math.sqrt(diff @ sigma_inv @ diff), rel=1e-10)
    assert m.privacy_loss(3, 7) >= m.distance(3, 7)


def test_embedding_maps():
    d = np.array([0.0, 0.5, 2.0])
    m1 = LaplaceVector(epsilon=2.0)
    assert m1.privacy_map(d).epsilon.tolist() == [0.0, 1.0, 4.0] and m1.privacy_map(d).delta == 0
    loose = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=30)
    assert loose.privacy_map(1.5).epsilon == 3.0
    assert loose.privacy_map(1.5).delta == loose.delta_bound == loose.guarantee.delta > 0
    strict = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=30, strict=True)
    assert strict.privacy_map(1.5) == Budget(3.0, 0.0)
    snapped = PrivEmb(epsilon=2.0, delta=1e-6, beta=0.9, dim=30, snap="auto")
    assert loose.guarantee.numerics is Numerics.IDEALIZED
    assert snapped.guarantee.numerics is Numerics.SNAPPED is snapped.numerics
    assert json.loads(json.dumps(snapped.describe()))["guarantee"]["numerics"] == str(Numerics.SNAPPED)
    assert loose.guarantee.notion is Notion.APPROXIMATE_LIPSCHITZ
    assert strict.guarantee.notion is m1.guarantee.notion is Notion.PURE_LIPSCHITZ


def test_document_maps():
    rng = np.random.default_rng(0)
    dc = DeepCandidate(rng.standard_normal((5, 3)), epsilon=0.7, n_projections=3)
    k = np.arange(4)
    assert dc.privacy_map(k).epsilon.tolist() == [0.0, 0.7, 1.4, round_up_product(0.7, 3.0)]
    assert dc.privacy_map(2).delta == 0.0 and dc.guarantee.epsilon == 0.7
    assert dc.guarantee.notion is Notion.SENTENCE_DP
    t = Truncation(np.zeros(3), np.ones(3), epsilon=1.5)
    assert t.privacy_map(2).epsilon == 3.0 and t.guarantee.notion is Notion.SENTENCE_DP


# --- parameters declared once ------------------------------------------------------------

def _classes():
    return [get(n) for n in available("word")] + [PrivEmb, LaplaceVector, DeepCandidate, Truncation]


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_declarations_match_the_constructor(cls):
    sig = inspect.signature(cls.__init__).parameters
    keyword = {n: p for n, p in sig.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    declared = {p.name: p for p in cls.PARAMETERS}
    assert list(keyword) == list(declared)
    for name, p in declared.items():
        default = keyword[name].default
        assert (default is inspect.Parameter.empty) == (p.default is REQUIRED), name
        if default is not inspect.Parameter.empty:
            assert default == p.default and p.validate(p.default) == p.default, name
    # ε, δ, β are keyword-only everywhere.
    assert {"epsilon", "delta", "beta"} & set(sig) <= set(keyword)


def test_create_names_unknown_and_missing_parameters():
    v = _vocab(n=10)
    with pytest.raises(ValueError, match=r"'tem'.*unknown parameter\(s\) 'gamma'.*epsilon, beta"):
        create("tem", v, epsilon=1.0, gamma=2.0)
    with pytest.raises(ValueError, match=r"missing required parameter\(s\) 'epsilon'"):
        create("mvc", v)
    with pytest.raises(TypeError, match="t must be a real number"):
        create("vickrey", v, epsilon=1.0, t="0.5")
    with pytest.raises(ValueError, match=r"t must lie in \[0, 1\], got 1.5"):
        create("vickrey", v, epsilon=1.0, t=1.5)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        create("mvc", v, epsilon=float("inf"))
    with pytest.raises(ValueError, match="n_lists must be ≥ 1"):
        create("diffractor", v, epsilon=1.0, n_lists=0, cache=False)
    with pytest.raises(ValueError, match="unknown method 'x'; choose one of: geometric, tem"):
        create("diffractor", v, epsilon=1.0, method="x", cache=False)
    assert create("mahalanobis", v, epsilon=1.0).parameters == {"epsilon": 1.0, "lam": 0.2}
