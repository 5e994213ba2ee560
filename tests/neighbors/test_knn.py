"""Exact k-NN / k-NN excluding a row / radius search / neighbour graph equal a float64 brute force."""

import numpy as np
import pytest

from textdp.neighbors import NearestNeighbors, brute_force_kneighbors


def _data(n, d, q, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    v = (rng.standard_normal((n, d)) * scale).astype(np.float32)
    v[5] = v[3]  # an exact duplicate: ties broken by the lowest index
    queries = v[rng.integers(0, n, q)] + rng.standard_normal((q, d)).astype(np.float32) * 0.4
    return v, np.vstack([v[:min(n, 40)], queries]).astype(np.float32), rng


@pytest.mark.parametrize("n,d", [(30, 5), (700, 8), (2500, 12)])
@pytest.mark.parametrize("k", [1, 2, 3, 7, 29])
def test_kneighbors_equal_brute_force(n, d, k):
    v, q, rng = _data(n, d, 150)
    exclude = rng.integers(-1, n, q.shape[0])
    own = min(n, 40)
    exclude[:own] = np.arange(own)  # the query word itself
    nn = NearestNeighbors(v, block_size=37, n_jobs=2)
    for ex in (None, exclude):
        got_i, got_d = nn.kneighbors(q, k, exclude=ex)
        want_i, want_d = brute_force_kneighbors(v, q, k, ex)
        np.testing.assert_array_equal(got_i, want_i)
        np.testing.assert_allclose(got_d, want_d, rtol=0, atol=1e-12)
        if ex is not None:
            assert not (got_i == ex[:, None]).any()


def test_block_size_and_threads_do_not_change_results():
    v, q, _ = _data(6000, 50, 500, seed=4, scale=5.0)
    ref = NearestNeighbors(v, block_size=1, n_jobs=1).kneighbors(q, 4)
    for b, j in [(7, 1), (100, 2), (4096, 3)]:
        got = NearestNeighbors(v, block_size=b, n_jobs=j).kneighbors(q, 4)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])


def test_near_ties_resolved_in_float64():
    rng = np.random.default_rng(1)
    v = rng.standard_normal((3000, 8)).astype(np.float32) * 30  # large norms: large rounding
    a, b = v[rng.integers(0, 3000, 400)], v[rng.integers(0, 3000, 400)]
    q = ((a + b) / 2 + rng.standard_normal((400, 8)) * 1e-5).astype(np.float32)
    got, _ = NearestNeighbors(v, block_size=13).kneighbors(q, 3)
    np.testing.assert_array_equal(got, brute_force_kneighbors(v, q, 3)[0])


def test_radius_neighbors_equal_brute_force():
    v, q, _ = _data(2500, 6, 200)
    r = 1.7
    res = NearestNeighbors(v, block_size=50).radius_neighbors(q, r)
    d = np.sqrt(((v[None].astype(np.float64) - q[:, None].astype(np.float64)) ** 2).sum(-1))
    for i in range(q.shape[0]):
        sl = slice(res.indptr[i], res.indptr[i + 1])
        np.testing.assert_array_equal(res.indices[sl], np.flatnonzero(d[i] <= r))
        np.testing.assert_allclose(res.distances[sl], d[i][d[i] <= r], atol=1e-12, rtol=0)
    assert res.counts().sum() == res.indices.size


@pytest.mark.parametrize("n", [40, 2100])
def test_neighbor_graph_and_extremes(n):
    rng = np.random.default_rng(7)
    v = rng.standard_normal((n, 6)).astype(np.float32)
    g = NearestNeighbors(v, block_size=64).neighbor_graph(5)
    want_i, want_d = brute_force_kneighbors(v, v, 5, np.arange(n))
    np.testing.assert_array_equal(g.indices, want_i)
    full = np.sqrt(((v[None].astype(np.float64) - v[:, None].astype(np.float64)) ** 2).sum(-1))
    np.fill_diagonal(full, np.inf)
    assert g.min_distance == pytest.approx(full.min(), abs=1e-12)
    assert full[g.min_pair] == pytest.approx(g.min_distance, abs=1e-12)
    np.fill_diagonal(full, -np.inf)
    assert g.max_distance == pytest.approx(full.max(), abs=1e-12)
    assert full[g.max_pair] == pytest.approx(g.max_distance, abs=1e-12)


def test_squared_distance_blocks_and_their_error_bound():
    v, q, _ = _data(1500, 10, 100, scale=4.0)
    nn = NearestNeighbors(v)
    got = np.empty((q.shape[0], v.shape[0]))
    bound = np.empty(q.shape[0])
    seen = []

    def fn(a, b, block, err):
        seen.append(block.shape[0])
        got[a:b] = block
        bound[a:b] = err

    nn.map_squared_distances(q, fn, scale=1.5, block_size=17)
    x = v.astype(np.float64)
    y = q.astype(np.float64)
    want = 2.25 * ((x[None] - y[:, None]) ** 2).sum(-1)
    assert (np.abs(got - want) <= bound[:, None]).all()
    assert bound.max() < 1e-9 * want.max()
    assert max(seen) <= 17 and sum(seen) == q.shape[0]


def test_bad_arguments():
    v, q, _ = _data(50, 4, 3)
    nn = NearestNeighbors(v)
    with pytest.raises(ValueError, match="shape"):
        nn.kneighbors(q[:, :3], 1)
    with pytest.raises(ValueError, match="k must lie"):
        nn.kneighbors(q, 0)
    with pytest.raises(ValueError, match="k must lie"):
        nn.kneighbors(q, 50, exclude=np.zeros(q.shape[0], dtype=int))
    with pytest.raises(ValueError, match="NaN"):
        nn.kneighbors(np.full((1, 4), np.nan), 1)
    with pytest.raises(ValueError, match="exclude"):
        nn.kneighbors(q, 1, exclude=np.array([0]))
    with pytest.raises(ValueError, match="radius"):
        nn.radius_neighbors(q, -1.0)


def test_large_k_rescoring_memory_is_bounded():
    """The float64 re-scoring goes in slices: block × k candidates of d = 300 (here 64 × 500 ×
    300 float64, 77 MB an array, three of them) never sit in memory at once."""
    import tracemalloc

    rng = np.random.default_rng(7)
    v = rng.standard_normal((2500, 300)).astype(np.float32)
    nn = NearestNeighbors(v, block_size=64, n_jobs=1)
    nn.vectors64  # noqa: B018 - built before the measurement (6 MB, kept by the engine)
    tracemalloc.start()
    try:
        idx, _ = nn.kneighbors(v[:256], 500, exclude=np.arange(256))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60e6, peak
    np.testing.assert_array_equal(idx[:8], brute_force_kneighbors(v, v[:8], 500,
                                                                  exclude=np.arange(8))[0])
