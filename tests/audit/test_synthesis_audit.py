"""The audit of synthetic releases (issue 32, Deliver 3) and the privacy-in-practice checks.

Each check is shown able to fail: a "synthesizer" that copies its private input is caught by
every one of them (canaries verbatim, exposure at its maximum, membership AUC 1 and a certified
ε bound, unique 8-grams, the originals' identifiers, closer-than-neighbour), and the membership
bound holds its level on scores with no signal — while the same test with plug-in rates in place
of Clopper–Pearson bounds does not.
"""

from __future__ import annotations

import hashlib
import math
from types import SimpleNamespace

import numpy as np
import pytest

from textdp.audit import _stats
from textdp.audit import synthesis as sa
from textdp.audit.practice import (
    closer_than_neighbour,
    found_identifiers,
    practice_checks,
    unique_ngrams_found,
)


def hash_word(w):
    return int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")


class Encoder:
    """Bag of hashed words in 512 dimensions (no model to load)."""

    def __call__(self, texts):
        out = np.zeros((len(texts), 512))
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, hash_word(w) % 512] += 1.0
        return out


def _rng(k=0):
    return np.random.default_rng(k)


def test_canaries_are_fresh_secrets_from_a_large_space():
    made = sa.make_canaries((1, 10, 100), rng=_rng(), labels=["a", "b"])
    assert [c.copies for c in made] == [1, 10, 100]
    assert len({c.secret for c in made}) == 3 and all(c.secret in c.text for c in made)
    assert {c.label for c in made} <= {"a", "b"}
    assert sa.secret_space_bits() > 40
    with pytest.raises(ValueError, match="≥ 1"):
        sa.make_canaries((0,), rng=_rng())


def test_exposure_is_maximal_for_a_copied_secret_and_near_zero_otherwise():
    canary = sa.make_canaries((1,), rng=_rng(1))[0]
    clean = ["my parcel is late again", "please refund the damaged item"] * 10
    none = sa.canary_exposure([canary], clean, rng=_rng(2), candidates=2000)[0]
    assert none.verbatim == none.near_verbatim == 0 and none.exposure < 2.0
    leaked = sa.canary_exposure([canary], clean + [f"note: {canary.secret.upper()}!"],
                                rng=_rng(2), candidates=2000)[0]
    assert leaked.verbatim == 1 and leaked.rank == 1
    assert leaked.exposure == pytest.approx(math.log2(2001))
    a, b = canary.secret.split()
    # One word with a letter dropped, the other with a letter changed: near-verbatim.
    changed = b[:-1] + ("x" if b[-1] != "x" else "y")
    edited = sa.canary_exposure([canary], clean + [f"{a[:-1]} and {changed}"], rng=_rng(2),
                                candidates=2000)[0]
    assert edited.verbatim == 0 and edited.near_verbatim == 1


def test_membership_bound_is_certified_for_separated_scores():
    r = sa.membership_test(np.linspace(0.6, 0.9, 200), np.linspace(0.1, 0.5, 200),
                           delta=1e-5, alpha=0.05)
    assert r.auc == 1.0 and r.tpr == 1.0 and r.fpr == 0.0
    # Exact: 100 of 100 against 0 of 100, each Clopper–Pearson bound at α/2.
    lo, hi = 0.025 ** (1 / 100) - 1e-5, 1 - 0.025 ** (1 / 100)
    assert r.epsilon_lower_bound == pytest.approx(math.log(lo / hi), rel=1e-9)
    assert r.epsilon_lower_bound <= math.log(lo / hi)


def _false_alarms(trials=200):
    rng = _rng(5)
    return sum(sa.membership_test(rng.normal(size=80), rng.normal(size=80), delta=0.0,
                                  alpha=0.05).epsilon_lower_bound > 0 for _ in range(trials))


def test_membership_bound_holds_its_level_without_signal_and_plug_in_rates_do_not(monkeypatch):
    # α = 0.05 per test: among 200 null trials ≥ 30 alarms has probability < 1e-8.
    assert _false_alarms() < 30
    monkeypatch.setattr(sa, "cp_lower", lambda k, n, a: np.asarray(k) / n)
    monkeypatch.setattr(sa, "cp_upper", lambda k, n, a: np.maximum(np.asarray(k), 0.5) / n)
    assert _false_alarms() > 60


def test_unique_ngrams_and_identifiers():
    originals = ["one two three four five six seven eight nine",
                 "alpha beta gamma delta epsilon zeta eta theta",
                 "alpha beta gamma delta epsilon zeta eta theta"]
    out = ["One two three four five, six seven eight!", "alpha beta gamma delta epsilon zeta "
           "eta theta"]
    count, documents, shown = unique_ngrams_found(originals, out)
    # The second original's 8-gram occurs in two originals: not unique.
    assert (count, documents, shown) == (1, 1, ["one two three four five six seven eight"])
    assert unique_ngrams_found(originals, ["one two three four five six seven"])[0] == 0
    assert found_identifiers(["Emily Thompson", "555-0142", "Park"],
                             ["Call  emily thompson at 555-0142", "a parking lot"]) == {
        "emily thompson": 1, "555-0142": 1}


def test_closer_than_neighbour_is_strict_and_exact():
    originals = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    # A copy of the second original: closer for it; for the first and third only a tie with
    # their own nearest other original (cosine 0.8 and 0.6), which is not closer.
    assert closer_than_neighbour(originals, np.array([[0.8, 0.6]])).tolist() == [
        False, True, False]
    assert closer_than_neighbour(originals, np.array([[1.0, -0.1]])).tolist() == [
        True, False, False]


def _copier(texts, **kw):
    """A 'synthesizer' that publishes its private input: every check must catch it."""
    return SimpleNamespace(texts=list(texts)[:kw["n"]] + list(texts)[-1:], labels=None,
                           report={"guarantee": {"epsilon": kw["epsilon"], "delta": 1e-5}})


def test_the_audit_catches_a_release_that_copies_its_input():
    texts = [f"order {i} from customer{i} arrived late and the box number {i * 7} was "
             f"crushed on day {i % 30}" for i in range(160)]
    result = sa.audit_synthesis(texts, epsilon=1.0, n=400, seed=3, encoder=Encoder(),
                                synthesize=_copier, candidates=500,
                                identifiers=["customer5", "customer6"])
    assert [c.verbatim >= 1 for c in result.canaries] == [True, True, True]
    assert all(c.rank == 1 for c in result.canaries)
    assert result.membership.auc == 1.0 and result.membership.epsilon_lower_bound > 1.0
    p = result.practice
    assert p.unique_ngrams_found > 50 and p.closer_than_neighbour == p.originals
    assert len(p.identifiers_found) >= 1
    assert "empirical ε lower bound" in result.markdown()
    assert result.to_dict()["membership"]["members"] == 80


def test_an_honest_release_shows_no_canary(tiny_lm):
    pytest.importorskip("dp_accounting")
    texts = [f"w{i % 7} w{i % 5} w{i % 3} ticket number" for i in range(120)]
    labels = ["billing" if i % 2 else "delivery" for i in range(120)]
    result = sa.audit_synthesis(texts, labels=labels, epsilon=8.0, n=12, seed=7,
                                encoder=Encoder(), model=tiny_lm, max_new_tokens=6, rounds=2,
                                entities="none", candidates=300, canaries=(1, 10))
    assert all(c.verbatim == 0 and c.near_verbatim == 0 for c in result.canaries)
    assert result.epsilon_claimed <= 8.0 and len(result.release.texts) == 12
    assert result.membership.members + result.membership.non_members == 120


def test_practice_checks_defaults_find_identifiers_with_the_recognisers():
    originals = ["Write to anna.berg@example.com about order 4411", "nothing here at all"]
    from textdp.synthesis.screen import build_masker

    masker = build_masker(entities="none")  # identifiers only: no entity lexicon to load
    checks = practice_checks(originals, ["mail ANNA.BERG@example.com now"], encoder=None,
                             masker=masker)
    assert checks.identifiers_found == {"anna.berg@example.com": 1}
    assert checks.closer_than_neighbour is None
    assert _stats.cp_lower(0, 10, 0.05) == 0.0  # the bounds used are the audit's own


def test_found_identifiers_matches_a_regular_expression_per_identifier():
    # The Aho-Corasick scan against the definition (one word-bounded pattern per identifier) on
    # texts built to hit the edges: prefixes, suffixes, overlaps, punctuation, repeats.
    import re

    from textdp.audit.practice import _normal

    rng = np.random.default_rng(4)
    words = ["ann", "anna", "lee", "ann lee", "555-0142", "+44 20", "o'neil", "x_y", "é", "ne"]
    identifiers = words + ["Anna Lee", "lee-ann"]
    texts = [" ".join(rng.choice(words + ["-", ",", "ann_", "annlee", "(", ")"], size=8))
             for _ in range(300)]
    expected = {}
    for value in dict.fromkeys(_normal(v) for v in identifiers):
        pattern = re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)")
        count = sum(1 for t in texts if pattern.search(_normal(t)))
        if count:
            expected[value] = count
    got = found_identifiers(identifiers, texts)
    assert got == expected and list(got) == list(expected) and len(got) >= 6
