"""Acceptance (issue 23): one seed and one set of options give byte-identical texts on every
front — the command line, ``textdp.privatize``, pandas, datasets, scikit-learn and Ray — for
MVC, 1-Diffractor and CusText.

The options are the ones most likely to drift between fronts: random replacement of
out-of-vocabulary words, stop words kept, a deny-list, a mask token, and budget allocation. The
Ray part runs on the shared local Ray runtime (2 CPUs) and is marked ``ray``: ``-m "not ray"`` leaves it out.
"""

from __future__ import annotations

import pytest

import textdp

MECHANISMS = ["mvc", "diffractor", "custext"]
SEED = 13
TEXTS = ["The food at Zzyzxq Bistro was great, but the waiter was rude.",
         "Write to jsmith@acme.com about order 4521 before Friday!",
         "Cold soup and warm beer in the old town; the secret recipe stays secret.",
         "",
         "I LOVED the quiet street with small shops and a bakery."]
DENY = ["secret", "waiter"]
OPTIONS = dict(oov="random", keep_stopwords=True, deny_list=DENY, mask_token="<M>",
               allocation="position", epsilon_document=40.0, epsilon_floor=1.0)


def _reference(mechanism: str) -> list[str]:
    return textdp.privatize(TEXTS, mechanism, seed=SEED, **OPTIONS).texts


def _cli(mechanism: str, tmp_path, capsys) -> list[str]:
    from textdp.cli import main

    src, dst, deny = tmp_path / f"{mechanism}.txt", tmp_path / f"{mechanism}.out.txt", \
        tmp_path / "deny.txt"
    src.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    deny.write_text("\n".join(DENY) + "\n", encoding="utf-8")
    code = main(["privatize", str(src), "-o", str(dst), "--mechanism", mechanism,
                 "--seed", str(SEED), "--oov", "random", "--keep-stopwords",
                 "--deny-list", str(deny), "--mask-token", "<M>", "--allocation", "position",
                 "--epsilon-document", "40", "--epsilon-floor", "1"])
    capsys.readouterr()
    assert code == 0
    return dst.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_every_local_front_gives_the_same_texts(mechanism, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    import textdp.pandas  # noqa: F401 - registers the accessor
    from textdp.integrations.datasets import privatize as ds_privatize
    from textdp.sklearn import TextPrivatizer

    expected = _reference(mechanism)
    assert expected != TEXTS and len(expected) == len(TEXTS)
    kw = dict(mechanism=mechanism, seed=SEED, **OPTIONS)
    fronts = {
        "cli": _cli(mechanism, tmp_path, capsys),
        "pandas Series": pd.Series(TEXTS).textdp.privatize(**kw).tolist(),
        "pandas DataFrame": pd.DataFrame({"t": TEXTS, "n": range(len(TEXTS))})
        .textdp.privatize(columns=["t"], **kw)["t"].tolist(),
        "datasets": ds_privatize(datasets.Dataset.from_dict({"text": TEXTS}), batch_size=2,
                                 **kw)[0]["text"],
        "datasets num_proc": ds_privatize(datasets.Dataset.from_dict({"text": TEXTS}),
                                          num_proc=2, batch_size=2, **kw)[0]["text"],
        "scikit-learn": TextPrivatizer(epsilon=None, **kw).fit_transform(TEXTS),
    }
    for front, texts in fronts.items():
        assert texts == expected, front
    # Power: another seed, or one option changed, gives other texts.
    assert textdp.privatize(TEXTS, mechanism, seed=SEED + 1, **OPTIONS).texts != expected
    assert textdp.privatize(TEXTS, mechanism, seed=SEED, **{**OPTIONS, "deny_list": None}
                            ).texts != expected


@pytest.mark.ray
def test_ray_gives_the_same_texts(runtime):
    ray = runtime  # the shared local runtime (tests/integrations/conftest.py)
    from textdp.integrations import ray as tray

    for mechanism in MECHANISMS:
        ds = ray.data.from_items([{"text": t} for t in TEXTS], override_num_blocks=2)
        out, report = tray.privatize(ds, mechanism=mechanism, seed=SEED, workers=2,
                                     batch_size=2, **OPTIONS)
        assert list(tray.texts_of(out)) == _reference(mechanism), mechanism
        assert report["engine"] == "ray"
