"""`textdp embed`: vectors and texts in, private vectors out, report, seeds, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp import PrivEmb
from textdp.cli import main
from textdp.mechanisms.embedding.release import CHUNK_ROWS

PRIVEMB = ["--epsilon", "10", "--delta", "1e-6", "--beta", "0.9"]


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def vectors(tmp_path: Path) -> tuple[Path, np.ndarray]:
    X = np.random.default_rng(0).standard_normal((CHUNK_ROWS + 100, 32))  # two noise chunks
    path = tmp_path / "v.npy"
    np.save(path, X)
    return path, X


def test_npy_in_npy_out_with_report(capsys, tmp_path, vectors):
    path, X = vectors
    out, rep = tmp_path / "w.npy", tmp_path / "r.json"
    code, stdout, err = run(capsys, "embed", path, "-o", out, *PRIVEMB, "--report", rep,
                            "--seed", 3, "--audit-pairs", 5000)
    assert code == 0, err
    mech = PrivEmb(epsilon=10, delta=1e-6, beta=0.9, dim=32)
    W = np.load(out)
    assert W.shape == (X.shape[0], mech.m) and W.dtype == np.float64
    # The output is Φx + noise of the right size (mean radius m(1+β)/ε).
    radius = np.linalg.norm(W - X @ mech.projection.T, axis=1)
    assert radius.mean() == pytest.approx(mech.m * 1.9 / 10, rel=0.02)
    r = json.loads(rep.read_text())
    assert r["kind"] == "embedding"
    assert r["mechanism"]["m"] == mech.m
    assert r["mechanism"]["gaussian_width"]["omega"] == pytest.approx(np.sqrt(5))
    assert r["mechanism"]["projection"]["sha256"] == mech.projection_fingerprint
    assert r["guarantee"]["notion"] == "(ε, δ)-Lipschitz privacy"
    assert r["guarantee"]["delta"] == pytest.approx(mech.delta_bound)
    audit = r["inputs"]["audit"]
    assert audit["n_pairs"] == 5000 and audit["bound"] == pytest.approx(1.9)
    assert r["randomness"]["seeded"] and r["randomness"]["seed"] == 3
    assert r["counts"]["vectors_in"] == r["counts"]["vectors_out"] == X.shape[0]
    assert r["io"]["records_in"] == r["io"]["records_out"] == X.shape[0]
    assert stdout == "" and "audit: max" in err and "wrote 4,196 private vectors" in err


def test_seeded_output_is_reproducible_and_unseeded_is_not(capsys, tmp_path, vectors):
    path, _ = vectors
    outs = []
    for name, extra in (("a", ["--seed", 7]), ("b", ["--seed", 7]), ("c", ["--seed", 8]), ("d", [])):
        out = tmp_path / f"{name}.npy"
        assert run(capsys, "embed", path, "-o", out, *PRIVEMB, "--audit-pairs", 0, *extra)[0] == 0
        outs.append(np.load(out))
    assert np.array_equal(outs[0], outs[1])
    assert not np.array_equal(outs[0], outs[2]) and not np.array_equal(outs[0], outs[3])


def test_parquet_vectors_strict_snap_and_baseline(capsys, tmp_path):
    X = np.random.default_rng(1).standard_normal((50, 20))
    src = tmp_path / "v.parquet"
    pq.write_table(pa.table({"id": list(range(50)), "emb": [list(r) for r in X]}), src)
    out, rep = tmp_path / "w.parquet", tmp_path / "r.json"
    code, _, err = run(capsys, "embed", src, "-o", out, *PRIVEMB, "--vector-field", "emb",
                       "--strict", "--snap", "-3", "--report", rep)
    assert code == 0, err
    table = pq.read_table(out)
    assert table.column_names == ["emb"]  # nothing else is copied from the input
    W = np.array(table.column("emb").to_pylist())
    assert W.shape == (50, PrivEmb(epsilon=10, delta=1e-6, beta=0.9, dim=20).m)
    assert np.array_equal(W * 8, np.round(W * 8))
    r = json.loads(rep.read_text())
    assert r["guarantee"]["delta"] == 0 and r["guarantee"]["verified"]
    assert r["inputs"]["audit"]["exhaustive"] and r["inputs"]["audit"]["passed"]
    assert r["mechanism"]["snap"]["grid"] == 0.125
    # The baseline keeps d.
    out2 = tmp_path / "m1.npy"
    assert run(capsys, "embed", src, "-o", out2, "--epsilon", 5, "-m", "laplace-vector",
               "--vector-field", "emb")[0] == 0
    assert np.load(out2).shape == (50, 20)


def test_texts_are_encoded_with_glove_mean(capsys, tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"body": t}) + "\n"
                           for t in ["The food was great.", "Terrible!", "zzqxv"]))
    out, rep = tmp_path / "w.npy", tmp_path / "r.json"
    code, _, err = run(capsys, "embed", src, "-o", out, *PRIVEMB, "--encode", "glove-mean",
                       "--text-field", "body", "--report", rep)
    assert code == 0, err
    assert np.load(out).shape == (3, PrivEmb(epsilon=10, delta=1e-6, beta=0.9, dim=50).m)
    r = json.loads(rep.read_text())
    assert r["inputs"]["encoder"]["name"] == "glove-mean" and r["counts"]["empty_texts"] == 1
    assert any("zero vector" in w for w in r["warnings"])


@pytest.mark.parametrize("make,args,message", [
    (lambda p: np.save(p / "x.npy", np.array([[1.0, 2.0], [np.nan, 0.0]])), ["x.npy"],
     "x.npy: row 2: vector with NaN or infinity"),
    (lambda p: np.save(p / "x.npy", np.zeros(5)), ["x.npy"], "expected a 2-D array"),
    (lambda p: (p / "x.txt").write_text("hello\n"), ["x.txt"], "texts need --encode"),
    (lambda p: np.save(p / "x.npy", np.zeros((2, 2))), ["x.npy", "--encode", "glove-mean"],
     "drop --encode"),
    (lambda p: pq.write_table(pa.table({"v": [[1.0, 2.0], [1.0]]}), p / "x.parquet"),
     ["x.parquet", "--vector-field", "v"], "row 2: vector of length 1"),
    (lambda p: pq.write_table(pa.table({"v": [[1.0, 2.0]]}), p / "x.parquet"), ["x.parquet"],
     "no column 'vector'"),
    (lambda p: np.save(p / "x.npy", np.zeros((2, 2))), ["missing.npy"], "no such file"),
])
def test_input_errors_are_one_line_with_exit_2(capsys, tmp_path, make, args, message):
    make(tmp_path)
    out = tmp_path / "w.npy"
    code, _, err = run(capsys, "embed", tmp_path / args[0], "-o", out, *PRIVEMB, *args[1:])
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("textdp: error: ") and message in err
    assert not out.exists()


@pytest.mark.parametrize("args,message", [
    (["--epsilon", "1"], "privemb needs --delta and --beta"),
    (["--epsilon", "1", "--delta", "1e-6"], "privemb needs --beta"),
    (["--epsilon", "0", "--delta", "1e-6", "--beta", "0.9"], "epsilon must be"),
    (["--epsilon", "1", "--delta", "2", "--beta", "0.9"], "delta must lie in (0, 1)"),
    (["--epsilon", "1", "--delta", "1e-6", "--beta", "1.5"], "beta must lie in (0, 1)"),
    (["--epsilon", "1", "-m", "laplace-vector", "--strict"], "only apply to --mechanism privemb"),
    ([*PRIVEMB, "--snap", "fine"], "--snap expects an integer"),
    ([*PRIVEMB, "--seed", "-1"], "--seed must be a non-negative"),
    ([*PRIVEMB, "--encode", "bert"], "bert"),
])
def test_parameter_errors_come_before_reading(capsys, tmp_path, args, message):
    src = tmp_path / "v.npy"
    np.save(src, np.zeros((3, 4)))
    out = tmp_path / "w.npy"
    code, _, err = run(capsys, "embed", src, "-o", out, *args)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists()


def test_output_paths_are_checked(capsys, tmp_path, vectors):
    path, _ = vectors
    assert "overwrite the input" in run(capsys, "embed", path, "-o", path, *PRIVEMB)[2]
    assert "unsupported output type '.csv'" in run(capsys, "embed", path, "-o", tmp_path / "w.csv",
                                                   *PRIVEMB)[2]
    assert "does not exist" in run(capsys, "embed", path, "-o", tmp_path / "no" / "w.npy",
                                   *PRIVEMB)[2]
    rep = tmp_path / "w.npy"
    assert "overwrite the output" in run(capsys, "embed", path, "-o", rep, *PRIVEMB,
                                         "--report", rep)[2]


def test_failed_audit_is_warned(capsys, tmp_path):
    # m < d: Φ stretches its top direction beyond 1.5
    mech = PrivEmb(epsilon=10, delta=1e-6, beta=0.5, dim=200)
    top = np.linalg.svd(mech.projection)[2][0]
    src = tmp_path / "v.npy"
    np.save(src, np.outer(np.arange(6.0), top))
    code, _, err = run(capsys, "embed", src, "-o", tmp_path / "w.npy", "--epsilon", 10,
                       "--delta", "1e-6", "--beta", "0.5")
    assert code == 0 and "ABOVE the bound" in err and "consider --strict" in err


def test_library_release_is_what_the_command_writes(capsys, tmp_path, vectors):
    from textdp import _random
    from textdp.mechanisms.embedding.release import audit_projection, release_vectors

    path, X = vectors
    out = tmp_path / "w.npy"
    assert run(capsys, "embed", path, "-o", out, *PRIVEMB, "--seed", 4, "--audit-pairs", 0)[0] == 0
    mech = PrivEmb(epsilon=10, delta=1e-6, beta=0.9, dim=32)
    done = []
    W = release_vectors(mech, X, seed=4, progress=done.append)
    np.testing.assert_array_equal(W, np.load(out))
    assert done == [CHUNK_ROWS, 100]
    # Chunk c draws from the generator of (seed, c) alone.
    np.testing.assert_array_equal(W[CHUNK_ROWS:],
                                  mech.release(X[CHUNK_ROWS:], _random.document_generator(4, 1)))
    with pytest.raises(ValueError, match="seed or rng"):
        release_vectors(mech, X, seed=1, rng=np.random.default_rng(1))
    assert audit_projection(mech, X[:1], max_pairs=10) is None
    assert audit_projection(mech, X, max_pairs=0) is None
    assert audit_projection(mech, X[:50], max_pairs=30, seed=1).n_pairs == 30
