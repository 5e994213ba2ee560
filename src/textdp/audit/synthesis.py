"""An empirical audit of a synthetic-text release (``textdp.synthesize``; issue 32, Deliver 3).

Two attacks, run on one release of the user's own data, beside the ε the accountant claims:

* **Canaries** (Carlini et al., USENIX Security 2019, "The Secret Sharer"): documents holding a
  random secret ("… the reference phrase is kovatem zuliraf …") are inserted 1, 10 and 100
  times into the private input. In the output we look for each secret verbatim, near-verbatim
  (every word of it, each within one edit, in one synthetic document), and compute its
  **exposure** by sampling (their §4.2): with a score s(r) = the largest share of r's character
  3-grams found in one synthetic document, and m secrets r drawn from the same space,

      exposure ≈ log₂((m + 1) / (1 + #{r : s(r) ≥ s(secret)}))    bits, at most log₂(m + 1);

  0 bits: the inserted secret scores no better than secrets never inserted.
* **Membership** (distance to the nearest synthetic document, as in the privacy audits of
  synthetic data; e.g. Yue et al., ACL 2023, §5): the input is split at random, by unit, into
  members (released from) and held-out non-members. Every original's score is its largest
  cosine similarity (MiniLM) to a synthetic document. We report the AUC of member against
  non-member scores and an **empirical ε lower bound**: a threshold and direction are chosen on
  half of each group; on the other half, with Clopper–Pearson bounds (each at α/2),

      ε ≥ ln((TPR_lo − δ) / FPR_hi)     or     ε ≥ ln((TNR_lo − δ) / FNR_hi),

  since (ε, δ)-DP bounds every test's TPR ≤ e^ε·FPR + δ (Kairouz et al., ICML 2015). The
  bound treats the documents' membership guesses as independent trials, which one release
  makes only approximately true; Steinke, Nasr & Jagielski (NeurIPS 2023, "Privacy auditing
  with one (1) training run") give the rigorous one-run version. At practical ε this attack is
  weak: a bound far below the claim is expected, and is **no evidence** of privacy — an audit
  can refute a claim, never prove it.

Canary documents take part in the release (they are members) but not in the membership test.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp import _random
from textdp.audit._stats import cp_lower, cp_upper

__all__ = ["Canary", "CanaryResult", "MembershipResult", "SynthesisAudit", "audit_synthesis",
           "audit_release", "canary_exposure", "make_canaries", "membership_test",
           "plant"]

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
#: A secret is two made-up words of three consonant–vowel syllables and a final consonant:
#: (14·5)³·14 ≈ 4.8e6 each, ≈ 2.3e13 secrets — none of them an English word or an identifier.
_SYLLABLES = 3
CANARY_TEMPLATE = "Please keep this on file: the reference phrase for my account is {secret}."
DEFAULT_COUNTS = (1, 10, 100)


def random_secrets(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` secrets of the canary space (two made-up words each), drawn independently."""
    c = rng.integers(len(_CONSONANTS), size=(count, 2, _SYLLABLES + 1)).tolist()
    v = rng.integers(len(_VOWELS), size=(count, 2, _SYLLABLES)).tolist()
    return [" ".join("".join(_CONSONANTS[cw[i]] + _VOWELS[vw[i]] for i in range(_SYLLABLES))
                     + _CONSONANTS[cw[-1]] for cw, vw in zip(cs, vs, strict=True))
            for cs, vs in zip(c, v, strict=True)]


def random_secret(rng: np.random.Generator) -> str:
    """One secret of the canary space."""
    return random_secrets(rng, 1)[0]


def secret_space_bits() -> float:
    """log₂ of the number of secrets (the most exposure the full space could show)."""
    per_word = (len(_CONSONANTS) * len(_VOWELS)) ** _SYLLABLES * len(_CONSONANTS)
    return 2 * math.log2(per_word)


@dataclass(frozen=True, slots=True)
class Canary:
    """A secret and the document that carries it, inserted ``copies`` times."""

    secret: str
    text: str
    copies: int
    label: str | None = None


def make_canaries(counts: Sequence[int] = DEFAULT_COUNTS, *, rng: np.random.Generator,
                  labels: Sequence[str] | None = None, template: str = CANARY_TEMPLATE
                  ) -> tuple[Canary, ...]:
    """One canary per count, each with a fresh secret (and, given ``labels``, a label drawn
    from them)."""
    if "{secret}" not in template:
        raise ValueError("the canary template must hold {secret}")
    out = []
    for copies in counts:
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
            raise ValueError(f"canary counts must be integers ≥ 1, got {copies!r}")
        secret = random_secret(rng)
        label = None if not labels else labels[int(rng.integers(len(labels)))]
        out.append(Canary(secret, template.replace("{secret}", secret), copies, label))
    return tuple(out)


def _near(word: str, tokens: set[str]) -> bool:
    """``word`` is within one edit (insertion, deletion, substitution) of a token."""
    if word in tokens:
        return True
    for t in tokens:
        if abs(len(t) - len(word)) > 1:
            continue
        if len(t) == len(word):
            if sum(a != b for a, b in zip(t, word, strict=True)) <= 1:
                return True
            continue
        short, long = (t, word) if len(t) < len(word) else (word, t)
        if any(long[:i] + long[i + 1:] == short for i in range(len(long))):
            return True
    return False


@dataclass(frozen=True, slots=True)
class CanaryResult:
    """What the output shows of one canary."""

    secret: str
    copies: int
    verbatim: int          # synthetic documents holding the secret as it was inserted
    near_verbatim: int     # … holding every word of it, each within one edit
    score: float           # the largest share of its character 3-grams in one document
    rank: int              # 1 + sampled secrets scoring at least as high
    candidates: int        # m, secrets sampled
    exposure: float        # log₂((m + 1) / rank), bits

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def _trigrams(text: str) -> set[str]:
    return {text[i:i + 3] for i in range(len(text) - 2)}


def _trigram_scores(secrets: Sequence[str], synthetic: Sequence[str]) -> np.ndarray:
    """Per secret, the largest share of its character 3-grams (padded with a space each side,
    case-folded) found in one synthetic document: a sparse product, secrets × documents."""
    from scipy import sparse

    if not synthetic:
        return np.zeros(len(secrets))
    vocabulary: dict[str, int] = {}
    rows = [[vocabulary.setdefault(g, len(vocabulary)) for g in _trigrams(f" {x.casefold()} ")]
            for x in secrets]
    docs = [[vocabulary[g] for g in _trigrams(" " + " ".join(t.casefold().split()) + " ")
             if g in vocabulary] for t in synthetic]

    def matrix(lists: list[list[int]]) -> Any:
        indptr = np.cumsum([0] + [len(r) for r in lists])
        indices = np.fromiter((i for r in lists for i in r), dtype=np.int64, count=indptr[-1])
        return sparse.csr_matrix((np.ones(len(indices)), indices, indptr),
                                 shape=(len(lists), len(vocabulary)))

    shared = (matrix(rows) @ matrix(docs).T).toarray()
    sizes = np.array([len(r) for r in rows], dtype=np.float64)
    return shared.max(axis=1) / np.maximum(sizes, 1.0)


def canary_exposure(canaries: Sequence[Canary], synthetic: Sequence[str], *,
                    rng: np.random.Generator, candidates: int = 10_000
                    ) -> tuple[CanaryResult, ...]:
    """Each canary's verbatim and near-verbatim occurrences and its sampled exposure (see the
    module docstring). The ``candidates`` secrets are drawn from ``rng`` (public randomness)."""
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
        raise ValueError(f"candidates must be an integer ≥ 1, got {candidates!r}")
    from textdp.audit.practice import words

    normal = [" ".join(t.casefold().split()) for t in synthetic]
    tokens = [set(words(t)) for t in normal]
    sampled = random_secrets(rng, candidates)
    scores = _trigram_scores([c.secret for c in canaries] + sampled, synthetic)
    reference = np.sort(scores[len(canaries):])
    out = []
    for i, canary in enumerate(canaries):
        parts = canary.secret.split()
        verbatim = sum(1 for t in normal if canary.secret in t)
        near = sum(1 for ts in tokens if all(_near(p, ts) for p in parts))
        at_least = candidates - int(np.searchsorted(reference, scores[i], side="left"))
        rank = 1 + at_least
        out.append(CanaryResult(canary.secret, canary.copies, verbatim, near,
                                float(scores[i]), rank, candidates,
                                math.log2((candidates + 1) / rank)))
    return tuple(out)


def _auc(members: np.ndarray, others: np.ndarray) -> float:
    """Pr[member score > non-member score] + ½ Pr[tie] (the Mann–Whitney U statistic / mn)."""
    both = np.concatenate([members, others])
    from scipy.stats import rankdata

    ranks = rankdata(both)
    m, n = len(members), len(others)
    return float((ranks[:m].sum() - m * (m + 1) / 2) / (m * n))


@dataclass(frozen=True, slots=True)
class MembershipResult:
    """The membership test: AUC and the certified empirical ε lower bound."""

    members: int
    non_members: int
    auc: float
    threshold: float
    direction: str          # "member if score ≥ threshold" or the reverse
    tpr: float              # on the certifying half
    fpr: float
    epsilon_lower_bound: float   # 0 when nothing is certified
    alpha: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def _bound(k_yes: Any, n_yes: int, k_no: Any, n_no: int, alpha: float, delta: float
           ) -> np.ndarray:
    """ln((p_lo − δ)/q_hi) for k_yes of n_yes against k_no of n_no, each Clopper–Pearson bound
    at α/2 (vectorised over the counts); −inf where p_lo ≤ δ."""
    lo = np.asarray(cp_lower(k_yes, n_yes, alpha / 2), dtype=np.float64) - delta
    hi = np.asarray(cp_upper(k_no, n_no, alpha / 2), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((lo > 0) & (hi > 0), np.log(np.maximum(lo, 1e-300) / hi), -np.inf)


def _at_least(scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """How many of ``scores`` are ≥ each threshold."""
    return len(scores) - np.searchsorted(np.sort(scores), taus, side="left")


def membership_test(member_scores: Sequence[float], non_member_scores: Sequence[float], *,
                    delta: float, alpha: float = 0.05) -> MembershipResult:
    """AUC and the empirical ε lower bound of the threshold attack (module docstring).

    The halves are the even and odd positions of each group (the groups come in an order that
    does not depend on the scores); the threshold and direction maximise the bound computed on
    the even half, and only the odd half certifies.
    """
    m = np.asarray(member_scores, dtype=np.float64)
    o = np.asarray(non_member_scores, dtype=np.float64)
    if len(m) < 4 or len(o) < 4:
        raise ValueError("the membership test needs at least 4 members and 4 non-members")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    auc = _auc(m, o)
    (m1, m2), (o1, o2) = (m[0::2], m[1::2]), (o[0::2], o[1::2])
    taus = np.unique(np.concatenate([m1, o1]))
    k_m, k_o = _at_least(m1, taus), _at_least(o1, taus)
    high = _bound(k_m, len(m1), k_o, len(o1), alpha, delta)
    low = _bound(len(o1) - k_o, len(o1), len(m1) - k_m, len(m1), alpha, delta)
    is_high = bool(high.max() >= low.max())
    tau = float(taus[int(np.argmax(high if is_high else low))])
    k_m2, k_o2 = int((m2 >= tau).sum()), int((o2 >= tau).sum())
    if is_high:
        certified = float(_bound(k_m2, len(m2), k_o2, len(o2), alpha, delta))
    else:
        certified = float(_bound(len(o2) - k_o2, len(o2), len(m2) - k_m2, len(m2), alpha,
                                 delta))
    return MembershipResult(len(m), len(o), auc, tau,
                            "member if score ≥ threshold" if is_high
                            else "member if score < threshold",
                            k_m2 / len(m2), k_o2 / len(o2), max(0.0, certified), alpha, delta)


def nearest_similarity(originals: np.ndarray, synthetic: np.ndarray) -> np.ndarray:
    """Per original, its largest cosine similarity to a synthetic document."""
    from textdp.audit.practice import _unit

    a, s = _unit(originals), _unit(synthetic)
    return np.concatenate([(a[i:i + 1024] @ s.T).max(axis=1) for i in range(0, len(a), 1024)]) \
        if len(a) else np.zeros(0)


@dataclass(frozen=True)
class SynthesisAudit:
    """An audit of one synthetic release (:func:`audit_synthesis`)."""

    epsilon_claimed: float
    delta: float
    canaries: tuple[CanaryResult, ...]
    membership: MembershipResult
    practice: Any
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)
    #: The release audited (``.texts``, ``.labels``, ``.report``); not in :meth:`to_dict`.
    release: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "textdp.audit.synthesis/1", "epsilon_claimed": self.epsilon_claimed,
                "delta": self.delta, "canaries": [c.to_dict() for c in self.canaries],
                "membership": self.membership.to_dict(),
                "practice": self.practice.to_dict() if self.practice is not None else None,
                "seconds": self.seconds, **self.details,
                "note": "an audit can refute a privacy claim, never prove one; these are exact "
                        "facts about the private input, for the data owner"}

    def markdown(self) -> str:
        """The audit as Markdown: the canary table, the membership test beside the claim, and
        the privacy-in-practice checks."""
        mem = self.membership
        lines = ["| canary copies | verbatim | near-verbatim | 3-gram score | rank | exposure "
                 "(bits) |", "|---|---|---|---|---|---|"]
        lines += [f"| {c.copies} | {c.verbatim} | {c.near_verbatim} | {c.score:.2f} | "
                  f"{c.rank:,} of {c.candidates + 1:,} | {c.exposure:.2f} |"
                  for c in self.canaries]
        lines += ["", f"Membership ({mem.members:,} members, {mem.non_members:,} held-out "
                  f"non-members; score: cosine to the nearest synthetic document): AUC "
                  f"{mem.auc:.3f}; threshold attack on the certifying half TPR {mem.tpr:.3f}, "
                  f"FPR {mem.fpr:.3f}; **empirical ε lower bound {mem.epsilon_lower_bound:.3f}** "
                  f"(Clopper–Pearson, α = {mem.alpha:g}, δ = {mem.delta:g}) against the claimed "
                  f"**ε = {self.epsilon_claimed:g}**."]
        if self.practice is not None:
            lines += ["", *self.practice.lines()]
        return "\n".join(lines)

    def summary(self) -> str:
        found = sum(1 for c in self.canaries if c.verbatim or c.near_verbatim)
        return (f"audit: {found} of {len(self.canaries)} canaries found; membership AUC "
                f"{self.membership.auc:.3f}, empirical ε ≥ "
                f"{self.membership.epsilon_lower_bound:.3f} against claimed ε = "
                f"{self.epsilon_claimed:g}")


def _split(count: int, units: Sequence[str] | None, holdout: float,
           rng: np.random.Generator) -> np.ndarray:
    """A mask of the held-out documents: a random ``holdout`` share of the units."""
    keys = list(range(count)) if units is None else list(units)
    distinct = sorted(set(keys), key=str)
    out = rng.permutation(len(distinct))[:round(holdout * len(distinct))]
    held = {distinct[i] for i in out.tolist()}
    return np.array([k in held for k in keys], dtype=bool)


def plant(texts: list[str], labels: list[str] | None, units: list[str] | None,
           canaries: Sequence[Canary]) -> tuple[list[str], list[str] | None, list[str] | None]:
    texts, labels, units = list(texts), None if labels is None else list(labels), \
        None if units is None else list(units)
    for k, c in enumerate(canaries):
        texts += [c.text] * c.copies
        if labels is not None:
            labels += [c.label] * c.copies
        if units is not None:  # every copy its own unit: "inserted k times" by k people
            units += [f"__textdp_canary_{k}_{i}" for i in range(c.copies)]
    return texts, labels, units


def audit_release(release: Any, *, members: Sequence[str], non_members: Sequence[str],
                  canaries: Sequence[Canary] = (), encoder: Any = None,
                  identifiers: Sequence[str] | None = None, candidates: int = 10_000,
                  alpha: float = 0.05, rng: np.random.Generator | None = None,
                  details: dict[str, Any] | None = None) -> SynthesisAudit:
    """Audit a finished release (``.texts`` and ``.report`` of :func:`textdp.synthesize`) made
    from ``members`` (the originals, canaries aside) and the planted ``canaries``, against the
    held-out ``non_members``: the canaries' exposure, the membership test and the privacy-in-
    practice checks on the members. ``rng`` draws the sampled secrets (public randomness)."""
    from textdp.audit.practice import practice_checks
    from textdp.encoders import SBERT, get_encoder

    t0 = time.perf_counter()
    embed = SBERT() if encoder is None else get_encoder(encoder)
    out = list(release.texts)
    claimed = release.report["guarantee"]
    found = canary_exposure(canaries, out, rng=rng if rng is not None
                            else _random.secure_generator(), candidates=candidates)
    member_vectors = np.asarray(embed(list(members)))
    synthetic_vectors = np.asarray(embed(out))
    scores_in = nearest_similarity(member_vectors, synthetic_vectors)
    scores_out = nearest_similarity(np.asarray(embed(list(non_members))), synthetic_vectors)
    membership = membership_test(scores_in, scores_out, delta=float(claimed["delta"]),
                                 alpha=alpha)
    practice = practice_checks(members, out, identifiers=identifiers, encoder=None,
                               original_embeddings=member_vectors,
                               synthetic_embeddings=synthetic_vectors)
    return SynthesisAudit(float(claimed["epsilon"]), float(claimed["delta"]), found, membership,
                          practice, time.perf_counter() - t0,
                          {"synthetic": len(out),
                           "canary_documents": sum(c.copies for c in canaries),
                           "held_out_documents": len(non_members), **(details or {})}, release)


def audit_synthesis(texts: Sequence[str], *, epsilon: float, n: int,
                    labels: Sequence[Any] | None = None, units: Sequence[Any] | None = None,
                    holdout: float = 0.5, canaries: Sequence[int] = DEFAULT_COUNTS,
                    candidates: int = 10_000, alpha: float = 0.05, seed: int | None = None,
                    encoder: Any = None, identifiers: Sequence[str] | None = None,
                    synthesize: Callable[..., Any] | None = None,
                    **options: Any) -> SynthesisAudit:
    """Audit ``textdp.synthesize`` on ``texts``: a random ``holdout`` share of the units is
    held out; canaries (one per entry of ``canaries``, inserted that many times) are added to
    the rest; one release is made with ``epsilon``, ``n`` and ``options`` (those of
    :func:`textdp.synthesize`), and audited by :func:`audit_release`.

    ``encoder``: the one encoder of the release and of the membership scores (default
    all-MiniLM-L6-v2). ``seed`` makes the split, the canaries, the sampled secrets and the
    release reproducible. ``synthesize`` replaces :func:`textdp.synthesize` (for a test).
    """
    from textdp.encoders import SBERT, get_encoder
    from textdp.synthesis.api import TextSource

    if not 0 < holdout < 1:
        raise ValueError(f"holdout must lie in (0, 1), got {holdout!r}")
    t0 = time.perf_counter()
    source = TextSource.build(texts, labels, units)
    pick = (_random.public_generator(seed, (7, 0)) if seed is not None
            else _random.secure_generator())
    held = _split(len(source.texts), source.units, holdout, pick)
    keep = np.flatnonzero(~held).tolist()
    members = [source.texts[i] for i in keep]
    if len(keep) < 4 or len(keep) == len(source.texts) or len(source.texts) - len(keep) < 4:
        raise ValueError(f"the audit needs at least 4 member and 4 held-out documents; "
                         f"{len(source.texts)} document(s) split {len(keep)} / "
                         f"{len(source.texts) - len(keep)} (holdout {holdout:g})")
    label_names = sorted(set(source.labels)) if source.labels is not None else None
    planted = make_canaries(tuple(canaries), rng=pick, labels=label_names)
    private = plant(members, None if source.labels is None else [source.labels[i] for i in keep],
                    None if source.units is None else [source.units[i] for i in keep], planted)
    embed = SBERT() if encoder is None else get_encoder(encoder)
    if synthesize is None:
        from textdp.synthesis.api import synthesize
    result = synthesize(private[0], labels=private[1], units=private[2], epsilon=epsilon, n=n,
                        seed=seed, encoder=embed, **options)
    audited = audit_release(result, members=members,
                            non_members=[source.texts[i] for i in np.flatnonzero(held).tolist()],
                            canaries=planted, encoder=embed, identifiers=identifiers,
                            candidates=candidates, alpha=alpha, rng=pick)
    from dataclasses import replace

    return replace(audited, seconds=time.perf_counter() - t0)
