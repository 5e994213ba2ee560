"""pandas accessor: same index, missing values stay missing, seeded output equal to the CLI's and
to textdp.privatize on the same texts, one report per column, fresh noise when unseeded."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import textdp
import textdp.pandas  # noqa: F401 - registers the accessor
from textdp.cli import main
from textdp.pipeline import Privatizer

TEXTS = ["The food was great, but the waiter was rude.", None, "Call jsmith@acme.com today!",
         np.nan, "Cold soup and warm beer in the old town.", pd.NA, "", "I LOVED it."]


@pytest.fixture(scope="module")
def mech():
    return textdp.mechanisms.create("mvc", epsilon=8)


def _present(values):
    return [v for v in values if isinstance(v, str)]


def test_series_keeps_index_and_missing_values_and_matches_privatize(mech):
    s = pd.Series(TEXTS, index=[f"r{i}" for i in range(len(TEXTS))], name="body", dtype=object)
    out = s.textdp.privatize(mech, seed=7)
    assert out.index.equals(s.index) and out.name == "body" and out.dtype == object
    assert out.iloc[1] is None and np.isnan(out.iloc[3]) and out.iloc[5] is pd.NA
    assert _present(out) == textdp.privatize(_present(TEXTS), mech, seed=7).texts
    report = out.attrs["textdp_report"]
    assert report["documents"]["count"] == 5 and report["documents"]["empty"] == 1
    assert report["pandas"]["missing"] == 3 and report["engine"] == "pandas"
    assert report["randomness"]["seeded"] is True
    # Power: numbering documents by row position (not skipping missing values) changes the output.
    rows = [i for i, v in enumerate(TEXTS) if isinstance(v, str)]
    p = Privatizer(mech, seed=7)
    by_row = [p.run([TEXTS[r]], start=r)[0] for r in rows]
    assert by_row != _present(out)


def test_series_matches_the_cli_on_the_same_file(tmp_path, capsys):
    df = pd.DataFrame({"id": range(len(TEXTS)), "text": pd.Series(TEXTS, dtype="str")})
    df.to_parquet(tmp_path / "in.parquet")
    assert main(["privatize", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "out.parquet"),
                 "--epsilon", "8", "--seed", "11", "--null", "pass"]) == 0
    capsys.readouterr()
    cli = pd.read_parquet(tmp_path / "out.parquet")["text"]
    mine = df["text"].textdp.privatize(epsilon=8, seed=11)
    assert mine.dtype == df["text"].dtype
    assert _present(mine.tolist()) == _present(cli.tolist())
    assert mine.isna().tolist() == cli.isna().tolist()


def test_dataframe_privatises_columns_each_as_its_own_release(mech):
    df = pd.DataFrame({"a": TEXTS, "b": list(reversed(TEXTS)), "n": range(len(TEXTS))})
    out = df.textdp.privatize(columns=["a", "b"], mechanism=mech, seed=3)
    assert out["n"].equals(df["n"]) and out.index.equals(df.index)
    for c in "ab":
        assert out[c].tolist() == df[c].textdp.privatize(mech, seed=3).tolist()
    reports = out.attrs["textdp_report"]
    assert set(reports) == {"a", "b"} and reports["a"]["documents"]["count"] == 5
    assert any("correlated" in w for w in reports["a"]["warnings"])
    separate = df.textdp.privatize(columns=["a", "b"], mechanism=mech, seed={"a": 3, "b": 4})
    assert separate["a"].tolist() == out["a"].tolist() and separate["b"].tolist() != out["b"].tolist()
    assert not any("correlated" in w for w in separate.attrs["textdp_report"]["a"]["warnings"])
    json.dumps(reports)


def test_unseeded_runs_never_repeat(mech):
    s = pd.Series(["the quick brown fox jumps over the lazy dog " * 6] * 2)
    runs = [s.textdp.privatize(mech) for _ in range(3)]
    outputs = [t for r in runs for t in r]
    assert len(set(outputs)) == len(outputs)
    assert runs[0].attrs["textdp_report"]["randomness"]["seeded"] is False


def test_options_and_errors(mech):
    s = pd.Series(["Zzyzxq said hello", 3])
    with pytest.raises(TypeError, match="row 1"):
        s.textdp.privatize(mech, seed=1)
    out = pd.Series(["Zzyzxq said hello"]).textdp.privatize(epsilon=8, oov="keep", seed=1,
                                                            entities="none")  # Zzyzxq: an ORG
    assert out[0].startswith("Zzyzxq")
    with pytest.raises(KeyError):
        pd.DataFrame({"a": ["x"]}).textdp.privatize(columns=["b"], mechanism=mech)
    with pytest.raises(ValueError, match="epsilon"):
        pd.Series(["x"]).textdp.privatize("mvc")


def test_budget_allocation_as_in_privatize():
    texts = ["The food was great, but the waiter was rude.", "Cold soup.", "A quiet street."]
    kw = dict(allocation="position", epsilon_document=25.0, epsilon_floor=1.0, seed=4)
    out = pd.Series([texts[0], None, *texts[1:]], dtype=object).textdp.privatize(**kw)
    api = textdp.privatize(texts, **kw)
    assert out.dropna().tolist() == api.texts and out[1] is None
    assert out.attrs["textdp_report"]["allocation"] == api.report["allocation"]
    with pytest.raises(ValueError, match="epsilon_document"):
        pd.Series(texts).textdp.privatize(allocation="position", epsilon=3)


# --- front semantics (issue 23, item 6) -------------------------------------------------------
def test_columns_are_required_and_the_error_lists_the_text_columns(mech):
    df = pd.DataFrame({"ticket_id": ["ABSTAINING-42"], "body": ["The food was great."],
                       "n": [1]})
    with pytest.raises(ValueError, match="columns=") as err:
        df.textdp.privatize(mechanism=mech)
    assert "'ticket_id', 'body'" in str(err.value) and "\n" not in str(err.value)


def test_non_text_columns_are_refused_before_any_release(mech, tmp_path):
    df = pd.DataFrame({"body": ["The food was great.", "Cold soup."],
                       "meta": [{"a": 1}, {"b": 2}], "n": [1, 2]})
    with pytest.raises(TypeError, match="'n' holds int64, not text"):
        df.textdp.privatize(columns=["body", "n"], mechanism=mech)
    ledger = tmp_path / "ledger.jsonl"
    with pytest.raises(TypeError, match="column 'meta' holds dict") as err:
        df.textdp.privatize(columns=["body", "meta"], mechanism=mech, ledger=ledger)
    assert "\n" not in str(err.value)
    assert not ledger.exists()  # nothing was released, not even the first column


def test_epsilon_per_column_and_in_total():
    df = pd.DataFrame({"a": ["The food was great.", None], "b": ["Cold soup.", "A quiet street."]})
    out = df.textdp.privatize(columns=["a", "b"], epsilon=3.0, seed={"a": 1, "b": 2})
    budget = out.attrs["textdp_budget"]
    assert {c: v["epsilon"] for c, v in budget["per_column"].items()} == {"a": 3.0, "b": 3.0}
    (group,) = budget["total"]["groups"]
    assert group["epsilon"] == 6.0 and group["releases"] == ["a", "b"]
    # Keyed as the ledger keys releases: on the mechanism's stable metric id, not its prose.
    from textdp.mechanisms import create
    from textdp.vocab import load_default

    assert group["metric_id"] == create("mvc", load_default(), epsilon=3.0).input_metric
    json.dumps(out.attrs["textdp_budget"])
