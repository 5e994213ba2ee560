"""The seeded vector chunk streams are laid out once (issue 33): any split of an input into
contiguous pieces — a Ray worker's files, a Ray Data batch's runs of rows — released piece by
piece with :func:`release_rows` gives the one-process release byte for byte, and the
per-process worker protocol counts each batch once. No Ray needed: the engines call exactly
these functions."""

from __future__ import annotations

import numpy as np
import pytest

from textdp.mechanisms.embedding import LaplaceVector
from textdp.mechanisms.embedding.release import CHUNK_ROWS, release_rows, release_vectors

N, D = 2 * CHUNK_ROWS + 300, 3


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(7).normal(size=(N, D))  # test data only


def _cuts(seed: int) -> list[int]:
    rng = np.random.default_rng(seed)  # where the pieces start: across and on chunk boundaries
    inner = rng.choice(np.arange(1, N), size=6, replace=False).tolist()
    return sorted({0, N, CHUNK_ROWS, CHUNK_ROWS + 1, *inner})


@pytest.mark.parametrize("split", [0, 1, 2])
def test_pieces_released_apart_equal_the_whole(X, split):
    mech = LaplaceVector(epsilon=1.5)
    whole = release_vectors(mech, X, seed=11)
    cuts = _cuts(split)
    pieces = [release_rows(mech, X[a:b], first=a, n_rows=N, seed=11)
              for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    assert np.vstack(pieces).tobytes() == whole.tobytes()


def test_the_check_has_power(X):
    """A piece drawing chunk streams keyed by its own chunk index (the bug the one layout
    prevents) differs from the whole release."""
    mech = LaplaceVector(epsilon=1.5)
    whole = release_vectors(mech, X, seed=11)
    a = CHUNK_ROWS + 100
    wrong = release_vectors(mech, X[a:], seed=11)  # as if the piece were an input of its own
    assert not np.array_equal(wrong, whole[a:])
    assert np.array_equal(release_rows(mech, X[a:], first=a, n_rows=N, seed=11), whole[a:])


def test_unseeded_pieces_draw_from_the_given_generator(X):
    mech = LaplaceVector(epsilon=1.5)
    rng = np.random.default_rng(3)  # test only: the engines pass a secure generator
    out = release_rows(mech, X[:10], rng=rng)
    assert out.shape == (10, D) and not np.array_equal(out, X[:10])
    assert release_rows(mech, X[:0], first=5, n_rows=N, seed=1).shape == (0, D)


def test_a_process_release_counts_each_batch_once_and_pickles_as_its_spec():
    import pickle

    from textdp.engines.worker import ProcessRelease
    from textdp.spec import release_spec

    spec = release_spec("mvc", 10, seed=3)
    one = ProcessRelease(spec)
    texts = ["The food was great.", "The room felt cold and we left."]
    out = one.run(texts, start=0)
    assert out == spec.privatizer().run(texts, start=0)
    first = _counts(one.delta())
    again = _counts(one.delta())  # nothing ran since: nothing new is counted
    assert first["documents"] == 2 and again["documents"] == 0
    assert sum(again["by_policy"].values()) == 0 < sum(first["by_policy"].values())
    copy = pickle.loads(pickle.dumps(one))
    assert copy._privatizer is None and copy.spec == spec  # a worker builds its own
    one.run(["A failed batch."], start=2)
    one.reset()  # what that batch counted is not sent home
    one.run(texts, start=0)
    assert _counts(one.delta()) == first


def _counts(tallies):
    """The counts of ``tallies`` (its time aside)."""
    return {k: v for k, v in tallies.to_json().items() if k != "nanoseconds"}
