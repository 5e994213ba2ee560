"""Crashes, hangs and messages of the Python fronts found by the hostile trial of issue 36
(items 3, 6 and 7): each case is one line a user could write, and each used to crash, hang or
answer with a message that did not say what was wrong."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import pytest

import textdp
from textdp.ledger import Ledger, LedgerError, LedgerRefused, _digest

TEXTS = ["the food was great", "bad service"]
FAST = {"seed": 0, "entities": "none"}


def _set_epsilon(path, value) -> None:
    """Rewrite the ledger's release lines with guarantee.epsilon = ``value`` (ids recomputed,
    so the lines still validate: a ledger anyone can write)."""
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    renamed = {}
    for entry in lines:
        if entry.get("type", "pending") == "pending" and "guarantee" in entry:
            entry["guarantee"]["epsilon"] = value
            old, entry["id"] = entry["id"], _digest(entry)
            renamed[old] = entry["id"]
    for entry in lines:
        if entry.get("release") in renamed:
            entry["release"] = renamed[entry["release"]]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))


# -- ε beyond every float -------------------------------------------------------------------


def test_ledger_epsilon_10_400_counts_as_unbounded(tmp_path):
    path = tmp_path / "ledger.jsonl"
    textdp.privatize(TEXTS, "mvc", 1.0, ledger=path, **FAST)
    _set_epsilon(path, 10**400)
    contents = Ledger(path).read()
    assert not contents.invalid and len(contents.entries) == 1
    # warn: released, the earlier release's ε is ∞ (no OverflowError)
    r = textdp.privatize(TEXTS, "mvc", 1.0, ledger=path, **FAST)
    assert "inf" in r.report["ledger"]["cumulative"]["summary"]
    with pytest.raises(LedgerRefused, match="budget"):
        textdp.privatize(TEXTS, "mvc", 1.0, ledger=Ledger(path, policy="refuse", budget=100),
                         **FAST)


def test_epsilon_10_400_refused_in_one_sentence():
    with pytest.raises(ValueError, match=r"epsilon must be a finite number > 0, got a number of "
                                         r"401 digits"):
        textdp.privatize(TEXTS, "mvc", 10**400, **FAST)


# -- argument types ---------------------------------------------------------------------------


@pytest.mark.parametrize("budget,kind", [(True, TypeError), ("abc", TypeError),
                                         ("5", TypeError), ([1], TypeError)])
def test_budget_types(tmp_path, budget, kind):
    with pytest.raises(kind, match=r"the budget must be a number \(a finite ε > 0\), got"):
        textdp.privatize(TEXTS, "mvc", 1.0, ledger=tmp_path / "l.jsonl", budget=budget,
                         ledger_policy="refuse", **FAST)


@pytest.mark.parametrize("ledger", [123, 1.5, ["l.jsonl"]])
def test_ledger_types(ledger):
    with pytest.raises(TypeError, match=r"ledger must be a path \(str or os.PathLike\) or a "
                                        r"textdp.ledger.Ledger, got"):
        textdp.privatize(TEXTS, "mvc", 1.0, ledger=ledger, **FAST)


def test_ledger_empty_path():
    with pytest.raises(LedgerError, match="empty string"):
        textdp.privatize(TEXTS, "mvc", 1.0, ledger="", **FAST)


def test_dict_is_not_a_list_of_texts():
    with pytest.raises(TypeError, match=r"not a dict .*list\(d.values\(\)\)"):
        textdp.privatize({"a": "the food was great"}, "mvc", 1.0, **FAST)


@pytest.mark.parametrize("value", ["", "  ", [], (), ","])
def test_empty_entities_refused(value):
    """An empty value is a slip, not a choice: it must not turn the entity stage off."""
    with pytest.raises(ValueError, match="entities is empty .*give 'none' to turn entity "
                                         "recognition off"):
        textdp.privatize(TEXTS, "mvc", 1.0, seed=0, entities=value)


def test_none_still_turns_entities_off():
    r = textdp.privatize(TEXTS, "mvc", 1.0, seed=0, entities="none")
    assert r.report["entities"]["kinds"] == []


# -- a FIFO where the ledger should be ------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_ledger_on_a_fifo_is_refused_not_hung(tmp_path):
    fifo = tmp_path / "ledger.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            Ledger(fifo).read()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():  # unblock the hung open so the thread can end
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("reading a ledger that is a FIFO hangs")
    assert isinstance(outcome[0], LedgerError) and "not a regular file" in str(outcome[0])


def test_ledger_fifo_release_refused(tmp_path):
    fifo = tmp_path / "ledger.jsonl"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(LedgerError, match="not a regular file"):
        textdp.privatize(TEXTS, "mvc", 1.0, ledger=fifo, **FAST)
    assert time.monotonic() - start < 60


# -- fronts -----------------------------------------------------------------------------------


def test_datasets_empty_dataset():
    datasets = pytest.importorskip("datasets")
    from textdp.integrations.datasets import privatize

    ds = datasets.Dataset.from_dict({"text": []}, features=datasets.Features(
        {"text": datasets.Value("string")}))
    out, report = privatize(ds, "text", "mvc", 1.0, **FAST)
    assert len(out) == 0 and out.column_names == ["text"]
    assert report["counts"]["documents"]["count"] == 0


def test_text_privatizer_on_a_dataframe():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    from textdp.sklearn import TextPrivatizer

    frame = pd.DataFrame({"text": TEXTS})
    out = TextPrivatizer(epsilon=1.0, seed=0, entities="none").fit_transform(frame)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    with pytest.raises(TypeError, match="X has 2 columns; TextPrivatizer takes one column"):
        TextPrivatizer(epsilon=1.0, seed=0, entities="none").fit_transform(
            pd.DataFrame({"a": TEXTS, "b": TEXTS}))


def test_unnamed_series_is_not_column_none():
    pd = pytest.importorskip("pandas")
    import textdp.pandas  # noqa: F401 - registers the accessor

    with pytest.raises(TypeError) as info:
        pd.Series(["a text", 3]).textdp.privatize(epsilon=1.0, **FAST)
    assert "column None" not in str(info.value)
    assert str(info.value).startswith("the Series holds int at row 1")


# -- assess targets ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [2, -0.1, float("nan"), 1.5])
def test_assess_min_utility_range(value):
    from textdp.assess.core import _targets

    with pytest.raises(ValueError, match=r"min_utility must lie in \[0, 1\]"):
        _targets({}, 300.0, "5x", 0, value)


def test_assess_min_utility_type():
    from textdp.assess.core import _targets

    with pytest.raises(TypeError, match="min_utility must be a number"):
        _targets({}, 300.0, "5x", 0, "0.5")
    assert _targets({}, 300.0, "5x", 0, 0.5).min_utility == 0.5


# -- the first call says what is loading ------------------------------------------------------


def test_loading_notice_when_slow(capsys, monkeypatch):
    from textdp import _loading

    monkeypatch.delenv("TEXTDP_QUIET", raising=False)
    monkeypatch.setattr(_loading, "_quiet", False)
    with _loading.loading("the slow thing", after=0.05):
        time.sleep(0.4)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("textdp: loading the slow thing, once per process")
    assert err[1].startswith("textdp: the slow thing loaded in ")
    with _loading.loading("the fast thing", after=5):
        pass
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("TEXTDP_QUIET", "1")
    with _loading.loading("the quiet thing", after=0.01):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


def test_first_call_announces_its_loads(tmp_path):
    """A fresh process with an empty cache: the default vocabulary and the entity model each
    take seconds; stderr says what is loading (a notice, never an error)."""
    import subprocess

    env = {**os.environ, "TEXTDP_CACHE": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("TEXTDP_QUIET", None)
    code = ("from textdp import _loading; _loading.NOTICE_AFTER = 0.0\n"
            "import textdp; textdp.privatize(['Maria Garcia lives in Paris and flies with "
            "Lufthansa'], 'mvc', 1.0, seed=0)\n")  # the company: only the model reads it
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert "textdp: loading the default vocabulary" in done.stderr
    assert "textdp: loading the entity model" in done.stderr
