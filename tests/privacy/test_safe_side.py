"""Every reported ε and δ is at least its exact value (issue 21, deliverable 6).

The rule (docs/accounting.md, "Numerics"): a privacy number is computed from the exact values of
its float inputs and rounded *up* to a float, or bounded from above with an explicit error bound;
never rounded to nearest. Each test below draws thousands of random float settings and holds the
reported number against the exact value, in rational arithmetic (``Fraction``: the exact value of
a float) or, where a logarithm or an exponential enters, at 60 significant digits (mpmath). The
tests are deterministic (seeded draws, no statistics), and each was seen to fail on the code
before the fix or on a mutant that drops the rounding (see the report of issue 21).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from textdp.mechanisms.prompt import DPPrompt
from textdp.mechanisms.word import custext
from textdp.mechanisms.word.custext import CusText
from textdp.privacy import round_down, round_up, round_up_sum
from textdp.tallies import Tallies
from textdp.vocab import Vocabulary


@pytest.fixture(autouse=True)
def _sixty_digits():
    with mpmath.workdps(60):
        yield


def F(x: float) -> Fraction:
    """The exact value of a float."""
    return Fraction(float(x))


def is_smallest_float_at_least(value: float, exact: Fraction) -> bool:
    return F(value) >= exact and (F(math.nextafter(value, -math.inf)) < exact
                                  or (value == 0 and exact == 0))


def random_floats(rng: np.random.Generator, size: int, low_exp: float, high_exp: float) -> np.ndarray:
    """Floats spread over magnitudes 10^low_exp … 10^high_exp, with full random mantissas."""
    return 10.0 ** rng.uniform(low_exp, high_exp, size) * rng.uniform(1.0, 2.0, size)


# --- the helper --------------------------------------------------------------------------------

def test_round_up_and_down_bracket_the_exact_value_tightly():
    rng = np.random.default_rng(21)
    a, b = random_floats(rng, 3000, -8, 8), random_floats(rng, 3000, -8, 8)
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        exact = F(x) / F(y) - F(y) / 3
        up, down = round_up(exact), round_down(exact)
        assert is_smallest_float_at_least(up, exact)
        assert F(down) <= exact < F(math.nextafter(down, math.inf))
    assert round_up(Fraction(1, 3)) > 1 / 3 and round_down(Fraction(1, 3)) == 1 / 3
    assert round_up(Fraction(10) ** 400) == math.inf
    assert round_down(Fraction(10) ** 400) == np.finfo(float).max
    assert round_up(-Fraction(10) ** 400) == -np.finfo(float).max
    assert round_up(Fraction(0)) == 0.0 and round_up(3) == 3.0
    values = random_floats(rng, 50, -3, 3).tolist()
    assert is_smallest_float_at_least(round_up_sum(values), sum(map(F, values), Fraction(0)))


# --- DP-Prompt: ε_token = 2(b_hi − b_lo)/T and ε_doc = n·ε_token --------------------------------

def _prompt_settings(n: int, seed: int):
    """Random clipping bounds (magnitudes 1e-3 … 1e3, either sign), temperatures and caps."""
    rng = np.random.default_rng(seed)
    low = random_floats(rng, n, -3, 3) * rng.choice([-1.0, 1.0], n)
    high = low + random_floats(rng, n, -3, 3)
    temperature = random_floats(rng, n, -2, 3)
    tokens = rng.integers(1, 1025, n)
    return zip(low.tolist(), high.tolist(), temperature.tolist(), tokens.tolist(), strict=True)


def test_dp_prompt_epsilons_are_the_smallest_floats_at_least_the_exact_values():
    below, loose = [], []
    for low, high, temperature, n in _prompt_settings(4000, seed=1):
        m = DPPrompt(temperature=temperature, max_new_tokens=n, clip_low=low, clip_high=high)
        exact_token = 2 * (F(high) - F(low)) / F(temperature)
        for name, value, exact in (("token", m.epsilon_per_token, exact_token),
                                   ("document", m.epsilon, n * exact_token),
                                   ("map(3)", m.privacy_map(3).epsilon, 3 * n * exact_token),
                                   ("guarantee", m.guarantee.epsilon, n * exact_token),
                                   ("sensitivity", m.sensitivity, F(high) - F(low))):
            if F(value) < exact:
                below.append((name, low, high, temperature, n))
            elif name in ("token", "document") and not is_smallest_float_at_least(value, exact):
                loose.append((name, low, high, temperature, n))
    counts = {name: sum(b[0] == name for b in below) for name in {b[0] for b in below}}
    assert not below, f"below the exact value: {counts} of 4000, e.g. {below[:2]}"
    assert not loose, f"{len(loose)} rounded up by more than one float: {loose[:3]}"


def test_dp_prompt_epsilon_given_any_way_is_at_least_the_exact_value_of_its_temperature():
    # Given ε (per document or per token), the temperature is derived and is the mechanism; the
    # reported ε is then read back from it exactly, never taken over from the request.
    for i, (low, high, temperature, n) in enumerate(_prompt_settings(1500, seed=2)):
        eps = 2 * (high - low) / temperature
        m = (DPPrompt(epsilon_per_token=eps, max_new_tokens=n, clip_low=low, clip_high=high)
             if i % 2 else
             DPPrompt(epsilon=eps * n, max_new_tokens=n, clip_low=low, clip_high=high))
        exact_token = 2 * (F(high) - F(low)) / F(m.temperature)
        assert F(m.epsilon_per_token) >= exact_token and F(m.epsilon) >= n * exact_token


# --- CusText: privacy_loss against the exact law of its float utilities -----------------------

def _exact_log_law(utility: np.ndarray, epsilon: float) -> list[mpmath.mpf]:
    """ln Pr[M(x)=y] = ε·u_y/2 − ln Σ_z exp(ε·u_z/2), at 60 digits, for one row of utilities."""
    half = mpmath.mpf(epsilon) / 2
    logits = [half * mpmath.mpf(float(u)) for u in utility]
    norm = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in logits))
    return [v - norm for v in logits]


def _exact_losses(mech: CusText, pairs: np.ndarray) -> list[mpmath.mpf]:
    g = mech.groups
    laws: dict[int, list[mpmath.mpf]] = {}
    for x in np.unique(pairs).tolist():
        row = g.utility[x]
        laws[x] = _exact_log_law(row[~np.isnan(row)], mech.epsilon)
    return [max(abs(p - q) for p, q in zip(laws[a], laws[b], strict=True))
            for a, b in pairs.tolist()]


def _custext_cases(seed: int):
    """Random toy vocabularies, K and ε over 1e-9 … 50 (small ε: the rounding error of the
    log-law is then large relative to the loss)."""
    rng = np.random.default_rng(seed)
    for case in range(24):
        n, k = int(rng.integers(12, 40)), int(rng.integers(2, 12))
        vectors = rng.standard_normal((n, int(rng.integers(2, 6))))
        vocab = Vocabulary([f"w{i}" for i in range(n)], vectors, name=f"toy-{case}")
        epsilon = float(10.0 ** rng.uniform(-9, 1.7))
        yield CusText(vocab, epsilon=epsilon, k=min(k, n), cache=False)


@pytest.fixture
def _no_group_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path))
    custext._CACHE.clear()


def test_custext_privacy_loss_is_at_least_the_exact_loss_and_at_most_epsilon(_no_group_cache):
    checked = 0
    for mech in _custext_cases(seed=3):
        g = mech.groups
        a, b = np.nonzero((g.group_of[:, None] == g.group_of[None, :])
                          & ~np.eye(g.group_of.size, dtype=bool))
        pairs = np.stack([a, b], axis=1)
        claimed = mech.privacy_loss(a, b)
        exact = _exact_losses(mech, pairs)
        for i, (c, e) in enumerate(zip(claimed.tolist(), exact, strict=True)):
            assert mpmath.mpf(c) >= e, (mech.epsilon, mech.k, pairs[i].tolist(), c, e)
            assert c <= mech.epsilon
        checked += len(exact)
    assert checked > 2000


# --- the audit: Clopper–Pearson bounds, their α split, Bonferroni over pairs × directions ------

def _tail_at_least(n: int, k: int, p: float) -> mpmath.mpf:
    """Pr[Bin(n, p) ≥ k] at 60 digits, summed upward from k (k above the mean: a short tail)."""
    p = mpmath.mpf(p)
    q = 1 - p
    term = mpmath.binomial(n, k) * p**k * q**(n - k)
    total, j = term, k
    while j < n and term > total * mpmath.mpf(10) ** -50:
        term = term * (n - j) / (j + 1) * p / q
        j += 1
        total += term
    return total


def _tail_at_most(n: int, k: int, p: float) -> mpmath.mpf:
    """Pr[Bin(n, p) ≤ k] at 60 digits (the same sum mirrored: failures at least n − k)."""
    return _tail_at_least(n, n - k, 1 - mpmath.mpf(p)) if p < 1 else mpmath.mpf(0)


def _binomial_settings(count: int, seed: int, top: float = 5.0):
    """Random (n, k, α): n up to 10^top draws, α from 1e-10 to 0.3."""
    rng = np.random.default_rng(seed)
    n = (10.0 ** rng.uniform(0.3, top, count)).astype(int)
    k = rng.integers(0, n + 1)
    alpha = 10.0 ** rng.uniform(-10, -0.5, count)
    return zip(n.tolist(), k.tolist(), alpha.tolist(), strict=True)


def test_clopper_pearson_bounds_hold_at_their_level_exactly():
    from textdp.audit._stats import cp_lower, cp_upper

    over = []
    for n, k, alpha in _binomial_settings(300, seed=4, top=4.5):
        lo, hi = float(cp_lower(k, n, alpha)), float(cp_upper(k, n, alpha))
        # The lower bound p_lo is conservative iff Pr[Bin(n, p_lo) ≥ k] ≤ α (k > 0), the upper
        # one iff Pr[Bin(n, p_hi) ≤ k] ≤ α (k < n); both within 1e-4 of α: not vacuous (a
        # float p near 1 cannot come closer).
        for side, tail in (("lower", _tail_at_least(n, k, lo) if k > 0 else None),
                           ("upper", _tail_at_most(n, k, hi) if k < n else None)):
            if tail is not None and not alpha * (1 - 1e-4) < tail <= alpha:
                over.append((side, n, k, alpha, float(tail / alpha)))
        assert (lo == 0) == (k == 0) and (hi == 1) == (k == n)
    assert not over, f"{len(over)} bounds off their level, e.g. {over[:3]}"


def test_log_ratio_bound_splits_alpha_between_its_two_bounds_and_rounds_down():
    from textdp.audit._stats import cp_lower, cp_upper, log_ratio_bound

    # k_a = n and k_b = 0 have closed forms: p_lo = (α/2)^(1/n), p_hi = 1 − (α/2)^(1/n), each
    # bound at α/2 so that both hold together with probability ≥ 1 − α.
    for n, _, alpha in _binomial_settings(400, seed=5):
        root = (mpmath.mpf(alpha) / 2) ** (mpmath.mpf(1) / n)
        exact = mpmath.log(root / (1 - root))
        got = float(log_ratio_bound(n, 0, n, alpha))
        assert exact - abs(exact) * 1e-6 - 1e-12 <= got <= exact, (n, alpha, got, exact)
    # General counts, with δ: never above ln((p_lo − δ)/p_hi) of the two α/2 bounds.
    rng = np.random.default_rng(6)
    for n, k, alpha in _binomial_settings(2000, seed=7):
        k_b = int(rng.integers(0, n + 1))
        delta = float(rng.choice([0.0, 10.0 ** rng.uniform(-9, -1)]))
        lo, hi = float(cp_lower(k, n, alpha / 2)), float(cp_upper(k_b, n, alpha / 2))
        got = float(log_ratio_bound(k, k_b, n, alpha, delta))
        if F(lo) <= F(delta):
            assert got == -math.inf
        else:
            assert mpmath.mpf(got) <= mpmath.log((mpmath.mpf(lo) - mpmath.mpf(delta))
                                                 / mpmath.mpf(hi)), (n, k, k_b, alpha, delta)


def test_audit_splits_alpha_over_pairs_and_directions(monkeypatch):
    from textdp.audit import audit, core
    from textdp.audit._stats import log_ratio_bound
    from textdp.mechanisms.word.mvc import MVC

    levels = []
    certify = core.certify

    def recording(event, c_a, c_b, n, alpha, delta=0.0):
        levels.append(alpha)
        return certify(event, c_a, c_b, n, alpha, delta)

    monkeypatch.setattr(core, "certify", recording)
    rng = np.random.default_rng(8)
    vocab = Vocabulary([f"w{i}" for i in range(12)], rng.standard_normal((12, 3)), name="toy")
    alpha, pairs = 0.01, 3
    result = audit(MVC(vocab, epsilon=1.0), "closest", draws=400, alpha=alpha, seed=1,
                   n_pairs=pairs)
    assert len(result.pairs) == pairs
    # Bonferroni: 2 directions per pair, each certified at α/(2·pairs); together ≤ α.
    assert result.alpha_per_test == alpha / (2 * pairs)
    assert levels == [alpha / (2 * pairs)] * (2 * pairs)
    assert F(sum(levels, 0.0)) <= F(alpha) * (1 + Fraction(1, 10**12))
    # Each reported bound is the one at that level for its own second-half counts.
    for pair in result.pairs:
        for d in pair.directions:
            assert d.lower_bound == float(log_ratio_bound(d.k_source, d.k_target, 200,
                                                          result.alpha_per_test, pair.delta))


# --- budget allocation: Σ_i ε_i ≤ ε_doc exactly, and the data-dependent rule's worst case ------

ALLOCATION_WORDS = ("the of and food good bad rude waiter pizza service cold great table dinner "
                    "menu chef salad soup bread wine kitchen cheese tomato onion").split()


def _allocation_settings(count: int, seed: int):
    """Random (rule, ε_doc, floor, ceiling, document lengths); a third of them on the boundary
    ε_doc = fl(n·ceiling) or fl(n·floor) of one length n, where a float comparison decides."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        rule = str(rng.choice(["uniform", "position", "frequency"]))
        lengths = rng.integers(1, 40, int(rng.integers(1, 6)))
        floor = float(random_floats(rng, 1, -3, 0)[0]) if rng.random() < 0.6 else None
        ceiling = float(random_floats(rng, 1, -1, 1)[0]) if rng.random() < 0.6 else None
        if floor is not None and ceiling is not None and floor > ceiling:
            floor, ceiling = ceiling, floor
        budget = float(random_floats(rng, 1, -1, 2)[0])
        pick = rng.random()
        n = float(rng.choice(lengths))
        if pick < 0.15 and ceiling is not None:
            budget = n * ceiling
        elif pick < 0.3 and floor is not None:
            budget = n * floor
        yield rule, max(budget, 1e-6), floor, ceiling, lengths


def test_allocated_epsilons_sum_to_at_most_the_document_budget_exactly(_no_group_cache):
    from textdp.allocation import Allocation, Allocator
    from textdp.mechanisms import create

    rng = np.random.default_rng(9)
    vocab = Vocabulary(ALLOCATION_WORDS, rng.standard_normal((len(ALLOCATION_WORDS), 4)),
                       name="toy-words")
    mechanisms = {"public": create("mvc", vocab, epsilon=1.0),
                  "frequency": create("custext", vocab, epsilon=1.0, k=6, cache=False)}
    over, documents = [], 0
    for rule, budget, floor, ceiling, lengths in _allocation_settings(800, seed=10):
        mech = mechanisms["frequency" if rule == "frequency" else "public"]
        allocator = Allocator(Allocation(rule, budget, floor, ceiling), mech)
        docs = np.repeat(np.arange(lengths.size), lengths)
        ids = rng.integers(0, len(vocab), docs.size)
        levels = allocator.levels(ids, docs, lengths.size)
        for d in range(lengths.size):
            total = sum(map(F, levels[docs == d].tolist()), Fraction(0))
            if total > F(budget):
                over.append((rule, budget, floor, ceiling, int(lengths[d])))
            documents += 1
        assert ceiling is None or levels.max() <= ceiling
    assert documents > 1500
    assert not over, f"{len(over)} documents spend more than ε_doc, e.g. {over[:3]}"


def _exact_worst_case(allocator, n: int) -> mpmath.mpf:
    """The frequency rule's worst case at length n from the exact laws of the levels it gives:
    max over words a, b of one group and outputs y of |ln p_a(y) − ln p_b(y)| at 60 digits."""
    a = allocator.allocation
    groups = allocator.mechanism.groups
    mapped = np.flatnonzero(groups.group_of >= 0)
    share = a.epsilon_document / n
    eps = np.minimum(min(share, a.ceiling or np.inf),
                     np.maximum(a.floor or 0.0, share * allocator._omega[mapped]))
    levels = dict(zip(mapped.tolist(), allocator.round_down(eps).tolist(), strict=True))
    worst = mpmath.mpf(0)
    for g in range(groups.members.shape[0]):
        members = groups.members[g][groups.members[g] >= 0].tolist()
        laws = [_exact_log_law(groups.utility[x][~np.isnan(groups.utility[x])], levels[x])
                for x in members]
        for column in zip(*laws, strict=True):
            worst = max(worst, max(column) - min(column))
    return worst


def test_frequency_worst_case_is_at_least_the_exact_worst_case(_no_group_cache):
    from textdp.allocation import Allocation, Allocator
    from textdp.mechanisms import create

    rng = np.random.default_rng(11)
    checked = 0
    for case in range(12):
        vocab = Vocabulary(ALLOCATION_WORDS, rng.standard_normal((len(ALLOCATION_WORDS), 4)),
                           name=f"toy-words-{case}")
        mech = create("custext", vocab, epsilon=1.0, k=int(rng.integers(2, 9)), cache=False)
        budget = float(random_floats(rng, 1, -6, 2)[0])
        floor = budget / 100 if rng.random() < 0.5 else None
        allocator = Allocator(Allocation("frequency", budget, floor, None), mech)
        for n in rng.integers(1, 60, 5).tolist():
            worst = allocator.worst_case_per_word(n)
            assert mpmath.mpf(worst) >= _exact_worst_case(allocator, n), (case, budget, n)
            checked += 1
        lengths = frozenset(rng.integers(1, 60, 20).tolist())
        section = allocator.describe(Tallies(lengths=lengths))
        assert all(F(section["worst_case_per_document"]) >= n * F(allocator.worst_case_per_word(n))
                   for n in lengths)
    assert checked == 60


# --- the word mechanisms' privacy maps and privacy_loss ----------------------------------------

def _exact_inverse(matrix: np.ndarray) -> list[list[Fraction]]:
    """The exact inverse of a float matrix (Gauss–Jordan over the rationals)."""
    n = matrix.shape[0]
    rows = [[F(x) for x in row] + [Fraction(int(i == j)) for j in range(n)]
            for i, row in enumerate(matrix.tolist())]
    for col in range(n):
        pivot = next(r for r in range(col, n) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        inv = 1 / rows[col][col]
        rows[col] = [x * inv for x in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col], strict=True)]
    return [row[n:] for row in rows]


def _exact_squared_distance(mech, a: int, b: int, inverse=None) -> Fraction:
    """d(a, b)² of the guarantee's metric, exactly, from the float vectors (and for Mahalanobis
    the exact inverse of the float square root Σ_λ^{1/2} the sampler multiplies by)."""
    if mech.name == "diffractor":
        return F(mech.distance(a, b)) ** 2  # integer list positions: exact
    v = mech.vocabulary.vectors
    diff = [F(x) - F(y) for x, y in zip(v[a].tolist(), v[b].tolist(), strict=True)]
    if inverse is not None:
        diff = [sum((m * x for m, x in zip(row, diff, strict=True)), Fraction(0))
                for row in inverse]
    return sum((x * x for x in diff), Fraction(0))


def _word_mechanisms(seed: int):
    from textdp.mechanisms import available, create
    from textdp.mechanisms.word.gumbel import smallest_feasible_epsilon

    rng = np.random.default_rng(seed)
    for name in sorted(set(available("word")) - {"custext", "custext_plus"}):
        for case in range(4):
            n, d = 16, int(rng.integers(2, 7))
            scale = float(10.0 ** rng.uniform(-2, 2)) * rng.uniform(0.1, 3.0, d)
            vectors = rng.standard_normal((n, d)) * scale
            vocab = Vocabulary([f"w{i}" for i in range(n)], vectors, name=f"toy-{name}-{case}")
            epsilon = float(10.0 ** rng.uniform(-3, 1.5))
            params: dict = {}
            if name == "gumbel":
                x = vocab.vectors.astype(np.float64)
                gaps = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))[np.triu_indices(n, 1)]
                epsilon = max(epsilon, 1.5 * smallest_feasible_epsilon(n, float(gaps.min())))
            if name == "vickrey":
                params["exclude_input"] = False
            if name == "diffractor":
                params["cache"] = False
            if name == "mahalanobis":
                params["lam"] = float(rng.uniform(0.05, 0.99))
            if name == "santext_plus":
                params.update(p=float(rng.uniform(0.01, 1.0)), frequencies=np.arange(n, 0, -1.0))
                # Down to ε·d ≪ ln(1/p)·2⁻⁵³: the rounding of ln(1/p) is then all that matters.
                epsilon = float(10.0 ** rng.uniform(-11, -6)) if case % 2 else epsilon
            yield create(name, vocab, epsilon=epsilon, **params)


def test_word_mechanisms_privacy_loss_is_at_least_epsilon_times_the_exact_distance(
        _no_group_cache):
    below, checked = [], 0
    for mech in _word_mechanisms(seed=12):
        inverse = (_exact_inverse(mech.sqrt_covariance) if mech.name == "mahalanobis" else None)
        n = len(mech.vocabulary)
        a, b = np.triu_indices(n, 1)
        losses = mech.privacy_loss(a, b).tolist()
        extra = {}
        if mech.name == "santext_plus":  # + ln(1/p) where exactly one word is sensitive
            mixed = mech.sensitive[a] != mech.sensitive[b]
            extra = {i: -mpmath.log(mpmath.mpf(mech.parameters["p"])) for i in np.flatnonzero(mixed)}
        eps = F(mech.epsilon)
        for i, (x, y, loss) in enumerate(zip(a.tolist(), b.tolist(), losses, strict=True)):
            square = _exact_squared_distance(mech, x, y, inverse)
            if i in extra:
                root = mpmath.sqrt(mpmath.mpf(square.numerator) / square.denominator)
                ok = mpmath.mpf(loss) - extra[i] >= mpmath.mpf(mech.epsilon) * root
            else:
                ok = F(loss) >= 0 and (F(loss) / eps) ** 2 >= square
            if not ok:
                below.append((mech.name, mech.epsilon, x, y))
            checked += 1
    assert checked > 3500
    assert not below, f"{len(below)} losses below ε·d, e.g. {below[:3]}"


def test_mahalanobis_privacy_loss_is_at_least_epsilon_times_the_exact_metric():
    # The metric is ‖S⁻¹x‖ for the float root S the noise is drawn with; the mechanism computes it
    # with a float inverse root, whose error grows with the condition number: anisotropic
    # vocabularies and λ from 0.05 to 0.99 (the earlier bound falls below it on 26 pairs here).
    from textdp.mechanisms.word.mahalanobis import Mahalanobis

    rng = np.random.default_rng(10)
    below, checked = [], 0
    for _ in range(20):
        n, d = 12, int(rng.integers(2, 12))
        vectors = (rng.standard_normal((n, d)) * rng.uniform(0.1, 3, d)
                   * 10 ** rng.uniform(-2, 2))
        mech = Mahalanobis(Vocabulary([f"w{i}" for i in range(n)], vectors, name="toy"),
                           epsilon=float(10 ** rng.uniform(-3, 1.5)),
                           lam=float(rng.uniform(0.05, 0.99)))
        inverse = _exact_inverse(mech.sqrt_covariance)
        a, b = np.triu_indices(n, 1)
        for x, y, loss in zip(a.tolist(), b.tolist(), mech.privacy_loss(a, b).tolist(),
                              strict=True):
            if (F(loss) / F(mech.epsilon)) ** 2 < _exact_squared_distance(mech, x, y, inverse):
                below.append((mech.epsilon, mech.lam, d, x, y))
            checked += 1
    assert checked == 20 * 66
    assert not below, f"{len(below)} losses below ε·d, e.g. {below[:3]}"


def test_privacy_maps_round_the_exact_product_up():
    from textdp.mechanisms.document import DeepCandidate, Truncation
    from textdp.mechanisms.embedding import LaplaceVector, PrivEmb
    from textdp.mechanisms.word.mvc import MVC

    rng = np.random.default_rng(13)
    vocab = Vocabulary([f"w{i}" for i in range(4)], rng.standard_normal((4, 3)), name="toy")
    for epsilon in random_floats(rng, 30, -3, 2).tolist():
        mechanisms = [MVC(vocab, epsilon=epsilon), LaplaceVector(epsilon=epsilon),
                      PrivEmb(epsilon=epsilon, delta=1e-6, beta=0.9, dim=20),
                      DeepCandidate(rng.standard_normal((5, 3)), epsilon=epsilon, n_projections=3),
                      Truncation(np.zeros(3), np.ones(3), epsilon=epsilon),
                      DPPrompt(epsilon=epsilon)]
        d = np.concatenate([random_floats(rng, 100, -4, 4), rng.integers(0, 50, 20)])
        for mech in mechanisms:
            budget = mech.privacy_map(d)
            per_unit = F(mech.privacy_map(1.0).epsilon)
            assert per_unit >= F(epsilon) or isinstance(mech, DPPrompt)
            for x, e in zip(d.tolist(), np.broadcast_to(budget.epsilon, d.shape).tolist(),
                            strict=True):
                assert is_smallest_float_at_least(e, per_unit * F(x)), (type(mech).__name__, x)


# --- PrivEmb's δ and noise scale, Truncation's noise scales ------------------------------------

def test_gordon_delta_is_at_least_its_exact_value():
    from textdp.mechanisms.embedding.privemb import gordon_delta

    rng = np.random.default_rng(14)
    below = []
    for _ in range(3000):
        m = int(10 ** rng.uniform(0, 4))
        beta = float(10 ** rng.uniform(-2, 0.5))
        omega = float(beta * math.sqrt(m) * rng.uniform(0, 1.2))
        t = mpmath.mpf(beta) * mpmath.sqrt(m) - mpmath.mpf(omega)
        exact = mpmath.mpf(1) if t <= 0 else mpmath.exp(-t * t / 2)
        got = gordon_delta(m, beta, omega)
        if not exact <= got <= 1 or got > exact * (1 + 1e-9) + 1e-300:
            below.append((m, beta, omega, got, float(exact)))
    assert not below, f"{len(below)} δ off the exact value, e.g. {below[:3]}"


def test_noise_scales_are_at_least_their_exact_values():
    from textdp.mechanisms.document import Truncation
    from textdp.mechanisms.embedding import LaplaceVector

    rng = np.random.default_rng(15)
    over, loose = [], []
    for case in range(100):
        d = int(rng.integers(1, 300))
        lower = rng.standard_normal(d) * 10.0 ** rng.uniform(-3, 3)
        upper = lower + random_floats(rng, d, -4, 2)
        epsilon = float(random_floats(rng, 1, -3, 2)[0])
        allocation = "l1" if case % 2 else "per_dimension"
        t = Truncation(lower, upper, epsilon=epsilon, allocation=allocation)
        widths = [F(h) - F(x) for h, x in zip(upper.tolist(), lower.tolist(), strict=True)]
        assert F(t.parameters["l1_width"]) >= sum(widths, Fraction(0))
        for k in rng.integers(1, 40, 3).tolist():
            scales = t.noise_scale(k)
            # The privacy loss of one substituted sentence: Σ_j (w_j/k)/scale_j ≤ ε, exactly.
            loss = sum((w / k / F(s) for w, s in zip(widths, scales.tolist(), strict=True)),
                       Fraction(0))
            if loss > F(epsilon):
                over.append((case, d, allocation, k))
            elif allocation == "l1" and not is_smallest_float_at_least(
                    float(scales[0]), sum(widths, Fraction(0)) / (k * F(epsilon))):
                loose.append((case, d, k))
        lv = LaplaceVector(epsilon=epsilon)
        assert F(lv.noise_scale) >= F(lv.sensitivity) / F(epsilon)
    assert not over, f"{len(over)} scales below the sensitivity's, e.g. {over[:3]}"
    assert not loose, f"{len(loose)} scales rounded up by more than one float, e.g. {loose[:3]}"


# --- composition: sums of recorded budgets ----------------------------------------------------

def test_composed_budgets_are_the_smallest_floats_at_least_the_exact_sums():
    from textdp.privacy import Notion
    from textdp.privacy.composition import Spend, compose

    rng = np.random.default_rng(16)
    for _ in range(1500):
        count = int(rng.integers(1, 12))
        eps = random_floats(rng, count, -4, 2).tolist()
        deltas = (random_floats(rng, count, -12, -3) * rng.integers(0, 2, count)).tolist()
        spends = [Spend(f"r{i}", str(Notion.APPROXIMATE_LIPSCHITZ), e, d, "euclidean", "enc")
                  for i, (e, d) in enumerate(zip(eps, deltas, strict=True))]
        (group,) = compose(spends).groups
        assert is_smallest_float_at_least(group.epsilon, sum(map(F, eps), Fraction(0)))
        assert is_smallest_float_at_least(group.delta, sum(map(F, deltas), Fraction(0)))


def test_spectral_norm_upper_bound_is_at_least_the_exact_largest_singular_value():
    from textdp.mechanisms.embedding import spectral_norm_upper

    rng = np.random.default_rng(17)
    for _ in range(25):
        m, d = int(rng.integers(1, 12)), int(rng.integers(1, 8))
        phi = rng.standard_normal((m, d)) * 10.0 ** rng.uniform(-3, 3)
        with mpmath.workdps(40):
            exact = max(mpmath.svd_r(mpmath.matrix(phi.tolist()), compute_uv=False))
        assert mpmath.mpf(spectral_norm_upper(phi)) >= exact, (m, d)


def test_printed_epsilons_are_rounded_up():
    from decimal import Decimal

    from textdp.privacy import format_up

    rng = np.random.default_rng(18)
    for x in np.concatenate([random_floats(rng, 2000, -25, 25), [0.1 + 0.2, 9.9999999, 1e-320]]):
        for digits in (3, 6):
            text = format_up(float(x), digits)
            assert Decimal(text) >= Decimal(float(x)), (x, text)
            assert len(Decimal(text).normalize().as_tuple().digits) <= digits, (x, text)
            assert Decimal(text) <= Decimal(float(x)) * (1 + Decimal(10) ** (1 - digits))
    assert format_up(0.1 + 0.2) == "0.300001" and format_up(8.0) == "8"
    assert format_up(math.inf) == "inf" and format_up(0.0) == "0" and format_up(1e-7) == "1e-07"
