"""CusText / CusText+ (Chen et al. 2023): the mapping function against a brute-force Algorithm 1,
the exact law against the paper's formula, the exact privacy loss (≤ ε in a group, ∞ across),
the sampler against the exact law with a power check, batch independence, the cache, the
pipeline and the report."""

import numpy as np
import pytest
from scipy import special, stats

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.word import custext
from textdp.mechanisms.word.custext import CusText, CusTextPlus, build_groups
from textdp.privacy import Notion
from textdp.vocab import Vocabulary

ALPHA = 1e-6


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    custext._CACHE.clear()


def _vocab(n=100, d=6, seed=4, words=None):
    rng = np.random.default_rng(seed)
    return Vocabulary(words or [f"w{i}" for i in range(n)], rng.standard_normal((n, d)))


def _brute_groups(vectors, k, eligible):
    """Algorithm 1 written out: the first free word and its k − 1 nearest free words."""
    x = vectors.astype(np.float64)
    free = eligible.copy()
    groups = []
    for leader in np.flatnonzero(eligible):
        if not free[leader]:
            continue
        cand = np.flatnonzero(free & (np.arange(len(x)) != leader))
        d = ((x[cand] - x[leader]) ** 2).sum(1)
        chosen = [leader, *cand[np.lexsort((cand, d))][:k - 1].tolist()]
        free[chosen] = False
        groups.append(sorted(chosen))
    return groups


@pytest.mark.parametrize("k", [1, 3, 7, 20])
def test_groups_are_algorithm_1_and_partition_the_vocabulary(k):
    v = _vocab()
    g = build_groups(v, k, cache=False)
    mapped = g.members[g.members >= 0]
    np.testing.assert_array_equal(np.sort(mapped), np.arange(len(v)))  # a partition
    want = _brute_groups(v.vectors, k, np.ones(len(v), bool))
    got = [sorted(r[r >= 0].tolist()) for r in g.members]
    assert got == want
    # Every member of an output set maps to that same set.
    for row in g.members:
        row = row[row >= 0]
        assert (g.group_of[row] == g.group_of[row[0]]).all()
    assert (g.sizes[:-1] == k).all() and 1 <= g.sizes[-1] <= k


def test_fallback_path_when_neighbour_lists_run_short():
    # Clustered points: late leaders find their 2K lists used up and scan the free rows.
    rng = np.random.default_rng(9)
    centres = rng.standard_normal((12, 4)) * 10
    vec = (centres[rng.integers(0, 12, 300)] + rng.standard_normal((300, 4)) * 0.1)
    v = Vocabulary([f"w{i}" for i in range(300)], vec)
    g = build_groups(v, 8, cache=False)
    assert [sorted(r[r >= 0].tolist()) for r in g.members] == _brute_groups(
        vec, 8, np.ones(300, bool))


def test_law_is_the_exponential_mechanism_over_normalised_similarity():
    v = _vocab()
    eps = 2.5
    m = CusText(v, epsilon=eps, k=7, cache=False)
    x = v.vectors.astype(np.float64)
    for w in (0, 13, 57, 99):
        row = m.groups.members[m.groups.group_of[w]]
        row = row[row >= 0]
        d = np.sqrt(((x[row] - x[w]) ** 2).sum(1))
        u = (d.max() - d) / (d.max() - d.min())
        want = np.zeros(len(v))
        want[row] = special.softmax(eps * u / 2)
        np.testing.assert_allclose(m.output_distribution(w), want, rtol=1e-12, atol=0)
        assert m.probability_unchanged(np.array([w]))[0] == pytest.approx(want[w], rel=1e-12)


@pytest.mark.parametrize("eps", [0.5, 3.0, 20.0])
def test_privacy_loss_is_exact_at_most_eps_in_a_group_and_infinite_across(eps):
    v = _vocab()
    m = CusText(v, epsilon=eps, k=9, cache=False)
    a, b = np.triu_indices(len(v), 1)
    logp = np.stack([m.output_distribution(w, log=True) for w in range(len(v))])
    with np.errstate(invalid="ignore"):
        diff = np.abs(logp[a] - logp[b])
    diff[np.isnan(diff)] = 0.0
    true = diff.max(axis=1)
    loss = m.privacy_loss(a, b)
    same = m.groups.group_of[a] == m.groups.group_of[b]
    assert np.isinf(loss[~same]).all() and np.isinf(true[~same]).all()
    np.testing.assert_allclose(loss[same], true[same], rtol=1e-11)
    assert (loss[same] >= true[same]).all() and (loss[same] <= eps * (1 + 1e-11)).all()
    # The ε bound is nearly reached at large ε (u = 1 vs u = 0 on both sides).
    assert loss[same].max() > 0.5 * eps
    assert m.guarantee.notion is Notion.OUTPUT_SET_DP
    assert "no protection across groups" in str(m.guarantee.notion)


@pytest.mark.statistical
def test_sampler_matches_exact_law_with_power():
    v = _vocab()
    m = CusText(v, epsilon=3.0, k=12, cache=False)
    wrong = CusText(v, epsilon=3.6, k=12, cache=False)
    words = np.array([0, 41, 77])
    rng = np.random.default_rng(31)
    ids = np.repeat(words, 100_000)
    rng.shuffle(ids)
    out = m.privatize_ids(ids, rng)
    for w in words:
        counts = np.bincount(out[ids == w], minlength=len(v))
        p = m.output_distribution(w)
        assert counts[p == 0].sum() == 0
        keep = p > 0
        assert stats.chisquare(counts[keep], p[keep] * counts.sum()).pvalue > ALPHA
        q = wrong.output_distribution(w)
        assert stats.chisquare(counts[keep], q[keep] * counts.sum()).pvalue < ALPHA


def test_batch_composition_and_seed_do_not_change_outputs():
    m = CusText(_vocab(n=300, d=8), epsilon=2.0, k=10, cache=False)
    rng = np.random.default_rng(25)
    ids = rng.integers(0, 300, 3000)
    noise = m.draw(ids, rng)
    whole = m.apply(ids, noise)
    parts = [m.apply(ids[s:s + 217], noise[s:s + 217]) for s in range(0, 3000, 217)]
    np.testing.assert_array_equal(whole, np.concatenate(parts))
    # Outputs stay in the input's output set.
    assert (m.groups.group_of[whole] == m.groups.group_of[ids]).all()


def test_groups_are_shared_across_epsilon_and_cached_on_disk(tmp_path):
    v = _vocab()
    a = CusText(v, epsilon=1.0, k=7)
    b = CusText(v, epsilon=9.0, k=7)
    assert a.groups is b.groups
    path = custext.groups_cache_path(v, 7, np.zeros(len(v), bool))
    assert path.exists()
    custext._CACHE.clear()
    c = CusText(v, epsilon=1.0, k=7)
    np.testing.assert_array_equal(c.groups.group_of, a.groups.group_of)
    # A corrupt file is rebuilt, never trusted.
    with np.load(path) as data:
        bad = dict(data)
    bad["group_of"] = np.zeros(len(v), dtype="<i4")
    np.savez(path, **bad)
    custext._CACHE.clear()
    d = CusText(v, epsilon=1.0, k=7)
    np.testing.assert_array_equal(d.groups.group_of, a.groups.group_of)


def test_custext_plus_keeps_stop_words_and_groups_the_rest():
    words = ["the", "a", "of", *[f"w{i}" for i in range(57)]]
    v = _vocab(n=60, words=words)
    m = CusTextPlus(v, epsilon=2.0, k=6, cache=False)
    stop = np.array([0, 1, 2])
    assert (m.groups.group_of[stop] == -1).all()
    np.testing.assert_array_equal(m.privatize_ids(np.repeat(stop, 50), np.random.default_rng(1)),
                                  np.repeat(stop, 50))
    assert m.output_distribution(0)[0] == 1.0
    assert not m.protected_outputs[stop].any() and m.protected_outputs[3:].all()
    assert np.isinf(m.privacy_loss(0, 5)) and m.privacy_loss(0, 0) == 0.0
    assert "stop words" in m.guarantee.per_word
    custom = CusTextPlus(v, epsilon=2.0, k=6, stopwords=["w3"], cache=False)
    assert custom.groups.group_of[v.index("w3")] == -1 and custom.groups.group_of[0] >= 0


def test_pipeline_report_and_registry():
    words = ["the", "cat", "sat", "on", "mat", "dog", "ran", "big", "red", "house"]
    v = _vocab(n=10, d=4, words=words)
    texts = ["The cat sat on the mat", "A big red dog ran."]
    for name in ("custext", "custext_plus"):
        a = textdp.privatize(texts, mechanism=name, epsilon=2.0, k=3, seed=5, vocabulary=v)
        b = textdp.privatize(texts, mechanism=name, epsilon=2.0, k=3, seed=5, vocabulary=v,
                             batch_size=1)
        assert a.texts == b.texts
        g = a.report["guarantee"]
        assert g["epsilon"] == 2.0 and g["verified"] and "across groups" in g["notion"]
        assert a.report["deniability"]["method"] == "exact"
        assert name in textdp.mechanisms.available()
    plus = textdp.privatize(texts, mechanism="custext_plus", epsilon=2.0, k=3, vocabulary=v)
    assert plus.report["tokens"]["by_policy"]["stopwords_kept"] == 3  # the, on, the
    assert any(u["kind"] == "stopwords" for u in plus.report["unprotected"])
    # A custom stop-word list is what the pipeline keeps and counts.
    own = textdp.privatize(texts, mechanism="custext_plus", epsilon=2.0, k=3, vocabulary=v,
                           stopwords=["cat", "dog"])
    assert own.report["tokens"]["by_policy"]["stopwords_kept"] == 2
    assert own.texts[0].split()[1] == "cat" and "dog" in own.texts[1].split()


def test_bad_parameters():
    v = _vocab(n=10)
    with pytest.raises(ValueError, match="k"):
        create("custext", v, epsilon=1.0, k=0)
    with pytest.raises(ValueError, match="exceeds"):
        create("custext", v, epsilon=1.0, k=11)
    with pytest.raises(TypeError):
        create("custext_plus", v, epsilon=1.0, stopwords="the")
    with pytest.raises(ValueError, match="custext"):
        create("custext", v, epsilon=1.0, stopwords=["the"])
