"""`textdp experiment NAME ...` dispatches to textdp.experiments.NAME.main with the extra args."""

import sys
import types

from textdp.cli import main


def test_unknown_experiment_is_a_one_line_error(capsys):
    assert main(["experiment", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown experiment 'nope'" in err[0]


def test_dispatch_passes_the_remaining_arguments(monkeypatch):
    seen = {}
    fake = types.ModuleType("textdp.experiments.privemb")
    fake.main = lambda argv: seen.setdefault("argv", argv) and 0
    monkeypatch.setitem(sys.modules, "textdp.experiments.privemb", fake)
    assert main(["experiment", "privemb", "--quick", "--out", "x"]) == 0
    assert seen["argv"] == ["--quick", "--out", "x"]
