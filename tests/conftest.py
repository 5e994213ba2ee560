"""Fixtures shared across test packages."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

# A test run started in the background of a non-interactive shell (``make test &``, CI's
# launcher) inherits SIGINT *ignored*, and so does every process it starts: Python then installs
# no KeyboardInterrupt handler, and every test that interrupts a command with Ctrl-C (exit 130)
# fails or waits out its timeout (one Ray test for 240 s). The tests are about what a user's
# Ctrl-C does, so they run with SIGINT as a terminal gives it: Python's default handler here, the
# default disposition in the commands they start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

def ray_scope(nodeid: str) -> bool:
    """Whether a test runs Ray (those of tests/integrations/test_ray*.py and the Ray case of
    test_fronts_parity.py): under pytest-xdist they run on one worker, in their order."""
    path, _, name = nodeid.partition("::")
    return Path(path).name.startswith("test_ray") or \
        (Path(path).name == "test_fronts_parity.py" and name.startswith("test_ray"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``make test`` runs ``-n 2 --dist loadscope``: each module's tests on one worker (its
    module-scoped fixtures — models, corpora, evaluations — built once, not once per worker),
    and here also every test that runs Ray on one worker, in order: they share one local runtime
    (tests/integrations/conftest.py), each of whose jobs takes both CPUs already, and the
    two-node cluster test must not start beside it. The pages of tests/docs/test_docs.py,
    which share nothing, are spread one by one. (xdist's ``--dist loadgroup`` and its
    ``xdist_group`` mark would say the same, but pytest-xdist 3.8.0 renames the test ids of
    a group through an attribute pytest 9 no longer reads, so its groups are not kept.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if ray_scope(nodeid):
                return "ray"
            if nodeid.startswith("tests/docs/test_docs.py::"):
                return nodeid
            return super()._split_scope(nodeid)

    return Scheduling(config, log)


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
    # Engines default to one torch thread while the tiny model is in use: its products take
    # microseconds, and with two threads on a shared machine each waits for the other to be
    # scheduled (tests/lm/test_engine.py's law test: 30 s wall with 2 threads, 1.2 s with 1).
    from textdp.lm import engine

    patch = pytest.MonkeyPatch()
    patch.setattr(engine, "available_cores", lambda: 1)
    yield LanguageModel(model=model, tokenizer=tokenizer)
    patch.undo()


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
