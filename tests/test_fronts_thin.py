"""Every front is a thin adapter (issue 33: "every front ≤ 200 lines"; Deliver 2: a front builds a
spec and a source and calls the runner).

* every front module is at most :data:`MAX_FRONT_LINES` lines;
* every front module is covered by :data:`tests.test_runner.FRONTS`, the scan that no front calls
  a mechanism's ``release`` itself (reused here, not repeated);
* every front module that releases reaches the runner: it calls :func:`textdp.runner.run_release`,
  :func:`textdp.release.run_spec` or the spec builder, or hands its rows to the synthesis fronts
  (:func:`textdp.synthesis.fronts.synthesize_columns`, whose release is the runner's);
* the command line is a front too, its command modules (``cli/NAME.py``, every module of
  :mod:`textdp.cli` whose name does not start with ``_``) its adapters: each is at most
  :data:`MAX_FRONT_LINES` lines; what is not adaptation lives in the ``cli/_*`` helpers
  (``cli/_help/``: the long ``--help`` texts) or in the spine.

Each check is shown able to fail on a planted module.
"""

from __future__ import annotations

import ast

import pytest
from tests.test_runner import FRONTS, SRC, _mechanism_release_calls

MAX_FRONT_LINES = 200
#: Every front module (paths under src/textdp). A front added elsewhere belongs here.
FRONT_MODULES = ("pandas/__init__.py", "pandas/privatize.py", "pandas/frames.py",
                 "sklearn/__init__.py", "sklearn/text.py", "sklearn/vectors.py",
                 "integrations/datasets.py", "integrations/ray.py", "synthesis/fronts.py")
#: The package modules that only register or re-export the fronts beside them (no release).
DELEGATES = ("pandas/__init__.py", "sklearn/__init__.py")
#: What a front calls to release: the runner, run_spec (the runner for a word or prompt spec),
#: the spec builders, or the shared table fronts of synthesize (onto the runner).
RUNNER_ENTRIES = {"run_release", "run_spec", "release_spec", "VectorSpec", "synthesize_columns",
                  "synthesize_rows", "synthesize"}


def _too_long(path: str, source: str) -> list[str]:
    n = len(source.splitlines())
    return [f"{path}: {n} lines (> {MAX_FRONT_LINES})"] if n > MAX_FRONT_LINES else []


def _called(source: str) -> set[str]:
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)}


def _off_the_runner(path: str, source: str) -> list[str]:
    """A releasing front that reaches no runner entry, or calls a mechanism's release."""
    found = [f"{path}:{fn} calls a mechanism's release" for fn in _mechanism_release_calls(source)]
    if path not in DELEGATES and not _called(source) & RUNNER_ENTRIES:
        found.append(f"{path} calls neither the runner nor the spec builder")
    return found


def _read(path: str) -> str:
    return (SRC / path).read_text(encoding="utf-8")


def test_every_front_module_exists_and_is_at_most_200_lines():
    assert [p for p in FRONT_MODULES if not (SRC / p).is_file()] == []
    assert [m for p in FRONT_MODULES for m in _too_long(p, _read(p))] == []


def _cli_commands() -> list[str]:
    return sorted(f"cli/{p.name}" for p in (SRC / "cli").glob("*.py") if not p.name.startswith("_"))


def test_every_cli_command_module_is_at_most_200_lines():
    commands = _cli_commands()
    assert len(commands) > 10 and "cli/privatize.py" in commands  # the glob found the commands
    assert "cli/assess.py" in commands  # the walk found the command modules
    assert [m for p in commands for m in _too_long(p, _read(p))] == []


def test_every_front_module_is_in_the_runner_scan():
    assert [p for p in FRONT_MODULES if not p.startswith(FRONTS)] == []


def test_every_front_calls_the_runner_not_a_mechanism():
    assert [m for p in FRONT_MODULES for m in _off_the_runner(p, _read(p))] == []


@pytest.mark.parametrize("planted, problem", [
    ("x = 1\n" * (MAX_FRONT_LINES + 1), "201 lines"),
    ("def privatize(texts, mech, rng):\n    return mech.release(texts, rng)\n",
     "calls a mechanism's release"),
    ("def privatize(texts, spec):\n    return spec.privatizer().run(texts)\n",
     "neither the runner"),
])
def test_the_checks_catch_a_planted_front(planted, problem):
    found = _too_long("front.py", planted) + _off_the_runner("front.py", planted)
    assert any(problem in m for m in found)
    assert not _too_long("front.py", "x = 1\n" * MAX_FRONT_LINES)
    assert not _off_the_runner("front.py", "def f(spec, t):\n    return run_release(spec, t, e)\n")
