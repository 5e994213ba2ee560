"""Mechanism parameters on the command line: typed flags and --param NAME=VALUE."""

from __future__ import annotations

import pytest

from textdp._checks import EPSILON, Parameter
from textdp.cli import _common
from textdp.cli import _privatize_flags as cmd
from textdp.cli._common import CLIError
from textdp.cli.mechanisms import describe_parameter


@pytest.mark.parametrize(("item", "expected"), [
    ("n_lists=3", ("n_lists", 3)),
    ("beta=0.25", ("beta", 0.25)),
    ("beta=1e-3", ("beta", 1e-3)),
    ("method=tem", ("method", "tem")),
    ("cache=false", ("cache", False)),
    ("cache=True", ("cache", True)),
    ("name=", ("name", "")),
    ("text=a=b", ("text", "a=b")),
])
def test_parse_param(item, expected):
    assert cmd.parse_param(item) == expected


@pytest.mark.parametrize("item", ["novalue", "=3", "not a name=1", "1x=2"])
def test_parse_param_rejects_malformed(item):
    with pytest.raises(CLIError, match="NAME=VALUE"):
        cmd.parse_param(item)


class Dummy:
    PARAMETERS = (EPSILON, Parameter("method", str, "m", default="a"),
                  Parameter("n_lists", int, "n", default=1, low=1),
                  Parameter("beta", float, "b", default=None, nullable=True),
                  Parameter("extra", int, "e", default=0))

    def __init__(self, vocabulary=None, *, epsilon: float, method: str = "a",
                 n_lists: int = 1, beta: float | None = None, extra: int = 0) -> None: ...


@pytest.fixture
def dummy(monkeypatch):
    monkeypatch.setattr(cmd.registry, "get", lambda name: Dummy)


def test_only_given_flags_are_passed(dummy):
    flags = {"method": None, "n_lists": 4, "beta": None}
    assert cmd.mechanism_params("dummy", flags, []) == {"n_lists": 4}
    assert cmd.mechanism_params("dummy", {"method": None}, ["extra=2", "beta=0.5"]) == \
        {"extra": 2, "beta": 0.5}


def test_parameter_conflicts(dummy):
    with pytest.raises(CLIError, match="given twice"):
        cmd.mechanism_params("dummy", {"beta": 0.1}, ["beta=0.2"])
    with pytest.raises(CLIError, match="--epsilon"):
        cmd.mechanism_params("dummy", {}, ["epsilon=2"])
    with pytest.raises(CLIError, match=r"takes no parameter 'gamma'; its parameters: epsilon, "
                                       r"method, n_lists, beta, extra"):
        cmd.mechanism_params("dummy", {}, ["gamma=2"])


def test_flags_are_generated_from_the_declarations():
    """Every parameter declared with its own flag has one, typed and described by its declaration."""
    assert _common.mechanism_flags() == {"method", "n_lists", "beta", "neighbors"}
    for option, typ, flag in ((_common.MethodOption, str, "--method"),
                              (_common.NListsOption, int, "--n-lists"),
                              (_common.BetaOption, float, "--beta"),
                              (_common.NeighborsOption, str, "--neighbors")):
        info = option.__metadata__[0]
        assert option.__origin__ == typ | None and flag in (info.default, *info.param_decls)
    help_text = _common.BetaOption.__metadata__[0].help
    assert "tem:" in help_text and "diffractor:" in help_text and "(0, 1)" in help_text


def test_describe_parameter():
    assert describe_parameter(EPSILON) == "epsilon > 0, required"
    assert describe_parameter(Parameter("lam", float, "", default=0.2, low=0, high=1)) == \
        "lam [0, 1], default 0.2"
    assert describe_parameter(Parameter("models", object, "", default=None, nullable=True)) == \
        "models (Python only)"
