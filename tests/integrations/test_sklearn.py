"""scikit-learn transformers: constructor parameters only, fit learns nothing, every transform is a
fresh release, seeded transforms reproducible and flagged; the example Pipeline runs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import (
    check_estimator,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

import textdp
from textdp.mechanisms.embedding import PrivEmb
from textdp.mechanisms.embedding.release import release_vectors
from textdp.sklearn import PrivEmbTransformer, TextPrivatizer

TEXTS = ["The food was great, but the waiter was rude.", "Cold soup and warm beer.",
         "the quick brown fox jumps over the lazy dog " * 4]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sklearn_pipeline.py"


@pytest.mark.parametrize("est", [TextPrivatizer(), PrivEmbTransformer()])
def test_constructor_parameters_only(est):
    name = type(est).__name__
    check_parameters_default_constructible(name, est)
    check_no_attributes_set_in_init(name, est)
    check_get_params_invariance(name, est)
    check_set_params(name, est)
    twin = clone(est.set_params(epsilon=3.0, seed=4))
    assert twin.get_params() == est.get_params() and twin is not est


def test_text_privatizer_transforms_are_fresh_releases():
    t = TextPrivatizer(epsilon=8)
    a, b = t.fit(TEXTS).transform(TEXTS), t.transform(TEXTS)
    assert len(a) == len(TEXTS) and a != b
    assert t.report_["randomness"]["seeded"] is False and t.report_["documents"]["count"] == 3


def test_seeded_text_privatizer_is_reproducible_flagged_and_equals_privatize():
    t = TextPrivatizer(epsilon=8, seed=9, oov="keep")
    out = t.fit_transform(np.array(TEXTS, dtype=object))
    assert out == t.transform(TEXTS) == textdp.privatize(TEXTS, epsilon=8, seed=9, oov="keep").texts
    assert t.report_["randomness"]["seeded"] is True
    assert any("not for production" in w for w in t.report_["warnings"])
    assert TextPrivatizer(epsilon=8, seed=10).transform(TEXTS) != out
    with pytest.raises(TypeError, match="single string"):
        t.transform("one text")
    with pytest.raises(ValueError):
        TextPrivatizer(epsilon=-1).fit(TEXTS)


def test_text_privatizer_with_budget_allocation_equals_privatize():
    kw = dict(allocation="position", epsilon_document=30.0, epsilon_floor=1.0, seed=3)
    t = TextPrivatizer(epsilon=None, **kw)
    api = textdp.privatize(TEXTS, **kw)
    assert t.fit_transform(TEXTS) == api.texts
    assert t.report_["allocation"] == api.report["allocation"]
    assert clone(t).get_params()["epsilon_document"] == 30.0
    with pytest.raises(ValueError, match="epsilon_document instead"):
        TextPrivatizer(allocation="position", epsilon_document=30.0).fit(TEXTS)


def test_privemb_fit_learns_only_the_shape():
    X = np.arange(40.0).reshape(5, 8) / 10
    t = PrivEmbTransformer(epsilon=2.0, delta=1e-5, beta=0.5, seed=1)
    W = t.fit(X).transform(X)
    ref = release_vectors(PrivEmb(epsilon=2.0, delta=1e-5, beta=0.5, dim=8), X, seed=1)
    np.testing.assert_array_equal(W, ref)
    other = clone(t).fit(-X[:2] * 7)  # other values, same width: the same transform
    np.testing.assert_array_equal(other.transform(X), W)
    assert t.n_features_in_ == 8 and t.report_["kind"] == "embedding"
    assert t.report_["counts"]["vectors_out"] == 5 and t.report_["randomness"]["seeded"] is True
    assert len(t.get_feature_names_out()) == W.shape[1]
    fresh = PrivEmbTransformer(epsilon=2.0, delta=1e-5, beta=0.5).fit(X)
    assert not np.array_equal(fresh.transform(X), fresh.transform(X))
    lap = PrivEmbTransformer("laplace-vector", epsilon=2.0).fit(X)
    assert lap.transform(X).shape == X.shape
    with pytest.raises(ValueError, match="delta and beta"):
        PrivEmbTransformer().fit(X)
    with pytest.raises(ValueError, match="features"):
        t.transform(X[:, :4])


def test_privemb_passes_sklearn_checks_except_the_documented_ones():
    expected = {
        "check_methods_subset_invariance": "seeded noise follows row chunks, not rows",
        "check_methods_sample_order_invariance": "seeded noise follows row chunks, not rows",
        "check_dict_unchanged": "transform records its release's report in report_",
    }
    results = check_estimator(PrivEmbTransformer(epsilon=2.0, delta=1e-5, beta=0.5, seed=0),
                              expected_failed_checks=expected, on_skip=None, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] in ("failed", "xfail")}
    assert failed == set(expected)


def test_pipeline_and_the_example_run():
    pipe = Pipeline([("privatize", TextPrivatizer(epsilon=8, seed=1)),
                     ("tfidf", TfidfVectorizer())])
    assert clone(pipe).set_params(privatize__epsilon=6).get_params()["privatize__epsilon"] == 6
    assert pipe.fit_transform(TEXTS).shape[0] == len(TEXTS)
    spec = importlib.util.spec_from_file_location("sklearn_pipeline", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main(train=200, test=60, epsilon=8.0, seed=3)
    assert result["train"] == 200 and result["test"] == 60
    assert 0.0 <= result["accuracy_private"] <= 1.0 and 0.0 <= result["accuracy_non_private"] <= 1.0


# --- front semantics (issue 23, items 1 and 6) ------------------------------------------------
def test_every_option_of_privatize_is_a_parameter_under_the_same_name():
    from textdp.spec import OPTION_NAMES

    assert set(OPTION_NAMES) <= set(TextPrivatizer().get_params())
    kw = dict(deny_list=["waiter"], mask_token="<M>", identifier_labels={"email": "<E>"},
              phone_regions=["US"], unchanged_warning=0.9, batch_chars=64, seed=2)
    t = TextPrivatizer(epsilon=8, **kw)
    assert t.fit_transform(TEXTS) == textdp.privatize(TEXTS, epsilon=8, **kw).texts
    assert "[REDACTED]" in t.fit_transform(["the waiter"])[0]
    assert t.get_params()["deny_list"] is kw["deny_list"]  # stored as given
    assert clone(t).get_params()["deny_list"] == kw["deny_list"]


def test_fit_mode_privatises_the_training_texts_only():
    t = TextPrivatizer(epsilon=8, seed=5, privatize="fit")
    train = t.fit_transform(TEXTS)
    assert train == textdp.privatize(TEXTS, epsilon=8, seed=5).texts != TEXTS
    assert t.transform(TEXTS) == TEXTS  # later inputs pass through
    pipe = Pipeline([("privatize", TextPrivatizer(epsilon=8, seed=5, privatize="fit")),
                     ("tfidf", TfidfVectorizer())]).fit(TEXTS)
    seen = set(pipe.named_steps["tfidf"].vocabulary_)
    assert seen == set(TfidfVectorizer().fit(train).vocabulary_)
    assert pipe.transform(TEXTS).shape[0] == 3
    with pytest.raises(ValueError, match="privatize must be one of always, fit"):
        TextPrivatizer(privatize="sometimes").fit(TEXTS)


def test_a_search_over_epsilon_warns_with_the_count_and_fills_the_ledger(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV

    from textdp.sklearn import RepeatedReleaseWarning

    texts = ["a great film", "dull and slow", "I loved it", "a waste of time",
             "funny and warm", "boring to the end"] * 2
    labels = [1, 0, 1, 0, 1, 0] * 2
    book = tmp_path / "ledger.jsonl"
    pipe = Pipeline([("privatize", TextPrivatizer(epsilon=8, seed=1, ledger=str(book))),
                     ("tfidf", TfidfVectorizer()), ("clf", LogisticRegression())])
    search = GridSearchCV(pipe, {"privatize__epsilon": [4.0, 8.0]}, cv=2)
    with pytest.warns(RepeatedReleaseWarning, match=r"released \d+ times") as caught:
        search.fit(texts, labels)
    counts = [int(str(w.message).split("released ")[1].split(" times")[0]) for w in caught
              if issubclass(w.category, RepeatedReleaseWarning)]
    assert max(counts) >= 4  # each text: 2 candidates × (1 fit + 1 score) at least, and the refit
    lines = [json.loads(line) for line in book.read_text().splitlines()]
    releases = [e for e in lines if e["type"] == "pending"]
    # 2 candidates × 2 folds × (fit_transform + score's transform), and the final refit
    assert len(releases) == 2 * 2 * 2 + 1
    assert sum(e["type"] == "complete" for e in lines) == len(releases)


def test_set_output_pandas_and_feature_names():
    pd = pytest.importorskip("pandas")
    s = pd.Series(TEXTS, index=["a", "b", "c"], name="review")
    t = TextPrivatizer(epsilon=8, seed=1).set_output(transform="pandas")
    out = t.fit_transform(s)
    assert isinstance(out, pd.Series) and list(out.index) == ["a", "b", "c"]
    assert out.name == "review" and out.tolist() == textdp.privatize(TEXTS, epsilon=8, seed=1).texts
    assert t.get_feature_names_out().tolist() == ["review"]
    assert t.get_feature_names_out(["body"]).tolist() == ["body"]
    assert TextPrivatizer(epsilon=8, seed=1).fit_transform(s) == out.tolist()  # default: a list
