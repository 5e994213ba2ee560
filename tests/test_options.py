"""Options typed once (issue 33, deliverable 3): every front builds one frozen options object
per kind of release, checked once at construction; ε's range is checked in one function,
``textdp._checks.check_epsilon``; ε goes down from the command line to the mechanism once; no
dictionary of a function's locals carries options anywhere in the package.

The source checks read ``src/textdp`` with :mod:`ast`; each shows it catches a planted
violation. The walk checks spy on ``check_epsilon`` and on ``release_spec`` during real runs.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

import pytest

import textdp
from textdp import _checks

SRC = Path(__file__).resolve().parent.parent / "src" / "textdp"


@pytest.fixture(scope="module")
def sources() -> dict[str, ast.Module]:
    """Every module of the package, parsed once, by its path under ``src/textdp``."""
    return {p.relative_to(SRC).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(SRC.rglob("*.py"))}


def _tree(source: str | ast.Module) -> ast.Module:
    return ast.parse(source) if isinstance(source, str) else source

# --- no dictionary of locals -------------------------------------------------------------------


def _locals_calls(source: str | ast.Module) -> list[int]:
    """Lines that call ``locals()`` (or ``vars()`` without an argument, the same dictionary)."""
    return [n.lineno for n in ast.walk(_tree(source))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and (n.func.id == "locals" or n.func.id == "vars" and not n.args)]


def test_no_function_hands_on_its_locals(sources):
    assert len(sources) > 100
    found = [f"{where}:{line}" for where, text in sources.items()
             for line in _locals_calls(text)]
    assert found == []


@pytest.mark.parametrize("planted", ["def f(a, b):\n    g(dict(locals()))\n",
                                     "def f(a):\n    return vars()\n"])
def test_the_locals_check_catches_a_planted_call(planted):
    assert _locals_calls(planted)
    assert not _locals_calls("def f(o):\n    return vars(o)\n")


# --- ε's range: one function ------------------------------------------------------------------

_EPSILON_NAMES = {"epsilon", "eps", "_epsilon"}
#: Modules that compare an ε for another reason than checking an option, and why.
_NOT_OPTION_CHECKS = {
    "ledger_documents.py": "reads recorded ledger lines back (a file's content, not an option)",
    "ledger_lines.py": "reads recorded ledger lines back (a file's content, not an option)",
    "privacy/composition.py": "branches on the ε = ∞ a composition can produce",
    "privacy/documents.py": "branches on the ε = ∞ a composition can produce",
    "noise/geometric.py": "a sampler's nanosecond fast path, else check_epsilon itself",
}


def _is_epsilon(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in _EPSILON_NAMES
            or isinstance(node, ast.Attribute) and node.attr in _EPSILON_NAMES
            or isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and node.slice.value == "epsilon")


def _is_bound(node: ast.AST) -> bool:
    """0 (the range's end) or a named floor such as MIN_EPSILON."""
    return (isinstance(node, ast.Constant) and not isinstance(node.value, bool)
            and node.value == 0 or isinstance(node, ast.Name) and node.id.endswith("EPSILON"))


def _epsilon_checks(source: str | ast.Module) -> list[tuple[str, int]]:
    """(function, line) of every range check of an ε: compared with 0 or a floor, or handed to
    ``isfinite`` or a generic number check."""
    out = []
    for fn in ast.walk(_tree(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Compare):
                sides = [n.left, *n.comparators]
                hit = any(map(_is_epsilon, sides)) and any(map(_is_bound, sides))
            elif isinstance(n, ast.Call) and n.args and _is_epsilon(n.args[0]):
                f = n.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
                hit = name in ("isfinite", "check_real", "_check_real", "check_positive",
                               "_finite", "check_probability")
            else:
                hit = False
            if hit:
                out.append((fn.name, n.lineno))
    return out


def test_epsilons_range_is_checked_in_check_epsilon_alone(sources):
    found = [f"{where}:{line} {fn}" for where, text in sources.items()
             if where not in _NOT_OPTION_CHECKS for fn, line in _epsilon_checks(text)
             if (where, fn) != ("_checks.py", "check_epsilon")]
    assert found == []
    assert any(fn == "check_epsilon" for fn, _ in _epsilon_checks(sources["_checks.py"]))


@pytest.mark.parametrize("planted", [
    "def f(epsilon):\n    if epsilon <= 0:\n        raise ValueError\n",
    "def f(self):\n    assert math.isfinite(self.epsilon)\n",
    "def f(self):\n    _finite(self.epsilon, 'ε')\n",
    "def f(self):\n    if self._epsilon < MIN_EPSILON:\n        raise ValueError\n",
    "def f(a):\n    if not 0 < a['epsilon']:\n        raise ValueError\n",
])
def test_the_epsilon_check_scan_catches_a_planted_check(planted):
    assert _epsilon_checks(planted)
    assert not _epsilon_checks("def f(epsilon):\n    if epsilon > 10:\n        warn()\n")


# --- the walk: ε goes down once, checked once ----------------------------------------------------


@pytest.fixture
def counted(monkeypatch):
    """The ε values :func:`textdp._checks.check_epsilon` was called with on the way from the
    front to the built mechanism: the noise samplers below it (``textdp.noise``, public
    functions that take ε per draw) keep their own precondition, by the same function."""
    seen: list[object] = []
    real = _checks.check_epsilon

    def spy(epsilon, *args, **kwargs):
        if not sys._getframe(1).f_globals["__name__"].startswith("textdp.noise"):
            seen.append(epsilon)
        return real(epsilon, *args, **kwargs)

    monkeypatch.setattr(_checks, "check_epsilon", spy)
    return seen


def test_textdp_privatize_checks_epsilon_once(counted):
    result = textdp.privatize(["the food was great"], epsilon=7.0312, seed=1, entities="none")
    assert counted == [7.0312]
    assert result.report["mechanism"]["parameters"]["epsilon"] == 7.0312


def test_the_command_line_checks_epsilon_once_and_hands_it_down_as_given(
        counted, tmp_path, monkeypatch):
    from textdp.cli import _privatize_flags, main

    given = []
    real = _privatize_flags.release_spec

    def spy(mechanism, epsilon, **options):
        given.append((epsilon, options.get("allocation"), options.get("epsilon_document")))
        return real(mechanism, epsilon, **options)

    monkeypatch.setattr(_privatize_flags, "release_spec", spy)
    src = tmp_path / "in.txt"
    src.write_text("the food was great\n", encoding="utf-8")
    assert main(["privatize", str(src), "-o", str(tmp_path / "a.txt"), "--epsilon", "7.0313",
                 "--seed", "1", "--entities", "none"]) == 0
    assert counted == [7.0313] and given == [(7.0313, None, None)]
    # With an allocation, the rule and ε_doc go down as given: the command computes no ε of its
    # own (the spec resolves the allocation, once).
    assert main(["privatize", str(src), "-o", str(tmp_path / "b.txt"), "--allocation", "uniform",
                 "--epsilon-document", "31", "--seed", "1", "--entities", "none"]) == 0
    assert given[1] == (None, "uniform", 31.0)


def test_a_privatizer_built_from_a_spec_checks_nothing_again(monkeypatch):
    from textdp import pipeline
    from textdp.spec import release_spec

    spec = release_spec("mvc", 5.0, seed=2, entities="none")

    def refuse(*args, **kwargs):
        raise AssertionError("checked again below the spec")

    for name in ("check_seed", "check_probability"):
        monkeypatch.setattr(pipeline, name, refuse)
    monkeypatch.setattr(_checks, "check_epsilon", refuse)
    assert spec.privatizer().run(["the food"]) == spec.privatizer().run(["the food"])


# --- one options object per kind, frozen, checked at construction ----------------------------------


def test_each_kind_has_its_options_object_checked_at_construction():
    from textdp.spec import PromptSpec, ReleaseSpec, WordSpec, release_spec
    from textdp.synthesis import SynthesisSpec

    word = release_spec("mvc", 4.0, entities="none")
    assert type(word) is WordSpec and word.kind == "word"
    assert type(release_spec("dp_prompt", 50.0)) is PromptSpec
    with pytest.raises(dataclasses.FrozenInstanceError):
        word.epsilon = 5.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        WordSpec("mvc", 0.0)
    with pytest.raises(ValueError, match="epsilon is required"):
        WordSpec("mvc")
    with pytest.raises(ValueError, match="takes no allocation"):
        PromptSpec("dp_prompt", 50.0, allocation=word.allocation or object())
    release_spec("mvc", 1.0, entities="none")
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        release_spec("mvc", True, entities="none")  # not the mechanism cached for 1.0
    with pytest.raises(TypeError, match="WordSpec or a PromptSpec"):
        ReleaseSpec("mvc", 4.0)
    with pytest.raises(ValueError, match="ε must be a finite number > 0"):
        SynthesisSpec(epsilon=0.0, n=4)  # at construction, no longer when it is measured
