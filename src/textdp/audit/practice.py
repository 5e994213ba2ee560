"""Privacy in practice of a synthetic release: what of the originals can be found in the output.

A dataset-level (ε, δ) guarantee bounds what any attack can learn; these checks look for the
plainest failures directly, on the originals and the synthetic documents (issue 32's goals):

* **identifiers** — names, e-mail addresses, phone and order numbers, streets of the originals
  (given, or found by the recognisers of ``textdp privatize``) that occur in the output;
* **unique 8-grams** — sequences of 8 words that occur in exactly one original and in some
  synthetic document (a verbatim trace of one document);
* **closer than a neighbour** — originals for which some synthetic document is closer (cosine,
  MiniLM by default) than the original's own nearest *other* original: the output then holds a
  near-copy of that original, closer than anything else in the data.

These are measurements, not guarantees: zero findings says these traces are absent, not that
the output is private (that is what the accountant's ε says, and :mod:`textdp.audit.synthesis`
tests empirically). Nothing here is DP: the result holds exact facts about the originals and is
for the data owner.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PracticeChecks", "closer_than_neighbour", "found_identifiers", "identifiers_of",
           "practice_checks", "unique_ngrams_found", "words"]

_WORD = re.compile(r"\w+")
#: Identifiers shown in a result (the count is always complete).
_SHOWN = 10


def words(text: str) -> list[str]:
    """The lowercased word tokens of ``text`` (Unicode ``\\w+``): what the n-gram check compares."""
    return _WORD.findall(text.casefold())


def _ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def unique_ngrams_found(originals: Sequence[str], synthetic: Sequence[str], n: int = 8
                        ) -> tuple[int, int, list[str]]:
    """(n-grams of words occurring in exactly one original that occur in the output, synthetic
    documents holding at least one, a few of those n-grams). An n-gram repeated inside one
    original still occurs in exactly one original."""
    seen: Counter = Counter()
    for text in originals:
        seen.update(_ngrams(words(text), n))
    unique = {g for g, c in seen.items() if c == 1}
    found: set[tuple[str, ...]] = set()
    documents = 0
    for text in synthetic:
        hits = _ngrams(words(text), n) & unique
        found |= hits
        documents += bool(hits)
    return len(found), documents, [" ".join(g) for g in sorted(found)[:_SHOWN]]


def identifiers_of(originals: Sequence[str], masker: Any = None) -> list[str]:
    """The strings the recognisers find in ``originals`` (entities and identifiers), distinct,
    in order of first appearance. ``masker``: a :class:`textdp.synthesis.screen.Masker`
    (default: identifiers and the default entity kinds)."""
    if masker is None:
        from textdp.synthesis.screen import build_masker

        masker = build_masker()
    out: dict[str, None] = {}
    for text, spans in zip(originals, masker.find(originals), strict=True):
        for a, b, _ in spans:
            out.setdefault(text[a:b], None)
    return list(out)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def found_identifiers(identifiers: Sequence[str], synthetic: Sequence[str]
                      ) -> dict[str, int]:
    """Identifier → synthetic documents holding it (case-folded, whitespace collapsed, at word
    boundaries), for the identifiers found at least once, in the order given.

    One Aho–Corasick pass per document over all identifiers (every occurrence, overlapping ones
    too, then the word-boundary test on its neighbours): 50,000 identifiers against 2,000
    documents took minutes as one regular expression per identifier."""
    import ahocorasick

    values = list(dict.fromkeys(_normal(v) for v in identifiers if v and v.strip()))
    if not values:
        return {}
    automaton = ahocorasick.Automaton()
    for i, value in enumerate(values):
        automaton.add_word(value, i)
    automaton.make_automaton()
    hits: Counter[int] = Counter()
    for text in (_normal(t) for t in synthetic):
        seen = set()
        for end, i in automaton.iter(text):
            start = end - len(values[i]) + 1
            if (i not in seen and (start == 0 or not _word(text[start - 1]))
                    and (end + 1 == len(text) or not _word(text[end + 1]))):
                seen.add(i)
        hits.update(seen)
    return {values[i]: hits[i] for i in sorted(hits)}


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def closer_than_neighbour(originals: np.ndarray, synthetic: np.ndarray, block: int = 1024
                          ) -> np.ndarray:
    """Per original, whether some synthetic document has a strictly larger cosine similarity to
    it than its nearest other original (embeddings in rows; exact, blocked)."""
    a, s = _unit(originals), _unit(synthetic)
    out = np.zeros(len(a), dtype=bool)
    if len(a) < 2 or len(s) == 0:
        return out
    for start in range(0, len(a), block):
        rows = a[start:start + block]
        other = rows @ a.T
        other[np.arange(len(rows)), np.arange(start, start + len(rows))] = -np.inf
        out[start:start + len(rows)] = (rows @ s.T).max(axis=1) > other.max(axis=1)
    return out


@dataclass(frozen=True)
class PracticeChecks:
    """What :func:`practice_checks` found (exact counts about the originals: not DP)."""

    originals: int
    synthetic: int
    identifiers_checked: int
    identifiers_found: dict[str, int]
    ngram: int
    unique_ngrams_found: int
    documents_with_unique_ngram: int
    ngram_examples: list[str]
    closer_than_neighbour: int | None

    @property
    def closer_fraction(self) -> float | None:
        if self.closer_than_neighbour is None:
            return None
        return self.closer_than_neighbour / max(self.originals, 1)

    def to_dict(self) -> dict[str, Any]:
        shown = dict(list(self.identifiers_found.items())[:_SHOWN])
        return {"originals": self.originals, "synthetic": self.synthetic,
                "identifiers_checked": self.identifiers_checked,
                "identifiers_found": len(self.identifiers_found),
                "identifiers_found_examples": shown, "ngram": self.ngram,
                "unique_ngrams_found": self.unique_ngrams_found,
                "documents_with_unique_ngram": self.documents_with_unique_ngram,
                "ngram_examples": self.ngram_examples,
                "closer_than_neighbour": self.closer_than_neighbour,
                "closer_fraction": self.closer_fraction,
                "note": "exact counts about the originals, for the data owner (not DP)"}

    def lines(self) -> list[str]:
        """The findings as Markdown bullet lines."""
        out = [f"- identifiers of the originals in the output: {len(self.identifiers_found)} of "
               f"{self.identifiers_checked:,} checked"
               + (f" ({', '.join(repr(k) for k in list(self.identifiers_found)[:_SHOWN])})"
                  if self.identifiers_found else ""),
               f"- {self.ngram}-word sequences occurring in exactly one original found in the "
               f"output: {self.unique_ngrams_found} (in {self.documents_with_unique_ngram} "
               f"synthetic documents)"]
        if self.closer_than_neighbour is not None:
            out.append(f"- originals with a synthetic document closer than their nearest other "
                       f"original: {self.closer_than_neighbour} of {self.originals:,} "
                       f"({100 * self.closer_fraction:.2f}%)")
        return out


def practice_checks(originals: Sequence[str], synthetic: Sequence[str], *,
                    identifiers: Sequence[str] | None = None,
                    encoder: Callable[[list[str]], Any] | str | None = "default",
                    original_embeddings: np.ndarray | None = None,
                    synthetic_embeddings: np.ndarray | None = None,
                    ngram: int = 8, masker: Any = None) -> PracticeChecks:
    """The three checks of the module docstring, on ``originals`` (the private documents as
    given, before any masking) and ``synthetic`` (the released documents).

    Args:
        identifiers: the originals' names and identifiers when known (e.g. a generator's
            ground truth); None: found by the recognisers (``masker``, default identifiers and
            entities).
        encoder: for the nearest-neighbour check: ``"default"`` (all-MiniLM-L6-v2), an encoder
            or callable ``texts → (k, d)``, or None to skip the check. Embeddings already
            computed can be given instead.
        ngram: the n of the n-gram check (8 in issue 32).
    """
    if isinstance(originals, str) or isinstance(synthetic, str):
        raise TypeError("originals and synthetic must be lists of strings")
    if isinstance(ngram, bool) or not isinstance(ngram, int) or ngram < 1:
        raise ValueError(f"ngram must be an integer ≥ 1, got {ngram!r}")
    originals, synthetic = list(originals), list(synthetic)
    if identifiers is None:
        identifiers = identifiers_of(originals, masker)
    found = found_identifiers(identifiers, synthetic)
    count, documents, examples = unique_ngrams_found(originals, synthetic, ngram)
    closer = None
    if original_embeddings is None and encoder is not None:
        from textdp.encoders import SBERT, get_encoder

        embed = SBERT() if encoder == "default" else get_encoder(encoder)
        original_embeddings = np.asarray(embed(originals))
        if synthetic_embeddings is None:
            synthetic_embeddings = np.asarray(embed(synthetic))
    if original_embeddings is not None:
        if synthetic_embeddings is None:
            raise ValueError("give synthetic_embeddings with original_embeddings")
        closer = int(closer_than_neighbour(original_embeddings, synthetic_embeddings).sum())
    return PracticeChecks(len(originals), len(synthetic), len(set(map(_normal, identifiers))),
                          found, ngram, count, documents, examples, closer)
