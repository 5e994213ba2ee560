"""``textdp privatize --engine ray`` over URIs and several INPUT files (issue 25, deliverable 1).

Local paths and ``file://`` URIs; several INPUT files (one output per input, the seeded run equal
to the local engine over the files in the order given); and ``s3://`` against a real S3 server on
this machine (moto's, in-process, on 127.0.0.1): read and written through pyarrow's S3
filesystem by the Ray workers, seeded output byte for byte the local engine's, a failing file
leaving no object under the output prefix and no staging prefix, an existing output prefix
refused. The S3 server (``s3``: tests/integrations/conftest.py) is reached through
``AWS_ENDPOINT_URL``, set while the shared Ray runtime starts, so that its worker processes
inherit it as a command's own runtime would.
"""

from __future__ import annotations

import json

import pytest

import textdp
from textdp.cli import main

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.ray

BUCKET = "textdp-test"
WORDS = ("the food was great but the service was slow and the room felt cold so we left early "
         "after a long wait for the bill").split()
TEXTS = [" ".join(WORDS[(7 * i + k) % len(WORDS)] for k in range(3 + i % 9)).capitalize() + "."
         for i in range(300)]


def _jsonl(texts, first=0):
    # Other fields with bytes the JSONL writer must keep as written (2.50, an escape).
    return "".join(json.dumps({"id": first + i, "text": t, "x": 2.50}).replace("2.5", "2.50")
                   + ' \t\n' for i, t in enumerate(texts)).encode()


def _cli(args, *more):
    return main(["privatize", *map(str, args), "--epsilon", "10", "--seed", "9",
                 "--entities", "none", *more])


def _ray(args):
    return _cli(args, "--engine", "ray", "--workers", "2")


def test_local_engine_refuses_several_inputs_and_uris_in_one_line(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(_jsonl(TEXTS[:3]))
    b.write_bytes(_jsonl(TEXTS[3:6]))
    cases = [([a, b, "-o", tmp_path / "out"], "several INPUT files need --engine ray"),
             ([f"s3://{BUCKET}/in/a.jsonl", "-o", tmp_path / "o.jsonl"],
              f"s3://{BUCKET}/in/a.jsonl: a URI needs --engine ray"),
             ([a, "-o", "s3://bucket/o.jsonl"], "s3://bucket/o.jsonl: a URI needs --engine ray"),
             (["-", a, "-o", tmp_path / "out"], "- (standard input) must be the only INPUT"),
             # Resolved before any Ray runtime starts.
             (["nope://x/a.jsonl", "-o", tmp_path / "o.jsonl", "--engine", "ray"],
              "nope://x/a.jsonl: cannot use this URI (Unrecognized filesystem type in URI: "
              "nope://x/a.jsonl)")]
    for args, message in cases:
        capsys.readouterr()
        assert _cli(args) == 2
        assert capsys.readouterr().err.splitlines() == [f"textdp: error: {message}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]
    # A file:// URI is a local path, for the local engine too.
    assert _cli([a.as_uri(), "-o", (tmp_path / "l.jsonl").as_uri()]) == 0
    assert _cli([a, "-o", tmp_path / "m.jsonl"]) == 0
    assert (tmp_path / "l.jsonl").read_bytes() == (tmp_path / "m.jsonl").read_bytes()


def test_several_files_and_file_uris_equal_the_local_engine(runtime, tmp_path, capsys):
    """Several INPUT files, in the order given (not name order), of three formats: one output
    each, the same names; the texts are the local engine's over the files in that order; a
    duplicate name is refused in one line; file:// URIs of a directory work as the directory."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "c.jsonl").write_bytes(_jsonl(TEXTS[:100]))
    (d / "a.txt").write_text("".join(t + "\n" for t in TEXTS[100:180]), encoding="utf-8")
    pq.write_table(pa.table({"text": TEXTS[180:300], "n": list(range(120))}), d / "b.parquet")
    order = [d / "c.jsonl", d / "a.txt", d / "b.parquet"]
    assert _ray([*order, "-o", tmp_path / "out", "--report", tmp_path / "r.json"]) == 0
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.parquet", "c.jsonl"]
    got = ([json.loads(x)["text"] for x in (out / "c.jsonl").read_text().splitlines()]
           + (out / "a.txt").read_text(encoding="utf-8").splitlines()
           + pq.read_table(out / "b.parquet").column("text").to_pylist())
    assert got == textdp.privatize(TEXTS, epsilon=10, seed=9, entities="none").texts
    # The first file starts the corpus: byte for byte the local engine's run over it alone.
    assert _cli([d / "c.jsonl", "-o", tmp_path / "c.local.jsonl"]) == 0
    assert (out / "c.jsonl").read_bytes() == (tmp_path / "c.local.jsonl").read_bytes()
    assert json.loads((tmp_path / "r.json").read_text())["io"]["records_out"] == 300
    # With --ledger: the files are one input, fingerprinted in the order given.
    assert _ray([*order, "-o", tmp_path / "led", "--ledger", tmp_path / "ledger.jsonl"]) == 0
    lines = [json.loads(x) for x in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    entry = next(x for x in lines if x["type"] == "pending")
    assert entry["input"]["records"] == 300
    assert entry["input"]["name"] == ", ".join(map(str, order))

    # Two files of one name would be one output file: refused, nothing written.
    other = tmp_path / "other"
    other.mkdir()
    (other / "c.jsonl").write_bytes(_jsonl(TEXTS[:5]))
    capsys.readouterr()
    assert _ray([d / "c.jsonl", other / "c.jsonl", "-o", tmp_path / "dup"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"textdp: error: {other / 'c.jsonl'}: gives the output name 'c.jsonl', as "
        f"{d / 'c.jsonl'} does: the output directory would hold both under one name"]
    assert not (tmp_path / "dup").exists()

    # file:// URIs: the directory, in name order, as the local directory run.
    assert _ray([d.as_uri(), "-o", (tmp_path / "uri").as_uri()]) == 0
    assert _ray([d, "-o", tmp_path / "dir"]) == 0
    for name in ("a.txt", "b.parquet", "c.jsonl"):
        assert (tmp_path / "uri" / name).read_bytes() == (tmp_path / "dir" / name).read_bytes()


def test_s3_prefix_object_and_glob_equal_the_local_engine(runtime, s3, tmp_path):
    """Read from and written to S3 by the workers: a prefix gives one object per file under the
    output prefix, byte for byte what the local engine and the Ray engine write locally; one
    object gives one object; a pattern in the last part selects files; no staging prefix
    remains."""
    d = tmp_path / "local"
    d.mkdir()
    for name, data in {"a.jsonl": _jsonl(TEXTS[:120]), "b.jsonl": _jsonl(TEXTS[120:200], 120),
                       ".hidden": b"not an input"}.items():
        (d / name).write_bytes(data)
        s3.put(f"in/{name}", data)
    pq.write_table(pa.table({"text": TEXTS[200:260]}), d / "c.parquet")
    s3.put("in/c.parquet", (d / "c.parquet").read_bytes())

    assert _ray([f"s3://{BUCKET}/in/", "-o", f"s3://{BUCKET}/out", "--report",
                 tmp_path / "r.json"]) == 0
    assert _ray([d, "-o", tmp_path / "out"]) == 0  # the same files, local, on Ray
    assert _cli([d / "a.jsonl", "-o", tmp_path / "a.local.jsonl"]) == 0  # the local engine
    assert s3.keys("out") == [f"{BUCKET}/out/{n}"
                                          for n in ("a.jsonl", "b.jsonl", "c.parquet")]
    assert s3.get("out/a.jsonl") == (tmp_path / "a.local.jsonl").read_bytes()
    for name in ("a.jsonl", "b.jsonl", "c.parquet"):
        assert s3.get(f"out/{name}") == (tmp_path / "out" / name).read_bytes(), name
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["io"]["records_out"] == 260
    assert report["io"]["files"][0]["input"] == f"s3://{BUCKET}/in/a.jsonl"

    # One object in, one object out (a local report beside it).
    assert _ray([f"s3://{BUCKET}/in/a.jsonl", "-o", f"s3://{BUCKET}/one/a.private.jsonl"]) == 0
    assert s3.get("one/a.private.jsonl") == (tmp_path / "a.local.jsonl").read_bytes()
    # A pattern: the JSONL files only (the hidden one is not matched).
    assert _ray([f"s3://{BUCKET}/in/*.jsonl", "-o", f"s3://{BUCKET}/glob"]) == 0
    assert s3.keys("glob") == [f"{BUCKET}/glob/a.jsonl", f"{BUCKET}/glob/b.jsonl"]
    assert s3.get("glob/b.jsonl") == s3.get("out/b.jsonl")
    assert not [k for k in s3.keys() if ".textdp-ray-" in k]


def test_s3_failing_file_leaves_nothing_and_a_used_prefix_is_refused(runtime, s3, capsys):
    for k in range(3):
        s3.put(f"bad/{k}.jsonl", _jsonl(TEXTS[:50]))
    s3.put("bad/3.jsonl", b'{"text": "the food"}\n{"text": 5}\n')
    capsys.readouterr()
    # Unseeded: no counting pass finds the bad file first; the other files were written.
    assert main(["privatize", f"s3://{BUCKET}/bad", "-o", f"s3://{BUCKET}/bad-out",
                 "--epsilon", "10", "--entities", "none", "--engine", "ray", "--workers", "2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"textdp: error: s3://{BUCKET}/bad/3.jsonl:2: "), err
    keys = s3.keys()
    assert not [k for k in keys if k.startswith(f"{BUCKET}/bad-out")], keys
    assert not [k for k in keys if ".textdp-ray-" in k], keys

    s3.put("used/x.jsonl", b'{"text": "kept"}\n')
    assert _ray([f"s3://{BUCKET}/bad/0.jsonl", f"s3://{BUCKET}/bad/1.jsonl", "-o",
                 f"s3://{BUCKET}/used"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"textdp: error: s3://{BUCKET}/used: exists and is not empty; give a new or empty "
        "output prefix"]
    assert s3.keys("used") == [f"{BUCKET}/used/x.jsonl"]
    assert _ray([f"s3://{BUCKET}/nothing/", "-o", f"s3://{BUCKET}/o"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"textdp: error: s3://{BUCKET}/nothing: no such file or prefix"]


def test_every_format_reads_and_writes_through_s3_as_locally(s3, tmp_path):
    """The io layer alone (no Ray): map_text_file from and to s3:// gives the bytes it gives
    locally, for every format and compression (textdp's own decompression: pyarrow's automatic
    one by extension is off); a failed write leaves no object; a missing object is one line."""
    import gzip

    import zstandard

    from textdp.io import FileError, map_text_file
    from textdp.io.uri import resolve

    def upper(texts, start):
        return [t.upper() for t in texts]

    lines = "".join(t + "\r\n" for t in TEXTS[:20])
    inputs = {"a.txt": lines.encode(), "b.jsonl": _jsonl(TEXTS[:20]),
              "c.csv": ("id,text\n" + "".join(f'{i},"{t}, x"\n' for i, t in enumerate(TEXTS[:9]))
                        ).encode(),
              "d.tsv.gz": gzip.compress("text\tn\n".join(["", "a b\t1\n"]).encode(), mtime=0),
              "e.jsonl.zst": zstandard.ZstdCompressor().compress(_jsonl(TEXTS[:5]))}
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
    pq.write_table(pa.table({"text": TEXTS[:7], "n": list(range(7))}), tmp_path / "f.parquet")
    for name in [*inputs, "f.parquet"]:
        s3.put(f"io/{name}", (tmp_path / name).read_bytes())
        map_text_file(resolve(f"s3://{BUCKET}/io/{name}"),
                      resolve(f"s3://{BUCKET}/io-out/{name}"), upper)
        map_text_file(tmp_path / name, tmp_path / f"out-{name}", upper)
        assert s3.get(f"io-out/{name}") == (tmp_path / f"out-{name}").read_bytes(), name

    s3.put("io/bad.jsonl", b'{"text": "fine"}\n{"text": 5}\n')
    with pytest.raises(FileError, match=f"^s3://{BUCKET}/io/bad.jsonl:2: "):
        map_text_file(resolve(f"s3://{BUCKET}/io/bad.jsonl"),
                      resolve(f"s3://{BUCKET}/io-bad/bad.jsonl"), upper, batch_size=1)
    assert s3.keys("io-bad") == []
    with pytest.raises(FileError, match=f"^s3://{BUCKET}/io/none.jsonl: no such file$"):
        map_text_file(resolve(f"s3://{BUCKET}/io/none.jsonl"), tmp_path / "x.jsonl", upper)


def test_s3_interrupted_job_leaves_no_object(runtime, s3, tmp_path, interrupt):
    """Ctrl-C once the workers have staged an object: exit 130, the staging prefix deleted, no
    object under the output prefix (the driver is its own process, joined to the shared
    runtime; both have the S3 variables)."""
    import signal
    import sys

    many = TEXTS * 8
    for k in range(10):
        s3.put(f"big/{k}.jsonl", _jsonl(many))
    cmd = [sys.executable, "-c", "import sys; from textdp.cli import main; sys.exit(main())",
           "privatize", f"s3://{BUCKET}/big", "-o", f"s3://{BUCKET}/big-out", "--epsilon", "10",
           "--engine", "ray", "--workers", "2", "--ray-address",
           ray.get_runtime_context().gcs_address]
    code, err, sent = interrupt(cmd, lambda: any(".textdp-ray-" in k for k in s3.keys()),
                                signal.SIGINT)
    assert sent and code == 130, err[-2000:]
    keys = s3.keys()
    assert not [k for k in keys if k.startswith(f"{BUCKET}/big-out") or ".textdp-ray-" in k], keys
