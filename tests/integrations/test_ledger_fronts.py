"""The ledger through the integrations (issue 15: ``ledger=`` in the Python API and the
integrations): every front records its release of the same texts under the same fingerprint,
so a second release through another front is counted and a refused one releases nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
datasets = pytest.importorskip("datasets")

from textdp.ledger import Ledger, LedgerRefused  # noqa: E402

TEXTS = ["the food was great", "terrible service and cold soup", "a quiet evening"]


def _lines(path):
    """The release (pending) lines; each is followed by its complete line."""
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["pending", "complete"] * (len(lines) // 2)
    return lines[::2]


def test_every_front_records_the_same_input_under_one_fingerprint(tmp_path):
    import textdp
    import textdp.pandas  # noqa: F401
    from textdp.integrations.datasets import privatize as ds_privatize
    from textdp.sklearn import TextPrivatizer

    book = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", 10, ledger=book)
    s = pd.Series([TEXTS[0], None, TEXTS[1], TEXTS[2]])
    out = s.textdp.privatize(mechanism="mvc", epsilon=10, ledger=book)
    assert out.attrs["textdp_report"]["ledger"]["earlier_releases"] == 1
    _, report = ds_privatize(datasets.Dataset.from_dict({"text": TEXTS}), "text", "mvc", 10,
                             ledger=book)
    assert report["ledger"]["earlier_releases"] == 2
    TextPrivatizer("mvc", 10, ledger=str(book)).fit_transform(TEXTS)
    entries = _lines(book)
    assert len(entries) == 4
    assert len({e["input"]["fingerprint"] for e in entries}) == 1


def test_refuse_releases_nothing_through_datasets_and_sklearn(tmp_path):
    from textdp.integrations.datasets import privatize as ds_privatize
    from textdp.sklearn import PrivEmbTransformer, TextPrivatizer

    book = tmp_path / "ledger.jsonl"
    ds = datasets.Dataset.from_dict({"text": TEXTS})
    ds_privatize(ds, "text", "mvc", 10, ledger=book, ledger_policy="refuse", budget=15)
    with pytest.raises(LedgerRefused):
        ds_privatize(ds, "text", "mvc", 10, ledger=book, ledger_policy="refuse", budget=15)
    with pytest.raises(LedgerRefused):
        TextPrivatizer("mvc", 10, ledger=str(book), ledger_policy="refuse",
                       budget=15).fit_transform(TEXTS)
    assert len(_lines(book)) == 1
    X = np.random.default_rng(0).normal(size=(20, 8))
    est = PrivEmbTransformer("laplace-vector", 1.0, ledger=str(book), ledger_policy="refuse",
                             budget=1.5).fit(X)
    est.transform(X)
    assert est.report_["ledger"]["earlier_releases"] == 0
    with pytest.raises(LedgerRefused):
        est.transform(X)
    assert len(_lines(book)) == 2


def test_the_python_api_writes_ahead_and_voids_a_failed_release(tmp_path, monkeypatch):
    """The fronts get the write-ahead protocol through ``with ledger.release(...)``: the pending
    line is in the ledger while the texts are privatised, a failure voids it."""
    import textdp
    import textdp.pipeline as pipeline

    book, seen = tmp_path / "ledger.jsonl", []
    real = pipeline.Privatizer.run

    def run(self, *args, **kwargs):
        seen.append([e["_state"] for e in Ledger(book).read().entries])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pipeline.Privatizer, "run", run)
    textdp.privatize(TEXTS, "mvc", 10, ledger=book)
    assert seen[0] == ["pending"] and [e["_state"] for e in Ledger(book).read().entries] == [
        "complete"]

    def broken(self, *args, **kwargs):
        raise RuntimeError("the model crashed")

    monkeypatch.setattr(pipeline.Privatizer, "run", broken)
    with pytest.raises(RuntimeError):
        textdp.privatize(TEXTS, "mvc", 10, ledger=book)
    contents = Ledger(book).read()
    assert len(contents.entries) == 1 and len(contents.voided) == 1
