"""Ray Data (issue 13, items 1 and 2): a real local Ray runtime, 2 CPUs, shared by every test
(``runtime``: tests/integrations/conftest.py).

Seeded runs are byte-identical to the local run (library and command line); unseeded runs never
repeat an earlier output and actors do not share a generator; an actor killed mid-run is
restarted and its batch retried, with the output complete, in order and identical to the local
seeded run.
"""

from __future__ import annotations

import json
import os
import pickle
import signal

import numpy as np
import pytest

import textdp
from textdp.cli import main

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from textdp.engines.ray import data as rdata  # noqa: E402
from textdp.integrations import ray as tray  # noqa: E402

WORDS = ("the food was great but the service was slow and the room felt cold so we left early "
         "after a long wait for the bill").split()


def _texts(n: int) -> list[str]:
    rng = np.random.default_rng(0)  # test data only
    return [" ".join(WORDS[k] for k in rng.integers(len(WORDS), size=int(rng.integers(3, 12))))
            .capitalize() + "." for _ in range(n)]


TEXTS = _texts(240)


def _dataset(texts):
    return ray.data.from_items([{"text": t, "id": i} for i, t in enumerate(texts)],
                               override_num_blocks=5)


def test_seeded_equals_local_and_the_report_is_merged(runtime, tmp_path):
    local = textdp.privatize(TEXTS, epsilon=10, seed=11)
    for k, a in enumerate(range(0, len(TEXTS), 80)):  # three Parquet files: read in name order
        part = pa.table({"id": list(range(a, a + 80)), "text": TEXTS[a:a + 80]})
        pq.write_table(part, tmp_path / f"part-{k}.parquet")
    ds = ray.data.read_parquet(str(tmp_path))
    out, report = tray.privatize(ds, epsilon=10, seed=11, workers=2, batch_size=32)
    rows = out.take_all()
    assert [r["text"] for r in rows] == local.texts  # byte-identical, in order
    assert [r["id"] for r in rows] == list(range(len(TEXTS)))  # other columns pass through
    assert set(out.columns()) == {"text", "id"}  # the index and the tallies are dropped
    assert report["engine"] == "ray" and report["workers"] == 2
    for key in ("documents", "tokens", "guarantee", "deniability", "unprotected"):
        assert report[key] == local.report[key], key
    assert report["randomness"] == local.report["randomness"]


def test_unseeded_never_repeats_and_actors_do_not_share_a_generator(runtime):
    same = ["The food was great but the service was slow and the room felt cold."] * 64
    first, report = tray.privatize(_dataset(same), epsilon=5, workers=2, batch_size=16)
    second, _ = tray.privatize(_dataset(same), epsilon=5, workers=2, batch_size=16)
    a, b = list(tray.texts_of(first)), list(tray.texts_of(second))
    assert a != b and not report["randomness"]["seeded"]
    # Four batches of the same document on two actors: a copied generator state would give
    # two identical batches.
    batches = [tuple(a[i:i + 16]) for i in range(0, 64, 16)] + \
              [tuple(b[i:i + 16]) for i in range(0, 64, 16)]
    assert len(set(batches)) == len(batches)


def test_unseeded_rows_are_not_numbered_but_stay_complete_and_in_order(runtime):
    """Unseeded runs skip the row index (engines.ray.data.prepare): at an ε so large that no
    word moves, the output must still be every input row, in order, other columns intact."""
    local = textdp.privatize(TEXTS, epsilon=1e5, seed=1).texts
    out, report = tray.privatize(_dataset(TEXTS), epsilon=1e5, workers=2, batch_size=16)
    rows = out.take_all()
    assert [r["id"] for r in rows] == list(range(len(TEXTS)))
    assert [r["text"] for r in rows] == local
    assert report["documents"]["count"] == len(TEXTS) and not report["randomness"]["seeded"]
    assert set(out.columns()) == {"text", "id"}
    taken = ray.data.from_items([{"text": "a b", rdata.ROW: 0}])
    with pytest.raises(ValueError, match=rdata.ROW):
        tray.privatize(taken, epsilon=10, workers=1)


def test_unseeded_inputs_are_re_cut_only_when_their_blocks_are_too_few(runtime):
    """One Parquet file is one block, one task, one busy actor: such inputs are cut into
    batch-size blocks (numbered on the way); inputs with blocks enough are mapped as they are."""
    one = ray.data.from_arrow(pa.table({"text": TEXTS}))
    cut, n = rdata.prepare(one, 16, indexed=False, workers=2)
    assert n == len(TEXTS) and cut.num_blocks() == 15 and rdata.ROW in cut.columns()
    many = ray.data.from_items([{"text": t} for t in TEXTS], override_num_blocks=8)
    kept, n = rdata.prepare(many, 16, indexed=False, workers=2)
    assert n == len(TEXTS) and kept.num_blocks() == 8 and rdata.ROW not in kept.columns()
    few = rdata.prepare(many, 16, indexed=False, workers=3)[0]  # 8 blocks < 4 per worker
    assert few.num_blocks() == 15
    out, report = tray.privatize(one, epsilon=1e5, workers=2, batch_size=16)
    assert list(tray.texts_of(out)) == textdp.privatize(TEXTS, epsilon=1e5, seed=1).texts


def test_unseeded_vectors_and_documents_keep_their_order(runtime):
    from textdp.mechanisms.document import Truncation
    from textdp.mechanisms.embedding import LaplaceVector

    X = np.random.default_rng(3).normal(size=(300, 4)) * 100  # test data only
    ds = ray.data.from_items([{"vector": x} for x in X], override_num_blocks=3)
    out, _ = tray.release_vectors(ds, LaplaceVector(epsilon=1e4), workers=2, batch_size=64)
    got = np.stack([r["vector"] for r in out.take_all()])
    assert got.shape == X.shape and np.abs(got - X).max() < 1  # row i is row i's release
    again, _ = tray.release_vectors(ds, LaplaceVector(epsilon=1e4), workers=2, batch_size=64)
    assert not np.array_equal(got, np.stack([r["vector"] for r in again.take_all()]))
    docs = [np.full((2, 4), 0.9 * np.sign(k % 3 - 1)) for k in range(40)]
    mech = Truncation(np.full(4, -1.0), np.full(4, 1.0), epsilon=1e6)
    ds = ray.data.from_items([{"sentences": d.tolist()} for d in docs], override_num_blocks=4)
    out, report = tray.release_documents(ds, mech, workers=2, batch_size=8)
    got = np.stack([r["embedding"] for r in out.take_all()])
    np.testing.assert_allclose(got, np.stack([d.mean(axis=0) for d in docs]), atol=1e-3)
    assert report["counts"]["documents"] == 40


def test_limit_threads_sets_the_variables_and_the_loaded_pools():
    """Actors limit their own threads (no runtime_env); checked in a fresh process."""
    import subprocess
    import sys

    code = ("import os; import numpy\n"
            "from textdp.integrations.ray import limit_threads\n"
            "from textdp.neighbors.engine import _cpus\n"
            "from threadpoolctl import threadpool_info\n"
            "limit_threads(1)\n"
            "assert os.environ['OMP_NUM_THREADS'] == '1' and _cpus() == 1\n"
            "assert threadpool_info() and all(p['num_threads'] == 1 for p in threadpool_info())\n")
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith("NUM_THREADS")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_a_shipped_privatizer_is_re_keyed_and_the_check_has_power():
    """A pickled Privatizer re-keys its secure generator (textdp._random), so even a copy that
    reached a worker would not repeat the driver's noise; what the unseeded test above would see
    otherwise: a plain generator's pickled copy replays its stream."""
    p = textdp.Privatizer(textdp.mechanisms.create("mvc", epsilon=5))
    q = pickle.loads(pickle.dumps(p))
    same = ["The food was great but the service was slow."] * 16
    assert p.run(same) != q.run(same)
    g = np.random.Generator(np.random.PCG64(1))
    assert pickle.loads(pickle.dumps(g)).random(8).tolist() == g.random(8).tolist()


def test_vectors_seeded_equal_local_across_a_chunk_boundary(runtime):
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.mechanisms.embedding.release import release_vectors

    X = np.random.default_rng(1).normal(size=(4200, 6))  # test data; chunks of 4096 rows
    mech = LaplaceVector(epsilon=2.0)
    ds = ray.data.from_items([{"vector": x} for x in X], override_num_blocks=3)
    out, report = tray.release_vectors(ds, mech, seed=5, workers=2, batch_size=1000)
    got = np.stack([r["vector"] for r in out.take_all()])
    np.testing.assert_array_equal(got, release_vectors(mech, X, seed=5))
    assert report["kind"] == "embedding" and report["counts"]["vectors_out"] == 4200
    assert report["engine"] == "ray"


def test_actor_killed_mid_run_is_retried(runtime, tmp_path, monkeypatch):
    """A worker process killed outright (SIGKILL) mid-run: Ray Data restarts the actor and retries
    its batch, and no record is lost or doubled. The killing worker is a test-only subclass of the
    production actor, injected here (defined in the test, it reaches the workers by value):
    the production code has no test hook."""
    marker = tmp_path / "kill"
    marker.write_text("150", encoding="utf-8")  # the actor holding row 150 dies, once

    class KilledOnce(rdata._TextWorker):
        def rows(self, batch):
            rows = super().rows(batch)
            if rows is not None and 150 in rows and marker.exists():
                marker.unlink()
                os.kill(os.getpid(), signal.SIGKILL)
            return rows

    pool = rdata.map_with_pool  # the pool runs the subclass (rdata._TextWorker itself stays put:
    # the subclass's base is pickled by reference)
    monkeypatch.setattr(rdata, "map_with_pool",
                        lambda ds, worker, kwargs, **kw: pool(ds, KilledOnce, kwargs, **kw))
    local = textdp.privatize(TEXTS, epsilon=10, seed=4).texts
    out, report = tray.privatize(_dataset(TEXTS), epsilon=10, seed=4, workers=2, batch_size=20)
    assert not marker.exists()  # the actor did die
    rows = out.take_all()
    assert [r["id"] for r in rows] == list(range(len(TEXTS)))  # complete, in order, no duplicate
    assert [r["text"] for r in rows] == local
    assert report["documents"]["count"] == len(TEXTS)  # the failed batch is counted once


def _cli(args):
    return main(["privatize", *map(str, args), "--epsilon", "10", "--seed", "9"])


def test_cli_jsonl_parquet_and_directory(runtime, tmp_path, capsys):
    lines = [json.dumps({"id": i, "text": t, "x": 2.5}) for i, t in enumerate(TEXTS)]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _cli([src, "-o", tmp_path / "local.jsonl"]) == 0
    assert _cli([src, "-o", tmp_path / "ray.jsonl", "--engine", "ray", "--workers", "2",
                 "--batch-size", "50", "--report", tmp_path / "r.json"]) == 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["engine"] == "ray" and report["io"]["records_out"] == len(TEXTS)

    pq.write_table(pa.table({"id": list(range(len(TEXTS))), "text": TEXTS}), tmp_path / "in.parquet")
    assert _cli([tmp_path / "in.parquet", "-o", tmp_path / "local.parquet"]) == 0
    assert _cli([tmp_path / "in.parquet", "-o", tmp_path / "ray.parquet", "--engine", "ray",
                 "--workers", "2"]) == 0
    assert pq.read_table(tmp_path / "ray.parquet").equals(pq.read_table(tmp_path / "local.parquet"))

    # A directory: files in name order, one row index across them.
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a.jsonl").write_text("\n".join(lines[:100]) + "\n", encoding="utf-8")
    (d / "b.jsonl").write_text("\n".join(lines[100:]) + "\n", encoding="utf-8")
    assert _cli([d, "-o", tmp_path / "out", "--engine", "ray", "--workers", "2"]) == 0
    got = [json.loads(x)["text"] for f in ("a.jsonl", "b.jsonl")
           for x in (tmp_path / "out" / f).read_text(encoding="utf-8").splitlines()]
    assert got == textdp.privatize(TEXTS, epsilon=10, seed=9).texts


def test_cli_directory_reads_exactly_what_the_local_engine_reads(runtime, tmp_path, capsys):
    """Issue 21: .ndjson, .pq, upper-case extensions and compressed files are all read (the old
    rule read 5 of 23 records, silently); a file that is not an input is refused, naming it."""
    import gzip

    import zstandard

    d, out = tmp_path / "dir", tmp_path / "out"
    d.mkdir()
    bounds = {"a.jsonl": (0, 3), "b.ndjson": (3, 7), "c.JSONL": (7, 10), "d.pq": (10, 14),
              "e.txt.gz": (14, 17), "f.jsonl.zst": (17, 20), "g.Parquet": (20, 23)}

    def jsonl(a, b):
        return "".join(json.dumps({"text": t}) + "\n" for t in TEXTS[a:b]).encode()

    for name, (a, b) in bounds.items():
        if name.lower().endswith(("pq", "parquet")):
            pq.write_table(pa.table({"text": TEXTS[a:b]}), d / name)
        elif name.endswith(".gz"):
            (d / name).write_bytes(gzip.compress("".join(t + "\n" for t in TEXTS[a:b]).encode()))
        elif name.endswith(".zst"):
            (d / name).write_bytes(zstandard.ZstdCompressor().compress(jsonl(a, b)))
        else:
            (d / name).write_bytes(jsonl(a, b))
    (d / ".hidden").write_text("not an input", encoding="utf-8")
    assert _cli([d, "-o", out, "--engine", "ray", "--workers", "2", "--report",
                 tmp_path / "r.json"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(bounds)
    assert json.loads((tmp_path / "r.json").read_text())["io"]["records_out"] == 23

    def texts(name):
        path = out / name
        if name.lower().endswith(("pq", "parquet")):
            return pq.read_table(path).column("text").to_pylist()
        if name.endswith(".gz"):
            return gzip.decompress(path.read_bytes()).decode().splitlines()
        data = path.read_bytes()
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data) \
            if name.endswith(".zst") else data
        return [json.loads(x)["text"] for x in data.decode().splitlines()]

    assert [t for name in sorted(bounds) for t in texts(name)] == \
        textdp.privatize(TEXTS[:23], epsilon=10, seed=9).texts  # one corpus, in name order
    (d / "notes.md").write_text("not an input", encoding="utf-8")
    capsys.readouterr()
    assert _cli([d, "-o", tmp_path / "out2", "--engine", "ray", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"textdp: error: {d / 'notes.md'}: unsupported file type")
    assert not (tmp_path / "out2").exists()


def test_cli_lone_surrogate_as_the_local_engine(runtime, tmp_path):
    """Issue 21: a lone surrogate (legal as a JSON escape, not UTF-8) crashed the Ray engine,
    whose Arrow string columns refuse it; it now travels as bytes and the output is the local
    engine's, byte for byte (--oov keep releases it, still escaped)."""
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "the food \\ud800 was great"}\n{"text": "the \\udfff room"}\n'
                   + "".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:20]),
                   encoding="utf-8")
    for oov in ("keep", "mask"):
        args = [src, "--oov", oov]
        assert _cli([*args, "-o", tmp_path / f"local-{oov}.jsonl"]) == 0
        assert _cli([*args, "-o", tmp_path / f"ray-{oov}.jsonl", "--engine", "ray",
                     "--workers", "2", "--batch-size", "8"]) == 0
        ray_out = (tmp_path / f"ray-{oov}.jsonl").read_bytes()
        assert ray_out == (tmp_path / f"local-{oov}.jsonl").read_bytes()
    assert b"\\ud800" in (tmp_path / "ray-keep.jsonl").read_bytes()


def test_allocation_on_ray_equals_the_local_run(runtime, tmp_path):
    """Budget allocation runs on the pool (the Allocation travels to the actors, its tallies
    come home with each batch): the same texts and allocation section as the local run."""
    kw = dict(allocation="position", epsilon_document=40.0, epsilon_floor=1.0)
    local = textdp.privatize(TEXTS, seed=6, **kw)
    out, report = tray.privatize(_dataset(TEXTS), seed=6, workers=2, batch_size=32, **kw)
    assert list(tray.texts_of(out)) == local.texts
    assert report["allocation"] == local.report["allocation"]
    assert report["guarantee"] == local.report["guarantee"]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS), encoding="utf-8")
    args = ["privatize", src, "--seed", "6", "--allocation", "position", "--epsilon-document",
            "40", "--epsilon-floor", "1"]
    assert main([*map(str, args), "-o", str(tmp_path / "local.jsonl")]) == 0
    assert main([*map(str, args), "-o", str(tmp_path / "ray.jsonl"), "--engine", "ray",
                 "--workers", "2", "--batch-size", "50", "--report", str(tmp_path / "r.json")]) == 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    ray_report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert ray_report["allocation"] == local.report["allocation"]


def test_cli_bad_input_is_one_line_and_leaves_nothing(runtime, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "the food"}\n{"text": "the food"\n', encoding="utf-8")
    capsys.readouterr()
    code = _cli([bad, "-o", tmp_path / "out.jsonl", "--engine", "ray", "--workers", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert len([x for x in err.splitlines() if x.startswith("textdp: error:")]) == 1
    assert list(tmp_path.iterdir()) == [bad]
    d = tmp_path / "dir"
    d.mkdir()
    (d / "bad.jsonl").write_bytes(bad.read_bytes())
    assert _cli([d, "-o", tmp_path / "outdir", "--engine", "ray"]) == 2
    assert not (tmp_path / "outdir").exists()


def test_documents_seeded_equal_local_and_generators_are_refused(runtime):
    from textdp.mechanisms.document import Truncation
    from textdp.mechanisms.document import release_documents as local_release

    rng = np.random.default_rng(2)  # test data only
    docs = [rng.uniform(-1, 1, size=(int(k), 4)) for k in rng.integers(1, 5, size=60)]
    mech = Truncation(np.full(4, -1.0), np.full(4, 1.0), epsilon=1.0)
    ds = ray.data.from_items([{"sentences": d.tolist()} for d in docs], override_num_blocks=4)
    out, report = tray.release_documents(ds, mech, seed=3, workers=2, batch_size=16)
    got = np.stack([r["embedding"] for r in out.take_all()])
    np.testing.assert_array_equal(got, local_release(mech, docs, seed=3))
    assert report["kind"] == "document" and report["counts"]["documents"] == 60
    with pytest.raises(ValueError, match="generator"):
        tray.check_no_generator({"mechanism": mech, "rng": np.random.default_rng()})


def test_an_empty_dataset_gives_an_empty_dataset_and_a_report(runtime):
    empty = ray.data.from_arrow(pa.table({"text": pa.array([], pa.string())}))
    for seed in (1, None):
        out, report = tray.privatize(empty, epsilon=10, seed=seed, workers=2)
        assert out.count() == 0 and report["documents"]["count"] == 0


def test_cli_ray_address_joins_a_running_cluster(runtime, tmp_path):
    """The real script, in its own process, on the shared runtime as the "cluster"."""
    import os
    import subprocess
    import sys

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:40]), encoding="utf-8")
    address = ray.get_runtime_context().gcs_address
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
         "privatize", str(src), "-o", str(tmp_path / "out.jsonl"), "--epsilon", "10", "--seed",
         "2", "--engine", "ray", "--workers", "2", "--ray-address", address],
        capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = [json.loads(x)["text"] for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert got == textdp.privatize(TEXTS[:40], epsilon=10, seed=2).texts
    assert "Traceback" not in proc.stderr
    # Issue 21: stderr carries textdp's lines only; Ray's own (its core worker's C++ log, its
    # loggers' "Dataset job will hang" warnings, Python warnings) go to Ray's log directory ...
    assert proc.stderr and all(x.startswith("textdp: ") for x in proc.stderr.splitlines()), \
        proc.stderr[-2000:]
    # ... unless --verbose (which shows that there are lines to keep out).
    proc = subprocess.run(
        [*proc.args[:-1], address, "--verbose", "-o", str(tmp_path / "verbose.jsonl")],
        capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(not x.startswith("textdp: ") for x in proc.stderr.splitlines())
    assert (tmp_path / "verbose.jsonl").read_bytes() == (tmp_path / "out.jsonl").read_bytes()


def test_without_ray_one_line_naming_the_extra(monkeypatch, tmp_path, capsys):
    import subprocess
    import sys

    code = ("import sys, textdp.integrations.ray, textdp.cli.privatize; "
            "print('ray' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120).stdout.strip() == "False"  # imported only when used
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[ray\]'"):
        tray.require_ray()
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "the food"}\n', encoding="utf-8")
    assert _cli([src, "-o", tmp_path / "o.jsonl", "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert "pip install -e '.[ray]'" in err and "Traceback" not in err and not (tmp_path / "o.jsonl").exists()


def test_the_ledger_counts_ray_releases_with_every_other_front(runtime, tmp_path, capsys):
    """One fingerprint for the same texts through the library, Ray and the CLI's Ray engine;
    a refused Ray release writes nothing (issue 15 through issue 13's front)."""
    from textdp.ledger import LedgerRefused

    book = tmp_path / "ledger.jsonl"
    texts = TEXTS[:40]
    textdp.privatize(texts, epsilon=10, ledger=book)
    _, report = tray.privatize(_dataset(texts), epsilon=10, workers=2, ledger=book)
    assert report["ledger"]["earlier_releases"] == 1
    with pytest.raises(LedgerRefused):
        tray.privatize(_dataset(texts), epsilon=10, workers=2, ledger=book,
                       ledger_policy="refuse", budget=25)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    assert _cli([src, "-o", tmp_path / "out.jsonl", "--engine", "ray", "--workers", "2",
                 "--ledger", book, "--ledger-policy", "refuse", "--budget", "25"]) == 2
    assert not (tmp_path / "out.jsonl").exists()
    assert _cli([src, "-o", tmp_path / "out.jsonl", "--engine", "ray", "--workers", "2",
                 "--ledger", book, "--report", tmp_path / "r.json"]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["ledger"]["earlier_releases"] == 2
    entries = [json.loads(x) for x in book.read_text().splitlines()]
    entries = [e for e in entries if e["type"] == "pending"]  # each followed by its completion
    assert len(entries) == 3 and len({e["input"]["fingerprint"] for e in entries}) == 1


def test_entities_on_ray_by_default_equal_the_local_run(runtime):
    texts = ["Hello, this is Maria Garcia from Lisbon.", "Ahmed Yilmaz moved to 12 Baker Street.",
             "Acme Logistics lost the parcel."] * 4
    local = textdp.privatize(texts, epsilon=10, seed=3, allow_list=["Acme Logistics"])
    out, report = tray.privatize(_dataset(texts), epsilon=10, seed=3, workers=2, batch_size=2,
                                 allow_list=["Acme Logistics"])
    assert [r["text"] for r in out.take_all()] == local.texts
    assert "Maria" not in " ".join(local.texts)
    assert report["entities"] == local.report["entities"]
    assert report["entities"]["by_kind"]["person"] == 8 and report["entities"]["allowed_kept"] == 4


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_cli_interrupted_job_leaves_no_output_directory(runtime, tmp_path, signame, interrupt):
    """Issue 25: the workers write into a staging directory; an interrupted job (Ctrl-C, kill)
    kills its actors and removes it, and no output directory appears."""
    import signal
    import sys

    d = tmp_path / "in"
    d.mkdir()
    texts = _texts(2500)
    for k in range(6):
        (d / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts),
                                      encoding="utf-8")
    cmd = [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
           "privatize", str(d), "-o", str(tmp_path / "out"), "--epsilon", "10", "--seed", "1",
           "--engine", "ray", "--workers", "2", "--ray-address",
           ray.get_runtime_context().gcs_address]
    code, err, _ = interrupt(cmd, tmp_path, getattr(signal, signame))
    assert code == 130, err[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no output, no staging


def test_cli_killed_driver_leaves_only_its_hidden_staging_directory(runtime, tmp_path,
                                                                    interrupt):
    """Issue 25: a driver killed outright (SIGKILL) cannot clean up, but the output directory is
    made only at the end, so none appears; its hidden staging directory stays beside it and the
    next run writing there removes it (its process no longer runs)."""
    import signal
    import sys

    d = tmp_path / "in"
    d.mkdir()
    for k in range(6):
        (d / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                              for t in _texts(2500)), encoding="utf-8")
    cmd = [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
           "privatize", str(d), "-o", str(tmp_path / "out"), "--epsilon", "10",
           "--engine", "ray", "--workers", "2", "--ray-address",
           ray.get_runtime_context().gcs_address]
    code, _, _ = interrupt(cmd, tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left[0].startswith(".textdp-ray-") and left[1:] == ["in"], left
    for k in range(6):  # a small job now: the same directory, fewer records
        (d / f"{k}.jsonl").write_text(json.dumps({"text": TEXTS[k]}) + "\n", encoding="utf-8")
    assert _cli([d, "-o", tmp_path / "out", "--engine", "ray", "--workers", "2"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]


def test_cli_failed_file_leaves_no_output_directory(runtime, tmp_path, capsys):
    """Issue 25: the other files were written by the workers, the last one fails: exit 2, one
    line naming it, no output directory and no staging directory (unseeded: no counting pass
    finds the bad file first)."""
    d = tmp_path / "in"
    d.mkdir()
    for k in range(3):
        (d / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                              for t in TEXTS[:60]), encoding="utf-8")
    (d / "3.jsonl").write_text('{"text": "the food"}\n{"text": 5}\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["privatize", str(d), "-o", str(tmp_path / "out"), "--epsilon", "10",
                 "--engine", "ray", "--workers", "2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"textdp: error: {d / '3.jsonl'}:2: "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_cli_ledger_reads_the_input_once_on_the_driver(runtime, tmp_path, monkeypatch):
    """Issue 25: with --ledger the driver fingerprints the files once, before the release (the
    local engine's fingerprint); the check at commit compares each file's fingerprint computed
    by the workers from the records they released, instead of reading the input again."""
    import importlib

    import textdp.io
    from textdp.privacy.fingerprint import fingerprint_texts

    d = tmp_path / "in"
    d.mkdir()
    for k in range(3):
        (d / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                              for t in TEXTS[20 * k:20 * k + 20]),
                                      encoding="utf-8")
    opened = []
    real = textdp.io.open_records

    def counting(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(textdp.io, "open_records", counting)
    # (importlib: the attribute textdp.cli._ledger is shadowed in the package)
    monkeypatch.setattr(importlib.import_module("textdp.cli._ledger"), "open_records", counting)
    book = tmp_path / "ledger.jsonl"
    assert _cli([d, "-o", tmp_path / "out", "--engine", "ray", "--workers", "2",
                 "--ledger", book, "--report", tmp_path / "r.json"]) == 0
    assert sorted(opened) == sorted(str(d / f"{k}.jsonl") for k in range(3))
    entries = [json.loads(x) for x in book.read_text().splitlines()]
    pending = [e for e in entries if e["type"] == "pending"]
    fingerprint = fingerprint_texts(TEXTS[:60])[0]
    assert [e["input"]["fingerprint"] for e in pending] == [fingerprint]  # the local engine's
    assert entries[-1]["type"] == "complete"


def test_cli_glob_pattern_as_input(runtime, tmp_path, capsys):
    """Issue 25: INPUT may be a glob pattern (quoted for the shell): its files in name order are
    one corpus, as a directory's; a pattern matching nothing is one line."""
    d = tmp_path / "in"
    d.mkdir()
    for k in range(2):
        (d / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                              for t in TEXTS[10 * k:10 * k + 10]),
                                      encoding="utf-8")
    (d / "notes.md").write_text("not matched", encoding="utf-8")
    assert _cli([d / "*.jsonl", "-o", tmp_path / "out", "--engine", "ray", "--workers", "2"]) == 0
    got = [json.loads(x)["text"] for k in range(2)
           for x in (tmp_path / "out" / f"{k}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert got == textdp.privatize(TEXTS[:20], epsilon=10, seed=9).texts
    capsys.readouterr()
    assert _cli([d / "*.csv", "-o", tmp_path / "out2", "--engine", "ray"]) == 2
    assert capsys.readouterr().err.strip() == f"textdp: error: {d / '*.csv'}: matches no file"


def _marked_processes(mark: str) -> list[int]:
    """The running processes whose environment holds ``mark`` (a command's descendants)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if mark.encode() in f.read():
                        found.append(int(entry))
            except OSError:  # gone, or not ours
                pass
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_cli_own_runtime_with_ledger_leaves_no_process_and_equals_local(tmp_path):
    """Issue 25: without --ray-address the command starts its own runtime and stops it (Ray's
    autoscaler monitor killed first, the rest by ray.shutdown); with --ledger its fingerprint
    pass runs while Ray starts. The output is the local engine's for the seed, the ledger holds
    the local engine's fingerprint, and no process of the runtime outlives the command."""
    import subprocess
    import sys
    import time
    import uuid

    from textdp.privacy.fingerprint import fingerprint_texts

    d = tmp_path / "in"
    d.mkdir()
    for k in range(3):
        (d / f"{k}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                              for t in TEXTS[20 * k:20 * k + 20]),
                                      encoding="utf-8")
    mark = f"TEXTDP_TEST_RUN_{uuid.uuid4().hex}"
    book = tmp_path / "ledger.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
         "privatize", str(d), "-o", str(tmp_path / "out"), "--epsilon", "10", "--seed", "9",
         "--engine", "ray", "--workers", "2", "--ledger", str(book)],
        capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {mark: "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    deadline = time.monotonic() + 20  # a worker exits once it sees its raylet gone
    while _marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _marked_processes(mark) == []
    got = [json.loads(x)["text"] for k in range(3)
           for x in (tmp_path / "out" / f"{k}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert got == textdp.privatize(TEXTS[:60], epsilon=10, seed=9).texts
    entries = [json.loads(x) for x in book.read_text().splitlines()]
    assert [e["input"]["fingerprint"] for e in entries if e["type"] == "pending"] == \
        [fingerprint_texts(TEXTS[:60])[0]]
    assert entries[-1]["type"] == "complete"


def test_cli_ledger_fingerprint_error_is_one_line_and_leaves_nothing(runtime, tmp_path, capsys):
    """Issue 25: --ledger's fingerprint pass runs on a driver thread while Ray starts; a malformed
    file it meets is the same one line (exit 2) as the local engine's, raised before any output,
    and no release is recorded."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "0.jsonl").write_text('{"text": "the food"}\n', encoding="utf-8")
    (d / "1.jsonl").write_text('{"text": "the room"}\n{"text": 5}\n', encoding="utf-8")
    book = tmp_path / "ledger.jsonl"
    capsys.readouterr()
    assert main(["privatize", str(d), "-o", str(tmp_path / "out"), "--epsilon", "10",
                 "--engine", "ray", "--workers", "2", "--ledger", str(book)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"textdp: error: {d / '1.jsonl'}:2: "), err
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".textdp-ray-")]
    assert not book.exists() or '"pending"' not in book.read_text()


def test_file_workers_runtime_starts_without_the_monitors_nothing_uses():
    """Issue 25 (fixed cost): the local runtime of a file workers' job starts without Ray's
    autoscaler monitor and, unless --verbose, its log monitor (their start-up competed with the
    runtime's own for the CPUs); it runs tasks, Ray's Node is left as it was, and a Ray Data job
    (the windowed path) keeps the full runtime. The workers run at the command's own priority
    (Ray's default niceness of +15 starved them beside any other work on the machine)."""
    import subprocess
    import sys

    code = ("import os, ray.data\n"
            "from ray._private import node\n"
            "from textdp.engines.ray.cluster import start, stop\n"
            "from textdp.engines.ray.logs import RayLogs\n"
            "original = node.Node.__init__\n"
            "for data in (False, True):\n"
            "    with RayLogs() as logs:\n"
            "        ray, own = start(1, None, logs, data=data)\n"
            "        names = sorted(ray._private.worker._global_node.all_processes)\n"
            "        f = ray.remote(lambda: (42, os.nice(0)))\n"
            "        assert ray.get(f.remote()) == (42, os.nice(0))\n"
            "        stop(ray)\n"
            "    print(own, data, names, node.Node.__init__ is original)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    assert done.returncode == 0, done.stderr[-2000:]
    lean, full = done.stdout.splitlines()
    assert lean.startswith("True False [") and lean.endswith("] True") and "'raylet'" in lean
    assert "'monitor'" not in lean and "'log_monitor'" not in lean
    assert full.startswith("True True [") and "'monitor'" in full and "'log_monitor'" in full
