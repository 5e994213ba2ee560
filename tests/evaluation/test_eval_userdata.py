"""The user's own data in the evaluation (issue 24, item 4): reading documents and labels,
counting the words a release privatises, and weighting N_w/S_w by those counts.

Known answers: an exact law gives N_w per word exactly, so a weighted mean over words with counts
(k, 1) is (k·N_a + N_b)/(k + 1) to rounding — and differs from the plain mean, so dropping the
weights fails the tests.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textdp.evaluation.calibration import calibrate
from textdp.evaluation.data import DataWords, data_words, read_user_data
from textdp.evaluation.deniability import plausible_deniability
from textdp.io import FileError
from textdp.mechanisms.base import WordMechanism
from textdp.privacy import Guarantee, Notion
from textdp.spec import release_spec


class Staying(WordMechanism):
    """N_w = a_w exactly, a_w distinct per word (the rest of the mass spread evenly)."""

    name = "staying-test"

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(notion=Notion.NONE, epsilon=self.epsilon, metric="none",
                         per_word="none", verified=False)

    def stay(self, word: int) -> float:
        return min(0.9, self.epsilon * (word + 1) / (2 * len(self.vocabulary)))

    def output_distribution(self, word):
        n = len(self.vocabulary)
        a = self.stay(int(word))
        p = np.full(n, (1 - a) / (n - 1))
        p[int(word)] = a
        return p

    def draw(self, ids, rng):
        return rng.random(ids.size)

    def apply(self, ids, noise):
        out = ids.copy()
        for i, (w, u) in enumerate(zip(ids.tolist(), np.asarray(noise).tolist(), strict=True)):
            if u >= self.stay(w):
                out[i] = (w + 1 + int(u * 1e6) % (len(self.vocabulary) - 1)) % len(self.vocabulary)
        return out


@pytest.mark.parametrize("k", [1, 7, 100])
def test_weights_count_a_word_as_often_as_it_occurs(toy_vocab, k):
    mech = Staying(toy_vocab, epsilon=1.0)
    a, b = mech.stay(3), mech.stay(30)
    d = plausible_deniability(mech, [3, 30], 10, weights=[k, 1])
    assert d.summary()["n_w"]["mean"] == pytest.approx((k * a + b) / (k + 1), rel=1e-12)
    # The same as measuring the word k times: weighting = repetition.
    rep = plausible_deniability(mech, [3] * k + [30], 10)
    assert d.summary()["n_w"]["mean"] == pytest.approx(rep.summary()["n_w"]["mean"], rel=1e-12)
    # weighted quantiles are those of the repeated words (inverted CDF: a measured value)
    assert d.summary()["n_w"]["median"] == np.quantile(rep.n_w, 0.5, method="inverted_cdf")
    assert d.summary()["weighted"] is True and d.to_dict()["per_word"]["weight"] == [k, 1]
    if k > 1:  # dropping the weights would give the plain mean
        assert abs(d.summary()["n_w"]["mean"] - (a + b) / 2) > 1e-3


def test_unweighted_summary_is_unchanged(toy_vocab):
    mech = Staying(toy_vocab, epsilon=1.0)
    d = plausible_deniability(mech, [3, 30], 10)
    assert "weighted" not in d.summary() and "weight" not in d.to_dict()["per_word"]
    assert d.summary()["n_w"]["mean"] == pytest.approx((mech.stay(3) + mech.stay(30)) / 2)


def test_bad_weights(toy_vocab):
    mech = Staying(toy_vocab, epsilon=1.0)
    for bad in ([1.0], [1.0, -1.0], [0.0, 0.0], [1.0, float("nan")]):
        with pytest.raises(ValueError, match="weights"):
            plausible_deniability(mech, [3, 30], 10, weights=bad)


def test_calibration_weights_means_and_share_failing(toy_vocab):
    k = 9
    cal = calibrate(lambda e: Staying(toy_vocab, epsilon=e), max_n_w=0.05, min_s_w=None,
                    words=[3, 30], grid=[0.1, 1.0, 3.0], refine_steps=0, weights=[k, 1])
    for p in cal.points:
        mech = Staying(toy_vocab, epsilon=p.epsilon)
        a, b = mech.stay(3), mech.stay(30)
        assert p.mean_n_w == pytest.approx((k * a + b) / (k + 1), rel=1e-12)
        assert p.share_failing == pytest.approx((k * (a > 0.05) + (b > 0.05)) / (k + 1))
    assert cal.to_dict()["weights"] == [k, 1]
    plain = calibrate(lambda e: Staying(toy_vocab, epsilon=e), max_n_w=0.05, min_s_w=None,
                      words=[3, 30], grid=[0.1, 1.0, 3.0], refine_steps=0)
    assert "weights" not in plain.to_dict()
    assert all("share_failing" not in p for p in plain.to_dict()["points"])
    assert [p.meets for p in plain.points] == [p.meets for p in cal.points]


def _words(counts: dict[int, int]) -> DataWords:
    ids = np.array(list(counts), dtype=np.int64)
    return DataWords(ids=ids, counts=np.array(list(counts.values()), dtype=np.int64),
                     words=tuple(str(i) for i in ids), documents=1, tokens={}, by_policy={})


def test_select_all_words_weighs_their_counts():
    w = _words({5: 10, 2: 3, 9: 1})
    ids, weights, info = w.select(3)
    assert ids.tolist() == [5, 2, 9] and weights.tolist() == [10, 3, 1]
    assert info["measured"] == 3 and info["sampled"] == 0 and info["measured_occurrences"] == 14


def test_select_samples_the_rare_words_with_expansion_weights():
    counts = {i: 1000 - i for i in range(100)}
    w = _words(counts)
    ids, weights, info = w.select(10, np.random.default_rng(0))
    assert ids[:5].tolist() == [0, 1, 2, 3, 4]  # the most frequent half, always
    assert weights[:5].tolist() == [1000, 999, 998, 997, 996]
    assert info["sampled"] == 5 and info["sampled_from"] == 95
    # the others stand for the 95 words they were drawn from
    assert weights[5:].tolist() == [counts[int(i)] * 95 / 5 for i in ids[5:]]
    # unbiased: averaged over draws, the weights of the sample sum to the occurrences
    totals = [w.select(10, np.random.default_rng(s))[1].sum() for s in range(400)]
    assert np.mean(totals) == pytest.approx(sum(counts.values()), rel=0.01)


def test_data_words_counts_through_the_release():
    # "good" ×9, "time" ×1; an e-mail, a number and an unknown word are counted apart.
    texts = ["good good good time", "good good good", "good good good bob@example.com",
             "42 zzqxv"]
    spec = release_spec("santext", 1.0, vocabulary=_vocab(), seed=0)
    w = data_words([texts[:2], texts[2:]], spec)
    assert w.documents == 4
    assert dict(zip(w.words, w.counts.tolist(), strict=True)) == {"good": 9, "time": 1}
    assert w.words[0] == "good"  # most frequent first
    assert w.by_policy["identifiers_masked"] == 1 and w.spans["email"] == 1
    assert w.by_policy["numbers_masked"] == 1 and w.by_policy["oov_words_masked"] == 1


def _vocab():
    from textdp.vocab import DEFAULT, load

    return load(DEFAULT, size=1000)


# --- reading documents and labels ----------------------------------------------------------------
def test_labels_from_jsonl_of_any_scalar_and_nested(tmp_path):
    f = tmp_path / "d.jsonl"
    rows = [{"t": "a b", "m": {"y": 1}}, {"t": "c", "m": {"y": "x"}}, {"t": "d", "m": {"y": True}}]
    f.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n" + json.dumps(rows[2]) + "\n")
    d = read_user_data(f, text_field="t", label_field="m.y")
    assert d.texts == ("a b", "c", "d") and d.labels == ("1", "x", "true")
    assert d.describe()["label_counts"] == {"1": 1, "true": 1, "x": 1}


def test_labels_from_csv_and_parquet(tmp_path):
    c = tmp_path / "d.csv"
    c.write_text('label,text\npos,"good, really"\nneg,bad\n')
    d = read_user_data(c, label_field="label")
    assert d.texts == ("good, really", "bad") and d.labels == ("pos", "neg")
    p = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": ["a", "b", "c", "d"], "y": [3, 4, 3, 4]}), p)
    d = read_user_data(p, label_field="y")
    assert d.labels == ("3", "4", "3", "4")
    assert d.task().label_names == ("3", "4")


@pytest.mark.parametrize("name, content, kwargs, message", [
    ("d.jsonl", '{"text": "a"}\n', {"label_field": "y"}, "d.jsonl:1: no field 'y'"),
    ("d.jsonl", '{"text": "a", "y": null}\n', {"label_field": "y"}, "d.jsonl:1: label field 'y' is null"),
    ("d.jsonl", '{"text": "a", "y": [1]}\n', {"label_field": "y"}, "is a list"),
    ("d.jsonl", '{"body": "a"}\n', {"text_field": "text"}, "no field 'text'"),
    ("d.csv", "text,y\na,1\n", {"label_field": "z"}, "no column 'z'"),
    ("d.txt", "a\n", {"label_field": "y"}, "a .txt file has no fields"),
    ("d.jsonl", '{"text": "a", "y": 1}\n', {"label_field": "text"}, "is the text field"),
])
def test_read_errors_are_one_line_file_errors(tmp_path, name, content, kwargs, message):
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(FileError) as exc:
        read_user_data(f, **kwargs)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_task_needs_two_classes_of_two(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("text,y\na,1\nb,1\n")
    with pytest.raises(ValueError, match="one class"):
        read_user_data(f, label_field="y").task()
    f.write_text("text,y\na,1\nb,1\nc,2\n")
    with pytest.raises(ValueError, match="single document"):
        read_user_data(f, label_field="y").task()


def test_sample_keeps_labels_aligned(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("text,y\n" + "".join(f"doc{i},{i % 3}\n" for i in range(50)))
    d = read_user_data(f, label_field="y").sample(10, np.random.default_rng(0))
    assert len(d) == 10
    assert all(int(t[3:]) % 3 == int(y) for t, y in zip(d.texts, d.labels, strict=True))


def test_weighted_quantiles_are_those_of_the_repeated_values():
    from textdp.evaluation.deniability import weighted_quantiles

    rng = np.random.default_rng(5)
    for _ in range(50):
        x = rng.random(rng.integers(1, 8))
        w = rng.integers(1, 6, size=x.size)
        qs = [0.0, 0.05, 0.25, 0.5, 0.95, 1.0]
        want = np.quantile(np.repeat(x, w), qs, method="inverted_cdf")
        assert weighted_quantiles(x, w, qs).tolist() == want.tolist()
