"""Multi-sentence labelled documents and offline sentence splitting (synthetic fixtures only)."""

from __future__ import annotations

import pytest

from textdp.datasets.documents import (
    BIBLE_DIVISIONS,
    Document,
    documents_from_vader,
    load_documents,
    parse_bible,
)
from textdp.datasets.vader import Sentence
from textdp.sentences import _regex_split, split_sentences, splitter_name


def test_split_sentences_offline():
    assert split_sentences("The food was great. Service was slow! Would I go back? Yes.") == [
        "The food was great.", "Service was slow!", "Would I go back?", "Yes."]
    assert split_sentences("") == []
    assert split_sentences("First line\nSecond line. Third.") == ["First line", "Second line.",
                                                                   "Third."]
    assert splitter_name() in ("pysbd", "syntok", "regex")
    with pytest.raises(TypeError):
        split_sentences(None)


def test_regex_fallback():
    assert _regex_split('He left. "Why?" she asked. 3 cats came.') == [
        "He left.", '"Why?" she asked.', "3 cats came."]


def test_documents_from_vader_groups_orders_and_labels():
    sentences = [
        Sentence("2_2", -1.0, "b2"), Sentence("1_1", 1.0, "a1"), Sentence("2_1", -0.5, "b1"),
        Sentence("1_10", 0.5, "a10"), Sentence("1_2", -0.2, "a2"),
        Sentence("3_1", 1.0, "c1"), Sentence("3_2", -1.0, "c2"),   # mean 0: no sign, left out
    ]
    docs = documents_from_vader(sentences)
    assert [d.id for d in docs] == ["2", "1"]
    assert docs[0] == Document("2", "negative", ("b1", "b2"))
    assert docs[1].sentences == ("a1", "a2", "a10") and docs[1].label == "positive"
    assert docs[1].text == "a1 a2 a10" and len(docs[1]) == 3
    with pytest.raises(ValueError, match="document_sentence"):
        documents_from_vader([Sentence("17", 0.1, "x")])


def _fake_bible(chapters_per_book: int = 1) -> str:
    lines = []
    for b in range(66):
        book = f"{b % 3 + 1}Bk{chr(65 + b // 26)}{chr(97 + b % 26)}"
        for c in range(1, chapters_per_book + 1):
            lines.append(f"{book}{c}:1 In the beginning of book {b}. It was good.")
            lines.append(f"{book}{c}:2 The end of chapter {c}.")
    return "\n".join(lines) + "\n"


def test_parse_bible_labels_by_division_of_the_canon():
    docs = parse_bible(_fake_bible(2))
    assert len(docs) == 132
    assert docs[0].sentences == ("In the beginning of book 0.", "It was good.",
                                 "The end of chapter 1.")
    labels = [d.label for d in docs[::2]]  # one chapter per book
    expected = [name for name, count in BIBLE_DIVISIONS for _ in range(count)]
    assert labels == expected
    assert sum(count for _, count in BIBLE_DIVISIONS) == 66
    assert labels[0] == "law" and labels[4] == "law" and labels[5] == "history"
    assert labels[38] == "prophets" and labels[39] == "gospels_acts" and labels[65] == (
        "epistles_revelation")


def test_parse_bible_rejects_malformed_text():
    with pytest.raises(ValueError, match="66 books"):
        parse_bible("Ge1:1 In the beginning.\n")
    with pytest.raises(ValueError, match="not a verse"):
        parse_bible("In the beginning.\n")
    text = _fake_bible() + "1BkAa2:1 Back again.\n"
    with pytest.raises(ValueError, match="twice"):
        parse_bible(text)


def test_load_documents_from_a_bible_file(monkeypatch, tmp_path):
    path = tmp_path / "kjv.txt"
    path.write_text(_fake_bible(), encoding="utf-8")
    monkeypatch.setenv("TEXTDP_BIBLE_KJV", str(path))
    monkeypatch.setenv("TEXTDP_CACHE", str(tmp_path / "cache"))
    docs = load_documents("bible")
    assert len(docs) == 66
    assert load_documents("bible", min_sentences=4) == []
    assert len(load_documents("bible")) == 66  # from the chapter cache


def test_load_documents_bad_arguments():
    with pytest.raises(ValueError, match="unknown document set"):
        load_documents("imdb")
    with pytest.raises(ValueError):
        load_documents("nyt", min_sentences=0)
