"""Ray Data's vector and document releases are guarded by the ledger (issue 33): each writes a
pending and a completed record through :func:`textdp.runner.run_release`, fingerprinted as the
same release in one process fingerprints it, so that the two compose; a refused release runs
nothing. (The word release's ledger: tests/integrations/test_ray.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from textdp.integrations import ray as tray  # noqa: E402
from textdp.ledger import Ledger, LedgerRefused  # noqa: E402


def _lines(book):
    return [json.loads(x) for x in book.read_text().splitlines()]


def _check_release(book, kind, records, space):
    """One pending line followed by its completion, for ``records`` values of ``kind``."""
    lines = _lines(book)
    pending = [e for e in lines if e["type"] == "pending"]
    complete = [e for e in lines if e["type"] == "complete"]
    assert len(pending) == 1 and len(complete) == 1
    assert complete[0]["release"] == pending[0]["id"]
    entry = pending[0]
    assert entry["input"]["records"] == records
    assert entry["input"]["encoding"].endswith(f" {kind}")
    assert entry["input"]["name"].startswith("Ray Data column")
    assert entry["space"] == space
    return entry


def test_a_ray_data_vector_release_writes_a_ledger_record(runtime, tmp_path):
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.mechanisms.embedding.release import release_vectors

    X = np.random.default_rng(4).normal(size=(300, 5))  # test data only
    mech = LaplaceVector(epsilon=2.0)
    ds = ray.data.from_items([{"vector": x} for x in X], override_num_blocks=3)
    book = tmp_path / "ledger.jsonl"
    out, report = tray.release_vectors(ds, mech, seed=5, workers=2, batch_size=64, ledger=book)
    entry = _check_release(book, "vectors", 300, "the input vectors themselves (R^5)")
    assert report["ledger"]["earlier_releases"] == 0
    # The same input released in one process: the same fingerprint, composed with the first.
    local = tmp_path / "local.jsonl"
    np.testing.assert_array_equal(np.stack([r["vector"] for r in out.take_all()]),
                                  release_vectors(mech, X, seed=5, ledger=Ledger(local)))
    assert _lines(local)[0]["input"]["fingerprint"] == entry["input"]["fingerprint"]
    assert _lines(local)[0]["measurement"] == entry["measurement"]
    with pytest.raises(LedgerRefused):
        tray.release_vectors(ds, mech, workers=2, ledger=book, ledger_policy="refuse",
                             budget=3.0)
    assert len(_lines(book)) == 2  # refused before anything ran: no line


def test_a_ray_data_document_release_writes_a_ledger_record(runtime, tmp_path):
    from textdp.mechanisms.document import Truncation
    from textdp.mechanisms.document import release_documents as local_release

    rng = np.random.default_rng(2)  # test data only
    docs = [rng.uniform(-1, 1, size=(int(k), 4)) for k in rng.integers(1, 5, size=30)]
    mech = Truncation(np.full(4, -1.0), np.full(4, 1.0), epsilon=1.0)
    ds = ray.data.from_items([{"sentences": d.tolist()} for d in docs], override_num_blocks=3)
    book = tmp_path / "ledger.jsonl"
    out, report = tray.release_documents(ds, mech, seed=3, workers=2, batch_size=8, ledger=book)
    entry = _check_release(book, "documents", 30, "")
    assert report["ledger"]["earlier_releases"] == 0
    # Released again in one process into the same ledger: the same input, composed.
    again = local_release(mech, docs, seed=3, ledger=Ledger(book))
    np.testing.assert_array_equal(np.stack([r["embedding"] for r in out.take_all()]), again)
    assert _lines(book)[-1]["type"] == "complete"
    assert [e["input"]["fingerprint"] for e in _lines(book) if e["type"] == "pending"] == \
        [entry["input"]["fingerprint"]] * 2
