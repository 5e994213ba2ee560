"""One source of randomness: every generator textdp creates comes from ``textdp._random``.

The default (no seed) is a cryptographically secure bit generator keyed from ``os.urandom``; a
seed gives numpy's PCG64 through ``default_rng(SeedSequence(seed, spawn_key=(i,)))`` for
document i, exactly as before the module existed; nothing else in ``src/textdp`` builds a
generator (a structural check over the source, shown to fail on a planted constructor).
"""

from __future__ import annotations

import ast
import os
import random
from pathlib import Path

import numpy as np
import pytest

import textdp
from textdp import _random
from textdp._checks import check_rng
from textdp.mechanisms import create
from textdp.pipeline import Privatizer

SECURE = {"AESCounter", "ChaCha"}
SRC = Path(textdp.__file__).parent


# --- the secure default ---------------------------------------------------------------------------
def test_default_bit_generator_is_secure_and_named():
    name = _random.secure_bit_generator_name()
    assert name in SECURE
    assert type(_random.secure_generator().bit_generator).__name__ == name
    assert type(_random.generator().bit_generator).__name__ == name
    assert type(check_rng(None).bit_generator).__name__ == name
    assert type(_random.generator(5).bit_generator).__name__ == "PCG64"


def test_default_is_keyed_from_os_urandom(monkeypatch):
    """The whole key comes from os.urandom: fixing it fixes the stream, and nothing else enters."""
    calls = []

    def fixed(n: int) -> bytes:
        calls.append(n)
        return bytes(range(1, n + 1))

    monkeypatch.setattr(os, "urandom", fixed)
    a, b = _random.secure_generator(), _random.secure_generator()
    assert a.random(4).tolist() == b.random(4).tolist()
    key_bytes = 16 if _random.secure_bit_generator_name() == "AESCounter" else 32
    assert calls == [key_bytes, key_bytes]


def test_chacha_where_the_cpu_has_no_aes_instructions(monkeypatch):
    monkeypatch.setattr(_random, "secure_bit_generator_name", lambda: "ChaCha")
    g = _random.secure_generator()
    assert type(g.bit_generator).__name__ == "ChaCha"
    assert g.bit_generator.state["state"]["rounds"] == 20
    assert _random.describe(None)["bit_generator"] == "ChaCha"
    assert g.random(4).tolist() != _random.secure_generator().random(4).tolist()


def test_two_unseeded_generators_differ():
    assert _random.secure_generator().random(4).tolist() != _random.secure_generator().random(4).tolist()
    a, b = check_rng(None), check_rng(None)
    assert a.integers(2**63, size=2).tolist() != b.integers(2**63, size=2).tolist()


def test_unseeded_privatizer_draws_from_the_secure_generator():
    mech = create("mvc", epsilon=1.0)
    p = Privatizer(mech)
    assert type(p.streams._rng.bit_generator).__name__ == _random.secure_bit_generator_name()


# --- seeded runs: unchanged -----------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3])
def test_seeded_derivation_is_seedsequence_with_spawn_key(seed):
    for i in (0, 1, 5, 2**32 + 1):
        ref = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))
        assert _random.document_generator(seed, i).random(5).tolist() == ref.random(5).tolist()
    assert _random.seeded_generator(seed).random(5).tolist() == \
        np.random.default_rng(seed).random(5).tolist()
    assert _random.public_generator(seed, (3, 4)).random(5).tolist() == \
        np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3, 4))).random(5).tolist()
    assert _random.public_bit_generator(seed).random_raw(3).tolist() == \
        np.random.PCG64(seed).random_raw(3).tolist()
    with pytest.raises(TypeError, match="seed"):
        _random.seeded_generator(None)


def test_document_generators_equal_reference():
    """The vectorised per-document generators are default_rng(SeedSequence(seed, spawn_key=(i,)))."""
    rng = random.Random(3)
    for seed in (0, 1, 12345, 2**32 + 1, 2**64 + 5, 2**130 + 9):
        gens = _random.DocumentGenerators(seed)
        assert gens._exact
        positions = [0, 1, 2, 2**32 - 1] + [rng.randrange(2**32) for _ in range(100)] + [2**33]
        for p, g in zip(positions, gens.many(np.array(positions)), strict=True):
            ref = _random.document_generator(seed, p)
            assert g.bit_generator.state == ref.bit_generator.state
            assert g.standard_exponential(3).tolist() == ref.standard_exponential(3).tolist()


def test_seeded_privatize_draws_document_i_from_seed_and_i():
    """End to end: document i's word is the mechanism's draw from SeedSequence(seed, spawn_key=(i,))."""
    mech = create("mvc", epsilon=0.5)
    words = ["house", "river", "music", "green", "table", "city"] * 3
    out = textdp.privatize(words, mech, seed=11, batch_size=4).texts
    for i, w in enumerate(words):
        g = np.random.default_rng(np.random.SeedSequence(11, spawn_key=(i,)))
        ids = np.array([mech.vocabulary.lookup[w]])
        assert out[i] == mech.vocabulary.words[int(mech.apply(ids, mech.draw(ids, g))[0])]


# --- the report -----------------------------------------------------------------------------------
def test_report_names_the_bit_generator():
    unseeded = textdp.privatize(["a quiet day"], epsilon=1).report["randomness"]
    assert unseeded["bit_generator"] == _random.secure_bit_generator_name()
    assert unseeded["cryptographically_secure"] is True
    assert unseeded["source"] == "os-entropy" and unseeded["seeded"] is False
    seeded = textdp.privatize(["a quiet day"], epsilon=1, seed=2).report["randomness"]
    assert seeded["bit_generator"] == "PCG64"
    assert seeded["cryptographically_secure"] is False
    assert seeded["seeded"] is True and seeded["seed"] == 2 and "derivation" in seeded


# --- structure: nothing outside _random.py builds a generator ------------------------------------
# Bit generators and constructors called by bare name (after an import this scan also flags).
_BARE = {"default_rng", "SeedSequence", "RandomState", "PCG64", "PCG64DXSM", "Philox", "SFC64",
         "MT19937", "AESCounter", "ChaCha"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def generator_constructions(source: str) -> list[str]:
    """Calls that create a generator or use numpy's global one, and imports that would hide them.

    ``isinstance(x, np.random.Generator)`` and annotations are not calls, so they pass.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            head = name.rpartition(".")[0]
            # Anything called on numpy.random (constructors, the legacy global functions) or on
            # randomgen; bit generators by bare name.
            if head.endswith(("np.random", "numpy.random")) or head == "randomgen" or name in _BARE:
                found.append(f"{node.lineno}: {name}()")
        elif isinstance(node, ast.ImportFrom) and node.module in {"numpy.random", "randomgen"}:
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            if {"random", "secrets", "randomgen"} & set(names):
                found.append(f"{node.lineno}: import {', '.join(names)}")
    return found


def test_no_generator_is_built_outside_random_module():
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "_random.py" and path.parent == SRC:
            continue
        hits = generator_constructions(path.read_text(encoding="utf-8"))
        if hits:
            offenders[str(path.relative_to(SRC))] = hits
    assert offenders == {}, "build generators through textdp._random only"


@pytest.mark.parametrize("planted", [
    "rng = np.random.default_rng()",
    "rng = np.random.default_rng(np.random.SeedSequence(3))",
    "import numpy\nrng = numpy.random.Generator(numpy.random.PCG64())",
    "x = np.random.normal(size=3)",
    "np.random.seed(0)",
    "from numpy.random import default_rng",
    "import random",
    "from randomgen import ChaCha",
])
def test_structural_check_can_fail(planted):
    """The scan flags a mechanism that builds its own generator (the check has power)."""
    mechanism = (SRC / "mechanisms" / "word" / "mvc.py").read_text(encoding="utf-8")
    assert generator_constructions(mechanism) == []
    assert generator_constructions(mechanism + "\n\n" + planted + "\n")


def test_structural_check_allows_type_checks():
    ok = ("def f(rng: np.random.Generator) -> np.random.Generator:\n"
          "    assert isinstance(rng, np.random.Generator)\n    return rng\n")
    assert generator_constructions(ok) == []


# --- a secure stream is never duplicated (pickle, deepcopy, fork: issue 13) ----------------------
def _pickled(obj):
    import pickle

    return pickle.loads(pickle.dumps(obj))


def test_a_pickled_or_copied_secure_generator_is_freshly_keyed():
    import copy

    g = _random.secure_generator()
    state = g.bit_generator.state
    twins = [_pickled(g), copy.deepcopy(g), copy.copy(g)]
    mine = g.integers(2**63, size=4).tolist()
    for t in twins:
        assert type(t.bit_generator).__name__ == _random.secure_bit_generator_name()
        assert t.integers(2**63, size=4).tolist() != mine
    # Power: a plain randomgen generator with the same state pickles as a copy of the stream.
    plain_bits = type(g.bit_generator).__mro__[1]()
    plain_bits.state = {**state, "bit_generator": plain_bits.state["bit_generator"]}
    plain = np.random.Generator(plain_bits)
    assert _pickled(plain).integers(2**63, size=4).tolist() == plain.integers(2**63, size=4).tolist()


def test_chacha_generators_are_re_keyed_too(monkeypatch):
    monkeypatch.setattr(_random, "secure_bit_generator_name", lambda: "ChaCha")
    g = _random.secure_generator()
    h = _pickled(g)
    assert type(h.bit_generator).__name__ == "ChaCha"
    assert h.bit_generator.state["state"]["rounds"] == 20
    assert h.random(4).tolist() != g.random(4).tolist()


def test_seeded_generators_still_pickle_as_copies():
    g = _random.seeded_generator(5, (3,))
    assert _pickled(g).random(4).tolist() == g.random(4).tolist()


def test_a_pickled_unseeded_privatizer_draws_its_own_noise():
    """The datasets/multiprocessing pitfall: a Privatizer shipped to two workers must not add the
    same noise in both; a seeded one must give the same output everywhere."""
    text = ["the quick brown fox jumps over the lazy dog " * 8]
    mech = create("mvc", epsilon=1.0)
    p = Privatizer(mech)
    a, b = _pickled(p), _pickled(p)
    assert a.run(text) != b.run(text)
    s = Privatizer(mech, seed=3)
    assert _pickled(s).run(text) == _pickled(s).run(text) == s.run(text)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_re_keys_its_secure_generators():
    g = _random.secure_generator()
    saved = g.bit_generator.state
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.write(write, g.integers(2**63, size=4).tobytes())
        os._exit(0)
    os.waitpid(pid, 0)
    child = np.frombuffer(os.read(read, 64), dtype=np.int64).tolist()
    os.close(read)
    os.close(write)
    parent = g.integers(2**63, size=4).tolist()
    assert child != parent
    g.bit_generator.state = saved  # the parent's own stream is untouched
    assert g.integers(2**63, size=4).tolist() == parent


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 10**40])
def test_library_seed_is_in_the_librarys_range_and_reproducible(seed):
    """Another library's seed (scikit-learn takes at most 2**32 - 1) comes from textdp's public
    generator of any textdp seed, the drawn ones (< 2**63) and larger ones included (issue 37)."""
    s = _random.library_seed(seed)
    assert 0 <= s <= 2**32 - 1 and s == _random.library_seed(seed)
    assert 0 <= _random.library_seed(seed, high=2**31 - 1) <= 2**31 - 1
    # One stream per purpose, and not seed mod 2**32 (which would merge 1 and 2**32 + 1).
    assert _random.library_seed(seed, 1) != s
    assert _random.library_seed(seed + 2**32) != s


def test_library_seed_refuses_a_bad_range():
    with pytest.raises(ValueError, match="positive integer"):
        _random.library_seed(1, high=0)
