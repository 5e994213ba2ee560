"""One runner under every front (issue 33): an AST scan of ``src/textdp`` and the guarded release
seen from the library fronts.

* :meth:`textdp.ledger.Ledger.release` is called from one function, :func:`textdp.runner.guard`,
  and that from :func:`textdp.runner.run_release` (and, until the Ray engines move onto the
  runner, from the command line's ``CommandLedger.check``, which they still use);
* no front calls a mechanism's ``release`` itself: the engines do (the local ones beside their
  mechanisms, ``release_vectors`` / ``release_documents``);
* with a ledger, every local release path writes one record.

Each scan is shown able to fail on a planted call.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "textdp"

#: Where run_release's step 3 may be entered from: the runner, and the command line's context
#: manager kept for the Ray file engines (engines/ray/text_files.py, vector_files.py,
#: cli/embed.py and cli/docembed.py's ``_on_ray``) until they call ``CommandLedger.run``.
GUARD_CALLERS = {"runner.py:run_release", "cli/_ledger.py:CommandLedger.check"}
#: The fronts: adapters that build a spec and a source and call the runner.
FRONTS = ("release.py", "sklearn/", "pandas/", "integrations/", "lm/paraphrase.py", "_fronts.py",
          "synthesis/api.py", "synthesis/fronts.py", "cli/")
#: Paths exempt from the scans (none since the Ray engines moved onto the runner, wt-ray).
RAY_PENDING: tuple[str, ...] = ()


def _functions(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    """(qualified name, node) of every function, methods as Class.method."""
    out: list[tuple[str, ast.AST]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _innermost(tree: ast.AST) -> dict[int, str]:
    """id(call node) → the innermost function holding it."""
    owner: dict[int, str] = {}
    for name, fn in sorted(_functions(tree), key=lambda f: len(f[0])):  # outer first
        for node in ast.walk(fn):
            owner[id(node)] = name
    return owner


def _ledger_release_calls(source: str) -> list[str]:
    """Functions calling ``X.release(mechanism=…, input_fingerprint=…)`` or ``X.release(**kw)``:
    the ledger's guarded release (a mechanism's ``release(x, rng)`` takes positional
    arguments)."""
    tree = ast.parse(source)
    owner = _innermost(tree)
    return [owner.get(id(n), "<module>") for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "release"
            and {"input_fingerprint", "mechanism", None} & {k.arg for k in n.keywords}]


def _calls_named(source: str, name: str) -> list[str]:
    tree = ast.parse(source)
    owner = _innermost(tree)
    return [owner.get(id(n), "<module>") for n in ast.walk(tree)
            if isinstance(n, ast.Call) and (
                isinstance(n.func, ast.Name) and n.func.id == name
                or isinstance(n.func, ast.Attribute) and n.func.attr == name)]


def _mechanism_release_calls(source: str) -> list[str]:
    """Calls of a mechanism's ``release``/``release_many`` with positional arguments."""
    tree = ast.parse(source)
    owner = _innermost(tree)
    return [owner.get(id(n), "<module>") for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("release", "release_many") and n.args]


@functools.cache
def _sources() -> dict[str, str]:
    return {p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(SRC.rglob("*.py"))}


def test_the_ledger_release_is_called_from_one_function():
    found = {f"{path}:{fn}" for path, text in _sources().items()
             if "release(" in text and not path.startswith(RAY_PENDING)
             for fn in _ledger_release_calls(text)}
    assert found == {"runner.py:guard"}


def test_the_guard_is_entered_from_the_runner_only():
    found = {f"{path}:{fn}" for path, text in _sources().items()
             if path == "runner.py" or "import guard" in text and "guard(" in text
             for fn in _calls_named(text, "guard")}
    assert found <= GUARD_CALLERS and "runner.py:run_release" in found


def test_no_front_calls_a_mechanism_release():
    offenders = [f"{path}:{fn}" for path, text in _sources().items()
                 if path.startswith(FRONTS) and not path.startswith(RAY_PENDING)
                 and "release" in text
                 for fn in _mechanism_release_calls(text)]
    assert offenders == []


def test_the_scans_catch_a_planted_call():
    planted = ("def front(book, mech, x, rng):\n"
               "    with book.release(mechanism=mech, input_fingerprint='0', records=1,\n"
               "                      seed=None):\n"
               "        return mech.release(x, rng)\n")
    assert _ledger_release_calls(planted) == ["front"]
    assert _mechanism_release_calls(planted) == ["front"]
    assert _ledger_release_calls("def g(book, kw):\n    return book.release(**kw)\n") == ["g"]
    assert _calls_named("def f():\n    with guard(b, m, s, fp, seed=None, space=None):\n"
                        "        pass\n", "guard") == ["f"]


# --- every local release path records one release ------------------------------------------------

TEXTS = ["The food at the bistro was great.", "Write to me about order 4521 before Friday!"]


def _records(path: Path) -> list[str]:
    from textdp.ledger import Ledger

    return [e["mechanism"]["name"] for e in Ledger(path).read().entries]


@pytest.fixture(scope="module")
def vocab():
    from textdp.vocab import Vocabulary

    rng = np.random.default_rng(0)
    words = ["food", "bistro", "great", "write", "order", "friday", "soup", "beer", "town"]
    return Vocabulary(words, rng.normal(size=(len(words), 4)).astype(np.float32), name="toy")


def test_every_local_front_records_its_release(tmp_path, vocab):
    import textdp
    from textdp.ledger import Ledger
    from textdp.mechanisms.document import Truncation, release_documents
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.mechanisms.embedding.release import release_vectors
    from textdp.sklearn import PrivEmbTransformer, TextPrivatizer

    path = tmp_path / "ledger.jsonl"
    X = np.random.default_rng(1).normal(size=(6, 3))
    textdp.privatize(TEXTS, "mvc", 2.0, vocabulary=vocab, entities="none", ledger=path)
    TextPrivatizer("mvc", 2.0, vocabulary=vocab, entities="none", ledger=path).fit_transform(TEXTS)
    PrivEmbTransformer("laplace-vector", 1.0, ledger=path).fit_transform(X)
    release_vectors(LaplaceVector(epsilon=1.0), X, ledger=Ledger(path))
    release_documents(Truncation(-np.ones(3), np.ones(3), epsilon=1.0), [X[:2], X[2:]],
                      ledger=Ledger(path))
    assert _records(path) == ["mvc", "mvc", "laplace-vector", "laplace-vector", "truncation"]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert sum('"type":"complete"' in line for line in lines) == 5


def test_a_refused_release_runs_nothing(tmp_path):
    from textdp.ledger import Ledger, LedgerRefused
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.runner import Call, Outcome, Vectors, run_release
    from textdp.spec import VectorSpec

    ran = []
    engine = Call(lambda spec, source, m: ran.append(1) or Outcome(None, {"warnings": []}))
    X = np.arange(4.0).reshape(2, 2)
    book = Ledger(tmp_path / "l.jsonl", policy="refuse", budget=1.5)
    spec = VectorSpec(LaplaceVector(epsilon=1.0))
    run_release(spec, Vectors(X), engine, ledger=book)
    with pytest.raises(LedgerRefused):
        run_release(spec, Vectors(X), engine, ledger=book)
    assert ran == [1]
