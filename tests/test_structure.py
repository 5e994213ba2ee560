"""The package's shape, checked (issue 11): the core's layers import nothing from the layers above
them, and no function grows past what a reader can hold at once.

Both checks read the source with :mod:`ast` (imports inside functions count too), and each shows
that it can fail on a planted violation.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "textdp"
CORE = ("noise", "neighbors", "text", "vocab", "mechanisms", "privacy", "io")
ABOVE = ("textdp.cli", "textdp.evaluation", "textdp.experiments", "textdp.encoders",
         "textdp.integrations", "textdp.pandas", "textdp.sklearn", "textdp.audit")
MAX_FUNCTION_LINES = 80


def _imports(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
    return names


def _layer_violations(path: Path, source: str) -> list[str]:
    return [f"{path.relative_to(SRC)} imports {name}" for name in _imports(ast.parse(source))
            if name.startswith(ABOVE) or name in {"textdp.cli", "textdp.evaluation",
                                                  "textdp.encoders", "textdp.experiments"}]


def _long_functions(path: Path, source: str) -> list[str]:
    return [f"{path.relative_to(SRC)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]


def _core_files() -> list[Path]:
    return sorted(p for layer in CORE for p in (SRC / layer).rglob("*.py"))


def test_the_core_imports_nothing_from_the_layers_above():
    files = _core_files()
    assert len(files) > 30  # the walk found the package
    violations = [v for p in files for v in _layer_violations(p, p.read_text(encoding="utf-8"))]
    assert violations == []


@pytest.mark.parametrize("planted", [
    "from textdp.cli import main\n",
    "def f():\n    from textdp.evaluation.deniability import plausible_deniability\n",
    "import textdp.encoders\n",
    "from textdp import encoders\n",
])
def test_the_layer_check_catches_a_planted_import(planted):
    assert _layer_violations(SRC / "noise" / "laplace.py", planted)


def test_no_function_is_longer_than_80_lines():
    files = sorted(SRC.rglob("*.py"))
    assert [f for p in files for f in _long_functions(p, p.read_text(encoding="utf-8"))] == []


def test_the_length_check_catches_a_planted_long_function():
    def source(lines: int) -> str:  # a def line and lines − 1 body lines
        return "def f():\n" + "".join(f"    x{i} = {i}\n" for i in range(lines - 1))

    assert _long_functions(SRC / "noise" / "laplace.py", source(MAX_FUNCTION_LINES + 1))
    assert not _long_functions(SRC / "noise" / "laplace.py", source(MAX_FUNCTION_LINES))
