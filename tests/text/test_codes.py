"""The code-array fast path of the pipeline gives exactly what the regular-expression path gives.

``Privatizer`` privatises a batch through :mod:`textdp.text._codes` (one UTF-32 array per batch,
numpy tokenisation, exact hashed lookup, pre-encoded case variants) unless the text contains NUL.
Here every output and every report field is compared with the reference path
(``_run_strings``) on adversarial Unicode text, for every OOV policy, with stop words kept or
not, seeded and unseeded, over several batches.
"""

import random

import numpy as np
import pytest

from textdp.mechanisms import create
from textdp.pipeline import Privatizer
from textdp.text import split_batch
from textdp.text._codes import CodeTable, encode_batch
from textdp.vocab import Vocabulary, load_default

EXOTIC = ["É", "é", "ß", "ǅ", "İ", "Σ", "ς", "ϒ", "𝐀", "😀", "\u0301", "٣", "²", "½", "\ud800",
          "\u2028", "\x1c", "\x85", "あ", "中", "\u00a0", "\r\n", "_", "'", "\u200d"]


@pytest.fixture(scope="module")
def vocab():
    g = load_default()
    extra = ["café", "straße", "naïve", "ǆemal", "internationalization", "counterrevolutionaries"]
    vectors = np.vstack([g.vectors[:3000],
                         np.random.default_rng(0).standard_normal((len(extra), 50)).astype(np.float32)])
    return Vocabulary(g.words[:3000] + extra, vectors, name="codes-test")


def _random_texts(rng, vocab, n_docs):
    pieces = vocab.words[:400] + [
        "Café", "CAFÉ", "STRASSE", "Straße", "NAÏVE", "İstanbul", "ΣΑΣ", "iPad", "McDonald",
        "THE", "The", "I", "A", "a", "42", "007", "x1", "Good", "GOOD", "gOOD", "ǅemal",
        "ǄEMAL", "Internationalization", "INTERNATIONALIZATION", "internationalizations",
        "counterrevolutionary", "Counterrevolutionaries", "abcdefghij", "xyzxyzxyzxyz"]
    alphabet = list("abcXYZ09  \t\n.,!?'-()$+<>~`^|") + EXOTIC
    texts = []
    for _ in range(n_docs):
        out = []
        for _ in range(rng.randint(0, 25)):
            if rng.random() < 0.6:
                out.append(rng.choice(pieces))
            else:
                out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))))
            if rng.random() < 0.7:
                out.append(rng.choice([" ", ", ", ".", "  ", "\n", ""]))
        texts.append("".join(out))
    return texts


def _clean(report):
    report = dict(report)
    report.pop("created")
    report.pop("performance")
    return report


def test_encode_batch_matches_split_batch():
    rng = random.Random(2)
    texts = ["", "Hello, World!", "abc123def", "  x  ", "中文 text 😀 ok", "a_b", "½ ² ٣٣"]
    texts += ["".join(rng.choice(EXOTIC + list("ab1 .")) for _ in range(30)) for _ in range(50)]
    batch = encode_batch(texts)
    ref = split_batch(texts)
    tokens = [batch.token(i) for i in range(batch.n_tokens)]
    assert tokens == ref.words
    assert np.bincount(batch.doc_of, minlength=len(texts)).tolist() == ref.counts
    assert encode_batch(["ok", "has \x00 nul"]) is None


def test_lookup_is_exact(vocab):
    table = CodeTable(vocab.words, vocab.lookup)
    words = vocab.words + [w.upper() for w in vocab.words[:500]] + ["zzzzzzzzzzzzq", "internationalizatiom"]
    batch = encode_batch([" ".join(words)])
    tokens = [batch.token(i) for i in range(batch.n_tokens)]
    expected = [vocab.lookup.get(t.lower(), -1) for t in tokens]
    assert table.find(batch).tolist() == expected


@pytest.mark.parametrize("method,n_lists", [("geometric", 1), ("tem", 3)])
def test_fast_path_equals_reference(vocab, method, n_lists):
    rng = random.Random(7 + n_lists)
    mech = create("diffractor", vocab, epsilon=1.0, method=method, n_lists=n_lists, cache=False)
    for trial in range(40):
        texts = _random_texts(rng, vocab, rng.randint(1, 30))
        if trial % 9 == 0:
            texts = ["" for _ in texts]
        oov = ["mask", "keep", "drop", "random"][trial % 4]
        keep_stopwords = trial % 3 == 0
        mask = ["[MASK]", "Ü", "<m>"][trial % 3]
        seed = rng.randint(0, 1000) if trial % 2 else None
        fast = Privatizer(mech, oov=oov, keep_stopwords=keep_stopwords, seed=seed, mask_token=mask)
        ref = Privatizer(mech, oov=oov, keep_stopwords=keep_stopwords, seed=seed, mask_token=mask)
        ref._fast = False
        if seed is None:
            fast._rng = np.random.default_rng(trial)
            ref._rng = np.random.default_rng(trial)
        out_fast = fast.run(texts) + fast.run(texts[::-1])
        out_ref = ref.run(texts) + ref.run(texts[::-1])
        assert out_fast == out_ref
        assert _clean(fast.report()) == _clean(ref.report())


def test_nul_in_text_falls_back(vocab):
    mech = create("diffractor", vocab, epsilon=1000.0, cache=False)
    p = Privatizer(mech)
    assert p.run(["Good\x00day", "fine"]) == ["Good\x00day", "fine"]
    assert p.report()["tokens"]["by_class"]["other"] == 1


def test_document_generators_equal_reference():
    """The vectorised per-document generators are default_rng(SeedSequence(seed, spawn_key=(i,)))."""
    from textdp import _random

    rng = random.Random(3)
    for seed in (0, 1, 12345, 2**32 + 1, 2**64 + 5, 2**130 + 9):
        gens = _random.DocumentGenerators(seed)
        assert gens._exact
        positions = [0, 1, 2, 2**32 - 1] + [rng.randrange(2**32) for _ in range(100)] + [2**33]
        for p, g in zip(positions, gens.many(np.array(positions)), strict=True):
            ref = _random.document_generator(seed, p)
            assert g.bit_generator.state == ref.bit_generator.state
            assert g.standard_exponential(3).tolist() == ref.standard_exponential(3).tolist()
