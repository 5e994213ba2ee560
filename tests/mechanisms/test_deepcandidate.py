"""DeepCandidate (Meehan, Mrini & Chaudhuri, ACL 2022): depth, exact privacy, sampler, numerics.

No torch and no sentence encoder: embeddings are small generated arrays, the recoder a numpy MLP
with random weights, the text encoder a tiny deterministic callable.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import textdp
from textdp.mechanisms.document import (
    CandidateSet,
    DeepCandidate,
    Recoder,
    build_candidates,
    exponential_log_probabilities,
    random_projections,
    tukey_depth_utilities,
)

ALPHA = 1e-6


def _candidates(rng: np.random.Generator, m: int, d: int, scale: float = 0.5) -> CandidateSet:
    return build_candidates([rng.normal(0, scale, size=(1, d)) for _ in range(m)])


def _random_recoder(rng: np.random.Generator, d: int, hidden: int = 16) -> Recoder:
    return Recoder([(rng.normal(0, 0.5, (d, hidden)), rng.normal(0, 0.1, hidden)),
                    (rng.normal(0, 0.5, (hidden, d)), rng.normal(0, 0.1, d))])


def _brute_force_utilities(sentences, candidates, projections) -> np.ndarray:
    k = sentences.shape[0]
    out = []
    for f in candidates:
        depths = []
        for v in projections.T:
            h = sum(1 for s in sentences if s @ v >= f @ v)
            depths.append(-abs(h - k / 2))
        out.append(min(depths))
    return np.array(out)


def _neighbour(rng, sentences, d):
    """Replace one random sentence by an arbitrary one (random, extreme, or a copy of another)."""
    x2 = sentences.copy()
    i = rng.integers(len(x2))
    kind = rng.integers(3)
    if kind == 0:
        x2[i] = rng.normal(0, 1, d)
    elif kind == 1:
        x2[i] = rng.choice([-1e6, 1e6], size=d)
    else:
        x2[i] = x2[rng.integers(len(x2))]
    return x2


# ------------------------------------------------------------------------------------------------
# The utility


def test_depth_matches_brute_force_two_sided():
    rng = np.random.default_rng(1)
    d, k = 5, 7
    cands = _candidates(rng, 40, d)
    s = rng.normal(0, 1, (k, d))
    mech = DeepCandidate(cands, epsilon=1.0, n_projections=9, projection_seed=3)
    expected = _brute_force_utilities(s, cands.embeddings, mech.projections)
    np.testing.assert_array_equal(mech.utilities(s), expected)
    assert expected.min() >= -k / 2 and expected.max() <= 0


def test_depth_is_two_sided_in_one_dimension():
    # d = 1, p = 1: the direction is ±1; depth of f among {0,1,2,3,4} is −|h − 5/2|.
    s = np.arange(5.0)[:, None]
    f = np.array([[-10.0], [2.0], [10.0], [0.0]])
    u = tukey_depth_utilities(s @ np.ones((1, 1)), f @ np.ones((1, 1)))
    # h = #{s ≥ f}: 5, 3, 0, 5  →  u = −2.5, −0.5, −2.5, −2.5 (far below and far above: equally bad)
    np.testing.assert_array_equal(u, [-2.5, -0.5, -2.5, -2.5])
    # a one-sided "depth" (h alone) would rank the far-below candidate best: ours ranks the median
    assert np.argmax(u) == 1


def test_utility_is_minimum_over_projections():
    # Two projections: deep on the first, shallow on the second → the shallow one counts.
    s = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    f = np.array([[1.5, 10.0]])
    u = tukey_depth_utilities(s, f)  # projections = coordinate axes
    assert u[0] == -2.0


def test_projections_depend_on_the_seed_only():
    a = random_projections(16, 8, 42)
    np.testing.assert_allclose(np.linalg.norm(a, axis=0), 1.0)
    np.testing.assert_array_equal(a, random_projections(16, 8, 42))
    assert not np.allclose(a, random_projections(16, 8, 43))
    rng = np.random.default_rng(0)
    m1 = DeepCandidate(_candidates(rng, 5, 16), epsilon=1.0, n_projections=8, projection_seed=42)
    m2 = DeepCandidate(_candidates(rng, 30, 16, scale=9), epsilon=1.0, n_projections=8, projection_seed=42)
    np.testing.assert_array_equal(m1.projections, m2.projections)
    with pytest.raises(ValueError):
        m1.projections[0, 0] = 1.0


# ------------------------------------------------------------------------------------------------
# Exact privacy: neighbours differing in one sentence, same sentence count


@pytest.mark.parametrize("epsilon", [0.3, 2.0, 10.0, 30.0])
@pytest.mark.parametrize("use_recoder", [False, True])
def test_exact_privacy_neighbouring_documents(epsilon, use_recoder):
    rng = np.random.default_rng(int(epsilon * 10) + 7 * use_recoder)
    d = 6
    recoder = _random_recoder(rng, d) if use_recoder else None
    public = [rng.normal(0, 1, (rng.integers(1, 6), d)) for _ in range(60)]
    cands = build_candidates(public, recoder=recoder)
    mech = DeepCandidate(cands, epsilon=epsilon, n_projections=15, recoder=recoder, projection_seed=5)
    worst_u, worst_lp = 0.0, 0.0
    for _ in range(150):
        k = int(rng.integers(1, 16))
        x = rng.normal(0, 1, (k, d))
        x2 = _neighbour(rng, x, d)
        assert x2.shape == x.shape
        du = np.abs(mech.utilities(x) - mech.utilities(x2)).max()
        dlp = np.abs(mech.log_probabilities(x) - mech.log_probabilities(x2)).max()
        worst_u, worst_lp = max(worst_u, du), max(worst_lp, dlp)
    assert worst_u <= 1
    assert worst_lp <= epsilon + 1e-9
    # The bound is met with room only because Δu ≤ 1: the test would see a doubled sensitivity.
    assert worst_u == 1


def test_privacy_bound_is_tight_enough_to_catch_a_wrong_epsilon():
    """Power: the same check on a mechanism run at 2.2ε (ε/Δu mis-scaled) exceeds ε."""
    rng = np.random.default_rng(11)
    d, eps = 4, 1.0
    cands = _candidates(rng, 50, d)
    wrong = DeepCandidate(cands, epsilon=2.2 * eps, n_projections=10)
    worst = 0.0
    for _ in range(200):
        x = rng.normal(0, 1, (8, d))
        x2 = _neighbour(rng, x, d)
        worst = max(worst, np.abs(wrong.log_probabilities(x) - wrong.log_probabilities(x2)).max())
    assert worst > eps + 1e-9


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-40, 0), min_size=2, max_size=30), st.data(),
       st.floats(0.01, 60.0))
def test_exponential_mechanism_property(u, data, epsilon):
    u = np.array(u, dtype=float) / 2  # half-integers, like depths of odd k
    shift = np.array(data.draw(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]),
                                        min_size=len(u), max_size=len(u))))
    lp, lp2 = exponential_log_probabilities(u, epsilon), exponential_log_probabilities(u + shift,
                                                                                       epsilon)
    assert np.isclose(np.exp(lp).sum(), 1.0)
    assert np.abs(lp - lp2).max() <= epsilon + 1e-9


# ------------------------------------------------------------------------------------------------
# The sampler: chi-square of releases against output_probabilities, with power checks


def _chi2_pvalue(samples: np.ndarray, probabilities: np.ndarray) -> float:
    n = samples.size
    counts = np.bincount(samples, minlength=probabilities.size).astype(float)
    expected = probabilities * n
    order = np.argsort(expected)
    obs_m, exp_m, acc_o, acc_e = [], [], 0.0, 0.0
    for i in order:  # merge the smallest bins until every expected count is ≥ 5
        acc_o += counts[i]
        acc_e += expected[i]
        if acc_e >= 5:
            obs_m.append(acc_o)
            exp_m.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0:
        obs_m[-1] += acc_o
        exp_m[-1] += acc_e
    return float(stats.chisquare(obs_m, exp_m).pvalue)


def _setup_sampler():
    rng = np.random.default_rng(2024)
    d, k = 5, 9
    cands = _candidates(rng, 40, d, scale=0.4)
    s = rng.normal(0, 1, (k, d))
    return DeepCandidate(cands, epsilon=1.5, n_projections=12, projection_seed=1), s, rng


@pytest.mark.statistical
def test_chi_square_sampled_releases_match_output_probabilities():
    mech, s, rng = _setup_sampler()
    p = mech.output_probabilities(s)
    assert 0.02 < p.max() < 0.5  # a spread-out law, not a point mass
    samples = mech.sample_indices(s, 100_000, rng)
    assert _chi2_pvalue(samples, p) > ALPHA


@pytest.mark.statistical
def test_chi_square_release_path():
    mech, s, rng = _setup_sampler()
    samples = np.array([mech.release(s, rng).index for _ in range(20_000)])
    assert _chi2_pvalue(samples, mech.output_probabilities(s)) > ALPHA


@pytest.mark.statistical
def test_chi_square_power_wrong_epsilon():
    mech, s, rng = _setup_sampler()
    wrong = DeepCandidate(mech.candidates, epsilon=1.5 * 1.05 * 2, n_projections=12, projection_seed=1)
    samples = wrong.sample_indices(s, 100_000, rng)
    assert _chi2_pvalue(samples, mech.output_probabilities(s)) < ALPHA
    # ε × 1.05 alone is rejected too at n = 300,000 (a 5% error in the exponent)
    wrong = DeepCandidate(mech.candidates, epsilon=1.5 * 1.05, n_projections=12, projection_seed=1)
    samples = wrong.sample_indices(s, 300_000, rng)
    assert _chi2_pvalue(samples, mech.output_probabilities(s)) < ALPHA


@pytest.mark.statistical
def test_chi_square_power_one_sided_depth():
    mech, s, rng = _setup_sampler()
    sp, fp = s @ mech.projections, mech.candidates.embeddings @ mech.projections
    # The re-implementation's mistake: depth h_j alone (one side of the hyperplane), minimum over j.
    h = np.stack([(sp[:, j][None, :] >= fp[:, j][:, None]).sum(axis=1) for j in range(sp.shape[1])],
                 axis=1)
    one_sided = h.min(axis=1).astype(float)
    logp = exponential_log_probabilities(one_sided, mech.epsilon)
    samples = np.argmax(logp + rng.gumbel(size=(100_000, logp.size)), axis=1)
    assert _chi2_pvalue(samples, mech.output_probabilities(s)) < ALPHA


# ------------------------------------------------------------------------------------------------
# Numerics


def test_log_space_stability_huge_k_and_epsilon():
    rng = np.random.default_rng(3)
    d = 4
    cands = _candidates(rng, 25, d, scale=3.0)
    s = rng.normal(0, 1, (200_000, d))  # u down to −100,000
    for eps in (1.0, 30.0, 1e6):
        p = DeepCandidate(cands, epsilon=eps, n_projections=5).output_probabilities(s)
        assert np.isfinite(p).all() and np.isclose(p.sum(), 1.0)
    lp = exponential_log_probabilities(np.array([1e300, -1e300, 0.0]), 50.0)
    assert not np.isnan(lp).any() and lp[0] == 0.0 and lp[1] == -5e301 and np.exp(lp[1]) == 0
    lp = exponential_log_probabilities(np.array([-1e308, 1e308]), 1e300)
    assert not np.isnan(lp).any() and np.exp(lp).sum() == 1.0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_utility_raises(bad):
    with pytest.raises(ValueError):
        exponential_log_probabilities(np.array([0.0, bad]), 1.0)


def test_probabilities_follow_exp_eps_u_over_2():
    u = np.array([0.0, -1.0, -2.5])
    p = np.exp(exponential_log_probabilities(u, 4.0))
    np.testing.assert_allclose(p / p[0], np.exp(4.0 * u / 2))


# ------------------------------------------------------------------------------------------------
# The recoder, its order, candidates


def test_recoder_is_applied_to_each_sentence_before_depth_and_mean():
    rng = np.random.default_rng(5)
    d = 6
    h = _random_recoder(rng, d)
    public = [rng.normal(0, 1, (int(rng.integers(2, 6)), d)) for _ in range(30)]
    cands = build_candidates(public, recoder=h)
    # candidates are means of H(sentences), not H(mean)
    np.testing.assert_allclose(cands.embeddings[0], h(public[0]).mean(axis=0))
    assert not np.allclose(cands.embeddings[0], h(public[0].mean(axis=0, keepdims=True))[0])
    s = rng.normal(0, 1, (7, d))
    with_h = DeepCandidate(cands, epsilon=3.0, recoder=h, n_projections=11)
    manual = DeepCandidate(cands.embeddings, epsilon=3.0, n_projections=11)  # the same space, by hand
    np.testing.assert_array_equal(with_h.utilities(s), manual.utilities(h(s)))


def test_recoder_mismatch_is_refused():
    rng = np.random.default_rng(6)
    d = 4
    h = _random_recoder(rng, d)
    plain = build_candidates([rng.normal(0, 1, (3, d)) for _ in range(5)])
    recoded = build_candidates([rng.normal(0, 1, (3, d)) for _ in range(5)], recoder=h)
    with pytest.raises(ValueError, match="recoder"):
        DeepCandidate(plain, epsilon=1.0, recoder=h)
    with pytest.raises(ValueError, match="recoder"):
        DeepCandidate(recoded, epsilon=1.0)
    with pytest.raises(ValueError, match="recoder"):
        DeepCandidate(recoded, epsilon=1.0, recoder=_random_recoder(rng, d))
    DeepCandidate(recoded, epsilon=1.0, recoder=h)


def test_recoder_save_load_and_tamper(tmp_path):
    rng = np.random.default_rng(7)
    h = _random_recoder(rng, 5)
    path = h.save(tmp_path / "h.npz")
    h2 = Recoder.load(path)
    assert h2.fingerprint == h.fingerprint
    x = rng.normal(size=(3, 5))
    np.testing.assert_array_equal(h(x), h2(x))
    with np.load(path) as z:
        arrays = dict(z)
    arrays["w0"] = arrays["w0"] + 1e-9
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match="fingerprint"):
        Recoder.load(tmp_path / "bad.npz")


def test_candidate_set_round_trip_and_fingerprint(tmp_path):
    rng = np.random.default_rng(8)
    cands = build_candidates([rng.normal(size=(2, 3)) for _ in range(4)], ids=list("abcd"),
                             encoder="toy", metadata={"source": "test"})
    loaded = CandidateSet.load(cands.save(tmp_path / "f.npz"))
    assert loaded.fingerprint == cands.fingerprint and loaded.ids == ("a", "b", "c", "d")
    assert loaded.encoder == "toy" and loaded.metadata == {"source": "test"}
    with np.load(tmp_path / "f.npz") as z:
        arrays = dict(z)
    arrays["embeddings"] = arrays["embeddings"][::-1]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match="fingerprint"):
        CandidateSet.load(tmp_path / "bad.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="candidate file"):
        CandidateSet.load(tmp_path / "junk.npz")


def test_train_recoder_small():
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    from textdp.mechanisms.document import train_recoder

    rng = np.random.default_rng(9)
    centres = rng.normal(0, 3, (3, 8))
    docs = [centres[i % 3] + rng.normal(0, 0.3, (4, 8)) for i in range(30)]
    a = train_recoder(docs, n_clusters=3, hidden_layers=(16,), epochs=30,
                      rng=np.random.default_rng(1))
    b = train_recoder(docs, n_clusters=3, hidden_layers=(16,), epochs=30,
                      rng=np.random.default_rng(1))
    assert a.recoder.fingerprint == b.recoder.fingerprint  # seeded from the Generator alone
    assert a.recoder(docs[0]).shape == (4, 8)
    assert a.accuracy > 0.9 and a.losses[-1] < a.losses[0]


# ------------------------------------------------------------------------------------------------
# API


def test_release_returns_a_candidate_and_text_input_with_a_tiny_encoder():
    from textdp.encoders import encode_documents

    def encoder(sentences: list[str]) -> np.ndarray:
        return np.array([[b / 255 for b in hashlib.sha256(s.encode()).digest()[:6]]
                         for s in sentences])

    rng = np.random.default_rng(10)
    public = [encoder([f"public {i} {j}." for j in range(3)]) for i in range(20)]
    mech = DeepCandidate(build_candidates(public, ids=[f"doc{i}" for i in range(20)]), epsilon=5.0,
                         n_projections=7)
    # The mechanism takes arrays; textdp.encoders turns a text (or its sentences) into them.
    text, sentences = encode_documents(encoder, [
        "The food was great. Service was slow. I would go back.",
        ["The food was great.", "Service was slow.", "I would go back."]])
    np.testing.assert_array_equal(text, sentences)
    r = mech.release(text, rng)
    assert r.id == f"doc{r.index}"
    np.testing.assert_array_equal(r.embedding, mech.candidates.embeddings[r.index])
    r2 = mech.release(sentences, rng)
    assert 0 <= r2.index < 20
    emb, idx = mech.release_many([encoder(["a.", "b."]), encoder(["c.", "d.", "e."])], rng)
    assert emb.shape == (2, 6) and idx.shape == (2,)


def test_bad_inputs():
    rng = np.random.default_rng(12)
    cands = _candidates(rng, 5, 3)
    with pytest.raises(TypeError):
        DeepCandidate(cands, epsilon="1")
    for eps in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            DeepCandidate(cands, epsilon=eps)
    with pytest.raises(ValueError):
        DeepCandidate(cands, epsilon=1.0, n_projections=0)
    with pytest.raises(TypeError):
        DeepCandidate(cands, epsilon=1.0, n_projections=2.5)
    with pytest.raises(ValueError):
        DeepCandidate(cands, epsilon=1.0, projection_seed=-1)
    mech = DeepCandidate(cands, epsilon=1.0)
    with pytest.raises(ValueError, match="sentence embeddings"):
        mech.release(np.zeros(3))  # a document mean is not enough
    with pytest.raises(ValueError):
        mech.release(np.zeros((0, 3)))
    with pytest.raises(ValueError):
        mech.release(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="dimension"):
        mech.release(np.zeros((2, 4)))
    with pytest.raises(TypeError, match="encoder"):
        mech.release("Some text.")
    with pytest.raises(TypeError):
        mech.release(np.zeros((2, 3)), rng=1)


def test_guarantee_states_sentdp_and_the_same_count_assumption():
    rng = np.random.default_rng(13)
    mech = textdp.DeepCandidate(_candidates(rng, 5, 3), epsilon=4.0, n_projections=3)
    g = mech.guarantee
    assert "SentDP" in g.notion and g.epsilon == 4.0 and g.delta == 0.0
    assert any("same number of sentences" in a for a in g.assumptions)
    assert "same number of sentences" in g.per_document
    info = mech.describe()
    assert info["candidates"]["fingerprint"] == mech.candidates.fingerprint
    assert len(info["projections_fingerprint"]) == 64


def test_release_many_equals_sequential_releases():
    rng = np.random.default_rng(14)
    d = 6
    h = _random_recoder(rng, d)
    public = [rng.normal(0, 1, (int(rng.integers(1, 5)), d)) for _ in range(50)]
    mech = DeepCandidate(build_candidates(public, recoder=h), epsilon=8.0, recoder=h, n_projections=9)
    docs = [rng.normal(0, 1, (int(rng.integers(1, 9)), d)) for _ in range(20)]
    emb, idx = mech.release_many(docs, np.random.default_rng(99))
    seq_rng = np.random.default_rng(99)
    assert idx.tolist() == [mech.release(doc, seq_rng).index for doc in docs]
    np.testing.assert_array_equal(emb, mech.candidates.embeddings[idx])


def test_cli_docembed_user_errors_exit_2_before_loading_an_encoder(tmp_path, capsys):
    from textdp.cli import main

    rng = np.random.default_rng(15)
    h = _random_recoder(rng, 4)
    cands = build_candidates([rng.normal(size=(2, 4)) for _ in range(5)], recoder=h)
    cpath, hpath = cands.save(tmp_path / "f.npz"), h.save(tmp_path / "h.npz")
    doc = tmp_path / "in.txt"
    doc.write_text("One sentence. Two sentences.\n", encoding="utf-8")
    out, other = tmp_path / "out.npy", tmp_path / "other.txt"
    other.write_text("not candidates\n", encoding="utf-8")
    cases = [
        (["--candidates", str(cpath), "--epsilon", "1"], "recoder"),          # H missing
        (["--candidates", str(tmp_path / "none.npz"), "--epsilon", "1"], "no such file"),
        (["--candidates", str(other), "--epsilon", "1", "--recoder", str(hpath)], "candidate file"),
        # the input itself as the candidates: refused as the same file, before anything is read
        (["--candidates", str(doc), "--epsilon", "1", "--recoder", str(hpath)],
         "the candidate file is the input"),
        (["--candidates", str(cpath), "--epsilon", "0", "--recoder", str(hpath)], "epsilon"),
    ]
    for args, message in cases:
        assert main(["docembed", str(doc), "-o", str(out), *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("textdp: error:") and "\n" not in err and message in err
        assert not out.exists()
    assert main(["docembed", str(doc), "-o", str(tmp_path / "out.txt"), "--candidates",
                 str(cpath), "--epsilon", "1"]) == 2
    assert ".npy" in capsys.readouterr().err
