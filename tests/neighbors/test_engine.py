"""The engine on vocabularies of many tiles and chunks, with near-ties planted across their boundaries.

Every operation (query, two_nearest, kneighbors, radius_neighbors, neighbor_graph; with and without
an excluded row) must equal a float64 brute force. The vocabulary has 20,000+ rows (tiles of
1,024 / 512 words, GEMM chunks of 4,096): tied rows sit in different tiles and chunks, at distances
from the query that are exactly equal or differ by one float32 ulp — far below the float32 score
error at these norms, so only the float64 certificate can order them. A certificate that looked
only inside the best tile fails these tests (checked by injecting that bug).
"""

import numpy as np
import pytest

from textdp.neighbors import NearestNeighbors, brute_force_kneighbors, brute_force_nearest
from textdp.neighbors.engine import CHUNK, TILE

N_WORDS = 20_000 + 123  # a partial last chunk
DIM = 8
H = 0.125  # planted offsets 3H, 4H, 5H are exact in float32

# Rows planted together (all in different tiles or chunks): boundaries of tiles, of half tiles,
# of chunks, and rows far apart.
GROUPS = [
    (TILE - 1, TILE, 2 * TILE - 1),
    (CHUNK - 1, CHUNK, 3 * TILE),
    (2 * CHUNK - 1, 2 * CHUNK, 5),
    (511, 512, 1536),
    (19_990, 7, 12_000),
    (N_WORDS - 1, 300, CHUNK + 1),
    (4 * CHUNK, 4 * CHUNK - 1, 9000),
    (8, 9000 + TILE, 2 * CHUNK + 512),
]


def _place(rows, variant, used):
    """Rows for a variant: moved by whole tiles (offsets within a tile stay), none reused and no
    two in one tile."""
    out: list[int] = []
    for r in rows:
        r = r if variant == 0 else (r + 5 * TILE * variant) % (19 * TILE)
        for step in range(19 * 4):
            if r not in used and all(r // (TILE // 2) != o // (TILE // 2) for o in out):
                break
            r = (r + TILE + (step >= 19)) % (19 * TILE)
        used.add(r)
        out.append(r)
    return out


def _planted(seed: int = 0):
    """Vocabulary, query points and the planted groups (centre c, rows at offsets ~5H from c).

    Norms are large (coordinates ≈ 200), so a float32 score is uncertain by ≈ 0.1 while the
    planted squared distances (≈ 0.39) are equal or differ by ≈ 1e-5.
    """
    rng = np.random.default_rng(seed)
    v = (rng.standard_normal((N_WORDS, DIM)) * 30).astype(np.float32)
    centres, members, used = [], [], set()
    for rows in GROUPS:
        for variant in range(8):
            c = np.round(rng.uniform(150, 250, DIM) * 16) / 16
            c[0] += 40 * variant  # variants of one group far apart from each other
            # Variants 0-3: three rows tied at 5H. Variants 4-7: one row at the centre, clearly
            # nearest, and two tied at 20H (the second and third places are decided in float64).
            far = 20 * H if variant & 4 else 5 * H
            offs = np.zeros((3, DIM))
            offs[0, :2] = (0, 0) if variant & 4 else (3 * H, 4 * H)
            offs[1, 0] = far
            offs[2, 1] = -far
            pts = (c + offs).astype(np.float32)
            if variant & 1:  # one row one float32 ulp nearer, one ulp farther
                pts[1, 0] = np.nextafter(pts[1, 0], np.float32(c[0]))
                pts[2, 1] = np.nextafter(pts[2, 1], np.float32(-np.inf))
            if variant & 2:  # the order of indices reversed against the order of distances
                pts = pts[::-1]
            sel = _place(rows, variant, used)
            v[sel] = pts
            centres.append(c.astype(np.float32))
            members.append(sel)
    return v, np.array(centres), np.array(members)


@pytest.fixture(scope="module")
def planted():
    v, centres, members = _planted()
    assert len(np.unique(members)) == members.size
    return v, centres, members, NearestNeighbors(v, block_size=7, n_jobs=2)


def _brute(v, q, k, exclude=None):
    """brute_force_kneighbors in slices of queries (bounded memory on 20,000 rows)."""
    parts = [brute_force_kneighbors(v, q[s:s + 16], k, None if exclude is None else exclude[s:s + 16])
             for s in range(0, q.shape[0], 16)]
    return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts])


def _queries(v, centres, members):
    """The centres (near-ties among the planted rows), the planted rows themselves, and duplicates."""
    return np.vstack([centres, v[members[:, 0]]]).astype(np.float32)


def test_layout_has_many_tiles_and_chunks(planted):
    v, _, members, nn = planted
    assert nn.n_vectors >= 20_000 and nn._tile == TILE and nn._chunk == CHUNK
    tiles, chunks = members // TILE, members // CHUNK
    assert (tiles[:, 0] != tiles[:, 1]).mean() > 0.6 and (chunks[:, 0] != chunks[:, 1]).any()


def test_query_equals_brute_force(planted):
    v, centres, members, nn = planted
    q = _queries(v, centres, members)
    want = np.concatenate([brute_force_nearest(v, q[s:s + 16]) for s in range(0, len(q), 16)])
    np.testing.assert_array_equal(nn.query(q), want)
    # The brute force is not trivially the float32 answer: some ties are decided in float64.
    assert not np.array_equal(nn.query(q, exact=False), want)


def test_exact_duplicates_in_other_tiles_give_the_lowest_index():
    v, _, _ = _planted(seed=1)
    rows = np.array([17, TILE + 3, CHUNK + 5, 3 * CHUNK + 1, N_WORDS - 2])
    v[rows[1:]] = v[rows[0]]  # one vector in four other tiles and chunks
    v[rows[0]] = v[rows[0]] + 1  # ... and the lowest row moved away
    nn = NearestNeighbors(v, block_size=3)
    q = np.repeat(v[rows[1:2]], 5, axis=0)
    assert (nn.query(q) == rows[1]).all()
    idx, dist = nn.two_nearest(q)
    assert (idx == rows[1:3]).all() and (dist == 0).all()
    idx, _ = nn.two_nearest(q, exclude=np.full(5, rows[1]))
    assert (idx == rows[2:4]).all()
    idx, dist = nn.kneighbors(q, 4, exclude=np.full(5, rows[2]))
    assert (idx == rows[[1, 3, 4, 0]]).all()


@pytest.mark.parametrize("use_exclude", [False, True])
def test_two_nearest_equals_brute_force(planted, use_exclude):
    v, centres, members, nn = planted
    q = _queries(v, centres, members)
    ex = None
    if use_exclude:  # the nearest planted row (Vickrey excludes the input word), or none
        ex = np.concatenate([members[:, 1], members[:, 0]])
        ex[::5] = -1
    idx, dist = nn.two_nearest(q, exclude=ex)
    want_i, want_d = _brute(v, q, 2, ex)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_array_equal(dist, want_d)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("use_exclude", [False, True])
def test_kneighbors_equal_brute_force(planted, k, use_exclude):
    v, centres, members, nn = planted
    q = _queries(v, centres, members)
    ex = np.concatenate([members[:, 2], members[:, 0]]) if use_exclude else None
    idx, dist = nn.kneighbors(q, k, exclude=ex)
    want_i, want_d = _brute(v, q, k, ex)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_array_equal(dist, want_d)


def test_radius_on_the_boundary_equals_brute_force(planted):
    v, centres, members, nn = planted
    q = _queries(v, centres, members)
    r = 5 * H  # exactly the distance of the untouched planted rows; ulp-moved rows either side
    res = nn.radius_neighbors(q, r)
    hits = 0
    for s in range(0, len(q), 16):
        d = np.sqrt(((v[None].astype(np.float64) - q[s:s + 16, None].astype(np.float64)) ** 2).sum(-1))
        for i in range(d.shape[0]):
            sl = slice(res.indptr[s + i], res.indptr[s + i + 1])
            np.testing.assert_array_equal(res.indices[sl], np.flatnonzero(d[i] <= r))
            np.testing.assert_array_equal(res.distances[sl], d[i][d[i] <= r])
            hits += sl.stop - sl.start
    assert hits > len(q)


def test_neighbor_graph_equals_brute_force(planted):
    v, _, members, _ = planted
    nn = NearestNeighbors(v[:, :4])  # fewer dimensions: the |V|² pass stays quick
    w = nn._v32
    g = nn.neighbor_graph(3)
    rows = np.concatenate([members.ravel(), np.arange(0, N_WORDS, 997)])
    want_i, want_d = _brute(w, w[rows], 3, rows)
    np.testing.assert_array_equal(g.indices[rows], want_i)
    np.testing.assert_array_equal(g.distances[rows], want_d)


def test_pairs_within_certify_their_radius():
    """The 1-Diffractor candidate pairs: symmetric blocks (I ≤ J, the transposed half included)
    return every pair within t_i − e_i exactly, and none beyond t_i."""
    rng = np.random.default_rng(3)
    v = (rng.standard_normal((2500, 6)) * 20).astype(np.float32)
    v[2400] = v[10]  # a duplicate in another block
    nn = NearestNeighbors(v)
    v64 = v.astype(np.float64)
    sq = (v64 ** 2).sum(1)
    exact = sq[:, None] + sq[None, :] - 2 * v64 @ v64.T
    thr = np.quantile(exact, 0.01, axis=1).astype(np.float32)
    rows, cols, d32 = nn.pairs_within(thr, block=512)
    assert (rows != cols).all() and (d32 <= thr[rows]).all()
    got = np.zeros(exact.shape, dtype=bool)
    got[rows, cols] = True
    assert got.sum() == rows.size  # no pair twice
    err = nn.error_bound(np.sqrt(sq), full=True)
    must = exact <= (thr.astype(np.float64) - err)[:, None]
    np.fill_diagonal(must, False)
    assert must.sum() > 2500 and not (must & ~got).any()
    assert got[10, 2400] and got[2400, 10]
