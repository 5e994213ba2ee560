"""One release spec, every front (issue 23, item 1): each front hands every option of
:data:`textdp.spec.OPTION_NAMES`, under that name, to :func:`textdp.spec.release_spec`;
``available()`` lists dp_prompt, which ``textdp.privatize`` runs (texts and a report with the
ledger section) and which the fronts that cannot run it refuse in one line."""

from __future__ import annotations

import json
import os

import pytest

import textdp
from textdp import spec as spec_module
from textdp.spec import OPTION_NAMES

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class _Captured(Exception):
    pass


class _Value:
    """A distinct value per option: what reaches release_spec must be this very object."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _fronts():
    """(name, module whose release_spec is used, call with every option as a keyword)."""
    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    import textdp.pandas.privatize as tpandas  # the modules that call release_spec
    import textdp.sklearn.text as tsklearn
    from textdp import release, sklearn
    from textdp.integrations import datasets as tdatasets
    from textdp.integrations import ray as tray

    frame = pd.DataFrame({"text": ["The food was great."]})
    ds = datasets.Dataset.from_dict({"text": ["The food was great."]})
    return [
        ("textdp.privatize", spec_module, lambda o: release.privatize(["x"], **o)),
        ("pandas Series", tpandas, lambda o: frame["text"].textdp.privatize(**o)),
        ("pandas DataFrame", tpandas, lambda o: frame.textdp.privatize(columns=["text"], **o)),
        ("datasets", tdatasets, lambda o: tdatasets.privatize(ds, column="text", **o)),
        ("datasets columns=", tdatasets, lambda o: tdatasets.privatize(ds, columns=["text"], **o)),
        ("ray", tray, lambda o: tray.privatize(None, column="text", **o)),
        ("scikit-learn", tsklearn, lambda o: sklearn.TextPrivatizer(**o).fit(["x"])),
    ]


def test_every_front_passes_every_option_by_its_name(monkeypatch):
    values = {name: _Value(name) for name in OPTION_NAMES}
    for front, module, call in _fronts():
        seen: dict = {}

        def fake(mechanism="mvc", epsilon=None, *, seen=seen, **kw):
            seen.update(mechanism=mechanism, epsilon=epsilon, **kw)
            raise _Captured

        monkeypatch.setattr(module, "release_spec", fake)
        with pytest.raises(_Captured):
            call(dict(values))
        missing = [n for n in OPTION_NAMES if seen.get(n) is not values[n]]
        assert not missing, f"{front} does not pass {missing} to release_spec"
        assert set(seen) == set(OPTION_NAMES), front  # nothing renamed, nothing added
        monkeypatch.undo()


def test_the_option_test_has_power(monkeypatch):
    """A front that renames an option fails the check above."""
    values = {name: _Value(name) for name in OPTION_NAMES}
    seen: dict = {}

    def fake(mechanism="mvc", epsilon=None, **kw):
        seen.update(mechanism=mechanism, epsilon=epsilon, **kw)
        raise _Captured

    monkeypatch.setattr(spec_module, "release_spec", fake)

    def renaming_front(texts, **options):  # e.g. the old TextPrivatizer(mechanism_params=...)
        options["denylist"] = options.pop("deny_list")
        return spec_module.release_spec(**options)

    with pytest.raises(_Captured):
        renaming_front(["x"], **values)
    assert [n for n in OPTION_NAMES if seen.get(n) is not values[n]] == ["deny_list"]


def test_available_lists_dp_prompt_and_the_word_registry_apart():
    from textdp import mechanisms
    from textdp.mechanisms import prompt

    assert "dp_prompt" in mechanisms.available()
    assert mechanisms.available("prompt") == prompt.available() == ["dp_prompt"]
    assert "dp_prompt" not in mechanisms.available("word")
    assert set(mechanisms.available()) == set(mechanisms.available("word")) | {"dp_prompt"}
    with pytest.raises(ValueError, match="not a word mechanism"):
        mechanisms.get("dp_prompt")
    with pytest.raises(ValueError, match="kind"):
        mechanisms.available("document")


def test_fronts_that_cannot_run_dp_prompt_say_why_in_one_line():
    pytest.importorskip("datasets")
    import datasets

    from textdp.integrations import datasets as tdatasets
    from textdp.integrations import ray as tray

    ds = datasets.Dataset.from_dict({"text": ["w1 w2"]})
    for call in (lambda: tray.privatize(None, mechanism="dp_prompt", epsilon=100.0),
                 lambda: tdatasets.privatize(ds, mechanism="dp_prompt", epsilon=100.0)):
        with pytest.raises(ValueError, match="dp_prompt is not run") as err:
            call()
        assert "\n" not in str(err.value) and "textdp.privatize" in str(err.value)
    # The identifier and entity options mask before the model (issue 38); the word options not.
    with pytest.raises(ValueError, match="mask_token, keep_stopwords: not used by dp_prompt"):
        textdp.privatize(["w1"], mechanism="dp_prompt", epsilon=100.0, keep_stopwords=True,
                         mask_token="<m>")


def test_a_generator_inside_a_spec_is_never_shipped_to_ray_actors():
    import copy

    import numpy as np

    pytest.importorskip("ray")
    from textdp.integrations.ray import check_no_generator
    from textdp.spec import release_spec

    spec = release_spec("mvc", 8.0, seed=1)
    check_no_generator(spec)
    # A spec is checked when it is built (mvc takes no rng): plant the generator past the check.
    bad = copy.copy(spec)
    object.__setattr__(bad, "params", (("rng", np.random.default_rng(0)),))
    with pytest.raises(ValueError, match="random generator"):
        check_no_generator(bad)


# --- dp_prompt through textdp.privatize, with the tiny test model of test_dp_prompt.py --------
@pytest.fixture(scope="module")
def tiny(tiny_lm):
    return tiny_lm


def test_privatize_runs_dp_prompt_with_its_report_and_ledger(tiny, tmp_path):
    from textdp.lm import Paraphraser

    texts = ["w1 w2 w3", "w7 w8", "w40 w41 w42 w43"]
    kw = {"max_new_tokens": 6, "clip_low": -3.0, "clip_high": 3.0, "template": "{document}"}
    book = tmp_path / "ledger.jsonl"
    result = textdp.privatize(texts, mechanism="dp_prompt", epsilon=60.0, model=tiny, seed=4,
                              ledger=book, batch_size=2, **kw)
    alone = Paraphraser(model=tiny, seed=4, epsilon=60.0, **kw).run(texts)
    assert result.texts == alone and len(result.texts) == 3
    report = result.report
    assert report["kind"] == "document" and report["guarantee"]["epsilon"] >= 60.0
    assert report["ledger"]["earlier_releases"] == 0 and report["ledger"]["release_id"]
    again = textdp.privatize(texts, mechanism="dp_prompt", epsilon=60.0, model=tiny, ledger=book,
                             **kw)
    assert again.report["ledger"]["earlier_releases"] == 1
    json.dumps(report)
