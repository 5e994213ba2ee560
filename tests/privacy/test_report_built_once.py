"""A privacy report is built once and never edited (issue 23): no module of textdp writes into
a report after it is built (a scan of the source), and a Report refuses every change."""

from __future__ import annotations

import ast
import copy
import json
import pickle
from pathlib import Path

import pytest

import textdp
from textdp.privacy.report import REPORT_KEYS, Report

SRC = Path(textdp.__file__).parent
#: Methods that change a dict or a list in place.
MUTATORS = frozenset({"append", "extend", "insert", "update", "pop", "popitem", "setdefault",
                      "clear", "remove", "sort", "reverse", "__setitem__", "__delitem__"})
#: Calls whose result is a report: report builders, ``Privatizer.report``, the ledger's attach.
_BUILDS = ("report", "attach")


def _callee(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    return ""


def _root(node: ast.AST) -> tuple[ast.AST, int]:
    """``report["a"]["b"]`` → (``report``, 2); ``self.report_["x"]`` → (``self.report_``, 1)."""
    depth = 0
    while isinstance(node, ast.Subscript):
        node, depth = node.value, depth + 1
    return node, depth


def _reportish(name: str) -> bool:
    return "report" in name.lower()


class _Scan(ast.NodeVisitor):
    """Per function: names that hold a report (named so, or bound to a builder's result, or to
    a part of a report) and every in-place change through them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found: list[str] = []
        self.bound: set[str] = set()

    def _holds(self, node: ast.AST, writes: bool = False) -> bool:
        """Whether ``node`` is (a part of) a report; a name in the plural (``reports``) holds
        reports: filling it is no edit, changing one of its reports is."""
        root, depth = _root(node)
        if isinstance(root, ast.Name):
            name, bound = root.id, root.id in self.bound
        elif isinstance(root, ast.Attribute):
            name, bound = root.attr, False
        else:
            return False
        if not (bound or _reportish(name)):
            return False
        skip = 1 if name.lower().rstrip("_").endswith("reports") else 0
        return depth > skip if writes else depth >= skip

    def _hit(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.name}:{node.lineno}: {what}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer, self.bound = self.bound, set()
        self.generic_visit(node)
        self.bound = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        part = isinstance(value, ast.Subscript) and self._holds(value)
        built = any(k in _callee(value).lower() for k in _BUILDS)
        for target in node.targets:
            if isinstance(target, ast.Name) and (part or built):
                self.bound.add(target.id)
            if isinstance(target, ast.Subscript) and self._holds(target, writes=True):
                self._hit(node, f"assignment to {ast.unparse(target)}")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Subscript) and self._holds(node.target, writes=True):
            self._hit(node, f"augmented assignment to {ast.unparse(node.target)}")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and self._holds(target, writes=True):
                self._hit(node, f"del {ast.unparse(target)}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in MUTATORS and self._holds(f.value):
            self._hit(node, f"{ast.unparse(f)}(…)")
        self.generic_visit(node)


def writes_into_reports(root: Path) -> list[str]:
    """Every place under ``root`` that changes a report in place."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        scan = _Scan(str(path.relative_to(root)))
        scan.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found += scan.found
    return found


def test_no_module_writes_into_a_report():
    assert writes_into_reports(SRC) == []


def test_the_scan_finds_writes():
    """The scan's power: each way the old code edited reports is found."""
    code = '''
def a(runner, release):
    report = runner.report()
    report["engine"] = "pandas"
    report["warnings"].append("x")
    del report["created"]
    g = report["guarantee"]
    g["epsilon"] = 1.0
    result = release.attach(runner.report())
    result["io"] = {}
    result.pop("performance")
    reports = {}
    reports["c"] = report  # filling a collection of reports: no edit
    reports["c"]["warnings"].append("note")
    reports["c"].update(x=1)

def b(self):
    self.report_["x"] = 1
    performance = self.report_["performance"]
    performance.update(x=1)
'''
    tree = ast.parse(code)
    scan = _Scan("probe.py")
    scan.visit(tree)
    assert len(scan.found) == 10, scan.found


def test_a_report_refuses_every_change():
    report = textdp.privatize(["The food was great."], mechanism="mvc", epsilon=5, seed=1).report
    assert isinstance(report, Report) and tuple(report)[:len(REPORT_KEYS)] == REPORT_KEYS
    for change in (lambda: report.__setitem__("engine", "x"), lambda: report.pop("created"),
                   lambda: report.update(x=1), lambda: report.setdefault("x", 1),
                   lambda: report.__delitem__("kind"), lambda: report.clear(),
                   lambda: report["warnings"].append("x"),
                   lambda: report["guarantee"].__setitem__("epsilon", 0.0),
                   lambda: report["counts"]["tokens"]["by_policy"].update(privatized=0),
                   lambda: report["unprotected"][0].pop("count")):
        with pytest.raises(TypeError, match="immutable"):
            change()
    with pytest.raises(TypeError):
        report |= {"x": 1}
    # It reads as the JSON schema of textdp.report/1, and copies are still reports.
    data = json.loads(json.dumps(report))
    assert data == report.to_dict() and list(data) == list(report)
    assert pickle.loads(pickle.dumps(report)) == report == copy.deepcopy(report)
    mutable = report.to_dict()
    mutable["warnings"].append("mine")  # a copy is the caller's
    assert "mine" not in report["warnings"]


def test_a_wider_context_is_a_new_report():
    """The fronts' additions (engine, sections, notes, io) go through the builder and give a
    new report; the first one is unchanged."""
    report = textdp.privatize(["The food was great."], mechanism="mvc", epsilon=5, seed=1).report
    wider = report.with_context(engine="pandas", sections={"pandas": {"rows": 1}}, notes=["n"],
                          io={"input": "x"})
    assert "engine" not in report and "pandas" not in report
    assert wider["engine"] == "pandas" and wider["pandas"] == {"rows": 1}
    assert list(wider)[-3:] == ["engine", "pandas", "io"] and wider["warnings"][-1] == "n"
    assert wider["created"] == report["created"] and wider["guarantee"] == report["guarantee"]
