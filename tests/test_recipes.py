"""The recipes of docs/architecture.md, followed: a toy word mechanism, a toy front, a toy recogniser.

Each test does what its recipe says, step by step, and checks that the new piece runs through
the spine like the built-in ones: the same texts as a built-in that draws the same noise, the
same report keys, one ledger record.
"""

from __future__ import annotations

import numpy as np
import pytest

import textdp
from textdp.ledger import Ledger
from textdp.vocab import Vocabulary

TEXTS = ["the food at the bistro was great", "cold soup and warm beer in the old town", ""]


@pytest.fixture(scope="module")
def vocab():
    words = ["the", "food", "at", "bistro", "was", "great", "cold", "soup", "and", "warm",
             "beer", "in", "old", "town", "bad", "hot", "new", "city"]
    rng = np.random.default_rng(0)
    return Vocabulary(words, rng.normal(size=(len(words), 5)).astype(np.float32), name="toy")


# --- recipe 1: a word mechanism -----------------------------------------------------------------

@pytest.fixture
def toy_mechanism():
    """Steps 1-3 of the recipe: subclass WordMechanism (name, PARAMETERS, reference), implement
    draw (all randomness, through the generator it is given) and apply (pure), register it."""
    from textdp import mechanisms
    from textdp._checks import EPSILON
    from textdp.mechanisms.base import WordMechanism
    from textdp.noise import metric_laplace

    @mechanisms.register
    class ToyMVC(WordMechanism):
        """MVC's law written plainly (Feyisetan et al., WSDM 2020, Algorithm 1): φ(w) + z with
        density ∝ exp(−ε‖z‖), then the nearest word by brute force. ε·d metric DP (Theorem 1),
        the base class's default guarantee."""

        name = "toy_mvc"
        PARAMETERS = (EPSILON,)
        reference = "Feyisetan et al., WSDM 2020, Algorithm 1 and Theorem 1"

        def draw(self, ids, rng):
            return metric_laplace(ids.size, self.vocabulary.dim, self.epsilon, rng,
                                  dtype=np.float32)

        def apply(self, ids, noise):
            noisy = (self.vocabulary.vectors[ids] + noise).astype(np.float64)
            table = self.vocabulary.vectors.astype(np.float64)
            d = ((noisy[:, None, :] - table[None, :, :]) ** 2).sum(-1)
            return d.argmin(axis=1)

    yield ToyMVC
    mechanisms._REGISTRY.pop("toy_mvc", None)  # the registry is process-wide


def test_a_toy_word_mechanism_runs_through_every_step(toy_mechanism, vocab, tmp_path):
    from textdp.mechanisms import available

    assert "toy_mvc" in available("word")
    path = tmp_path / "ledger.jsonl"
    kw = dict(vocabulary=vocab, seed=5, entities="none", identifiers=False)
    toy = textdp.privatize(TEXTS, "toy_mvc", 3.0, ledger=path, **kw)
    mvc = textdp.privatize(TEXTS, "mvc", 3.0, **kw)
    # The same noise stream and the same exact nearest neighbour as MVC: the same texts.
    assert toy.texts == mvc.texts and toy.texts != TEXTS
    assert toy.report["guarantee"]["epsilon"] == 3.0
    assert set(toy.report) == set(mvc.report) | {"ledger"}
    [entry] = Ledger(path).read().entries
    assert entry["mechanism"]["name"] == "toy_mvc"
    assert entry["measurement"]["input_metric"] == f"word-euclidean:{vocab.fingerprint}"
    # Power: another ε gives other texts.
    assert textdp.privatize(TEXTS, "toy_mvc", 0.3, **kw).texts != toy.texts


# --- recipe 2: a front --------------------------------------------------------------------------

def privatize_mapping(rows, key, *, ledger=None, **options):
    """A toy front over a list of dicts (``key``: the text field): step 1 builds the spec from
    the options (checked there, once); step 2 the source; step 3 runs the spine's runner with the
    local word engine; step 4 puts the texts back."""
    from textdp.ledger import as_ledger
    from textdp.release import WordEngine
    from textdp.runner import Texts, run_release
    from textdp.spec import release_spec

    spec = release_spec(**options)
    source = Texts([row[key] for row in rows], name=f"mapping key {key!r}")
    outcome = run_release(spec, source, WordEngine(), ledger=as_ledger(ledger))
    return [{**row, key: text} for row, text in zip(rows, outcome.output, strict=True)], \
        outcome.report


def test_a_toy_front_gives_the_texts_and_records_of_the_others(vocab, tmp_path):
    rows = [{"id": i, "body": t} for i, t in enumerate(TEXTS)]
    kw = dict(vocabulary=vocab, seed=7, entities="none")
    path = tmp_path / "ledger.jsonl"
    out, report = privatize_mapping(rows, "body", mechanism="mvc", epsilon=2.0, ledger=path, **kw)
    expected = textdp.privatize(TEXTS, "mvc", 2.0, **kw)
    assert [r["body"] for r in out] == expected.texts and [r["id"] for r in out] == [0, 1, 2]
    assert report["ledger"]["release_id"] and report["guarantee"] == expected.report["guarantee"]
    [entry] = Ledger(path).read().entries
    assert entry["input"]["name"] == "mapping key 'body'"
    with pytest.raises(ValueError, match="epsilon"):  # the spec checks the options, once
        privatize_mapping(rows, "body", mechanism="mvc", epsilon=-1.0, **kw)


# --- recipe 3: a recogniser ---------------------------------------------------------------------

RECOGNISED = ["the food at TK-123456 was great", "cold soup in TK-000042 and TK-777777", "old town"]


@pytest.fixture
def toy_recogniser():
    """Steps 1-2 of the recipe: a function text → spans (a Recogniser subclass works the same
    way), registered by name with its label."""
    import re

    from textdp import recognisers

    @recognisers.register(label="[TICKET]")
    def ticket(text):
        return [m.span() for m in re.finditer(r"(?<!\w)TK-\d{6}(?!\w)", text)]

    yield ticket
    recognisers.unregister("ticket")  # the registry is process-wide


def test_a_toy_recogniser_masks_what_it_finds_and_the_allow_list_wins(toy_recogniser, vocab):
    from textdp import recognisers

    assert "ticket" in recognisers.available("entities")
    # ε so large that MVC returns every word, and oov="keep": only recognised spans change.
    kw = dict(vocabulary=vocab, seed=5, identifiers=False, oov="keep")
    plain = textdp.privatize(RECOGNISED, "mvc", 1e9, entities="none", **kw)
    assert plain.texts == RECOGNISED  # nothing else would hide the tickets
    # Step 3: name it among the entity kinds (here alone: the built-in kinds off).
    out = textdp.privatize(RECOGNISED, "mvc", 1e9, entities="ticket",
                           allow_list=["TK-777777"], **kw)
    assert out.texts == ["the food at [TICKET] was great",
                         "cold soup in [TICKET] and TK-777777", "old town"]
    section = out.report["entities"]
    assert section["by_kind"]["ticket"] == 2 and section["labels"]["ticket"] == "[TICKET]"
    assert section["allowed_kept"] == 1  # the allow-list wins over the user's recogniser
    assert section["recognisers"][0]["name"] == "ticket"


def test_a_recogniser_whose_registration_is_removed_is_refused(toy_recogniser, vocab):
    from textdp import recognisers

    recognisers.unregister("ticket")
    with pytest.raises(ValueError, match="unknown entity kind 'ticket'"):
        textdp.privatize(RECOGNISED, "mvc", 1e9, entities="ticket", vocabulary=vocab,
                         identifiers=False)
