"""Executed documentation (issue 27, item 1): every code block of README.md, docs/ (but the
generated docs/results/) and examples/ runs, or is marked with the reason it cannot; figures
quoted in prose are recomputed (tests/docs/figures.py). How blocks are found and marked:
tests/docs/_harness.py.

``make test`` runs every block not marked ``long``; ``make docs-check`` (TEXTDP_DOCS_LONG=1)
runs the long ones too.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_textdp_docs_{name}",
                                                  Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


harness = _load("_harness")
figures = _load("figures")

LONG = os.environ.get("TEXTDP_DOCS_LONG") == "1"
PAGES = harness.pages()
#: Seconds one page may take (its blocks together): model loading is marked long.
PAGE_TIMEOUT = 1800 if LONG else 300


def _ids(path: Path) -> str:
    return str(path.relative_to(harness.ROOT))


def test_every_block_is_run_or_marked():
    problems = []
    for page in PAGES:
        for b in harness.blocks(page):
            if b.kind == "unknown":
                problems.append(f"{b.where}: a block with language {b.lang!r}: give it one of "
                                f"{sorted(harness.RUN)} (run) or {sorted(harness.SHOWN)} (shown)")
            if "skip" in b.marks and not b.marks["skip"].strip("() "):
                problems.append(f"{b.where}: 'docs: skip' needs the reason, e.g. "
                                "<!-- docs: skip (needs a Ray cluster) -->")
            if b.kind == "shown" and ("long" in b.marks or b.setup):
                problems.append(f"{b.where}: a {b.lang} block is not run; its marks do nothing")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_page_blocks_run(page, tmp_path):
    selected = [b for b in harness.blocks(page) if b.kind in ("python", "sh", "console")
                and "skip" not in b.marks and (LONG or "long" not in b.marks)]
    if not selected:
        pytest.skip("no block to run here" + ("" if LONG else " outside make docs-check"))
    harness.run_page(selected, tmp_path, PAGE_TIMEOUT)


FIGURES = [(page, line, arg, prose) for page in PAGES
           for line, arg, prose in harness.figure_marks(page)]


@pytest.mark.parametrize("page,line,arg,prose", FIGURES,
                         ids=[f"{_ids(p)}:{n}" for p, n, _, _ in FIGURES])
def test_quoted_figures_match_a_fresh_run(page, line, arg, prose):
    problems = figures.check(arg, prose)
    assert not problems, f"{_ids(page)}:{line}: " + "; ".join(problems)


# -- the harness can fail ---------------------------------------------------------------------

def _page(tmp_path: Path, text: str) -> list:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    found = harness.blocks(page) if page.is_relative_to(harness.ROOT) else None
    if found is None:  # a page outside the checkout: name it by its file name
        saved, harness.ROOT = harness.ROOT, tmp_path
        try:
            found = harness.blocks(page)
        finally:
            harness.ROOT = saved
    return found


def test_a_broken_snippet_fails_naming_file_line_and_output(tmp_path):
    found = _page(tmp_path, "Intro\n\n```python\nx = 1\n```\n\ntext\n\n```sh\n"
                            "echo hello\ntextdp privatize missing.txt -o out.txt --epsilon 8\n```\n")
    assert [b.kind for b in found] == ["python", "sh"] and found[1].line == 9
    with pytest.raises(AssertionError) as err:
        harness.run_page(found, tmp_path / "run", 300)
    message = str(err.value)
    assert message.startswith("page.md:9: this sh block failed")
    assert "textdp privatize missing.txt" in message and "missing.txt" in message.split("---")[-1]
    assert "[exit status 2]" in message


def test_marks_and_unlabelled_blocks(tmp_path):
    found = _page(tmp_path, "<!-- docs: skip (needs a cluster) -->\n```python\nray.init()\n```\n"
                            "<!-- docs: long -->\n<!-- docs: setup x = 2 -->\n```python\nassert x == 2\n```\n"
                            "```\nno language\n```\n")
    assert found[0].marks == {"skip": "(needs a cluster)"}
    assert "long" in found[1].marks and found[1].setup == ["x = 2"]
    assert found[2].kind == "unknown"
    harness.run_page([found[1]], tmp_path / "run", 300)  # the setup ran first


def test_a_changed_figure_fails():
    arg = "mvc-unchanged 10=62% 8=38%"
    prose = "MVC returns about 62% of words unchanged at ε = 10, 38% at ε = 8"
    fresh = figures.compute("mvc-unchanged", [10, 8])
    assert figures.check(arg, prose, fresh=fresh) == []
    bad = figures.check("mvc-unchanged 10=70% 8=38%", prose.replace("62%", "70%"), fresh=fresh)
    assert bad and "70%" in bad[0]
    unquoted = figures.check(arg, prose.replace("38%", "40%"), fresh=fresh)
    assert unquoted and "not quoted" in unquoted[0]
