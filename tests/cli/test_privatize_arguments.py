"""`textdp privatize` hands each engine one typed, frozen PrivatizeArguments whose release is the
one `textdp.spec.release_spec` builds from the same options (issue 23, item 5)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from textdp.cli import _local, _prompt, _ray, main
from textdp.cli._arguments import PrivatizeArguments
from textdp.spec import release_spec


@pytest.fixture
def seen(monkeypatch):
    """The arguments each engine was called with (the engines themselves do not run)."""
    calls: dict[str, PrivatizeArguments] = {}
    monkeypatch.setattr(_local, "run", lambda args, book: calls.setdefault("local", args))
    monkeypatch.setattr(_ray, "run", lambda args, book: calls.setdefault("ray", args))
    monkeypatch.setattr(_prompt, "run", lambda args: calls.setdefault("prompt", args))
    return calls


@pytest.fixture
def files(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "The food was great."}\n', encoding="utf-8")
    deny = tmp_path / "deny.txt"
    deny.write_text("# a comment\nAcme Corp\n", encoding="utf-8")
    return src, tmp_path / "out.jsonl", deny


def test_the_local_engine_gets_the_spec_release_spec_builds(seen, files):
    src, out, deny = files
    assert main(["privatize", str(src), "-o", str(out), "--epsilon", "10", "--seed", "3",
                 "--oov", "random", "--keep-stopwords", "--deny-list", str(deny),
                 "--mask-token", "<M>", "--text-field", "text", "--batch-size", "7"]) == 0
    args = seen["local"]
    assert isinstance(args, PrivatizeArguments)
    assert args.spec == release_spec("mvc", 10, seed=3, oov="random", keep_stopwords=True,
                                     deny_list=["Acme Corp"], mask_token="<M>")
    assert (args.input, args.output, args.report, args.batch_size) == (src, out, None, 7)
    assert args.read_options.text_fields == ("text",) and args.files is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        args.batch_size = 8  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(args)) == args  # the spec travels to other processes


def test_an_allocation_and_mechanism_parameters_are_in_the_spec(seen, files):
    src, out, _ = files
    assert main(["privatize", str(src), "-o", str(out), "--allocation", "uniform",
                 "--epsilon-document", "40", "-m", "custext", "--param", "k=5"]) == 0
    spec = seen["local"].spec
    assert spec.name == "custext" and dict(spec.params) == {"k": 5}
    assert spec.allocation is not None and spec.allocation.rule == "uniform"


def test_the_ray_engine_gets_the_file_pairs(seen, files):
    src, out, _ = files
    assert main(["privatize", str(src), "-o", str(out), "--epsilon", "10", "--engine", "ray",
                 "--workers", "2"]) == 0
    args = seen["ray"]
    assert args.files == ((src, out),) and args.workers == 2 and args.spec.name == "mvc"


def test_the_language_model_engine_gets_a_prompt_spec(seen, files):
    src, out, _ = files
    assert main(["privatize", str(src), "-o", str(out), "-m", "dp_prompt", "--temperature",
                 "1.5", "--max-new-tokens", "8", "--seed", "1"]) == 0
    spec = seen["prompt"].spec
    assert spec.kind == "prompt" and spec.seed == 1
    assert dict(spec.params) == {"temperature": 1.5, "max_new_tokens": 8}
    assert seen.pop("prompt").device == "auto"
    assert main(["privatize", str(src), "-o", str(out), "-m", "dp_prompt", "--temperature",
                 "1.5", "--device", "cpu"]) == 0
    assert seen["prompt"].device == "cpu"
