"""`textdp experiment NAME ...` runs the checkout's `python -m experiments.NAME` with the extra args,
in a child process: the installed package never imports `experiments`."""

import importlib
import os
import sys
from pathlib import Path

import pytest

from textdp.cli import experiment as cli_experiment
from textdp.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_unknown_experiment_is_a_one_line_error(capsys):
    assert main(["experiment", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown experiment 'nope'" in err[0]


def test_dispatch_passes_the_remaining_arguments(monkeypatch):
    seen = {}

    def call(argv, env):
        seen.update(argv=argv, path=env["PYTHONPATH"].split(os.pathsep))
        return 0

    monkeypatch.setattr(cli_experiment.subprocess, "call", call)
    assert main(["experiment", "privemb", "--quick", "--out", "x"]) == 0
    assert seen["argv"] == [sys.executable, "-m", "experiments.privemb", "--quick", "--out", "x"]
    assert seen["path"][:2] == [str(REPO), str(REPO / "src")]


def test_the_experiment_runs_in_a_child_process(capfd, monkeypatch):
    monkeypatch.delitem(sys.modules, "experiments.privemb", raising=False)
    # The experiment's own parser answers (and its status is the command's).
    assert main(["experiment", "privemb", "--no-such-option"]) == 2
    assert "python -m experiments.privemb: error: unrecognized arguments" in capfd.readouterr().err
    assert "experiments.privemb" not in sys.modules  # not imported here


def test_its_exit_status_is_the_command_s(monkeypatch):
    monkeypatch.setattr(cli_experiment.subprocess, "call", lambda argv, env: 3)
    assert main(["experiment", "privemb"]) == 3


def test_the_checkout_is_found_from_any_directory(monkeypatch, tmp_path):
    # The tests run from a source checkout: the package's tree leads to the repository's root.
    monkeypatch.chdir(tmp_path)
    assert cli_experiment.find_checkout() == REPO


def test_the_current_directory_is_the_fallback(monkeypatch, tmp_path):
    import textdp

    fake_pkg = tmp_path / "site-packages" / "textdp" / "__init__.py"
    monkeypatch.setattr(textdp, "__file__", str(fake_pkg))
    monkeypatch.chdir(tmp_path)
    assert cli_experiment.find_checkout() is None
    monkeypatch.chdir(REPO)
    assert cli_experiment.find_checkout() == REPO


@pytest.mark.parametrize("name", sorted(cli_experiment.EXPERIMENTS))
def test_every_listed_experiment_loads_with_its_stages(name, monkeypatch):
    monkeypatch.setattr(sys, "path", [str(REPO), *sys.path])
    module = importlib.import_module(f"experiments.{name}")
    assert Path(module.__file__).resolve() == REPO / "experiments" / f"{name}.py"
    for stage in ("main", "run", "figures", "page", "render"):
        assert callable(getattr(module, stage)), stage


def test_without_a_checkout_it_is_a_one_line_error(monkeypatch, capsys):
    # As from a wheel: no experiments/ beside the package, none in the current directory.
    monkeypatch.setattr(cli_experiment, "find_checkout", lambda: None)
    assert main(["experiment", "privemb"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "source checkout" in err[0]
    assert "python -m experiments.privemb" in err[0]
