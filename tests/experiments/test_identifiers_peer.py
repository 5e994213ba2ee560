"""The peer-suite measurement (experiments/identifiers_peer.py) reads parametrised test tables
without importing them; the cases here are written for this project, in the shape of a peer's
recogniser tests (the real ones are kept outside the repository)."""

import pytest

TABLE = '''
import pytest

@pytest.mark.parametrize(
    "text, expected_len, expected_positions",
    [
        ("write to ana@example.org today", 1, ((9, 24),)),
        ("two: 10.1.2.3 and 10.1.2.4", 2, ((5, 13), (18, 26))),
        (f"whole 2001:db8::7", 1, ()),
        ("no identifier here", 0, ()),
        (some_function("x"), 1, ()),
    ],
)
def test_cases(text, expected_len, expected_positions):
    pass

@pytest.mark.parametrize("text, expected_len, expected_positions, leniency",
                         [("call 030 1234567", 1, ((5, 16),), 1),
                          ("call 030 1234567", 0, (), 3)])
def test_leniency(text, expected_len, expected_positions, leniency):
    pass
'''


@pytest.fixture
def cases_dir(tmp_path):
    from experiments import identifiers_peer

    for name in identifiers_peer.FILES.values():
        (tmp_path / name).write_text(TABLE, encoding="utf-8")
    return tmp_path


def test_rows_become_positives_and_negatives(cases_dir):
    from experiments import identifiers_peer

    positives, negatives, skipped = identifiers_peer.read_cases(cases_dir, "ip")
    assert [(c["value"]) for c in positives] == [
        "ana@example.org", "10.1.2.3", "10.1.2.4", "whole 2001:db8::7", "030 1234567"]
    assert [c["text"] for c in negatives] == ["no identifier here"]  # leniency 3 row left out
    assert skipped == 1  # the row that is not a literal


def test_run_scores_every_kind_and_checks_independence(cases_dir):
    from experiments import identifiers_peer

    out = identifiers_peer.run(cases_dir, "abc", 0)
    scores = out["configs"]["defaults"]["scores"]
    assert scores["email"]["positives"] == 5
    # Every case is masked (as some kind) but "whole 2001:db8::7", whose "whole" is a word.
    assert scores["email"]["fully_masked"] == 4 and scores["email"]["right_kind"] == 1
    assert scores["ip"]["right_kind"] == 2  # "whole 2001:db8::7": "whole" is no address
    assert scores["phone"]["right_kind"] == 1
    assert all(c["depend_on_other_documents"] == 0 for c in out["configs"].values())


def test_a_folder_without_the_files_is_refused(tmp_path):
    from experiments import identifiers_peer

    with pytest.raises(SystemExit) as exc:
        identifiers_peer.main(["--cases", str(tmp_path)])
    assert exc.value.code == 2


REGIONAL_TABLE = '''
import pytest

@pytest.mark.parametrize("text, expected_len, expected_positions",
                         [("Cep: 0532 123 45 67", 1, ((5, 19),)), ("9175550143", 0, ())])
def test_regional(text, expected_len, expected_positions):
    pass
'''


def test_one_region_phone_suites_are_scored_at_the_defaults_and_at_their_region(cases_dir):
    from experiments import identifiers_peer

    (cases_dir / identifiers_peer.REGIONAL["TR"]).write_text(REGIONAL_TABLE, encoding="utf-8")
    out = identifiers_peer.run(cases_dir, "abc", 0)["regional_phone"]
    assert set(out) == {"TR"}  # the PH file is absent: not scored
    # A US number (NYC's 917) is a phone number of the default regions, not of Turkey's plan.
    assert out["TR"]["defaults"]["negatives_flagged"] == 1
    assert out["TR"]["own_region"]["negatives_flagged"] == 0
    assert out["TR"]["own_region"]["fully_masked"] == out["TR"]["own_region"]["positives"] == 1
