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
