"""The package's shape, checked (issues 11 and 23): the core's layers import nothing from the layers
above them, no two modules of ``src/textdp`` import each other (directly or round a loop), and no
function or module grows past what a reader can hold at once (80 lines a function, issue 11;
600 lines a module, issue 33).

The checks read the source with :mod:`ast` (imports inside functions count too), and each shows
that it can fail on a planted violation.

The import graph has one node per module (a package's ``__init__`` is the package's node) and an
edge for every ``import`` / ``from … import`` anywhere in a module — at module level or inside a
function, relative or absolute — resolved to the module it names (``from textdp.vocab import
load`` → ``textdp.vocab``; ``from textdp import _random`` → the submodule ``textdp._random``).
Two kinds of import are read specially:

* imports under ``if TYPE_CHECKING:`` are left out: they never run, and a type named in an
  annotation is not something the code needs to work;
* the package facade ``textdp/__init__.py`` imports its public names lazily, on first attribute
  access (``_LAZY``: ``textdp.privatize`` → ``textdp.pipeline``); those lazy imports are edges of
  the ``textdp`` node. So a module of the package that imports a name from the facade (``from
  textdp import __version__``) instead of from the module that defines it closes a loop whenever
  the facade reaches it — the facade is for users; the package's own modules import from the
  defining module (the version from the leaf :mod:`textdp._version`). The other lazy tables
  (the mechanism registry's families, ``textdp.io``, ``textdp.evaluation``) are registries
  whose members register themselves: their string imports are not edges.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "textdp"
CORE = ("noise", "neighbors", "text", "vocab", "mechanisms", "privacy", "io")
ABOVE = ("textdp.cli", "textdp.evaluation", "textdp.experiments", "textdp.encoders",
         "textdp.integrations", "textdp.pandas", "textdp.sklearn", "textdp.audit")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


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


def _long_modules(files: list[Path], root: Path | None = None) -> list[str]:
    return [f"{p.relative_to(root or SRC).as_posix()} ({n} lines)" for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]


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


def test_no_module_is_longer_than_600_lines():
    """Issue 33: no module of src/textdp over 600 lines (a module a reader can hold)."""
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 100  # the walk found the package
    assert _long_modules(files) == []


def test_the_module_size_check_catches_a_planted_long_module(tmp_path):
    def module(lines: int) -> Path:
        path = tmp_path / f"m{lines}.py"
        path.write_text("".join(f"x{i} = {i}\n" for i in range(lines)), encoding="utf-8")
        return path

    assert _long_modules([module(MAX_MODULE_LINES + 1)], tmp_path) == ["m601.py (601 lines)"]
    assert _long_modules([module(MAX_MODULE_LINES)], tmp_path) == []


# --- no import cycles (issue 23) ---------------------------------------------------------------

def _modules(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """Module name → (file, whether it is a package's ``__init__``)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, wherever it stands, except under
    ``if TYPE_CHECKING:`` (its ``else`` branch does run)."""
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.orelse:
            yield from _import_nodes(child)
        return
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _import_nodes(child)


def _lazy_table(tree: ast.Module) -> list[str]:
    """The modules named by the facade's ``_LAZY = {name: "module", …}``."""
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets):
                return [v.value for v in node.value.values
                        if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return []


def _edges(name: str, package: bool, source: str, modules: dict) -> set[str]:
    """The modules of the package that module ``name`` imports."""
    def resolve(target: str) -> str | None:
        while target and target not in modules:  # textdp.vocab.load → textdp.vocab
            target = target.rpartition(".")[0]
        return target or None

    tree = ast.parse(source)
    here = name if package else name.rpartition(".")[0]
    targets = list(_lazy_table(tree)) if "." not in name else []  # the facade: textdp itself
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
            continue
        base = node.module or ""
        if node.level:  # relative: from . import x, from ..privacy import y
            parts = here.split(".")[:len(here.split(".")) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        for alias in node.names:  # a submodule if there is one, else the module itself
            full = f"{base}.{alias.name}"
            targets.append(full if full in modules else base)
    root = next(iter(modules)).split(".")[0]
    out = {resolve(t) for t in targets if t == root or t.startswith(root + ".")}
    return {t for t in out if t is not None and t != name}


def _graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    modules = {m: None for m in sources}
    return {m: _edges(m, package, text, modules) for m, (text, package) in sources.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively), each
    as one loop through it: ``[a, b, c, a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(_loop(sorted(component), graph))
    return components


def _loop(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest loop from the component's first module back to it (breadth first)."""
    start, members = component[0], set(component)
    previous: dict[str, str] = {}
    queue = [start]
    for node in queue:
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [start, *reversed(path[:-1]), start] if node != start else [start, start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return component  # pragma: no cover - a component always holds a loop


def _package_graph() -> dict[str, set[str]]:
    return _graph({m: (p.read_text(encoding="utf-8"), package)
                   for m, (p, package) in _modules().items()})


def test_no_import_cycles():
    graph = _package_graph()
    assert len(graph) > 100 and graph["textdp.cli.privatize"]  # the walk found the package
    cycles = _cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_facade_lazy_names_are_edges():
    graph = _package_graph()
    assert {"textdp.pipeline", "textdp.ledger"} <= graph["textdp"]


@pytest.mark.parametrize(("sources", "loop"), [
    ({"p": ("from p import b\n", True), "p.a": ("from p.b import x\n", False),
      "p.b": ("def f():\n    from p.a import y\n", False)},  # hidden in a function
     ["p.a", "p.b", "p.a"]),
    ({"p": ("from p.named import load\n", True), "p.named": ("from p import Vocabulary\n",
                                                             False)},
     ["p", "p.named", "p"]),  # a package and its submodule
    ({"p": ("", True), "p.x": ("", True), "p.x.a": ("from . import b\n", False),
      "p.x.b": ("from ..x.a import f\n", False)},  # relative imports
     ["p.x.a", "p.x.b", "p.x.a"]),
    ({"p": ('_LAZY = {"run": "p.pipeline"}\n', True),
      "p.pipeline": ("from p.report import r\n", False),
      "p.report": ("def f():\n    from p import __version__\n", False)},  # through the facade
     ["p", "p.pipeline", "p.report", "p"]),
])
def test_the_cycle_check_catches_a_planted_loop(sources, loop):
    assert _cycles(_graph(sources)) == [loop]


def test_type_checking_imports_and_one_way_imports_are_no_loop():
    sources = {"p": ("", True),
               "p.a": ("from p.b import x\n", False),
               "p.b": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from p.a import A\n", False),
               "p.c": ("import p.a\nimport p.b\n", False)}
    assert _cycles(_graph(sources)) == []


def test_the_package_imports_nothing_from_the_checkout():
    """The installed package cannot import the repository's experiments/ or benchmarks/."""
    found = [f"{m} imports {a.name if isinstance(n, ast.Import) else n.module}"
             for m, (p, _) in _modules().items()
             for n in _import_nodes(ast.parse(p.read_text(encoding="utf-8")))
             for a in (n.names if isinstance(n, ast.Import) else [n])
             if ((a.name if isinstance(n, ast.Import) else n.module) or "").split(".")[0]
             in ("experiments", "benchmarks", "tests")]
    assert found == []
