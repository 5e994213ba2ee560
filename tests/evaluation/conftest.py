"""Known-answer mechanisms and a synthetic corpus whose only signal is its words.

* ``Identity``: M(w) = w (N_w = 1, S_w = 1; utility = the clean baseline with oov="keep").
* ``Uniform``: M(w) uniform over the vocabulary, independent of w (attacks at chance).
Each comes with and without ``output_distribution`` (exact vs Monte-Carlo paths).
"""

from __future__ import annotations

import numpy as np
import pytest

from textdp.mechanisms.base import WordMechanism
from textdp.privacy import Guarantee, Notion
from textdp.vocab import Vocabulary

SYLLABLES = ("ano", "eli", "oru", "umi")
WORDS = tuple(c + s for c in "bdfgklmnpr" for s in SYLLABLES)  # 40 letter-only words


class _Test(WordMechanism):
    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(notion=Notion.NONE, epsilon=self.epsilon, metric="none",
                         per_word="none", verified=False)


class IdentityMC(_Test):
    name = "identity-test"

    def draw(self, ids, rng):
        return np.zeros(ids.size, dtype=np.int64)

    def apply(self, ids, noise):
        return ids.copy()


class Identity(IdentityMC):
    def output_distribution(self, word):
        p = np.zeros(len(self.vocabulary))
        p[int(word)] = 1.0
        return p


class UniformMC(_Test):
    name = "uniform-test"

    def draw(self, ids, rng):
        return rng.integers(len(self.vocabulary), size=ids.size)

    def apply(self, ids, noise):
        return np.asarray(noise, dtype=np.int64)


class Uniform(UniformMC):
    def output_distribution(self, word):
        return np.full(len(self.vocabulary), 1.0 / len(self.vocabulary))


@pytest.fixture(scope="session")
def toy_vocab() -> Vocabulary:
    rng = np.random.default_rng(12345)
    return Vocabulary(list(WORDS), rng.standard_normal((len(WORDS), 8)), name="toy-40x8")


def word_corpus(n_per_class: int, n_classes: int, length: int, rng: np.random.Generator):
    """Texts of ``length`` words; class c uses only the c-th block of WORDS (disjoint blocks)."""
    block = len(WORDS) // n_classes
    texts, labels = [], []
    for c in range(n_classes):
        pool = WORDS[c * block:(c + 1) * block]
        for _ in range(n_per_class):
            texts.append(" ".join(rng.choice(pool, size=length)))
            labels.append(c)
    return texts, np.asarray(labels)


@pytest.fixture(scope="session")
def known():
    """The classes and helpers above, for test modules (conftest is not importable by name)."""
    from types import SimpleNamespace

    return SimpleNamespace(Identity=Identity, IdentityMC=IdentityMC, Uniform=Uniform,
                           UniformMC=UniformMC, word_corpus=word_corpus, WORDS=WORDS)
