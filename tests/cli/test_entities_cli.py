"""`textdp privatize --entities/--allow-list`, and entities on by default in the other fronts."""

from __future__ import annotations

import json

import pytest

from textdp.cli import main
from textdp.text.entities import OFF_WARNING

TICKETS = ["Hello, this is Maria Garcia from Lisbon, order 88231.",
           "Ahmed Yilmaz moved to 12 Baker Street, Leeds. Acme Logistics lost the parcel."]
ARGS = ["--mechanism", "diffractor", "--epsilon", "1000000", "--seed", "0"]


def _run(capsys, tmp_path, *extra):
    src = tmp_path / "in.txt"
    src.write_text("".join(t + "\n" for t in TICKETS), encoding="utf-8")
    out, report = tmp_path / "out.txt", tmp_path / "report.json"
    code = main(["privatize", str(src), "-o", str(out), "--report", str(report), *ARGS,
                 *map(str, extra)])
    _, err = capsys.readouterr()
    rep = json.loads(report.read_text()) if code == 0 else None
    return code, (out.read_text(encoding="utf-8") if code == 0 else ""), rep, err


def test_cli_masks_entities_by_default(capsys, tmp_path):
    code, text, rep, err = _run(capsys, tmp_path)
    assert code == 0
    assert "Maria" not in text and "Ahmed" not in text and "Baker" not in text
    assert "[PERSON]" in text and "[ADDRESS]" in text
    assert rep["entities"]["by_kind"]["person"] == 2
    assert "entities masked: 2 person" in err  # the summary line


def test_cli_entities_none_warns_on_stderr(capsys, tmp_path):
    code, text, rep, err = _run(capsys, tmp_path, "--entities", "none")
    assert code == 0 and "Maria Garcia" in text
    assert OFF_WARNING in rep["warnings"]
    assert "names of people, places and organisations" in err


def test_cli_allow_list_and_kinds(capsys, tmp_path):
    allow = tmp_path / "allow.txt"
    allow.write_text("# public names\nAcme Logistics\n", encoding="utf-8")
    code, text, rep, err = _run(capsys, tmp_path, "--allow-list", allow, "--entities", "person,org")
    assert code == 0 and "Acme Logistics" in text and "Lisbon" in text and "Maria" not in text
    assert rep["entities"]["allowed_kept"] == 1 and rep["entities"]["kinds"] == ["person", "org"]
    assert "allow-list terms 1" in err


def test_cli_bad_kind_is_a_one_line_error(capsys, tmp_path):
    code, _, _, err = _run(capsys, tmp_path, "--entities", "people")
    assert code == 2 and "unknown entity kind 'people'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.txt").exists()


def test_pandas_front_gets_entities_by_default():
    pd = pytest.importorskip("pandas")
    import textdp.pandas  # noqa: F401 - registers the accessor

    out = pd.Series(TICKETS).textdp.privatize(mechanism="diffractor", epsilon=1e6, seed=0)
    assert "Maria" not in out[0] and "[PERSON]" in out[0]
    assert out.attrs["textdp_report"]["entities"]["by_kind"]["person"] == 2


def test_sklearn_front_gets_entities_by_default_and_can_turn_them_off():
    from textdp.sklearn import TextPrivatizer

    on = TextPrivatizer("diffractor", epsilon=1e6, seed=0).fit_transform(TICKETS)
    assert "Maria" not in on[0]
    off = TextPrivatizer("diffractor", epsilon=1e6, seed=0, entities="none")
    assert "Maria Garcia" in off.fit_transform(TICKETS)[0]
    assert OFF_WARNING in off.report_["warnings"]


def test_datasets_front_gets_entities_by_default():
    datasets = pytest.importorskip("datasets")
    from textdp.integrations.datasets import privatize

    ds = datasets.Dataset.from_dict({"text": TICKETS})
    out, report = privatize(ds, mechanism="diffractor", epsilon=1e6, seed=0)
    assert "Maria" not in out["text"][0] and report["entities"]["by_kind"]["person"] == 2
