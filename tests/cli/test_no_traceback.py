"""Never a traceback from the command line (issue 12, item 2).

Every subcommand (as ``textdp --help`` lists them) runs against a battery of bad arguments and
corrupt files: empty and truncated ``.npz`` / ``.npy``, JSON that is not a report, ε = 1e-300 and
1e-37 for every word mechanism, missing files, directories given as files, bad numbers. Each must
end with ONE line ``textdp: error: …`` on stderr, exit status 2, and no "Traceback" (nor the
catch-all "internal error", which would be a bug caught late). In process through
:func:`textdp.cli.main` (what the ``textdp`` script runs), and a few through the real script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import typer

from textdp.cli import app, main
from textdp.mechanisms import available

TINY = ("1e-300", "1e-37")


@pytest.fixture(scope="module")
def d(tmp_path_factory) -> Path:
    """Good and corrupt input files."""
    root = tmp_path_factory.mktemp("battery")
    (root / "in.txt").write_text("the food was great\nbad service\n", encoding="utf-8")
    (root / "in.jsonl").write_text('{"text": "the food"}\n', encoding="utf-8")
    (root / "bad.jsonl").write_text('{"text": "the food"\n', encoding="utf-8")
    (root / "in.csv").write_text("id,text\n1,hello\n", encoding="utf-8")
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (root / "empty.npz").write_bytes(b"")
    (root / "empty.npy").write_bytes(b"")
    np.save(root / "good.npy", np.ones((3, 4)))
    np.save(root / "strings.npy", np.array(["a", "b"]))
    np.save(root / "nan.npy", np.full((3, 4), np.nan))
    raw = (root / "good.npy").read_bytes()
    (root / "trunc.npy").write_bytes(raw[: len(raw) // 2])
    np.savez(root / "other.npz", a=np.ones(3))
    raw = (root / "other.npz").read_bytes()
    (root / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    (root / "notreport.json").write_text('{"a": 1}', encoding="utf-8")
    (root / "list.json").write_text("[1, 2]", encoding="utf-8")
    (root / "garbage.json").write_text("{not json", encoding="utf-8")
    (root / "schema-only.json").write_text(json.dumps({"schema": "textdp.report/1"}),
                                           encoding="utf-8")
    (root / "pairs.txt").write_text("good zzzqqqx\n", encoding="utf-8")
    (root / "adir").mkdir()
    (root / "adir.txt").mkdir()
    return root


def _battery() -> list[list[str]]:
    """``$D`` stands for the fixture directory."""
    P = ["privatize", "$D/in.txt", "-o", "$D/out.txt"]
    cases = [[*P, "--epsilon", eps, "-m", name] for name in available("word") for eps in TINY]
    cases += [
        # privatize
        [*P, "--epsilon", "nan"], [*P, "--epsilon", "-1"], [*P, "--epsilon", "abc"],
        [*P, "--epsilon", "inf"], [*P],
        ["privatize", "$D/missing.txt", "-o", "$D/out.txt", "--epsilon", "1"],
        ["privatize", "$D/adir.txt", "-o", "$D/out.txt", "--epsilon", "1"],
        ["privatize", "$D/in.txt", "-o", "$D/adir.txt", "--epsilon", "1"],
        ["privatize", "$D/in.txt", "-o", "$D/nodir/out.txt", "--epsilon", "1"],
        ["privatize", "$D/in.txt", "-o", "$D/in.txt", "--epsilon", "1"],
        [*P, "--epsilon", "1", "--report", "$D/adir"],
        [*P, "--epsilon", "1", "--unchanged-warning", "2"],
        [*P, "--epsilon", "1", "--param", "foo=1"], [*P, "--epsilon", "1", "--param", "x"],
        [*P, "--epsilon", "1", "-m", "nosuch"], [*P, "--epsilon", "1", "--oov", "nosuch"],
        [*P, "--epsilon", "1", "--batch-size", "0"], [*P, "--epsilon", "1", "--seed", "-3"],
        [*P, "--epsilon", "1", "-m", "diffractor", "--n-lists", "0"],
        [*P, "--epsilon", "1", "-m", "tem", "--beta", "2"],
        [*P, "--epsilon", "1", "-m", "custext", "--param", "k=0"],
        [*P, "--allocation", "uniform"], [*P, "--allocation", "bogus", "--epsilon-document", "3"],
        [*P, "--epsilon", "1", "--allocation", "uniform", "--epsilon-document", "3"],
        [*P, "--epsilon-document", "3"],
        [*P, "--allocation", "uniform", "--epsilon-document", "-1"],
        [*P, "--allocation", "uniform", "--epsilon-document", "3", "--epsilon-floor", "2",
         "--epsilon-ceiling", "1"],
        [*P, "--allocation", "frequency", "--epsilon-document", "3"],
        # privatize -m dp_prompt (issue 16): all refused before the language model is loaded
        [*P, "-m", "dp_prompt"], [*P, "-m", "dp_prompt", "--epsilon", "1", "--temperature", "1"],
        [*P, "-m", "dp_prompt", "--epsilon", "-1"], [*P, "-m", "dp_prompt", "--epsilon", "1e-300"],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--clip", "5", "1"],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--max-new-tokens", "0"],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--model", "$D/missing"],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--model", "$D/in.txt"],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--vocabulary", "glove-50d"],
        [*P, "--epsilon", "1", "-m", "mvc", "--temperature", "1"],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--device", "gpu"],  # issue 38
        [*P, "-m", "dp_prompt", "--temperature", "1", "--identifier-pattern", "x=("],
        [*P, "-m", "dp_prompt", "--temperature", "1", "--keep-stopwords"],
        [*P, "--epsilon", "1", "--resume"],
        ["privatize", "$D/in.txt", "-o", "-", "-m", "dp_prompt", "--temperature", "1", "--resume"],
        [*P, "--epsilon", "1", "-m", "mvc", "--device", "cpu"],
        ["privatize", "$D/missing.txt", "-o", "$D/out.txt", "-m", "dp_prompt", "--epsilon", "9"],
        ["privatize", "$D/bad.jsonl", "-o", "$D/out.jsonl", "--epsilon", "1"],
        ["privatize", "$D/in.jsonl", "-o", "$D/out.jsonl", "--epsilon", "1", "--text-field", "x"],
        ["privatize", "$D/in.csv", "-o", "$D/out.csv", "--epsilon", "1", "--text-field", "x"],
        ["privatize", "$D/latin1.txt", "-o", "$D/out.txt", "--epsilon", "1"],
        ["privatize", "$D/good.npy", "-o", "$D/out.npy", "--epsilon", "1"],
        ["privatize", "$D/empty.npz", "-o", "$D/out.txt", "--epsilon", "1"],
        # privatize --engine ray (these fail before a Ray runtime starts)
        [*P, "--epsilon", "1", "--engine", "spark"], [*P, "--epsilon", "1", "--workers", "2"],
        [*P, "--epsilon", "1", "--ray-address", "auto"],
        [*P, "--epsilon", "1", "--engine", "ray", "--workers", "0"],
        ["privatize", "$D/adir", "-o", "$D/outdir", "--epsilon", "1", "--engine", "ray"],
        ["privatize", "$D/missing.jsonl", "-o", "$D/o.jsonl", "--epsilon", "1", "--engine", "ray"],
        ["privatize", "$D/in.jsonl", "-o", "$D/o.txt", "--epsilon", "1", "--engine", "ray"],
        [*P, "--epsilon", "1", "--engine", "ray", "-m", "nosuch"],
        # embed
        ["embed", "$D/empty.npy", "-o", "$D/o.npy", "--epsilon", "1", "--delta", "1e-6",
         "--beta", "0.5"],
        ["embed", "$D/trunc.npy", "-o", "$D/o.npy", "--epsilon", "1", "-m", "laplace-vector"],
        ["embed", "$D/strings.npy", "-o", "$D/o.npy", "--epsilon", "1", "-m", "laplace-vector"],
        ["embed", "$D/nan.npy", "-o", "$D/o.npy", "--epsilon", "1", "-m", "laplace-vector"],
        ["embed", "$D/empty.npz", "-o", "$D/o.npy", "--epsilon", "1", "-m", "laplace-vector"],
        ["embed", "$D/adir", "-o", "$D/o.npy", "--epsilon", "1", "-m", "laplace-vector"],
        ["embed", "$D/missing.npy", "-o", "$D/o.npy", "--epsilon", "1", "-m", "laplace-vector"],
        ["embed", "$D/good.npy", "-o", "$D/o.npy", "--epsilon", "0", "-m", "laplace-vector"],
        ["embed", "$D/good.npy", "-o", "$D/o.npy", "--epsilon", "1", "--delta", "2",
         "--beta", "0.5"],
        ["embed", "$D/good.npy", "-o", "$D/o.npy", "--epsilon", "1", "-m", "nosuch"],
        # docembed, candidates, recoder
        *[["docembed", "$D/in.txt", "-o", "$D/o.npy", "--epsilon", "1", "--candidates", f"$D/{f}",
           "--encoder", "glove-mean"]
          for f in ("empty.npz", "trunc.npz", "other.npz", "adir", "missing.npz", "good.npy")],
        ["docembed", "$D/in.txt", "-o", "$D/o.npy", "--epsilon", "1e-300", "--candidates",
         "$D/empty.npz", "--encoder", "glove-mean"],
        *[["candidates", "build", "$D/in.txt", "-o", "$D/c.npz", "--recoder", f"$D/{f}",
           "--encoder", "glove-mean"] for f in ("empty.npz", "trunc.npz", "other.npz")],
        ["candidates", "build", "$D/missing.txt", "-o", "$D/c.npz", "--encoder", "glove-mean"],
        ["candidates", "build", "$D/in.txt", "-o", "$D/adir", "--encoder", "glove-mean"],
        ["recoder", "train", "$D/in.txt", "-o", "$D/r.npz", "--encoder", "glove-mean",
         "--hidden-layers", "abc"],
        ["recoder", "train", "$D/missing.txt", "-o", "$D/r.npz", "--encoder", "glove-mean"],
        ["recoder", "train", "$D/in.txt", "-o", "$D/r.npz", "--epochs", "0"],
        # report
        *[["report", f"$D/{f}", "-o", "$D/rep"]
          for f in ("notreport.json", "list.json", "garbage.json", "schema-only.json",
                    "empty.npz", "adir", "missing.json")],
        # calibrate, evaluate
        *[["calibrate", "-m", "mvc", "--grid", eps, "--words", "3", "--draws", "5"]
          for eps in TINY],
        ["calibrate", "-m", "nosuch"], ["calibrate", "--grid", "abc"],
        ["calibrate", "--grid-min", "10", "--grid-max", "1"],
        ["calibrate", "--words", "3", "--draws", "5", "--plot", "$D/adir"],
        *[["evaluate", "-m", "mvc", "-e", eps, "-o", "$D/ev"] for eps in TINY],
        ["evaluate", "-m", "nosuch", "-e", "1", "-o", "$D/ev"],
        ["evaluate", "-m", "mvc", "-e", "abc", "-o", "$D/ev"],
        ["evaluate", "-m", "mvc", "-e", "1", "-o", "$D/in.txt"],
        # audit
        *[["audit", "--epsilon", eps, "--draws", "10"] for eps in TINY],
        ["audit", "--epsilon", "1", "-m", "nosuch"], ["audit", "--draws", "10"],
        ["audit", "--epsilon", "1", "--pairs", "$D/missing.txt"],
        ["audit", "--epsilon", "1", "--pairs", "$D/latin1.txt"],
        ["audit", "--epsilon", "1", "--pairs", "$D/in.txt"],
        ["audit", "--epsilon", "1", "--pairs", "$D/pairs.txt", "--draws", "10"],
        ["audit", "--epsilon", "1", "--draws", "1"], ["audit", "--epsilon", "1", "--alpha", "2"],
        ["audit", "--epsilon", "1", "--alpha", "0"], ["audit", "--epsilon", "1", "--n-pairs", "0"],
        ["audit", "--epsilon", "1", "--out", "$D/in.txt"],
        ["audit", "--epsilon", "1", "--out", "$D/nodir/x"],
        ["audit", "--epsilon", "1", "--seed", "-1"], ["audit", "--epsilon", "1", "--param", "foo=1"],
        ["audit", "--epsilon", "1", "-m", "tem", "--n-lists", "2"],
        # assess
        ["assess", "$D/missing.txt"], ["assess", "$D/in.txt", "-m", "nosuch"],
        ["assess", "$D/in.txt", "--epsilons", "abc"], ["assess", "$D/in.txt", "--max-linkage", "x"],
        ["assess", "$D/in.txt", "-o", "$D/in.txt"], ["assess", "$D/in.txt", "--json", "$D/in.txt"],
        ["assess", "$D/in.txt", "--plot-privacy", "x"], ["assess", "$D/in.txt", "--oov", "x"],
        ["assess", "$D/in.txt", "--epsilons", "2", "--epsilons", "mvc=2"],
        ["assess", "$D/in.txt", "--epsilons", "nosuch=2"],
        ["assess", "$D/in.txt", "--allow-list", "$D/missing.txt"],
        ["assess", "$D/in.txt", "--identifier-pattern", "x"],
        ["assess", "$D/in.txt", "--max-author-linkage", "x"],
        ["assess", "$D/in.txt", "--forms", "nosuch"],
        ["assess", "$D/in.txt", "--forms", "documents"],
        ["assess", "$D/in.txt", "--candidates", "$D/missing.npz"],
        ["assess", "$D/in.txt", "--unit-field", "person"],
        # vocab
        ["vocab", "stats", "nosuch"], ["vocab", "stats", "glove-6b-50d", "--sample", "0"],
        ["vocab", "stats", "glove-6b-50d", "--sample", "5", "--plot", "$D/adir"],
        ["vocab", "list", "--bogus"],
        # ledger (issue 15): the subcommand and the options of every releasing command
        ["ledger", "show", "$D/missing.jsonl"], ["ledger", "show", "$D/adir"],
        ["ledger", "show"], ["ledger", "show", "$D/in.txt", "--bogus"],
        [*P, "--epsilon", "1", "--budget", "5"], [*P, "--epsilon", "1", "--ledger-policy", "x"],
        [*P, "--epsilon", "1", "--ledger", "$D/l.jsonl", "--ledger-policy", "refuse"],
        [*P, "--epsilon", "1", "--ledger", "$D/l.jsonl", "--budget", "-1"],
        [*P, "--epsilon", "1", "--ledger", "$D/l.jsonl", "--budget", "nan"],
        [*P, "--epsilon", "1", "--ledger", "$D/l.jsonl", "--budget", "abc"],
        [*P, "--epsilon", "1", "--ledger", "$D/adir"], [*P, "--epsilon", "1", "--ledger", "-"],
        [*P, "--epsilon", "1", "--ledger", "$D/nodir/l.jsonl"],
        [*P, "--epsilon", "1", "--ledger", "$D/in.txt"],
        ["privatize", "-", "-o", "$D/out.txt", "--format", "txt", "--epsilon", "1",
         "--ledger", "$D/l.jsonl"],
        ["embed", "$D/good.npy", "-o", "$D/o.npy", "-m", "laplace-vector", "--epsilon", "1",
         "--budget", "3"],
        ["embed", "$D/good.npy", "-o", "$D/o.npy", "-m", "laplace-vector", "--epsilon", "1",
         "--ledger", "$D/adir"],
        ["docembed", "$D/in.txt", "-o", "$D/o.npy", "--epsilon", "1", "--candidates",
         "$D/empty.npz", "--ledger-policy", "refuse"],
        # synthesize (refused before any model loads)
        ["synthesize", "$D/missing.jsonl", "--text-field", "text", "--epsilon", "1", "-n", "2",
         "-o", "$D/syn.jsonl"],
        ["synthesize", "$D/in.jsonl", "--text-field", "text", "--epsilon", "1", "-n", "0",
         "-o", "$D/syn.jsonl"],
        ["synthesize", "$D/in.jsonl", "--text-field", "text", "--epsilon", "1", "-n", "2",
         "-o", "$D/syn.jsonl"],
        ["synthesize", "$D/bad.jsonl", "--text-field", "text", "--epsilon", "1", "-n", "2",
         "-o", "$D/syn.jsonl"],
        ["synthesize", "$D/in.jsonl", "--text-field", "text", "--epsilon", "1", "-n", "2",
         "--method", "finetune", "-o", "$D/syn.jsonl"],
        ["synthesize", "$D/in.jsonl", "--text-field", "text", "--epsilon", "1", "-n", "2",
         "--method", "gan", "-o", "$D/syn.jsonl"],
        # audit-synthesize (refused before any model loads)
        ["audit-synthesize", "$D/missing.jsonl", "--epsilon", "1", "-n", "2"],
        ["audit-synthesize", "$D/in.jsonl", "--epsilon", "1", "-n", "0"],
        ["audit-synthesize", "$D/in.jsonl", "--epsilon", "1", "-n", "2"],
        ["audit-synthesize", "$D/in.jsonl", "--epsilon", "1", "-n", "2", "--holdout", "1"],
        ["audit-synthesize", "$D/bad.jsonl", "--epsilon", "1", "-n", "2"],
        ["audit-synthesize", "$D/in.jsonl", "--epsilon", "1", "-n", "2", "--out", "$D/in.txt"],
        # the rest
        ["mechanisms", "--bogus"], ["experiment", "nosuch"], ["experiment"], ["nosuch"],
    ]
    return cases


BATTERY = _battery()


def _subcommands() -> set[str]:
    group = typer.main.get_command(app)
    out = set()
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        out |= {f"{name} {s}" for s in subs} if subs else {name}
    return out


def _command(argv: list[str]) -> str:
    return (" ".join(argv[:2]) if argv[0] in ("candidates", "recoder", "vocab", "ledger")
            else argv[0])


def test_every_subcommand_is_in_the_battery():
    covered = {_command(a) for a in BATTERY}
    assert _subcommands() <= covered, _subcommands() - covered


def _check(argv: list[str], code: int, err: str) -> None:
    shown = " ".join(argv)
    assert "Traceback" not in err, f"{shown}:\n{err}"
    assert "internal error" not in err, f"{shown}: {err}"
    assert code == 2, f"{shown}: exit {code}, stderr {err!r}"
    errors = [line for line in err.splitlines() if line.startswith("textdp: error:")]
    assert len(errors) == 1, f"{shown}: expected one error line, got {err!r}"


@pytest.mark.parametrize("argv", BATTERY, ids=[" ".join(a)[:80] for a in BATTERY])
def test_one_line_error_and_exit_2(argv, d, capsys, monkeypatch):
    monkeypatch.chdir(d)
    monkeypatch.delenv("TEXTDP_TRACEBACK", raising=False)
    argv = [a.replace("$D", str(d)) for a in argv]
    code = main(argv)
    _check(argv, code, capsys.readouterr().err)


@pytest.mark.parametrize("argv", [
    ["privatize", "$D/in.txt", "-o", "$D/out.txt", "--epsilon", "1e-37", "-m", "mvc"],
    ["docembed", "$D/in.txt", "-o", "$D/o.npy", "--epsilon", "1", "--candidates",
     "$D/empty.npz", "--encoder", "glove-mean"],
    ["report", "$D/notreport.json", "-o", "$D/rep"],
])
def test_the_real_script(argv, d):
    argv = [a.replace("$D", str(d)) for a in argv]
    env = {k: v for k, v in os.environ.items() if k != "TEXTDP_TRACEBACK"}
    proc = subprocess.run([sys.executable, "-c", "import sys; from textdp.cli import main; "
                           "sys.exit(main())", *argv], capture_output=True, text=True, env=env,
                          timeout=300)
    _check(argv, proc.returncode, proc.stderr)


def test_internal_errors_are_one_line_too(capsys, monkeypatch):
    """A bug that escapes every handler still gives one line (exit 1), not a traceback."""
    from textdp.cli import mechanisms as cmd

    def boom(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.delenv("TEXTDP_TRACEBACK", raising=False)
    monkeypatch.setattr(cmd.registry, "available", boom)
    code = main(["mechanisms"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "internal error" in err and "RuntimeError: boom" in err
