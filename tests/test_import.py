"""``import textdp`` is light: no scipy.stats, no mechanism family, until one is used.

Each check runs in a fresh interpreter (this process has long imported everything).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import textdp
from textdp import mechanisms

FAMILIES = ("textdp.mechanisms.word.", "textdp.mechanisms.embedding", "textdp.mechanisms.document")
HEAVY = ("scipy", "pyarrow", "wordfreq", "typer", "tqdm", "sklearn", "torch", "matplotlib", "randomgen",
         "spacy", "thinc", "transformers", "ray", "pandas", "datasets")


def _modules_after(code: str) -> list[str]:
    """sys.modules after running ``code`` in a fresh interpreter (same sys.path as this one)."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def _families(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith(FAMILIES)]


def test_import_textdp_loads_no_family_and_no_scipy_stats():
    modules = _modules_after("import textdp")
    assert _families(modules) == []
    assert "scipy.stats" not in modules
    assert [m for m in modules if m.split(".")[0] in HEAVY] == []


#: What ``textdp --version`` must not pay for (issue 38, Deliver 5): the frameworks, the data
#: libraries, and the command line's own application (Typer, numpy, the subcommands).
NOT_FOR_VERSION = ("torch", "transformers", "spacy", "ray", "pandas", "sklearn", "datasets",
                   "numpy", "typer", "textdp.cli._app")


def test_version_imports_no_framework_and_no_application():
    code = ("import sys, io, contextlib\nfrom textdp.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    status = main(['--version'])\n"
            "assert status == 0 and out.getvalue().startswith('textdp '), out.getvalue()")
    modules = _modules_after(code)
    assert [m for m in modules if m in NOT_FOR_VERSION or m.split(".")[0] in NOT_FOR_VERSION] == []


def test_version_probe_can_fail():
    """Any other command loads the application (so the check above has power)."""
    modules = _modules_after("from textdp.cli import app")
    assert "typer" in modules and "textdp.cli._app" in modules


#: What a one-line ``textdp privatize`` with the defaults must not pay for (issue 38, Deliver 5):
#: the frameworks and data libraries, spaCy's own command line (weasel, requests, httpx), and
#: wordfreq (the gazetteers read their Zipf frequencies from their cache).
NOT_FOR_PRIVATIZE = ("torch", "transformers", "tensorflow", "jax", "pandas", "sklearn", "ray",
                     "datasets", "scipy", "pyarrow", "matplotlib", "weasel", "requests", "httpx",
                     "wordfreq")


def test_one_line_privatize_imports_no_framework(tmp_path):
    """With a name, a place, a phone number and a company in the line, so the entity model
    (which reads the company: the gazetteers mask the rest) and all three gazetteers load; the
    probe sees spaCy (so the check has power)."""
    from textdp.text.entities import EntityModelError, check_model
    from textdp.text.gazetteers import gazetteer_spans

    try:
        check_model()
    except EntityModelError as exc:
        pytest.skip(str(exc))
    gazetteer_spans("Zanele Kim, Durban, Acme Ltd", ("person", "location", "org"))  # cache built
    src = tmp_path / "in.txt"
    src.write_text("Hi, I am Zanele Kim from Durban (we flew with Lufthansa), call me on "
                   "+27 82 555 0199\n")
    code = ("from textdp.cli import main\n"
            f"assert main(['privatize', {str(src)!r}, '-o', {str(tmp_path / 'out.txt')!r}, "
            "'--epsilon', '8']) == 0")
    modules = _modules_after(code)
    assert "spacy" in modules and "textdp.text.names" in modules
    assert [m for m in modules if m.split(".")[0] in NOT_FOR_PRIVATIZE] == []


def test_available_lists_names_without_importing_families():
    modules = _modules_after("import textdp\nprint(textdp.mechanisms.available())")
    assert _families(modules) == []
    assert "scipy.stats" not in modules


def test_a_family_is_imported_when_named():
    modules = _modules_after("from textdp.mechanisms import get\nget('mvc')")
    assert "textdp.mechanisms.word.mvc" in modules
    assert [m for m in _families(modules) if m != "textdp.mechanisms.word.mvc"] == []


def test_check_can_fail():
    """The probe sees a family that is imported (so the checks above have power)."""
    assert "textdp.mechanisms.word.vickrey" in _families(
        _modules_after("import textdp.mechanisms.word.vickrey"))


def test_family_map_is_complete():
    """Every registered mechanism is in the lazy map, under the module that registers it."""
    for module in set(mechanisms._FAMILIES.values()):
        importlib.import_module(module)
    registered = {name: cls.__module__ for name, cls in mechanisms._REGISTRY.items()}
    assert registered == mechanisms._FAMILIES
    assert mechanisms.available("word") == sorted(registered)


@pytest.mark.parametrize("name", textdp.__all__)
def test_public_names_resolve(name):
    namespace: dict = {}
    exec(f"from textdp import {name}", namespace)
    assert namespace[name] is getattr(textdp, name)
    assert name in dir(textdp)


def test_subpackages_and_unknown_names():
    assert textdp.text.tokenize("a b")[0].text == "a"
    assert textdp.mechanisms is mechanisms
    assert isinstance(textdp.__version__, str)
    with pytest.raises(AttributeError, match="no_such_thing"):
        textdp.no_such_thing  # noqa: B018
