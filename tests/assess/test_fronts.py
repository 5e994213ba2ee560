"""The pandas and ``datasets`` fronts of the assessment: the same documents, in row order, as
:func:`textdp.assess` on a list (missing texts and labels left out), the same figures."""

from __future__ import annotations

import pytest

import textdp

KEEP = {"entities": "none", "identifiers": False, "oov": "keep"}


def _figures(a):
    return [(r["mechanism"], r["linkage_top1"], r["task_accuracy"], r["similarity"])
            for r in a.rows] + [a.meta["sample"]["indices"]]


def test_pandas_and_datasets_assess_the_same_documents(tickets, sbert):
    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("textdp.pandas")  # registers the accessor
    from textdp.integrations import datasets as tdatasets

    texts = [t.text for t in tickets]
    labels = [t.issue for t in tickets]
    run = {"mechanisms": ["mvc"], "epsilons": [6.0], "sample": len(texts), "seed": 2,
           "encoder": sbert, **KEEP}
    expected = _figures(textdp.assess(texts, labels, **run))
    # A missing text and a missing label are not documents: the others keep their order.
    frame = pd.DataFrame({"id": range(len(texts) + 2), "body": [*texts, None, "lost label"],
                          "issue": [*labels, "refund", None]})
    assert _figures(frame.textdp.assess(text="body", label="issue", **run)) == expected
    series = frame["body"].iloc[:len(texts)]
    assert _figures(series.textdp.assess(labels=frame["issue"].iloc[:len(texts)], **run)) \
        == expected
    ds = datasets.Dataset.from_pandas(frame, preserve_index=False)
    assert _figures(tdatasets.assess(ds, "body", "issue", **run)) == expected


def test_the_fronts_refuse_a_missing_or_non_text_column(tickets):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("textdp.pandas")

    frame = pd.DataFrame({"body": ["a b"], "n": [1]})
    with pytest.raises(KeyError, match="bdy"):
        frame.textdp.assess(text="bdy")
    with pytest.raises(TypeError, match="not text"):
        frame.textdp.assess(text="n")


def test_integer_labels_are_classes_on_every_front(constant, word_documents, sbert):
    """Issue 37: integer labels (a Hugging Face ClassLabel, a pandas integer column, a list of
    ints or numpy ints) are the same classes as their text; None or 0.5 is refused."""
    import numpy as np

    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("textdp.pandas")
    from textdp.integrations import datasets as tdatasets

    texts = word_documents[:12]
    ints = [i % 3 for i in range(len(texts))]
    run = {"mechanisms": [constant], "sample": len(texts), "seed": 4, "encoder": sbert,
           "entities": "none"}
    expected = _figures(textdp.assess(texts, [str(i) for i in ints], **run))
    assert expected[0][2] is not None
    assert _figures(textdp.assess(texts, np.array(ints), **run)) == expected
    frame = pd.DataFrame({"body": texts, "issue": ints})
    assert _figures(frame.textdp.assess(text="body", label="issue", **run)) == expected
    ds = datasets.Dataset.from_dict({"body": texts, "issue": ints}).cast_column(
        "issue", datasets.ClassLabel(names=["billing", "login", "refund"]))
    assert _figures(tdatasets.assess(ds, "body", "issue", **run)) == expected
    for bad in (None, 0.5):
        with pytest.raises(TypeError, match="a label is a class"):
            textdp.assess(texts, [*ints[:-1], bad], **run)
