"""textdp.io.paths: paths compared as files, and what kind of file an output is (issue 21)."""

from __future__ import annotations

import os
import socket

import pytest

from textdp.io import FileError
from textdp.io.paths import check_distinct, is_stream, output_kind


@pytest.fixture
def d(tmp_path, monkeypatch):
    (tmp_path / "in.txt").write_text("a\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("spelling", ["in.txt", "./in.txt", ".//in.txt", "in.txt/",
                                      "../{name}/in.txt", "{root}/in.txt", "hard.txt", "soft.txt",
                                      "alias/in.txt"])
def test_every_spelling_of_an_existing_file_is_that_file(d, spelling):
    os.link(d / "in.txt", d / "hard.txt")
    os.symlink("in.txt", d / "soft.txt")
    os.symlink(d, d / "alias")
    path = spelling.format(name=d.name, root=d)
    with pytest.raises(FileError, match="the output would overwrite the input"):
        check_distinct({"input": "in.txt"}, {"output": path})


def test_new_files_compare_by_resolved_path(d):
    os.symlink("new.txt", d / "dangling.txt")
    with pytest.raises(FileError, match="the report would overwrite the output"):
        check_distinct(None, {"output": "new.txt", "report": "./dangling.txt"})
    (d / "sub").mkdir()
    with pytest.raises(FileError, match="the report would overwrite the output"):
        check_distinct(None, {"output": "sub/../new.txt", "report": "new.txt"})
    check_distinct({"input": "in.txt"}, {"output": "IN.txt", "report": "new.txt"})  # distinct


def test_reads_alone_and_stdio(d):
    with pytest.raises(FileError, match="the deny-list is the input"):
        check_distinct({"input": "in.txt", "deny-list": "./in.txt"})
    check_distinct({"input": ["in.txt", "in.txt"]})  # the same role twice: not two roles
    check_distinct({"input": "-"}, {"output": "-", "report": None})
    with pytest.raises(FileError, match="standard output is given as both the output and the "
                                        "report"):
        check_distinct({"input": "in.txt"}, {"output": "-", "report": "-"})


def test_output_kinds(d):
    assert output_kind("new.txt") == output_kind("in.txt") == "file"
    assert output_kind("/dev/null") == output_kind("-") == "stream"
    os.mkfifo(d / "f")
    assert output_kind("f") == "stream" and is_stream("f") and not is_stream("in.txt")
    with pytest.raises(FileError, match="the ledger must be a regular file"):
        output_kind("f", "ledger", stream=False)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(d / "s"))
    s.close()
    with pytest.raises(FileError, match="is a socket"):
        output_kind("s")
    with pytest.raises(FileError, match="is a directory"):
        output_kind(d)
    with pytest.raises(FileError, match="directory 'nope' does not exist"):
        output_kind("nope/x.txt")
