"""1-Diffractor (Meisenbacher et al., IWSPA 2024): exact lists, exact output law, privacy, sampling.

* Lists: the fast builder equals a brute-force greedy chain (real GloVe words and a tie-heavy
  integer lattice, ≥ 2,000 words each); every list is a permutation; the disk cache round-trips
  and a corrupt file is rebuilt.
* Privacy, exactly: for ≥ 1,000 word pairs, max_y |ln p(y|w) − ln p(y|w′)| ≤ ε·d_max(w, w′) from
  ``log_output_distribution`` (both methods, several lists, two embedding models).
* Sampling: χ² of ≥ 100,000 draws against ``output_distribution`` at α = 1e-6, with power checks
  (ε × 1.05 must be rejected; so must TEM with the reference code's fixed γ = 5), a literal
  Gumbel-max TEM (SPEC §2.5) against our inverse-CDF sampler, and N_w = tanh(ε/2) at ε = 1.
"""

import math

import numpy as np
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.word import _lists
from textdp.mechanisms.word.diffractor import Diffractor, tem_gamma
from textdp.vocab import Vocabulary, load_default

ALPHA = 1e-6
N_SAMPLES = 200_000


@pytest.fixture(scope="module")
def glove():
    return load_default()


@pytest.fixture(scope="module")
def small(glove):
    """2,500 real GloVe words (frequency order)."""
    return Vocabulary(glove.words[:2500], glove.vectors[:2500], name="glove-top2500")


@pytest.fixture(scope="module")
def second_model(small):
    """Another 'embedding model' over the same words: different vectors, different row order."""
    rng = np.random.default_rng(5)
    order = rng.permutation(len(small))
    rot, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    vectors = small.vectors[order] @ rot.astype(np.float32)
    vectors += rng.standard_normal(vectors.shape).astype(np.float32) * 0.3
    return Vocabulary([small.words[i] for i in order], vectors, name="other-model")


def brute_force_chain(vectors, start):
    """Algorithm 1 literally: the float64-nearest unused word each step (first index on ties)."""
    v = np.asarray(vectors, dtype=np.float32).astype(np.float64)
    n = len(v)
    used = np.zeros(n, dtype=bool)
    out = [start]
    used[start] = True
    c = start
    for _ in range(n - 1):
        d = ((v - v[c]) ** 2).sum(axis=1)
        d[used] = np.inf
        c = int(np.argmin(d))
        used[c] = True
        out.append(c)
    return np.array(out)


def is_permutation(perm, n):
    return perm.shape == (n,) and np.array_equal(np.sort(perm), np.arange(n))


# --- lists ------------------------------------------------------------------------------------

def test_list_equals_brute_force_chain_on_glove_words(small):
    for seed in (0, 11):
        start = _lists.start_word(len(small), seed)
        fast = _lists.build_list(small, seed, cache=False)
        assert fast[0] == start
        assert np.array_equal(fast, brute_force_chain(small.vectors, start))


def test_list_equals_brute_force_chain_with_exact_ties():
    rng = np.random.default_rng(3)
    # 2,100 points on a 5-d integer lattice: many duplicates and exactly tied distances.
    vectors = rng.integers(-2, 3, size=(2100, 5)).astype(np.float32)
    for start in (0, 1234):
        assert np.array_equal(_lists.greedy_chain(vectors, start), brute_force_chain(vectors, start))


def test_tiny_vocabularies():
    for n in (2, 3, 17):
        v = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        for start in range(n):
            assert np.array_equal(_lists.greedy_chain(v, start), brute_force_chain(v, start))


def test_lists_are_permutations_and_seeds_differ(small):
    lists = _lists.build_lists(small, [0, 1, 2], cache=False)
    assert lists.shape == (3, len(small))
    for perm in lists:
        assert is_permutation(perm, len(small))
    assert len({int(p[0]) for p in lists}) == 3


def test_cache_round_trip_and_corrupt_file_rebuilt(small, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    built = _lists.build_list(small, 4)
    path = _lists.list_cache_path(small, 4)
    assert path.exists() and str(tmp_path) in str(path)
    assert small.fingerprint[:40] in path.name and f"v{_lists.ALGORITHM_VERSION}" in path.name

    def no_rebuild(*args, **kwargs):
        raise AssertionError("the cached list should have been used")

    with monkeypatch.context() as m:
        m.setattr(_lists, "greedy_chain", no_rebuild)
        assert np.array_equal(_lists.build_list(small, 4), built)

    # Garbage, a truncated file, and a valid file whose permutation was tampered with.
    raw = path.read_bytes()
    tampered = dict(np.load(path))
    tampered["perm"] = tampered["perm"].copy()
    tampered["perm"][[5, 6]] = tampered["perm"][[6, 5]]
    for corrupt in ("garbage", "truncated", "tampered"):
        if corrupt == "garbage":
            path.write_bytes(b"not a list")
        elif corrupt == "truncated":
            path.write_bytes(raw[: len(raw) // 2])
        else:
            np.savez(path.with_suffix(""), **tampered)  # np.savez appends .npz
        assert np.array_equal(_lists.build_list(small, 4), built)
        assert np.array_equal(np.load(path)["perm"], built)  # the file was rewritten

    # A different vocabulary (fingerprint) never reuses another one's file.
    other = Vocabulary(small.words, small.vectors * 2, name="scaled")
    assert _lists.list_cache_path(other, 4) != path


# --- the mechanism: parameters ----------------------------------------------------------------

def test_registered_and_parameters(small):
    assert "diffractor" in textdp.mechanisms.available()
    m = create("diffractor", small, epsilon=1.0, method="tem", n_lists=2, cache=False)
    assert isinstance(m, Diffractor) and m.n_lists == 2
    assert m.gamma == pytest.approx(2 * math.log(0.999 * 2499 / 0.001))
    p = m.parameters
    assert p["method"] == "tem" and p["beta"] == 0.001 and p["seeds"] == [0, 1]
    assert len(p["lists_fingerprint"]) == 64
    g = m.guarantee
    assert g.epsilon == 1.0 and "d_max" in g.metric and g.delta == 0.0


@pytest.mark.parametrize("kwargs,error", [
    ({"method": "laplace"}, ValueError),
    ({"method": 3}, TypeError),
    ({"n_lists": 0}, ValueError),
    ({"n_lists": 1.5}, TypeError),
    ({"method": "tem", "beta": 1.0}, ValueError),
    ({"method": "tem", "beta": 0.0}, ValueError),
    ({"method": "geometric", "beta": 0.01}, ValueError),
    ({"seeds": [1, 1]}, ValueError),
    ({"seeds": [-1]}, ValueError),
    ({"seeds": [1, 2], "n_lists": 3}, ValueError),
    ({"epsilon": 0.0}, ValueError),
])
def test_bad_parameters(small, kwargs, error):
    kwargs = {"epsilon": 1.0, "cache": False, **kwargs}
    with pytest.raises(error):
        Diffractor(small, **kwargs)


def test_models_must_share_the_word_set(small, glove):
    other = Vocabulary(glove.words[1:2501], glove.vectors[1:2501], name="shifted")
    with pytest.raises(ValueError, match="exactly the words"):
        Diffractor(small, epsilon=1.0, models=[small, other], cache=False)


def test_two_models_map_to_vocabulary_rows(small, second_model):
    m = Diffractor(small, epsilon=1.0, models=[small, second_model], n_lists=2, cache=False)
    assert m.n_lists == 4  # L1: two lists per model
    for perm in m.lists:
        assert is_permutation(perm, len(small))
    # The second model's lists, read as words, are its own greedy chains.
    own = _lists.build_lists(second_model, [0, 1], cache=False)
    words = small.words_array
    for k in range(2):
        assert words[m.lists[2 + k]].tolist() == [second_model.words[i] for i in own[k]]
    a, b = "good", "bad"
    pos = m.positions
    assert m.distance(a, b) == max(abs(int(pos[k, small.index(a)]) - int(pos[k, small.index(b)]))
                                   for k in range(4))


# --- exact output law and privacy -------------------------------------------------------------

def _pairs(mech, rng, n_pairs):
    """Half list-neighbours (d = 1 in some list: the hardest pairs), half random pairs."""
    n = len(mech.vocabulary)
    k = rng.integers(mech.n_lists, size=n_pairs // 2)
    i = rng.integers(n - 1, size=n_pairs // 2)
    near = np.stack([mech.lists[k, i], mech.lists[k, i + 1]], axis=1)
    far = rng.integers(n, size=(n_pairs - n_pairs // 2, 2))
    return np.concatenate([near, far])


@pytest.mark.parametrize("method,eps", [("geometric", 1.0), ("geometric", 0.1), ("tem", 1.0),
                                        ("tem", 3.0)])
def test_exact_privacy_on_1000_pairs(small, second_model, method, eps):
    m = Diffractor(small, epsilon=eps, method=method, models=[small, second_model], cache=False)
    rng = np.random.default_rng(21)
    pairs = _pairs(m, rng, 1000)
    words = np.unique(pairs)
    logp = {int(w): m.log_output_distribution(int(w)) for w in words}
    for lp in list(logp.values())[:20]:
        assert np.isfinite(lp).all() and math.fsum(np.exp(lp)) == pytest.approx(1.0, abs=1e-12)
    pos = m.positions
    worst = 0.0
    violated_with_min = False
    for w, w2 in pairs.tolist():
        gap = float(np.abs(logp[w] - logp[w2]).max())
        dl = np.abs(pos[:, w] - pos[:, w2])
        assert gap <= eps * dl.max() + 1e-9, (w, w2)
        if w != w2:
            worst = max(worst, gap / (eps * dl.max()))
            violated_with_min |= gap > eps * dl.min() + 1e-9
    # The check has teeth: the bound is approached, and d_max cannot be replaced by min_l d_l.
    assert worst > 0.3
    assert violated_with_min


def test_output_distribution_single_list_closed_form(small):
    m = Diffractor(small, epsilon=0.7, cache=False)
    a = math.exp(-0.7)
    lst = m.lists[0]
    n = len(small)
    for x in (0, 1, 1000, n - 1):
        logp = m.log_output_distribution(int(lst[x]))[lst]  # in list order
        y = np.arange(n)
        expected = math.log((1 - a) / (1 + a)) - 0.7 * np.abs(y - x)
        expected[0] = -0.7 * x - math.log(1 + a)
        expected[-1] = -0.7 * (n - 1 - x) - math.log(1 + a)
        assert np.allclose(logp, expected, rtol=1e-12, atol=1e-12)
        p = m.output_distribution(int(lst[x]))[lst]
        assert p.sum() == pytest.approx(1.0, abs=1e-12) and p[x] == pytest.approx(math.exp(expected[x]))


def test_probability_unchanged_is_tanh_half_epsilon(small):
    m = Diffractor(small, epsilon=1.0, cache=False)
    interior = int(m.lists[0][1200])
    assert m.probability_unchanged([interior])[0] == pytest.approx(math.tanh(0.5), rel=1e-12)
    assert m.output_distribution(interior)[interior] == pytest.approx(math.tanh(0.5), rel=1e-12)
    t = Diffractor(small, epsilon=1.0, method="tem", cache=False)
    assert t.probability_unchanged([interior])[0] == pytest.approx(
        t.output_distribution(interior)[interior], rel=1e-12)


# --- sampling ---------------------------------------------------------------------------------

def _chi2_p(samples, probs):
    """χ² of vocabulary-row samples against probs; rows expecting < 5 are merged into one bin."""
    observed = np.bincount(samples, minlength=probs.size).astype(float)
    expected = probs * samples.size
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] < 5:  # fold a too-small remainder into the smallest kept bin
        j = int(np.argmin(exp[:-1]))
        obs[j] += obs[-1]
        exp[j] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    stat = float(((obs - exp) ** 2 / exp).sum())
    return stats.chi2(obs.size - 1).sf(stat)


def _samples(mech, word, n, seed):
    ids = np.full(n, mech.vocabulary.index(word) if isinstance(word, str) else word)
    return mech.privatize_ids(ids, np.random.default_rng(seed))


@pytest.mark.statistical
@pytest.mark.parametrize("method,eps", [("geometric", 1.0), ("geometric", 0.3), ("tem", 1.0),
                                        ("tem", 0.3)])
def test_samples_match_output_distribution_with_power(small, second_model, method, eps):
    kw = {"method": method, "models": [small, second_model], "n_lists": 2, "cache": False}
    m = Diffractor(small, epsilon=eps, **kw)
    wrong = Diffractor(small, epsilon=eps * 1.05, **kw)
    for j, word in enumerate(["good", int(m.lists[1][0]), int(m.lists[3][-2])]):
        exact = m.output_distribution(word)
        assert _chi2_p(_samples(m, word, N_SAMPLES, 100 + j), exact) > ALPHA
        assert _chi2_p(_samples(wrong, word, N_SAMPLES, 200 + j), exact) < ALPHA


@pytest.mark.statistical
def test_tem_rejects_fixed_gamma_of_reference_code(small):
    m = Diffractor(small, epsilon=1.0, method="tem", cache=False)
    wrong = Diffractor(small, epsilon=1.0, method="tem", cache=False)
    wrong._gamma = 5.0  # the reference code's fixed γ
    exact = m.output_distribution("good")
    assert _chi2_p(_samples(m, "good", N_SAMPLES, 1), exact) > ALPHA
    assert _chi2_p(_samples(wrong, "good", N_SAMPLES, 2), exact) < ALPHA


def _tem_gumbel_max(mech, word_id, n, rng):
    """SPEC §2.5 literally, on one list: scores −d on L_w, ⊥ = −γ + (2/ε)ln|V∖L_w|, Gumbel(0, 2/ε)."""
    eps, gamma = mech.epsilon, mech.gamma
    lst = mech.lists[0]
    size = lst.size
    x = int(mech.positions[0, word_id])
    window = np.array([y for y in range(size) if abs(y - x) <= gamma])
    outside = np.setdiff1d(np.arange(size), window)
    scores = -np.abs(window - x).astype(float)
    bottom = -gamma + (2 / eps) * math.log(outside.size) if outside.size else -np.inf
    all_scores = np.append(scores, bottom)
    noisy = all_scores[None, :] + rng.gumbel(0.0, 2 / eps, size=(n, all_scores.size))
    choice = noisy.argmax(axis=1)
    pos = np.where(choice < window.size, window[np.minimum(choice, window.size - 1)],
                   outside[rng.integers(max(outside.size, 1), size=n)] if outside.size else 0)
    return lst[pos]


@pytest.mark.statistical
@pytest.mark.parametrize("eps,where", [(1.0, 1000), (1.0, 3), (4.0, 2499)])
def test_tem_closed_form_equals_literal_gumbel_max(small, eps, where):
    m = Diffractor(small, epsilon=eps, method="tem", cache=False)
    word = int(m.lists[0][where])
    rng = np.random.default_rng(31)
    reference = _tem_gumbel_max(m, word, N_SAMPLES, rng)
    exact = m.output_distribution(word)
    assert _chi2_p(reference, exact) > ALPHA  # our closed form is the SPEC's mechanism
    assert _chi2_p(_samples(m, word, N_SAMPLES, 32), exact) > ALPHA


@pytest.mark.statistical
def test_n_w_at_epsilon_one_is_tanh_half_on_the_default_vocabulary(glove):
    with threadpool_limits(1):  # 1 BLAS thread: the graph's GEMMs thrash on a shared machine
        m = Diffractor(glove, epsilon=1.0)  # one list of the 47,883-word default (disk cache)
    assert is_permutation(m.lists[0], len(glove))
    word = int(m.lists[0][len(glove) // 2])
    k = int((_samples(m, word, N_SAMPLES, 41) == word).sum())
    assert stats.binomtest(k, N_SAMPLES, math.tanh(0.5)).pvalue > ALPHA
    # Power: ε × 1.05 gives N_w = tanh(0.525) and is rejected.
    wrong = Diffractor(glove, epsilon=1.05)
    k_wrong = int((_samples(wrong, word, N_SAMPLES, 42) == word).sum())
    assert stats.binomtest(k_wrong, N_SAMPLES, math.tanh(0.5)).pvalue < ALPHA
    # Exact privacy on 1,000 pairs of the default vocabulary, one list.
    rng = np.random.default_rng(43)
    pairs = _pairs(m, rng, 1000)
    pos = m.positions[0]
    cache = {}
    for w, w2 in pairs.tolist():
        for u in (w, w2):
            if u not in cache:
                cache[u] = m.log_output_distribution(u)
        gap = np.abs(cache[w] - cache[w2]).max()
        assert gap <= abs(int(pos[w]) - int(pos[w2])) + 1e-9


# --- through the pipeline ---------------------------------------------------------------------

def test_privatize_end_to_end(small):
    texts = ["The GOOD food was great, and the service was Good!", "", "nothing 42 here?"]
    r1 = textdp.privatize(texts, mechanism="diffractor", vocabulary=small, epsilon=1.0,
                          method="tem", n_lists=2, seed=5, cache=False)
    r2 = textdp.privatize(texts, mechanism="diffractor", vocabulary=small, epsilon=1.0,
                          method="tem", n_lists=2, seed=5, cache=False)
    assert r1.texts == r2.texts and len(r1.texts) == 3 and r1.texts[1] == ""
    rep = r1.report
    assert rep["mechanism"]["name"] == "diffractor"
    assert rep["mechanism"]["parameters"]["n_lists"] == 2
    assert "d_max" in rep["guarantee"]["metric"]
    # Huge ε: every in-vocabulary word comes back (case restored), numbers are masked.
    r = textdp.privatize(texts, mechanism="diffractor", vocabulary=small, epsilon=200.0,
                         cache=False)
    assert r.texts[0] == texts[0]
    assert "[MASK]" in r.texts[2]


def test_vectorised_over_lists_and_tokens(small, second_model):
    m = Diffractor(small, epsilon=0.5, models=[small, second_model], n_lists=2, cache=False)
    ids = np.random.default_rng(0).integers(len(small), size=50_000)
    noise = m.draw(ids, np.random.default_rng(1))
    out = m.apply(ids, noise)
    lst, off = noise
    # Token by token, the same as the definition on the chosen list.
    pos = m.positions[lst, ids] + off
    assert np.array_equal(out, m.lists[lst, np.clip(pos, 0, len(small) - 1)])
    assert set(np.unique(lst).tolist()) == {0, 1, 2, 3}


def test_tem_gamma_formula():
    assert tem_gamma(1.0, 0.001, 47_883) == pytest.approx(2 * math.log(0.999 * 47_882 / 0.001))


def test_models_without_vocabulary_and_bad_list_arguments(small, second_model):
    m = Diffractor(epsilon=1.0, models=[second_model, small], cache=False)
    assert m.vocabulary is second_model and m.n_lists == 2
    with pytest.raises(TypeError):
        _lists.build_lists("not a vocabulary", [0])
    with pytest.raises(ValueError):
        _lists.build_lists(small, [])
    with pytest.raises(ValueError):
        _lists.build_lists(small, [True])
    with pytest.raises(ValueError):
        _lists.greedy_chain(small.vectors[:10], 10)
    with pytest.raises(TypeError):
        m.output_distribution(1.5)
    with pytest.raises(ValueError):
        m.output_distribution(len(small))
    with pytest.raises(KeyError):
        m.output_distribution("notaword")
