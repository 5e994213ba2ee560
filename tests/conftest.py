"""Fixtures shared across test packages."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# A test run started in the background of a non-interactive shell (``make test &``, CI's
# launcher) inherits SIGINT *ignored*, and so does every process it starts: Python then installs
# no KeyboardInterrupt handler, and every test that interrupts a command with Ctrl-C (exit 130)
# fails or waits out its timeout (one Ray test for 240 s). The tests are about what a user's
# Ctrl-C does, so they run with SIGINT as a terminal gives it: Python's default handler here, the
# default disposition in the commands they start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

def _runs_ray(item: pytest.Item) -> bool:
    return ("runtime" in getattr(item, "fixturenames", ()) or item.get_closest_marker("ray") is not None
            or Path(str(item.fspath)).name.startswith("test_ray"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test``: ``-n 2 --dist loadgroup``) a group runs on one worker,
    in collection order. The tests that run Ray form one group: they share one local runtime
    (tests/integrations/conftest.py), each of whose jobs takes both CPUs already, and the
    two-node cluster test must not start beside it. Every other module is its own group, so
    that its module-scoped fixtures (models, corpora, evaluations) are built once, not once per
    worker. Without xdist the marks do nothing."""
    for item in items:
        group = "ray" if _runs_ray(item) else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


#: The tiny language model's vocabulary: three specials, then w0 … w60.
TINY_WORDS = ["[PAD]", "[EOS]", "[UNK]"] + [f"w{i}" for i in range(61)]


@pytest.fixture(scope="session")
def tiny_lm():
    """A tiny randomly initialised Llama (64 tokens, hidden size 16, one layer) with a word-level
    tokenizer built here: no file from a hub. Its logits are spread (×40) so that clipping and
    temperature matter."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    from textdp.lm import LanguageModel

    torch.manual_seed(0)  # the test model's weights only; sampling never touches torch's RNG
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=1, max_position_embeddings=256,
                                      eos_token_id=1, pad_token_id=0, bos_token_id=None)
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(40.0)
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(TINY_WORDS)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]",
                                                     eos_token="[EOS]", unk_token="[UNK]")
    return LanguageModel(model=model, tokenizer=tokenizer)


def _chisquare_merged(counts, probs):
    """χ² p-value, categories merged (in order of probability) until expected counts ≥ 5."""
    import numpy as np
    from scipy import stats

    n = counts.sum()
    exp, obs, acc_e, acc_o = [], [], 0.0, 0
    for i in np.argsort(probs):
        acc_e += n * probs[i]
        acc_o += counts[i]
        if acc_e >= 5:
            exp.append(acc_e)
            obs.append(acc_o)
            acc_e, acc_o = 0.0, 0
    exp[-1] += acc_e
    obs[-1] += acc_o
    return stats.chisquare(obs, exp).pvalue


@pytest.fixture(scope="session")
def chisquare_merged():
    """The χ² goodness-of-fit p-value of the token-law tests (DP-Prompt and the LM engine)."""
    return _chisquare_merged
