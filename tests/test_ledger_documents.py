"""Per-document accounting in the ledger (issue 36, Deliver 3): keyed tags of the documents of each
release, budgets composed per document across every release and every input that held them, one
budget shared across metric groups, the storage bound, the key file, and old ledgers.

The goal's test (:func:`test_overlapping_inputs_refuse_exactly_when_a_document_passes_the_budget`)
models the ledger independently: documents by a normal form written here (not the library's), ε's
added as Fractions; the ledger must refuse a release exactly when some document of it would pass
the budget."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import unicodedata
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textdp
from textdp.ledger import Ledger, LedgerError, LedgerRefused, documents_summary
from textdp.privacy.composition import Spend, compose
from textdp.privacy.documents import normal_form, normal_forms, unit_guarantee, whole_document
from textdp.privacy.fingerprint import fingerprint_texts, fingerprint_vectors
from textdp.vocab import Vocabulary

DATA = Path(__file__).resolve().parent / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SRC = str(Path(__file__).resolve().parent.parent / "src")

CORPUS = ["the food was great", "bad service here", "the waiter was rude", "cold soup warm beer",
          "great beer", "rude rude waiter", "service was bad", "soup here",
          "the beer was warm", "food food food", "waiter here", "was it great"]


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    words = sorted({w for t in CORPUS for w in t.split()} | {f"x{i}" for i in range(20)})
    rng = np.random.default_rng(0)
    return Vocabulary(words, rng.standard_normal((len(words), 6)), name="toy")


def _model_form(text: str) -> str | None:
    """The test's own normal form of an ASCII text: its letter and digit runs, lower-cased."""
    runs = re.findall(r"[a-z]+|[0-9]+", text.lower())
    return " ".join(runs) or None


def _perturb(rng: random.Random, text: str) -> str:
    """The same document as the mechanisms see it: other whitespace, case and punctuation."""
    words = text.split()
    out = ""
    for w in words:
        w = w.upper() if rng.random() < 0.2 else w.title() if rng.random() < 0.2 else w
        out += w + rng.choice([" ", "  ", "\t", ", ", "! ", " - "])
    return rng.choice(["", " ", "  "]) + out + rng.choice(["", ".", "?!"])


def _input(rng: random.Random) -> list[str]:
    """An overlapping input: a subset or superset of the corpus, reordered, with duplicates,
    blank lines and perturbed copies."""
    k = rng.randint(1, 6)
    docs = rng.sample(CORPUS, k) + ([rng.choice(CORPUS)] if rng.random() < 0.3 else [])
    texts = [_perturb(rng, d) if rng.random() < 0.5 else d for d in docs]
    texts += [""] * rng.randint(0, 2) + [" \t "] * rng.randint(0, 1)  # blank lines: no document
    rng.shuffle(texts)
    return texts


MECHANISMS = ["mvc", "tem", "mahalanobis", "vickrey"]  # mvc and tem share a metric group
EPSILONS = [0.5, 1.0, 1.5, 0.1, 0.7, 2.25]           # 0.1 and 0.7 are not dyadic: exact sums


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_overlapping_inputs_refuse_exactly_when_a_document_passes_the_budget(tmp_path, vocab,
                                                                             seed):
    """Releases of overlapping inputs (subsets, supersets, reordered, blank lines added, the
    same documents re-spaced and re-cased, duplicates, different mechanisms and metrics): each is
    refused exactly when some document's composed ε (every release that held it, as often as it
    held it, all metric groups together) would pass the budget, computed here with Fractions."""
    rng = random.Random(seed)
    budget = 4.0
    ledger = Ledger(tmp_path / "l.jsonl", policy="refuse", budget=budget)
    spent: dict[str, Fraction] = {}
    outcomes = []
    for _ in range(30):
        texts = _input(rng)
        mechanism, epsilon = rng.choice(MECHANISMS), rng.choice(EPSILONS)
        forms = [f for f in map(_model_form, texts) if f is not None]
        cost = _spend(mechanism, epsilon, vocab)  # None: no finite guarantee (Vickrey at low ε)
        after = {f: None if cost is None or spent.get(f, 0) is None
                 else spent.get(f, Fraction(0)) + forms.count(f) * cost for f in set(forms)}
        expect_refused = any(t is None or t > Fraction(budget) for t in after.values())
        try:
            textdp.privatize(texts, mechanism, epsilon, vocabulary=vocab, ledger=ledger)
            refused = False
        except LedgerRefused:
            refused = True
        assert refused == expect_refused, (texts, mechanism, epsilon, after)
        if not refused:
            spent.update(after)
        outcomes.append(refused)
    assert any(outcomes) and not all(outcomes)  # both branches were taken
    summary = documents_summary(ledger.read(), ledger.key.id)
    worst = max(spent.values())
    assert Fraction(summary["worst"]["spent"]) >= worst  # rounded up, by at most one ulp
    assert Fraction(np.nextafter(summary["worst"]["spent"], 0)) < worst
    assert summary["documents"] == len(spent)


_MECHANISMS: dict[tuple[str, float], Fraction | None] = {}


def _spend(name: str, epsilon: float, vocab: Vocabulary) -> Fraction | None:
    """What the mechanism's own guarantee says one release spends per document (per unit of its
    metric), or None where it states no finite ε."""
    if (name, epsilon) not in _MECHANISMS:
        from textdp.pipeline import build_mechanism

        g = build_mechanism(name, epsilon, vocab, {}).guarantee
        finite = g.verified and g.epsilon < float("inf")
        _MECHANISMS[name, epsilon] = Fraction(g.epsilon) if finite else None
    return _MECHANISMS[name, epsilon]


def test_a_blank_line_or_another_order_is_not_a_new_budget(tmp_path, vocab):
    """The walk-arounds of the issue: one blank line appended, the records reordered, the
    whitespace changed; each is the same documents, refused at the same budget."""
    path = tmp_path / "l.jsonl"
    texts = ["the food was great", "bad service here"]
    textdp.privatize(texts, "mvc", 3.0, vocabulary=vocab, ledger=Ledger(path))
    for variant in (texts + [""], texts[::-1], ["the  food was GREAT!", "bad service here\t"],
                    ["bad service here"]):
        with pytest.raises(LedgerRefused, match="budget ε = 5"):
            textdp.privatize(variant, "mvc", 3.0, vocabulary=vocab,
                             ledger=Ledger(path, policy="refuse", budget=5))
    textdp.privatize(["waiter here"], "mvc", 3.0, vocabulary=vocab,  # a new document: its own
                     ledger=Ledger(path, policy="refuse", budget=5))


def test_mvc_and_mahalanobis_share_one_budget(tmp_path, vocab):
    """Two metric families cannot each spend the whole budget on the same documents."""
    path = tmp_path / "l.jsonl"
    textdp.privatize(CORPUS[:3], "mvc", 8.0, vocabulary=vocab,
                     ledger=Ledger(path, policy="refuse", budget=15))
    with pytest.raises(LedgerRefused, match="across 2 metrics"):
        textdp.privatize(CORPUS[1:2], "mahalanobis", 8.0, vocabulary=vocab,
                         ledger=Ledger(path, policy="refuse", budget=15))
    textdp.privatize(CORPUS[1:2], "mahalanobis", 7.0, vocabulary=vocab,  # 8 + 7 = 15: at it
                     ledger=Ledger(path, policy="refuse", budget=15))


def test_cli_blank_line_and_other_metric_are_refused(tmp_path):
    """The trial's two walk-arounds through the command line: exit 2, no output written."""
    data = tmp_path / "in.txt"
    data.write_text("the food was great\nbad service here\n", encoding="utf-8")
    more = tmp_path / "more.txt"
    more.write_text("the food was great\nbad service here\n\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": SRC}
    ledger = tmp_path / "l.jsonl"

    def run(src: Path, out: str, mechanism: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "textdp.cli", "privatize", str(src), "-o",
                               str(tmp_path / out), "-m", mechanism, "--epsilon", "8",
                               "--ledger", str(ledger), "--ledger-policy", "refuse",
                               "--budget", "15"], env=env, capture_output=True, text=True)

    assert run(data, "a.txt", "mvc").returncode == 0
    for src, out, mechanism in ((more, "b.txt", "mvc"), (data, "c.txt", "mahalanobis")):
        done = run(src, out, mechanism)
        assert done.returncode == 2 and "refused" in done.stderr, done.stderr
        assert not (tmp_path / out).exists()
    shown = subprocess.run([sys.executable, "-m", "textdp.cli", "ledger", "show", str(ledger)],
                           env=env, capture_output=True, text=True)
    assert "documents: 2 tracked by keyed tag" in shown.stdout
    assert re.search(r"worst document: \d document\(s\) released in [0-9a-f]{16}: budget spent "
                     r"metric DP per word: ε = 8 ", shown.stdout), shown.stdout
    assert "whole document (≤ 4 unit(s)): ε = " in shown.stdout  # the 4-word document


# --- the normal form and the tags ---------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_the_ascii_fast_path_is_the_mechanisms_split(text):
    """ASCII texts skip the general split; both give the same form (the general path is taken
    for a text with one non-ASCII character appended as a separate token)."""
    fast = normal_form(text)
    general = normal_forms([text + " \u00a0"])[0]  # a non-ASCII space: the general path
    assert fast == general


def test_the_same_document_in_nfd_with_joiners_or_fullwidth_gets_one_tag(tmp_path):
    nfc = "María García said résumé"
    variants = [unicodedata.normalize("NFD", nfc), nfc.upper(), "Mari\u0301a Garci\u0301a  "
                "said  re\u0301sume\u0301!", "Ｍａｒíａ García said résumé",
                "Ma\u200dría García said résumé"]
    forms = {normal_form(v) for v in [nfc, *variants]}
    assert len(forms) == 1 and None not in forms


def test_tags_are_keyed_and_compact(tmp_path):
    texts = [f"document number {i} says hello" for i in range(1000)] + ["", "  "]
    fp, n = fingerprint_texts(texts)
    a, b = Ledger(tmp_path / "a.jsonl"), Ledger(tmp_path / "b.jsonl")
    tags_a = fp.documents.tagged(a.key.load())
    tags_b = fp.documents.tagged(b.key.load())
    assert len(tags_a) == 12 * 1000  # blank lines are no documents
    assert tags_a != tags_b          # another ledger, another key: nothing to match across them
    assert fp.documents.tagged(a.key.load()) == tags_a


def _line_length(path: Path, texts: list[str]) -> int:
    fp, n = fingerprint_texts(texts)
    ledger = Ledger(path)
    from textdp.pipeline import build_mechanism

    with ledger.release(mechanism=build_mechanism("mvc", 1.0, None, {}), input_fingerprint=fp,
                        records=n, seed=None):
        pass
    return len(path.read_bytes().split(b"\n")[-3])  # the pending line


def test_storage_is_at_most_16_bytes_a_document_a_release(tmp_path):
    """The pending line grows by exactly 16 bytes (base64 of an 8-byte tag and a 4-byte size)
    per document; the rest of the line does not depend on the number of documents (bar digits)."""
    n = 2000
    small = _line_length(tmp_path / "s.jsonl", [f"doc {i} text" for i in range(n)])
    large = _line_length(tmp_path / "l.jsonl", [f"doc {i} text" for i in range(2 * n)])
    assert large - small <= 16 * n + 8  # + the digits of the record counts
    entry = json.loads((tmp_path / "l.jsonl").read_bytes().split(b"\n")[0])
    assert len(entry["documents"]["records"]) == 16 * 2 * n
    assert len(base64.b64decode(entry["documents"]["records"])) == 12 * 2 * n


# --- the key file -------------------------------------------------------------------------------

def test_the_key_is_private_and_made_once(tmp_path):
    old = os.umask(0)  # the most permissive umask: the key must still be 0600
    try:
        path = tmp_path / "l.jsonl"
        textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))
    finally:
        os.umask(old)
    key = Path(str(path) + ".key")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    before = key.read_bytes()
    textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))
    assert key.read_bytes() == before and len(before.split()[1]) == 64
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_a_key_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "l.jsonl"
    textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))
    key = Path(str(path) + ".key")
    key.chmod(0o644)
    with pytest.raises(LedgerError, match="chmod 600"):
        textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))


def test_a_lost_key_fails_closed(tmp_path):
    path = tmp_path / "l.jsonl"
    textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))
    Path(str(path) + ".key").unlink()
    with pytest.raises(LedgerRefused, match="another key"):
        textdp.privatize(["someone else"], "mvc", 1.0,
                         ledger=Ledger(path, policy="refuse", budget=10))
    result = textdp.privatize(["someone else"], "mvc", 1.0, ledger=Ledger(path))  # warn
    assert any("another key" in w for w in result.report["warnings"])


# --- old ledgers --------------------------------------------------------------------------------

@pytest.mark.parametrize("old", [DATA / "ledger_v1.jsonl", FIXTURES / "ledger_v2.jsonl"])
def test_old_ledgers_load_and_take_new_per_document_releases(tmp_path, old):
    path = tmp_path / "l.jsonl"
    shutil.copy(old, path)
    before = Ledger(path).read()
    assert not before.invalid and before.entries
    textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))
    after = Ledger(path).read()
    assert not after.invalid and len(after.entries) == len(before.entries) + 1
    assert [e["id"] for e in after.entries[:-1]] == [e["id"] for e in before.entries]
    summary = documents_summary(after, Ledger(path).key.id)
    assert summary["documents"] == 1 and summary["worst"]["spent"] == 1.0


def test_an_untagged_release_of_the_same_input_counts_for_its_documents(tmp_path, vocab):
    """A release recorded per input only (a front that gave a bare hex fingerprint, or a line
    written before tags) counts against the documents of a tagged release of the same input."""
    path = tmp_path / "l.jsonl"
    texts = ["the food was great", "bad service here"]
    fp, n = fingerprint_texts(texts)
    from textdp.pipeline import build_mechanism

    mvc = build_mechanism("mvc", 3.0, vocab, {})
    with Ledger(path).release(mechanism=mvc, input_fingerprint=str(fp), records=n, seed=None):
        pass
    assert "documents" not in json.loads(path.read_bytes().split(b"\n")[0])
    with pytest.raises(LedgerRefused):  # 3 (per input) + 3 > 5
        textdp.privatize(texts, "mvc", 3.0, vocabulary=vocab,
                         ledger=Ledger(path, policy="refuse", budget=5))
    textdp.privatize(texts, "mvc", 2.0, vocabulary=vocab,
                     ledger=Ledger(path, policy="refuse", budget=5))
    with pytest.raises(LedgerRefused):  # now tagged: a subset of the same documents is held
        textdp.privatize(texts[:1], "mvc", 0.5, vocabulary=vocab,
                         ledger=Ledger(path, policy="refuse", budget=5))


# --- the whole-document guarantee ---------------------------------------------------------------

def test_the_word_unit_bounds_every_pair_of_words(vocab):
    """ε per word replaced by any other ≥ the largest exact loss over all pairs (diameter bound),
    and at most twice it (the triangle-inequality bound)."""
    from textdp.pipeline import build_mechanism

    for name, epsilon in (("mvc", 2.0), ("mahalanobis", 2.0), ("tem", 2.0), ("gumbel", 12.0)):
        mech = build_mechanism(name, epsilon, vocab, {})
        ids = np.arange(len(vocab.words))
        worst = float(mech.privacy_loss(ids[:, None], ids[None, :]).max())
        unit = unit_guarantee(mech)
        assert worst <= unit.epsilon <= 2 * worst, name
        eps, delta, _ = whole_document(unit, 7)
        assert eps >= 7 * unit.epsilon and delta == 0


def test_no_finite_whole_document_bound_is_stated_as_such(vocab):
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.pipeline import build_mechanism

    for mech in (build_mechanism("custext", 1.0, vocab, {"k": 3}), LaplaceVector(epsilon=1.0)):
        unit = unit_guarantee(mech, "vectors")
        assert unit.epsilon == float("inf") and unit.why
        assert whole_document(unit, 3)[0] == float("inf")


def test_vectors_are_documents_of_one_unit(tmp_path):
    from textdp.mechanisms.embedding import LaplaceVector
    from textdp.mechanisms.embedding.release import release_vectors

    X = np.arange(12, dtype=np.float64).reshape(4, 3)
    path = tmp_path / "l.jsonl"
    release_vectors(LaplaceVector(epsilon=2.0), X, ledger=Ledger(path))
    assert len(fingerprint_vectors(X)[0].documents) == 4
    with pytest.raises(LedgerRefused, match="budget ε = 3"):  # two of the same rows, reordered
        release_vectors(LaplaceVector(epsilon=2.0), X[[3, 1]],
                        ledger=Ledger(path, policy="refuse", budget=3))


def test_composition_total_is_the_exact_sum_across_groups():
    spends = [Spend("a", "metric-dp", 0.1, metric_id="word-euclidean:v"),
              Spend("b", "metric-dp", 0.2, metric_id="word-mahalanobis:v")]
    c = compose(spends)
    exact = Fraction(0.1) + Fraction(0.2)
    assert Fraction(c.total) >= exact and Fraction(np.nextafter(c.total, 0)) < exact
    assert exact > Fraction(0.3) and c.over_budget(0.3)   # 0.1 + 0.2 passes a budget of 0.3
    assert not c.over_budget(c.total)


def test_a_damaged_documents_field_is_an_invalid_line(tmp_path):
    """A line whose tags are not base64 (or not count × 12 bytes) fails closed like any invalid
    line: listed, not counted, and a refuse ledger refuses."""
    path = tmp_path / "l.jsonl"
    textdp.privatize(["hello there"], "mvc", 1.0, ledger=Ledger(path))
    lines = path.read_bytes().split(b"\n")
    entry = json.loads(lines[0])
    entry["documents"]["records"] = "!" * len(entry["documents"]["records"])
    from textdp.ledger import _digest, _encode

    entry["id"] = _digest(entry)
    path.write_bytes(_encode(entry) + b"\n")
    contents = Ledger(path).read()
    assert contents.invalid and "base64" in contents.invalid[0]["why"]
    with pytest.raises(LedgerRefused, match="cannot be validated"):
        textdp.privatize(["hello there"], "mvc", 1.0,
                         ledger=Ledger(path, policy="refuse", budget=10))


def test_processes_creating_the_key_at_once_share_one(tmp_path):
    """The key is linked into place: of several creators at once, one key wins for all."""
    import threading

    from textdp.ledger_documents import LedgerKey

    keys: list[bytes] = []
    barrier = threading.Barrier(8)

    def make() -> None:
        barrier.wait()
        keys.append(LedgerKey(tmp_path / "l.jsonl").load())

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(keys) == 8 and len(set(keys)) == 1


def test_the_report_and_show_json_state_the_documents(tmp_path, vocab):
    path = tmp_path / "l.jsonl"
    textdp.privatize(CORPUS[:2], "mvc", 1.0, vocabulary=vocab, ledger=Ledger(path))
    result = textdp.privatize(CORPUS[1:3] + [""], "mvc", 2.0, vocabulary=vocab,
                              ledger=Ledger(path))
    section = result.report["ledger"]["documents"]
    assert section["count"] == 2 and section["released_before"] == 1
    assert section["worst"]["spent"] == 3.0 and section["worst"]["documents"] == 1
    assert any("1 of this input's documents were released before" in w
               for w in result.report["warnings"])
    env = {**os.environ, "PYTHONPATH": SRC}
    shown = subprocess.run([sys.executable, "-m", "textdp.cli", "ledger", "show", str(path),
                            "--json"], env=env, capture_output=True, text=True, check=True)
    docs = json.loads(shown.stdout)["documents"]
    assert docs["documents"] == 3 and docs["released_more_than_once"] == 1
    assert docs["worst"]["spent"] == 3.0 and docs["worst"]["size"] == 3
    from textdp.pipeline import build_mechanism

    unit = unit_guarantee(build_mechanism("mvc", 1.0, vocab, {})).epsilon
    assert docs["worst"]["epsilon_document"] >= 3 * (unit + 2 * unit)


class _PerDocument:
    """A mechanism with a pure ε per document (as DP-Prompt states it), for exact-sum tests."""

    name = "per-document"

    def __init__(self, epsilon: float) -> None:
        from textdp.privacy import Guarantee, Notion

        self.notion = Notion.LOCAL_DP
        self.epsilon, self.parameters = epsilon, {"epsilon": epsilon}
        self.guarantee = Guarantee(notion=self.notion, epsilon=epsilon, metric="", per_word="")

    def privacy_map(self, d_in: float):
        from textdp.privacy import Budget

        return Budget(self.epsilon * d_in)


def test_a_float_sum_that_rounds_down_to_the_budget_is_still_over_it(tmp_path):
    """The ledger screens documents in floats and decides near the budget exactly: a + b whose
    float sum rounds down to B but whose exact sum passes B is refused, for every document."""
    rng = np.random.default_rng(5)
    while True:
        a, b = (float(x) for x in rng.uniform(0.1, 3.0, 2))
        if Fraction(a) + Fraction(b) > Fraction(a + b):
            break
    texts = [f"document {i} of many words" for i in range(50)]
    path = tmp_path / "l.jsonl"
    fp, n = fingerprint_texts(texts)
    with Ledger(path).release(mechanism=_PerDocument(a), input_fingerprint=fp, records=n,
                              seed=None):
        pass
    fp2, n2 = fingerprint_texts(texts[::-1] + [""])  # another input, the same documents
    with pytest.raises(LedgerRefused, match="50 of this input's documents"):
        with Ledger(path, policy="refuse", budget=a + b).release(
                mechanism=_PerDocument(b), input_fingerprint=fp2, records=n2, seed=None):
            pass
    with Ledger(path, policy="refuse", budget=float(np.nextafter(a + b, np.inf))).release(
            mechanism=_PerDocument(b), input_fingerprint=fp2, records=n2, seed=None):
        pass
