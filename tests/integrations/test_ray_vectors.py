"""`textdp embed` and `textdp docembed` with `--engine ray` (issue 25, item 5): files read and
written on the workers, one pool per job; seeded runs equal the local engine over the files in
name order; the report and the ledger are the local engine's plus the engine's section; one-line
errors leave nothing behind. INPUT takes privatize's forms (several files in the order given, an
``s3://`` prefix or object on the S3 server of tests/integrations/conftest.py, started before the
runtime so that its workers inherit the AWS variables) with privatize's refusals. A local Ray
runtime of 2 CPUs, shared (tests/integrations/conftest.py).

PrivEmb's projection is a matrix product whose last bits depend on how BLAS splits it over
threads; the actors use one thread, so the local runs compared with them do too
(``threadpool_limits(1)``): then the float64 outputs are equal value for value and the .npy files
byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textdp.cli import main
from textdp.mechanisms.embedding.release import CHUNK_ROWS

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
threadpoolctl = pytest.importorskip("threadpoolctl")

pytestmark = pytest.mark.ray

PRIVEMB = ["--epsilon", "10", "--delta", "1e-6", "--beta", "0.9"]
RAY = ["--engine", "ray", "--workers", "2"]
D = 8
#: Three files whose boundaries fall inside the first noise chunk and the second file spanning
#: the chunk boundary: every way a file can share a seeded chunk with another.
CUTS = (0, 1000, CHUNK_ROWS + 500, CHUNK_ROWS + 900)


BUCKET = "textdp-vectors"  # the bucket of the s3 fixture (conftest.py)


def run(capsys, *args: object, threads: int | None = None) -> tuple[int, str]:
    capsys.readouterr()
    if threads is None:
        code = main([str(a) for a in args])
    else:
        with threadpoolctl.threadpool_limits(limits=threads):
            code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def _parquet(path: Path, X: np.ndarray) -> None:
    column = pa.FixedSizeListArray.from_arrays(pa.array(X.ravel()), X.shape[1])
    pq.write_table(pa.table({"vector": column, "id": np.arange(len(X))}), path)


def _vectors(path: Path) -> np.ndarray:
    from textdp.io.vectors import read_vectors

    return np.asarray(read_vectors(path))


@pytest.fixture
def vector_dir(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    """A directory of three Parquet files (and the same rows as one file)."""
    X = np.random.default_rng(0).standard_normal((CUTS[-1], D))  # test data only
    d = tmp_path / "in"
    d.mkdir()
    for k in range(3):
        _parquet(d / f"part-{k}.parquet", X[CUTS[k]:CUTS[k + 1]])
    whole = tmp_path / "whole.parquet"
    _parquet(whole, X)
    return d, whole, X


def test_embed_directory_seeded_equals_local_and_the_report_is_local_plus_engine(
        runtime, tmp_path, capsys, vector_dir):
    d, whole, X = vector_dir
    local, ours = tmp_path / "local.parquet", tmp_path / "out"
    code, err = run(capsys, "embed", whole, "-o", local, *PRIVEMB, "--seed", 3, "--report",
                    tmp_path / "local.json", threads=1)
    assert code == 0, err
    code, err = run(capsys, "embed", d, "-o", ours, *PRIVEMB, "--seed", 3, "--report",
                    tmp_path / "ray.json", *RAY)
    assert code == 0, err
    names = [f"part-{k}.parquet" for k in range(3)]
    assert sorted(p.name for p in ours.iterdir()) == names  # one output per input, same names
    released = np.vstack([_vectors(ours / n) for n in names])
    assert np.array_equal(released, _vectors(local))  # value for value, in name order
    assert not np.array_equal(released[:, :D], X)
    assert not list(tmp_path.glob(".textdp-ray-*"))  # the staging directory is gone
    a = json.loads((tmp_path / "local.json").read_text())
    b = json.loads((tmp_path / "ray.json").read_text())
    for key in ("kind", "mechanism", "guarantee", "counts", "randomness", "unprotected"):
        assert a[key] == b[key], key
    assert b["engine"] == "ray" and b["workers"] == 2 and "engine" not in a
    assert b["performance"]["worker_peak_rss_mib"] > 0
    assert b["performance"]["driver_peak_rss_mib"] > 0
    assert [f["records_in"] for f in b["io"]["files"]] == [1000, CHUNK_ROWS - 500, 400]
    assert b["io"]["records_in"] == b["io"]["records_out"] == len(X)
    # The audit: each file's share of the pairs, merged (no pair spans two files).
    assert b["inputs"]["audit"]["n_pairs"] == a["inputs"]["audit"]["n_pairs"] == 200_000
    assert b["inputs"]["audit"]["n_points"] == len(X) and not b["inputs"]["audit"]["exhaustive"]
    assert "wrote 4,996 private vectors of dimension" in err and "Traceback" not in err
    assert all(x.startswith("textdp: ") for x in err.splitlines()), err  # no line of Ray's


def test_embed_one_npy_file_is_byte_identical_with_the_same_audit(runtime, tmp_path, capsys):
    X = np.random.default_rng(1).standard_normal((300, D)).astype(np.float32)
    src = tmp_path / "v.npy"
    np.save(src, X)
    args = ["embed", src, *PRIVEMB, "--seed", 5, "--audit-pairs", 1000]
    code, err = run(capsys, *args, "-o", tmp_path / "local.npy", "--report",
                    tmp_path / "local.json", threads=1)
    assert code == 0, err
    code, err = run(capsys, *args, "-o", tmp_path / "ray.npy", "--report", tmp_path / "ray.json",
                    *RAY)
    assert code == 0, err
    assert (tmp_path / "ray.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()
    a = json.loads((tmp_path / "local.json").read_text())
    b = json.loads((tmp_path / "ray.json").read_text())
    assert a["inputs"]["audit"] == b["inputs"]["audit"]  # one file: the local audit, pair for pair
    assert {**b["io"], "output": None} == {**a["io"], "output": None} and b["engine"] == "ray"


def test_embed_unseeded_releases_something_new_on_every_run(runtime, tmp_path, capsys,
                                                            vector_dir):
    d, _, X = vector_dir
    args = ["embed", d, "--mechanism", "laplace-vector", "--epsilon", "5", *RAY]
    assert run(capsys, *args, "-o", tmp_path / "a")[0] == 0
    assert run(capsys, *args, "-o", tmp_path / "b")[0] == 0
    a = np.vstack([_vectors(p) for p in sorted((tmp_path / "a").iterdir())])
    b = np.vstack([_vectors(p) for p in sorted((tmp_path / "b").iterdir())])
    assert a.shape == b.shape == X.shape
    assert not (a == X).any() and not (a == b).any()
    # The noise has the law's size: E‖z‖ = d/ε (an actor that released its input unchanged, or
    # twice the same noise, would fail the line above).
    assert np.linalg.norm(a - X, axis=1).mean() == pytest.approx(D / 5, rel=0.05)


def test_embed_texts_on_ray_equal_the_local_run_and_the_ledger(runtime, tmp_path, capsys):
    texts = [f"the food was great {k} but the service was slow" if k % 3 else "cold rain today"
             for k in range(90)]
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.txt").write_text("\n".join(texts[:40]) + "\n", encoding="utf-8")
    (d / "b.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts[40:]),
                               encoding="utf-8")
    whole = tmp_path / "whole.txt"
    whole.write_text("\n".join(texts) + "\n", encoding="utf-8")
    args = ["embed", *PRIVEMB, "--encode", "glove-mean", "--seed", 2]
    code, err = run(capsys, *args, whole, "-o", tmp_path / "local.npy", "--ledger",
                    tmp_path / "local.ledger", threads=1)
    assert code == 0, err
    code, err = run(capsys, *args, d, "-o", tmp_path / "out", "--ledger", tmp_path / "ray.ledger",
                    *RAY)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.parquet", "b.parquet"]
    released = np.vstack([_vectors(tmp_path / "out" / n) for n in ("a.parquet", "b.parquet")])
    assert np.array_equal(released, np.load(tmp_path / "local.npy"))

    a, b = _completed(tmp_path / "local.ledger"), _completed(tmp_path / "ray.ledger")
    assert a == b and a[1] == 90


def _completed(ledger: Path) -> tuple[str, int]:
    """The (fingerprint, records) of the ledger's completed releases."""
    lines = [json.loads(x) for x in ledger.read_text(encoding="utf-8").splitlines()]
    return [(x["fingerprint"], x["records"]) for x in lines if x["type"] == "complete"][0]


def test_embed_vector_ledger_fingerprint_is_the_local_one(runtime, tmp_path, capsys,
                                                         vector_dir):
    d, whole, _ = vector_dir
    args = ["embed", "--mechanism", "laplace-vector", "--epsilon", "5", "--seed", 1]
    assert run(capsys, *args, whole, "-o", tmp_path / "l.parquet", "--ledger",
               tmp_path / "l.ledger")[0] == 0
    code, err = run(capsys, *args, d, "-o", tmp_path / "out", "--ledger", tmp_path / "r.ledger",
                    *RAY)
    assert code == 0, err
    assert _completed(tmp_path / "l.ledger") == _completed(tmp_path / "r.ledger")


def _one_error(code: int, err: str) -> str:
    assert code == 2 and "Traceback" not in err, err
    lines = [x for x in err.splitlines() if x.startswith("textdp: error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_embed_errors_are_one_line_and_leave_nothing(runtime, tmp_path, capsys, vector_dir):
    d, _, _ = vector_dir
    out = tmp_path / "out"
    line = _one_error(*run(capsys, "embed", d, "-o", out, *PRIVEMB, "--vector-field", "emb",
                           *RAY))
    assert "part-0.parquet: no column 'emb'" in line
    # Mixed dimensions: refused from the footers, before Ray starts.
    _parquet(d / "part-3.parquet", np.ones((4, D + 1)))
    line = _one_error(*run(capsys, "embed", d, "-o", out, *PRIVEMB, *RAY))
    assert "part-3.parquet: vectors of dimension 9" in line
    (d / "part-3.parquet").unlink()
    # A bad row found by a worker: the job fails, no output directory, no staging directory.
    bad = np.ones((5, D))
    bad[3, 2] = np.nan
    _parquet(d / "part-3.parquet", bad)
    line = _one_error(*run(capsys, "embed", d, "-o", out, *PRIVEMB, *RAY))
    assert "part-3.parquet: row 4: vector with NaN or infinity" in line
    (d / "part-3.parquet").unlink()
    (d / "notes.txt").write_text("hello\n", encoding="utf-8")
    line = _one_error(*run(capsys, "embed", d, "-o", out, *PRIVEMB, *RAY))
    assert "notes.txt: not an input file of type .npy, .parquet" in line
    line = _one_error(*run(capsys, "embed", d / "part-0.parquet", "-o", tmp_path / "x.npy",
                           *PRIVEMB, "--workers", 2))
    assert "--workers and --ray-address need --engine ray" in line
    assert not out.exists() and not list(tmp_path.glob(".textdp-ray-*"))
    assert not (tmp_path / "x.npy").exists()


def test_embed_several_inputs_in_the_order_given_equal_the_local_engine(
        runtime, tmp_path, capsys, vector_dir):
    d, _, X = vector_dir
    parts = [X[CUTS[k]:CUTS[k + 1]] for k in range(3)]
    order = [2, 0, 1]  # the order given, not name order
    whole = tmp_path / "given.parquet"
    _parquet(whole, np.vstack([parts[k] for k in order]))
    args = ["embed", *PRIVEMB, "--seed", 7]
    code, err = run(capsys, *args, whole, "-o", tmp_path / "local.parquet", threads=1)
    assert code == 0, err
    code, err = run(capsys, *args, *[d / f"part-{k}.parquet" for k in order], "-o",
                    tmp_path / "out", "--report", tmp_path / "r.json", *RAY)
    assert code == 0, err
    released = np.vstack([_vectors(tmp_path / "out" / f"part-{k}.parquet") for k in order])
    assert np.array_equal(released, _vectors(tmp_path / "local.parquet"))
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["io"]["input"] == [str(d / f"part-{k}.parquet") for k in order]
    assert [f["records_in"] for f in report["io"]["files"]] == [len(parts[k]) for k in order]


def test_embed_refuses_what_privatize_refuses_in_one_line(tmp_path, capsys, vector_dir):
    """Before any runtime starts: the local engine's several INPUTs and URIs, standard input
    among files, two inputs giving one output name, a used output directory."""
    d, _, _ = vector_dir
    a, b = d / "part-0.parquet", d / "part-1.parquet"
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "r.txt").write_text("cold rain\n", encoding="utf-8")
    (texts / "r.jsonl").write_text('{"text": "cold rain"}\n', encoding="utf-8")
    used = tmp_path / "used"
    used.mkdir()
    (used / "part-1.parquet").write_bytes(b"kept")
    cases = [
        ([a, b, "-o", tmp_path / "o"], "several INPUT files need --engine ray"),
        ([f"s3://{BUCKET}/v.npy", "-o", tmp_path / "o.npy"],
         f"s3://{BUCKET}/v.npy: a URI needs --engine ray"),
        (["-", a, "-o", tmp_path / "o", *RAY], "- (standard input) must be the only INPUT"),
        ([texts, "-o", tmp_path / "o", "--encode", "glove-mean", *RAY],
         f"{texts / 'r.txt'}: gives the output name 'r.parquet', as {texts / 'r.jsonl'} does: "
         "the output directory would hold both under one name"),
        ([a, b, "-o", used, *RAY],
         f"{used / 'part-1.parquet'}: exists; give a new or empty output directory")]
    for args, message in cases:
        line = _one_error(*run(capsys, "embed", *args, *PRIVEMB))
        assert line == f"textdp: error: {message}", line
    assert not (tmp_path / "o").exists() and (used / "part-1.parquet").read_bytes() == b"kept"


def test_embed_s3_prefix_and_object_equal_the_local_engine(runtime, s3, tmp_path, capsys,
                                                          vector_dir):
    """Read and written on S3 by the workers: a prefix gives one object per file under the
    output prefix, value for value the local engine's; one .npy object gives the local .npy
    bytes and the local ledger fingerprint (streamed from the object by the driver); no
    staging prefix remains."""
    d, whole, _ = vector_dir
    for k in range(3):
        s3.put(f"vec/part-{k}.parquet", (d / f"part-{k}.parquet").read_bytes())
    code, err = run(capsys, "embed", *PRIVEMB, "--seed", 3, whole, "-o",
                    tmp_path / "local.parquet", threads=1)
    assert code == 0, err
    code, err = run(capsys, "embed", *PRIVEMB, "--seed", 3, f"s3://{BUCKET}/vec/", "-o",
                    f"s3://{BUCKET}/vec-out", *RAY)
    assert code == 0, err
    names = [f"part-{k}.parquet" for k in range(3)]
    assert s3.keys("vec-out") == [f"{BUCKET}/vec-out/{n}" for n in names]
    for n in names:
        (tmp_path / n).write_bytes(s3.get(f"vec-out/{n}"))
    released = np.vstack([_vectors(tmp_path / n) for n in names])
    assert np.array_equal(released, _vectors(tmp_path / "local.parquet"))
    line = _one_error(*run(capsys, "embed", *PRIVEMB, f"s3://{BUCKET}/vec/", "-o",
                           f"s3://{BUCKET}/vec-out", *RAY))  # a used prefix, as privatize's
    assert line == (f"textdp: error: s3://{BUCKET}/vec-out: exists and is not empty; give a new "
                    "or empty output prefix")

    X = np.random.default_rng(2).standard_normal((300, D))  # test data only
    np.save(tmp_path / "v.npy", X)
    s3.put("one/v.npy", (tmp_path / "v.npy").read_bytes())
    args = ["embed", "--mechanism", "laplace-vector", "--epsilon", 5, "--seed", 4]
    code, err = run(capsys, *args, tmp_path / "v.npy", "-o", tmp_path / "v.local.npy",
                    "--ledger", tmp_path / "l.ledger")
    assert code == 0, err
    code, err = run(capsys, *args, f"s3://{BUCKET}/one/v.npy", "-o",
                    f"s3://{BUCKET}/one-out/v.npy", "--ledger", tmp_path / "r.ledger", *RAY)
    assert code == 0, err
    assert s3.get("one-out/v.npy") == (tmp_path / "v.local.npy").read_bytes()
    assert _completed(tmp_path / "l.ledger") == _completed(tmp_path / "r.ledger")
    assert not [k for k in s3.keys() if ".textdp-ray-" in k]


# --- docembed ------------------------------------------------------------------------------------

SENTENCES = ["The soup was hot and tasty.", "We ate bread with cheese.", "Dinner was delicious.",
             "The computer crashed again.", "My phone battery died.", "It rained all day.",
             "The wind was cold."]


@pytest.fixture
def documents(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Candidates from public sentences (glove-mean: no torch), a directory of two private
    files (.txt and .jsonl) and the same documents as one file."""
    rng = np.random.default_rng(1)  # test data only
    docs = [" ".join(rng.choice(SENTENCES, size=int(rng.integers(1, 4)))) for _ in range(60)]
    public, whole, d = tmp_path / "public.txt", tmp_path / "whole.txt", tmp_path / "docs"
    public.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    whole.write_text("\n".join(docs) + "\n", encoding="utf-8")
    d.mkdir()
    (d / "a.txt").write_text("\n".join(docs[:25]) + "\n", encoding="utf-8")
    (d / "b.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs[25:]),
                               encoding="utf-8")
    assert main(["candidates", "build", str(public), "-o", str(tmp_path / "f.npz"), "--encoder",
                 "glove-mean"]) == 0
    return tmp_path / "f.npz", d, whole


def test_docembed_directory_seeded_equals_local(runtime, s3, tmp_path, capsys, documents):
    cands, d, whole = documents
    args = ["docembed", "--epsilon", 5, "--candidates", cands, "--seed", 4]
    code, err = run(capsys, *args, whole, "-o", tmp_path / "local.npy", "--report",
                    tmp_path / "local.json", "--ledger", tmp_path / "local.ledger")
    assert code == 0, err
    code, err = run(capsys, *args, d, "-o", tmp_path / "out", "--report", tmp_path / "ray.json",
                    "--ledger", tmp_path / "ray.ledger", *RAY)
    assert code == 0, err
    assert _completed(tmp_path / "local.ledger") == _completed(tmp_path / "ray.ledger")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.npy", "b.npy"]
    released = np.vstack([np.load(tmp_path / "out" / n) for n in ("a.npy", "b.npy")])
    assert np.array_equal(released, np.load(tmp_path / "local.npy"))
    a = json.loads((tmp_path / "local.json").read_text())
    b = json.loads((tmp_path / "ray.json").read_text())
    for key in ("kind", "mechanism", "guarantee", "counts", "inputs", "randomness"):
        assert a[key] == b[key], key
    assert b["ledger"]["path"].endswith("ray.ledger")  # the ledger section is there
    assert b["engine"] == "ray" and b["workers"] == 2
    assert [f["records_in"] for f in b["io"]["files"]] == [25, 35]
    assert "wrote 60 embeddings of dimension 50" in err
    # The same files on S3: NAME.npy objects under the output prefix, the same rows.
    for name in ("a.txt", "b.jsonl"):
        s3.put(f"docs/{name}", (d / name).read_bytes())
    code, err = run(capsys, *args, f"s3://{BUCKET}/docs/", "-o", f"s3://{BUCKET}/docs-out", *RAY)
    assert code == 0, err
    assert s3.keys("docs-out") == [f"{BUCKET}/docs-out/a.npy", f"{BUCKET}/docs-out/b.npy"]
    for name in ("a.npy", "b.npy"):
        assert s3.get(f"docs-out/{name}") == (tmp_path / "out" / name).read_bytes(), name


def test_docembed_unseeded_and_refusals(runtime, tmp_path, capsys, documents):
    cands, d, whole = documents
    args = ["docembed", "--epsilon", 0.01, "--candidates", cands]
    assert run(capsys, *args, d, "-o", tmp_path / "a", *RAY)[0] == 0
    assert run(capsys, *args, d, "-o", tmp_path / "b", *RAY)[0] == 0
    a = np.vstack([np.load(tmp_path / "a" / n) for n in ("a.npy", "b.npy")])
    b = np.vstack([np.load(tmp_path / "b" / n) for n in ("a.npy", "b.npy")])
    assert a.shape == (60, 50)
    # ε = 0.01: nearly uniform over 7 candidates; two runs agree on a row w.p. ≈ 1/7.
    assert (a != b).any(axis=1).sum() > 30
    line = _one_error(*run(capsys, *args, "-", "-o", tmp_path / "c.npy", *RAY))
    assert "standard input" in line
    (d / "c.txt").write_text("", encoding="utf-8")
    line = _one_error(*run(capsys, *args, d, "-o", tmp_path / "c", *RAY))
    assert "c.txt" in line and not (tmp_path / "c").exists()


# --- interrupted -------------------------------------------------------------------------------

def test_interrupted_embed_leaves_no_output_directory(runtime, tmp_path, interrupt):
    """Ctrl-C while the workers write: the actors are killed, the staging directory removed, no
    output directory appears, exit 130."""
    import signal
    import sys

    d = tmp_path / "in"
    d.mkdir()
    line = "the food was great but the service was slow and the room felt cold"
    for k in range(12):
        (d / f"{k:02d}.txt").write_text(f"{line} {k}\n" * 4000, encoding="utf-8")
    cmd = [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
           "embed", str(d), "-o", str(tmp_path / "out"), *PRIVEMB, "--encode", "glove-mean",
           "--seed", "1", *RAY, "--ray-address", ray.get_runtime_context().gcs_address]
    code, err, _ = interrupt(cmd, tmp_path, signal.SIGINT)
    assert code == 130, err[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no output, no staging
