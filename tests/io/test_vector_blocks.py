"""The streaming reads of vector files (`iter_vectors`, `vector_shape`) and the streaming
vectors fingerprint (`InputHash.vector_blocks`) that `embed --engine ray` uses on the driver:
the same values, errors and fingerprint as reading the whole array at once."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp.io import FileError
from textdp.io.vectors import iter_vectors, read_vectors, vector_shape
from textdp.privacy.fingerprint import InputHash, fingerprint_vectors


def _lists(rows: list[list[float]], path) -> None:
    pq.write_table(pa.table({"vector": pa.array(rows, pa.list_(pa.float64()))}), path,
                   row_group_size=3)


def test_blocks_give_the_whole_array_and_its_fingerprint(tmp_path):
    X = np.random.default_rng(0).standard_normal((10, 4))  # test data only
    _lists(X.tolist(), tmp_path / "v.parquet")
    np.save(tmp_path / "v.npy", X.astype(np.float32))
    assert vector_shape(tmp_path / "v.parquet") == vector_shape(tmp_path / "v.npy") == (10, 4)
    blocks = list(iter_vectors(tmp_path / "v.parquet", rows=4))
    assert [b.shape[0] for b in blocks] == [4, 4, 2]
    assert np.array_equal(np.vstack(blocks), read_vectors(tmp_path / "v.parquet"))
    parts = [X[:3], X[3:3], X[3:]]
    h = InputHash("vectors").vector_blocks(10, 4, parts)
    assert (h.hexdigest(), h.count) == fingerprint_vectors(X)
    npy = np.vstack(list(iter_vectors(tmp_path / "v.npy", rows=3)))
    assert np.array_equal(npy, read_vectors(tmp_path / "v.npy"))
    with pytest.raises(ValueError, match="9 vectors fed, 10 announced"):
        InputHash("vectors").vector_blocks(10, 4, [X[:9]])
    with pytest.raises(ValueError, match="expected"):
        InputHash("vectors").vector_blocks(10, 4, [X[:, :3]])


def test_a_later_row_of_another_length_names_its_row_in_the_file(tmp_path):
    rows = [[1.0, 2.0]] * 7 + [[1.0, 2.0, 3.0]] + [[1.0, 2.0]]
    _lists(rows, tmp_path / "v.parquet")
    assert vector_shape(tmp_path / "v.parquet") == (9, 2)  # from the first vector
    with pytest.raises(FileError, match=r"row 8: vector of length 3, but row 1 has length 2"):
        list(iter_vectors(tmp_path / "v.parquet", rows=3))
    with pytest.raises(FileError, match="row 8"):
        read_vectors(tmp_path / "v.parquet")
    _lists([[1.0, 2.0]] * 6 + [[1.0, 2.0, 3.0]] * 3, tmp_path / "w.parquet")  # a whole batch
    with pytest.raises(FileError, match=r"row 7: vector of length 3, but row 1 has length 2"):
        list(iter_vectors(tmp_path / "w.parquet", rows=3))
    with pytest.raises(FileError, match="no column 'emb'"):
        vector_shape(tmp_path / "v.parquet", "emb")


def test_a_file_of_a_pyarrow_filesystem_reads_and_writes_as_the_local_file(tmp_path):
    """A :class:`RemoteFile` (here on pyarrow's local filesystem, through the same calls as on
    S3: streams, a random-access file for Parquet): the same shape, blocks, values and bytes as
    the local path; a .npy header is read alone; a truncated .npy and a Fortran-ordered one."""
    from pyarrow.fs import LocalFileSystem

    from textdp.io.uri import RemoteFile
    from textdp.io.vectors import write_vectors

    def remote(path):
        return RemoteFile(LocalFileSystem(), str(path), "mock")

    X = np.random.default_rng(1).standard_normal((10, 4))  # test data only
    _lists(X.tolist(), tmp_path / "v.parquet")
    np.save(tmp_path / "v.npy", X.astype(np.float32))
    for name in ("v.parquet", "v.npy"):
        local, far = tmp_path / name, remote(tmp_path / name)
        assert vector_shape(far) == vector_shape(local) == (10, 4)
        assert np.array_equal(read_vectors(far), read_vectors(local))
        blocks = list(iter_vectors(far, rows=4))
        assert [b.shape[0] for b in blocks] == [4, 4, 2] and blocks[0].dtype == np.float64
        assert np.array_equal(np.vstack(blocks), np.vstack(list(iter_vectors(local, rows=4))))
        write_vectors(remote(tmp_path / f"out-{name}"), X)
        write_vectors(tmp_path / f"local-{name}", X)
        assert (tmp_path / f"out-{name}").read_bytes() == (tmp_path / f"local-{name}").read_bytes()
    np.save(tmp_path / "f.npy", np.asfortranarray(X))
    assert np.array_equal(np.vstack(list(iter_vectors(remote(tmp_path / "f.npy"), rows=3))), X)
    (tmp_path / "t.npy").write_bytes((tmp_path / "v.npy").read_bytes()[:-8])
    with pytest.raises(FileError, match=r"t\.npy: not a readable \.npy array \(truncated"):
        list(iter_vectors(remote(tmp_path / "t.npy")))
    (tmp_path / "s.npy").write_bytes(b"not numpy")
    with pytest.raises(FileError, match=r"s\.npy: not a readable \.npy array"):
        vector_shape(remote(tmp_path / "s.npy"))
