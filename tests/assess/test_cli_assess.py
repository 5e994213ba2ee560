"""`textdp assess`: one-line errors with exit status 2, and the reports it writes."""

from __future__ import annotations

import json

from textdp.cli import main


def _write(tmp_path, tickets):
    src = tmp_path / "tickets.jsonl"
    src.write_text("".join(json.dumps({"text": t.text, "issue": t.issue}) + "\n"
                           for t in tickets[:12]), encoding="utf-8")
    return src


def _one_error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("textdp: error: ")
    return err[0]


def test_missing_text_field_is_one_line_exit_2(capsys, tmp_path, tickets):
    src = _write(tmp_path, tickets)
    assert main(["assess", str(src), "--text-field", "body"]) == 2
    assert "no field 'body'" in _one_error_line(capsys)


def test_missing_label_field_is_one_line_exit_2(capsys, tmp_path, tickets):
    src = _write(tmp_path, tickets)
    assert main(["assess", str(src), "--label-field", "type"]) == 2
    assert "no field 'type'" in _one_error_line(capsys)


def test_bad_mechanism_is_one_line_exit_2(capsys, tmp_path, tickets):
    src = _write(tmp_path, tickets)
    assert main(["assess", str(src), "--mechanisms", "mvc,nope"]) == 2
    assert "unknown mechanism 'nope'" in _one_error_line(capsys)


def test_bad_target_is_one_line_exit_2(capsys, tmp_path, tickets):
    src = _write(tmp_path, tickets)
    assert main(["assess", str(src), "-m", "mvc", "--epsilons", "2", "--max-linkage", "many"]) == 2
    assert "max linkage" in _one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_writes_the_reports(capsys, tmp_path, tickets):
    src = _write(tmp_path, tickets)
    out = tmp_path / "out"
    assert main(["assess", str(src), "--label-field", "issue", "-m", "mvc", "--epsilons", "2",
                 "--seed", "1", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["frontier.png", "report.html",
                                                      "report.json", "report.md"]
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["settings"][0]["mechanism"] == "mvc" and data["sample"]["seed"] == 1
    assert data["settings"][0]["task_accuracy"] is not None
    assert "](frontier.png)" in (out / "report.md").read_text(encoding="utf-8")
    err = capsys.readouterr().err
    assert "assessed 1 settings on 12 documents" in err
    # stderr is not a terminal here: one progress line per setting (issue 37).
    assert "textdp: assess: mvc ε=2: 12 of 12 documents privatised in" in err


def test_integer_labels_and_no_seed_as_in_the_help(capsys, tmp_path, tickets):
    """Issue 37's main flow: --label-field without --seed (a drawn seed up to 2**63 once crashed
    scikit-learn's split), with integer labels as most labelled sets give them (once refused:
    "field 'issue' is a number, expected a string")."""
    classes = sorted({t.issue for t in tickets})
    src = tmp_path / "tickets.jsonl"
    src.write_text("".join(json.dumps({"text": t.text, "issue": classes.index(t.issue)}) + "\n"
                           for t in tickets[:12]), encoding="utf-8")
    out = tmp_path / "report.json"
    assert main(["assess", str(src), "--label-field", "issue", "-m", "mvc", "--epsilons", "2",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert not data["sample"]["seed_given"] and data["labels"]["classes"] >= 2
    assert data["settings"][0]["task_accuracy"] is not None


def test_persons_sensitive_field_and_release_options(capsys, tmp_path, tickets):
    """Issue 37 Deliver 2, 3, 5 from the command line: --unit-field (integer ids), a sensitive
    field, ε per mechanism, an allow-list and phone regions, the document axis of the plot."""
    src = tmp_path / "tickets.jsonl"
    src.write_text("".join(json.dumps({"text": t.text, "customer": i % 4, "region": i % 2 == 0})
                           + "\n" for i, t in enumerate(tickets[:12])), encoding="utf-8")
    allow = tmp_path / "allow.txt"
    allow.write_text("Acme\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["assess", str(src), "--unit-field", "customer", "--sensitive-field", "region",
                 "-m", "mvc,tem", "--epsilons", "mvc=2", "--epsilons", "tem=1,3",
                 "--allow-list", str(allow), "--phone-regions", "US,GB", "--seed", "1",
                 "--plot-privacy", "document", "-o", str(out)]) == 0
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = data["settings"]
    assert [(r["mechanism"], r["epsilon"]) for r in rows] == [("mvc", 2), ("tem", 1), ("tem", 3)]
    assert all(r["author_linkage"]["persons"] == 4 and r["attribute"] is not None for r in rows)
    assert rows[0]["document_guarantee"]["persons"]["median"]["documents"] == 3
    assert rows[0]["release"]["allow_list"] == ["Acme"]
    assert rows[0]["release"]["phone_regions"] == ["US", "GB"]
    assert rows[0]["privatize_options"].endswith(f"--allow-list {allow} --phone-regions US,GB")
    assert "max author linkage" not in capsys.readouterr().err


def test_bad_new_options_are_one_line_exit_2(capsys, tmp_path, tickets):
    src = _write(tmp_path, tickets)
    assert main(["assess", str(src), "--plot-privacy", "fear"]) == 2
    assert "--plot-privacy must be one of" in _one_error_line(capsys)
    assert main(["assess", str(src), "--epsilons", "2", "--epsilons", "mvc=2"]) == 2
    assert "not both" in _one_error_line(capsys)
    assert main(["assess", str(src), "--unit-field", "text"]) == 2
    assert "--unit-field must differ from --text-field" in _one_error_line(capsys)
    assert main(["assess", str(src), "--unit-field", "issue", "--max-author-linkage", "lots",
                 "-m", "mvc", "--epsilons", "2"]) == 2
    assert "max author linkage" in _one_error_line(capsys)
