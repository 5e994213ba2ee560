"""Hugging Face datasets: seeded output independent of num_proc and equal to the CLI, pandas and
textdp.privatize (the acceptance test of issue 13 for these fronts); unseeded runs never replay
the cache; one merged report."""

from __future__ import annotations

import json

import datasets
import pandas as pd
import pytest

import textdp
import textdp.pandas  # noqa: F401 - registers the accessor
from textdp.cli import main
from textdp.engines.dataset_map import cache_fingerprint
from textdp.integrations.datasets import COUNTERS_COLUMN, privatize
from textdp.spec import release_spec

TEXTS = ["The food was great, but the waiter was rude.", None, "Call jsmith@acme.com today!",
         "Cold soup and warm beer in the old town.", "", "I LOVED it.", None,
         "naïve café Zzyzxq 😀", "A quiet street with small shops and a bakery."]


@pytest.fixture(autouse=True, scope="module")
def _quiet():
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


@pytest.fixture(scope="module")
def ds():
    return datasets.Dataset.from_dict({"id": list(range(len(TEXTS))), "text": TEXTS})


def test_seeded_fronts_give_byte_identical_texts(ds, tmp_path, capsys):
    """Local CLI, pandas accessor, datasets with num_proc 1 and 2 (and textdp.privatize)."""
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS)),
                    encoding="utf-8")
    assert main(["privatize", str(path), "-o", str(tmp_path / "out.jsonl"), "--epsilon", "8",
                 "--seed", "5", "--null", "pass"]) == 0
    capsys.readouterr()
    cli = [json.loads(line)["text"] for line in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()]
    one, r1 = privatize(ds, epsilon=8, seed=5, batch_size=4)
    two, r2 = privatize(ds, epsilon=8, seed=5, num_proc=2, batch_size=3)
    frame = pd.Series(TEXTS, dtype=object).textdp.privatize(epsilon=8, seed=5).tolist()
    api = textdp.privatize([t for t in TEXTS if t is not None], epsilon=8, seed=5)
    assert one["text"][:] == two["text"][:] == cli == frame
    assert [t for t in cli if t is not None] == api.texts
    assert one["id"][:] == list(range(len(TEXTS))) and one.column_names == ["id", "text"]
    # One merged report: counts summed over the processes equal the one-process run's.
    for key in ("documents", "tokens"):
        assert r1[key] == r2[key] == api.report[key]
    assert r2["engine"] == "datasets" and r2["workers"] == 2 and r1["workers"] == 1
    assert r2["guarantee"] == api.report["guarantee"]
    assert r2["deniability"]["privatized_words"] == api.report["deniability"]["privatized_words"]


def test_unseeded_runs_on_a_cached_disk_dataset_never_repeat(tmp_path):
    assert datasets.is_caching_enabled()
    text = "the quick brown fox jumps over the lazy dog and the small cat"
    datasets.Dataset.from_dict({"text": [text] * 4}).save_to_disk(tmp_path / "d")
    disk = datasets.load_from_disk(tmp_path / "d")
    runs = [privatize(disk, epsilon=8, batch_size=2) for _ in range(2)]
    outputs = [t for out, _ in runs for t in out["text"]]
    assert len(set(outputs)) == len(outputs)  # across runs, and across rows of one run
    prints = {r["datasets"]["fingerprint"] for _, r in runs}
    assert len(prints) == 2 and all(r["randomness"]["seeded"] is False for _, r in runs)
    assert len(list((tmp_path / "d").glob("cache-*.arrow"))) >= 2  # the cache was on and used


def test_unseeded_workers_draw_independent_noise(ds):
    """Two processes, the same texts in each shard: identical noise would give identical halves."""
    half = ["the quick brown fox jumps over the lazy dog " * 4] * 3
    out, _ = privatize(datasets.Dataset.from_dict({"text": half * 2}), epsilon=8, num_proc=2)
    assert out["text"][:3] != out["text"][3:]


def test_seeded_fingerprint_depends_on_everything_the_output_does(ds, tmp_path):
    ds.save_to_disk(tmp_path / "d")
    disk = datasets.load_from_disk(tmp_path / "d")
    a, ra = privatize(disk, epsilon=8, seed=5)
    b, rb = privatize(disk, epsilon=8, seed=5)
    assert ra["datasets"]["fingerprint"] == rb["datasets"]["fingerprint"]
    assert a["text"][:] == b["text"][:] and ra["documents"] == rb["documents"]  # replayed: same
    def fp(d=disk, column="text", seed=5, epsilon=8, **options):
        spec = release_spec("mvc", epsilon, seed=seed, **options)
        return cache_fingerprint(d, column, spec, spec.mechanism_object())

    assert fp() == ra["datasets"]["fingerprint"]
    other = {fp(seed=6), fp(epsilon=9), fp(oov="keep"), fp(disk.select(range(4))),
             fp(disk.rename_column("text", "body"), "body")}
    assert ra["datasets"]["fingerprint"] not in other and len(other) == 5
    assert fp(seed=None) != fp(seed=None)


def test_allocation_runs_on_every_process_and_is_in_the_fingerprint(ds):
    kw = dict(allocation="position", epsilon_document=30.0, epsilon_floor=1.0, seed=5)
    api = textdp.privatize([t for t in TEXTS if t is not None], **kw)
    one, r1 = privatize(ds, batch_size=4, **kw)
    two, r2 = privatize(ds, num_proc=2, batch_size=3, **kw)
    assert [t for t in one["text"][:] if t is not None] == api.texts == \
        [t for t in two["text"][:] if t is not None]
    assert r1["allocation"] == r2["allocation"] == api.report["allocation"]
    assert r2["guarantee"] == api.report["guarantee"]
    other = privatize(ds, batch_size=4, **{**kw, "epsilon_document": 31.0})[1]
    assert other["datasets"]["fingerprint"] != r1["datasets"]["fingerprint"]


def test_a_shuffled_view_numbers_its_own_rows(ds):
    view = ds.select([8, 1, 0, 6, 3])
    out, report = privatize(view, epsilon=8, seed=2, batch_size=2)
    present = [t for t in view["text"] if t is not None]
    assert [t for t in out["text"] if t is not None] == textdp.privatize(present, epsilon=8, seed=2).texts
    assert out["text"][1] is None and report["documents"]["count"] == 3


def test_errors(ds):
    with pytest.raises(KeyError, match="body"):
        privatize(ds, column="body", epsilon=8)
    with pytest.raises(TypeError, match="strings"):
        privatize(ds, column="id", epsilon=8)
    with pytest.raises(TypeError, match="Dataset or DatasetDict"):
        privatize({"train": ds}, epsilon=8)
    with pytest.raises(ValueError, match="not both"):
        privatize(ds, column="id", columns=["text"], epsilon=8)
    with pytest.raises(ValueError, match="dp_prompt is not run by the datasets front") as err:
        privatize(ds, mechanism="dp_prompt", epsilon=100.0)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="epsilon"):
        privatize(ds)
    with pytest.raises(ValueError, match="reserved"):
        privatize(ds.add_column(COUNTERS_COLUMN, [None] * len(ds)), epsilon=8)


# --- front semantics (issue 23, item 6) -------------------------------------------------------
def test_a_dataset_dict_is_privatised_split_by_split_with_a_budget(ds):
    small = datasets.Dataset.from_dict({"text": ["Cold soup.", None, "A quiet street."]})
    splits = datasets.DatasetDict({"train": ds, "test": small})
    out, report = privatize(splits, epsilon=8, seed=3, batch_size=4)
    assert isinstance(out, datasets.DatasetDict) and set(out) == {"train", "test"}
    for name, split in splits.items():
        alone, r = privatize(split, epsilon=8, seed=3)
        assert out[name]["text"] == alone["text"]
        assert report["splits"][name]["documents"] == r["documents"]
    (total,) = report["budget"]["total"]
    assert total["epsilon"] == 8.0  # disjoint rows: parallel composition, not 16


def test_several_columns_at_once_each_a_release(tmp_path):
    two = datasets.Dataset.from_dict({"a": ["The food was great.", None], "b": ["Cold soup.", "Hi."],
                                      "n": [1, 2]})
    out, report = privatize(two, columns=["a", "b"], epsilon=4, seed=1,
                            ledger=tmp_path / "l.jsonl")
    for c in "ab":
        assert out[c] == privatize(two, column=c, epsilon=4, seed=1)[0][c]
        assert report["columns"][c]["datasets"]["column"] == c
    assert out["n"] == [1, 2]
    assert report["budget"]["per_column"] == {"a": 4.0, "b": 4.0}
    (group,) = report["budget"]["columns"]["groups"]
    assert group["epsilon"] == 8.0  # a row's two columns: sequential composition
    assert len((tmp_path / "l.jsonl").read_text().splitlines()) == 4  # pending + complete, twice
    assert privatize(two, ["a", "b"], epsilon=4, seed=1)[0]["b"] == out["b"]
    json.dumps(report)
