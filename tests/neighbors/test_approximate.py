"""Approximate search (faiss HNSW): recall against the exact engine, the on-disk cache, the
mechanisms end to end with neighbors="approximate", and the one-line error without faiss."""

import builtins

import numpy as np
import pytest

from textdp import mechanisms
from textdp.neighbors import NearestNeighbors
from textdp.vocab import Vocabulary

faiss = pytest.importorskip("faiss")

from textdp.neighbors import approximate as approx_mod  # noqa: E402
from textdp.neighbors.approximate import ApproximateNeighbors  # noqa: E402


def _data(n=3000, d=16, q=1000, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d)).astype(np.float32)
    queries = v[rng.integers(0, n, q)] + rng.standard_normal((q, d)).astype(np.float32) * 0.4
    return v, queries.astype(np.float32)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path / "cache"))


def test_query_recall_against_exact():
    v, q = _data()
    exact = NearestNeighbors(v).query(q)
    got = ApproximateNeighbors(v).query(q)
    assert got.dtype == np.int64 and got.shape == exact.shape
    assert np.mean(got == exact) >= 0.98


def test_low_ef_search_loses_recall():
    """The recall measured above comes from the search, not from an exact fallback."""
    v, q = _data(d=32)
    exact = NearestNeighbors(v).query(q)
    weak = ApproximateNeighbors(v, m=4, ef_construction=8, ef_search=1, cache=False).query(q)
    assert np.mean(weak == exact) < np.mean(ApproximateNeighbors(v, cache=False).query(q) == exact)


@pytest.mark.parametrize("exclude", [False, True])
def test_two_nearest_recall_and_exclusion(exclude):
    v, _ = _data()
    ids = np.arange(0, 3000, 3)
    q = v[ids] + np.random.default_rng(1).standard_normal((ids.size, 16)).astype(np.float32) * 0.1
    ex = ids if exclude else None
    want_i, want_d = NearestNeighbors(v).two_nearest(q, exclude=ex)
    got_i, got_d = ApproximateNeighbors(v).two_nearest(q, exclude=ex)
    if exclude:
        assert not (got_i == ids[:, None]).any()
    assert (got_d[:, 0] <= got_d[:, 1]).all()
    assert np.mean((got_i == want_i).all(axis=1)) >= 0.97
    same = (got_i == want_i).all(axis=1)
    np.testing.assert_allclose(got_d[same], want_d[same], rtol=1e-12)


def test_cache_is_written_reused_and_rebuilt_when_corrupt(tmp_path):
    v, q = _data(n=2000)
    first = ApproximateNeighbors(v, fingerprint="abc", cache=tmp_path)
    assert not first.loaded_from_cache and first.cache_path.is_file()
    second = ApproximateNeighbors(v, fingerprint="abc", cache=tmp_path)
    assert second.loaded_from_cache
    np.testing.assert_array_equal(first.query(q), second.query(q))
    # Other build parameters: another file.
    assert ApproximateNeighbors(v, fingerprint="abc", m=16, cache=tmp_path).cache_path != first.cache_path
    data = first.cache_path.read_bytes()
    first.cache_path.write_bytes(data[:-100] + bytes(100))  # damaged payload
    third = ApproximateNeighbors(v, fingerprint="abc", cache=tmp_path)
    assert not third.loaded_from_cache
    assert ApproximateNeighbors(v, fingerprint="abc", cache=tmp_path).loaded_from_cache
    first.cache_path.write_bytes(b"garbage")
    assert not ApproximateNeighbors(v, fingerprint="abc", cache=tmp_path).loaded_from_cache
    # A cached index of other vectors under the same key is not used.
    other = ApproximateNeighbors(v[:1500], fingerprint="abc", cache=tmp_path)
    assert other.n_vectors == 1500 and other.query(v[:5]).max() < 1500


def _vocab(n=3000, d=20):
    v = np.random.default_rng(3).standard_normal((n, d)).astype(np.float32)
    return Vocabulary([f"w{i}" for i in range(n)], v, name="random")


@pytest.mark.parametrize("name, extra", [("mvc", {}), ("mahalanobis", {}), ("vickrey", {}),
                                         ("vickrey", {"exclude_input": False})])
def test_mechanisms_end_to_end(name, extra):
    voc = _vocab()
    exact = mechanisms.get(name)(voc, epsilon=15, **extra)
    approx = mechanisms.get(name)(voc, epsilon=15, neighbors="approximate", **extra)
    assert approx.parameters["neighbors"] == "approximate"
    assert "neighbors" not in exact.parameters  # reports of exact runs are unchanged
    ids = np.random.default_rng(0).integers(0, len(voc), 2000)
    noise = exact.draw(ids, np.random.default_rng(5))
    same = np.mean(exact.apply(ids, noise) == approx.apply(ids, noise))
    assert same >= 0.97
    note = approx.guarantee.assumptions[-1]
    assert "approximate (HNSW M=32" in note and "guarantee is unchanged" in note
    fraction = float(note.split("exact search: ")[1].split()[0])
    assert 0.0 <= fraction <= 0.03
    assert not any("neighbour search" in a for a in exact.guarantee.assumptions)
    # The guarantee itself does not change.
    assert approx.privacy_loss(np.array([1]), np.array([2])) == exact.privacy_loss(
        np.array([1]), np.array([2]))


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="neighbors"):
        mechanisms.get("mvc")(_vocab(n=50), epsilon=1, neighbors="fast")


def test_missing_faiss_is_one_line_with_the_install_command(monkeypatch):
    real = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("No module named 'faiss'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.raises(ImportError) as err:
        mechanisms.get("mvc")(_vocab(n=50), epsilon=1, neighbors="approximate")
    message = str(err.value)
    assert "\n" not in message and "pip install -e '.[approximate]'" in message
    assert approx_mod.INSTALL in message


def test_cli_flag_and_missing_faiss(tmp_path, monkeypatch, capsys):
    from textdp.cli import main

    src = tmp_path / "in.txt"
    src.write_text("the cat sat on the mat\n")
    args = ["privatize", str(src), "-m", "mvc", "--epsilon", "10", "--seed", "1"]
    assert main(args + ["-o", str(tmp_path / "a.txt"), "--neighbors", "approximate",
                        "--report", str(tmp_path / "r.json")]) == 0
    assert "neighbour search: approximate" in (tmp_path / "r.json").read_text()
    capsys.readouterr()
    # The first run's mechanism is cached per process (textdp.spec): build afresh, without faiss.
    import textdp.spec

    monkeypatch.setattr(textdp.spec, "_BUILT", {})
    monkeypatch.setattr(approx_mod, "load_faiss", lambda: (_ for _ in ()).throw(
        ImportError(f"neighbors='approximate' needs faiss: {approx_mod.INSTALL}")))
    code = main(args + ["-o", str(tmp_path / "b.txt"), "--param", "neighbors=approximate"])
    err = capsys.readouterr().err
    assert code == 2 and "pip install" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
