"""The work every setting shares (issue 37, deliverable 4): computed once, the same figures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from textdp.assess.attacks import author_linkage
from textdp.assess.budget import Costs, choose, encoded_subsample
from textdp.assess.linkage import OriginalIndex, rates, rows_of
from textdp.assess.scale import PERCENTILES, _persons
from textdp.assess.shared import SpanCache
from textdp.privacy import round_up_sum

TEXTS = ["Write to ann@example.com or call 555-0101 about order 123456.",
         "",
         "The parcel for 221B Baker Street never came; mail bob@example.org.",
         "Nothing to see here at all.",
         "Card 4111 1111 1111 1111 was charged twice, see https://example.com/x."]


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


class _Counting:
    """A recogniser that records the batch size of each call of its ``find``."""

    def __init__(self, inner, calls):
        self.inner, self.calls, self.kinds = inner, calls, inner.kinds

    def find(self, *args):
        self.calls.append(len(args[0]))
        return self.inner.find(*args)


def test_span_cache_finds_each_document_once_and_changes_no_output():
    from textdp.spec import release_spec

    cache = SpanCache()
    calls = []
    outputs = []
    for mechanism, epsilon in (("mvc", 8.0), ("tem", 3.0)):
        spec = release_spec(mechanism=mechanism, epsilon=epsilon, seed=5, entities="none")
        plain = spec.privatizer().run(TEXTS)
        runner = spec.privatizer()
        cache.attach(runner)
        runner.rules.spans.inner = _Counting(runner.rules.spans.inner, calls)
        outputs.append((plain, runner.run(TEXTS)))
    assert all(plain == cached for plain, cached in outputs)
    assert calls == [len(TEXTS)]  # the second setting found nothing itself
    assert "[EMAIL]" in outputs[1][1][0]


def _persons_reference(units, sizes, one):
    """Every person's sum rounded up, then ranked (the former implementation)."""
    by_person: dict = {}
    for u, s in zip(units, sizes.tolist(), strict=True):
        by_person.setdefault(u, []).append(s)
    people = []
    for docs in by_person.values():
        pairs = [one(s) for s in docs]
        eps = (math.inf if any(math.isinf(e) for e, _ in pairs)
               else round_up_sum([e for e, _ in pairs]))
        people.append((len(docs), sum(docs), eps, min(1.0, round_up_sum([d for _, d in pairs]))))
    people.sort(key=lambda p: (p[2], p[1], p[0]))
    out = {"count": len(people)}
    for name, q in PERCENTILES:
        k = max(min(len(people) - 1, int(math.ceil(q / 100 * len(people))) - 1), 0)
        docs, units_, eps, delta = people[k]
        out[name] = {"documents": docs, "units": units_,
                     "epsilon": eps if math.isfinite(eps) else None, "delta": delta}
    return out


@pytest.mark.parametrize("trial", range(40))
def test_person_sums_are_exact_and_rank_as_the_rounded_sums(trial):
    rng = np.random.default_rng(trial)
    n = int(rng.integers(1, 120))
    sizes = rng.integers(0, 25, n)
    units = rng.integers(0, int(rng.integers(1, 40)), n).tolist()
    # 0.1 and 1/3 are not dyadic: their sums round, and persons tie after rounding.
    c = float(rng.choice([0.1, 1 / 3, 7.3]))
    unbounded = int(rng.integers(0, 25)) if trial % 4 == 0 else -1

    def one(s):
        return (math.inf if s == unbounded else s * c + (0.1 if s % 3 else 0.0), 1e-7 / 3 * s)

    assert _persons(units, sizes, one, round_up_sum) == _persons_reference(units, sizes, one)


def test_an_encoded_subset_gives_the_full_matrices_rows():
    rng = np.random.default_rng(0)
    originals = [f"ticket {i} about the {w} order" for i, w in
                 enumerate(["late", "lost", "broken", "wrong", "double", "missing"] * 3)]
    private = [t.replace("order", "parcel") for t in originals]
    emb, priv_emb = _unit(rng, 18, 8), _unit(rng, 18, 8)
    index = OriginalIndex(originals, emb)
    full = index.matrices(private, priv_emb)
    encoded = np.array([11, 2, 7, 5])  # not sorted: rows follow it
    part = index.matrices(private, priv_emb[encoded], encoded)
    for attack in ("sbert", "combined"):
        np.testing.assert_allclose(part[attack], full[attack][encoded])
    np.testing.assert_allclose(part["tfidf-words"], full["tfidf-words"])
    rows = rows_of(part, encoded)
    assert rows["sbert"].tolist() == encoded.tolist() and rows["tfidf-chars"].size == 18
    # Each attack's rate is over its own rows, against chance over every original.
    got = rates(part, 18, rows)
    want = rates({a: full[a] for a in full}, 18)
    assert got["by_attack"]["tfidf-words"] == want["by_attack"]["tfidf-words"]
    assert got["by_attack"]["sbert"]["documents"] == 4 and got["chance_top1"] == 1 / 18
    perm = rng.permutation(18)
    permuted = index.matrices(private, priv_emb[perm], perm)
    same = rates(permuted, 18, rows_of(permuted, perm))
    for attack in full:
        assert same["by_attack"][attack]["top1"] == pytest.approx(
            want["by_attack"][attack]["top1"])
    authors = [str(i % 5) for i in range(18)]
    got = author_linkage(permuted, authors, rows_of(permuted, perm))["by_attack"]
    want = author_linkage(full, authors)["by_attack"]
    for attack in full:
        assert [got[attack][k] for k in ("top1", "top5")] == pytest.approx(
            [want[attack][k] for k in ("top1", "top5")])


def _modelled(n, m, costs, words, others):
    once = costs.spans + costs.encode + costs.read
    return (n * (once + words * (costs.privatize + costs.read)) + m * words * costs.encode
            + 0.5 * (words + others)) * 1.25


def test_budget_keeps_the_sample_large_and_encodes_what_fits():
    slow_encoder = Costs(spans=0.005, privatize=0.001, read=0.004, encode=0.03)
    n, m, why = choose(10_000, slow_encoder, 30, 5, 280.0)
    assert n >= 500 and 25 <= m < n and f"on {m} of them" in why
    assert _modelled(n, m, slow_encoder, 30, 5) <= 280.0
    cheap = Costs(spans=0.001, privatize=0.0005, read=0.0005, encode=0.001)
    n, m, why = choose(10_000, cheap, 30, 5, 280.0)
    assert n == m >= 500 and "of them" not in why
    assert _modelled(n, m, cheap, 30, 5) <= 280.0
    assert choose(300, cheap, 30, 5, 280.0)[:2] == (300, 300)


def test_encoded_subsample_is_seeded_sorted_and_none_when_all():
    a = encoded_subsample(1000, 100, 7)
    assert a.size == 100 and np.all(np.diff(a) > 0)
    assert np.array_equal(a, encoded_subsample(1000, 100, 7))
    assert not np.array_equal(a, encoded_subsample(1000, 100, 8))
    assert encoded_subsample(100, 100, 7) is None
