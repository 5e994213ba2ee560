"""Blocked GEMM nearest neighbour equals a float64 brute force, for any block size."""

import numpy as np
import pytest

from textdp.neighbors import NearestNeighbors, brute_force_nearest


def _data(n=3000, d=16, q=2500, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d)).astype(np.float32)
    queries = v[rng.integers(0, n, q)] + rng.standard_normal((q, d)).astype(np.float32) * 0.4
    return v, queries.astype(np.float32)


@pytest.mark.parametrize("block_size", [1, 7, 64, None, 4096])
@pytest.mark.parametrize("n_jobs", [1, 3])
def test_equals_brute_force(block_size, n_jobs):
    v, q = _data()
    got = NearestNeighbors(v, block_size=block_size, n_jobs=n_jobs).query(q)
    np.testing.assert_array_equal(got, brute_force_nearest(v, q))


def test_near_ties_are_resolved_exactly():
    """Queries on the bisector of two words: float32 scores tie, float64 decides (or lowest index)."""
    rng = np.random.default_rng(1)
    v = rng.standard_normal((500, 8)).astype(np.float32) * 30  # large norms: large rounding
    a, b = v[rng.integers(0, 500, 400)], v[rng.integers(0, 500, 400)]
    q = ((a + b) / 2).astype(np.float32)
    q += rng.standard_normal(q.shape).astype(np.float32) * 1e-5
    np.testing.assert_array_equal(NearestNeighbors(v, block_size=13).query(q),
                                  brute_force_nearest(v, q))


def test_duplicate_rows_give_lowest_index():
    v, _ = _data(n=200)
    v2 = np.vstack([v, v[:20]])
    np.testing.assert_array_equal(NearestNeighbors(v2).query(v[:20]), np.arange(20))


def test_certificate_matters():
    """Without the float64 certificate the answer can depend on the block size; with it, never."""
    v, q = _data(n=4000, d=50, q=3000, seed=5)
    v *= 5
    exact = [NearestNeighbors(v, block_size=b).query(q) for b in (1, 3, 100)]
    for e in exact[1:]:
        np.testing.assert_array_equal(e, exact[0])


def test_memory_is_bounded_by_block():
    v, q = _data(n=1000, q=10)
    nn = NearestNeighbors(v, block_size=4)
    big = np.tile(q, (2000, 1))  # 20,000 queries, 4 × 1000 scores at a time
    np.testing.assert_array_equal(nn.query(big)[:10], brute_force_nearest(v, q))


def test_bad_queries():
    v, q = _data(n=50, q=3)
    nn = NearestNeighbors(v)
    with pytest.raises(ValueError, match="shape"):
        nn.query(q[:, :3])
    bad = q.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        nn.query(bad)
    assert nn.query(q[:0]).shape == (0,)


@pytest.mark.parametrize("block_size,n_jobs", [(1, 1), (37, 3), (None, 2)])
def test_two_nearest_equals_brute_force(block_size, n_jobs):
    from textdp.neighbors import brute_force_kneighbors

    rng = np.random.default_rng(8)
    v = rng.standard_normal((2500, 12)).astype(np.float32) * 5
    q = (v[rng.integers(0, 2500, 1500)] + rng.standard_normal((1500, 12)) * 0.3).astype(np.float32)
    exclude = rng.integers(0, 2500, 1500)
    exclude[:100] = -1
    q[100:150] = v[exclude[100:150]]  # the excluded row is the exact hit
    q[150:200] = (v[exclude[150:200]] + v[rng.integers(0, 2500, 50)]) / 2  # near-ties
    nn = NearestNeighbors(v, block_size=block_size, n_jobs=n_jobs)
    for ex in (exclude, None):
        idx, dist = nn.two_nearest(q, exclude=ex)
        ref_idx, ref_dist = brute_force_kneighbors(v, q, 2, exclude=ex)
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_allclose(dist, ref_dist, rtol=1e-12)
