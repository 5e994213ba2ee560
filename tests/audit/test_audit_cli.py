"""``textdp audit``: the table on stdout, the files under --out, exit status 0 whatever the verdict."""

from __future__ import annotations

import json

from textdp.cli import main


def test_audit_writes_the_table_and_the_files(tmp_path, capsys):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("# words\ngood great\nbad, awful\n\n", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["audit", "-m", "mvc", "--epsilon", "10", "--pairs", str(pairs), "--draws", "300",
                 "--seed", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "| good | great |" in captured.out and "| bad | awful |" in captured.out
    assert "sampling cannot show" in captured.out
    result = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    assert result["draws"] == 300 and result["pairs_method"] == "given"
    assert [p["word_a"] for p in result["pairs"]] == ["good", "bad"]
    assert (out / "audit.md").read_text(encoding="utf-8").startswith("# Audit of mvc")
    assert (out / "audit.png").stat().st_size > 1000


def test_audit_random_pairs_with_mechanism_options(capsys):
    code = main(["audit", "-m", "tem", "--epsilon", "3", "--beta", "0.01", "--pairs", "random",
                 "--n-pairs", "2", "--draws", "200", "--seed", "1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("| word a |") and captured.out.count("\n| ") == 2  # 2 pairs
