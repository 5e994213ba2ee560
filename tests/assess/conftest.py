"""Known-answer mechanisms for the assessment: the identity (everything survives, every private
document links back) and a constant (nothing links back beyond chance), and a shared MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from textdp.mechanisms.base import WordMechanism
from textdp.privacy import Guarantee, Notion
from textdp.vocab import load_default


class _Test(WordMechanism):
    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(notion=Notion.NONE, epsilon=self.epsilon, metric="none",
                         per_word="none", verified=False)

    def draw(self, ids, rng):
        return np.zeros(ids.size, dtype=np.int64)


class Identity(_Test):
    name = "identity-test"

    def apply(self, ids, noise):
        return ids.copy()


class Constant(_Test):
    name = "constant-test"

    def apply(self, ids, noise):
        return np.full(ids.size, self.vocabulary.lookup["the"], dtype=np.int64)


@pytest.fixture(scope="session")
def identity():
    return Identity(load_default(), epsilon=1.0)


@pytest.fixture(scope="session")
def constant():
    return Constant(load_default(), epsilon=1.0)


@pytest.fixture(scope="session")
def sbert():
    from textdp.encoders import SBERT

    return SBERT()


@pytest.fixture(scope="session")
def tickets():
    from textdp.datasets.tickets import generate_tickets

    return generate_tickets(20, seed=5)


@pytest.fixture(scope="session")
def word_documents():
    """24 documents of 8 lower-case vocabulary words each, no punctuation: a constant word
    mechanism turns every one into the same text."""
    vocab = load_default()
    rng = np.random.default_rng(0)
    words = [w for w in vocab.words[200:3000] if w.isalpha()]
    return [" ".join(rng.choice(words, size=8)) for _ in range(24)]
