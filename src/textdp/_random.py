"""Where randomness comes from: every generator textdp uses is created here, and only here.

Three kinds, kept apart because they promise different things:

* **Secure** (the default, no seed): :func:`secure_generator` — a numpy ``Generator`` on a
  cryptographically secure bit generator keyed with fresh bytes from ``os.urandom``: randomgen's
  ``AESCounter`` (AES-128 in counter mode) where the CPU has AES instructions, else ``ChaCha``
  with 20 rounds (table-based software AES leaks its key through cache timing; ChaCha has no
  tables). PCG64, numpy's default, is fast and statistically sound but not secure: its seed
  can be recovered from its outputs (Bouillaguet, Martinez & Sauvage, "Practical seed-recovery
  for the PCG pseudo-random number generator", ToSC 2020), and with it every noise draw.
* **Seeded** (reproducible, not for production): :func:`seeded_generator` — numpy's PCG64 from
  ``SeedSequence(seed, spawn_key)``. A seeded run derives document i's generator from (seed, i)
  alone — ``default_rng(SeedSequence(seed, spawn_key=(i,)))`` — so its output does not depend on
  the batch size, on how a corpus is split, or on which worker runs a document;
  :class:`DocumentGenerators` derives many of them at once.
* **Public** (part of a published mechanism or experiment, not a secret: PrivEmb's and
  DeepCandidate's projections, 1-Diffractor's list start words, evaluation sampling):
  :func:`public_generator` and :func:`public_bit_generator` — PCG64 from the published seed, so
  anyone can recompute them.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import numpy as np

__all__ = ["SEEDED_NOTE", "secure_generator", "secure_bit_generator_name", "seeded_generator",
           "generator", "public_generator", "public_bit_generator", "document_generator",
           "DocumentGenerators", "describe", "library_seed"]

SEEDED_NOTE = "reproducible, not for production: anyone who learns the seed can undo the noise"

Seed = int | Sequence[int] | np.random.SeedSequence


@cache
def secure_bit_generator_name() -> str:
    """Name of the secure bit generator on this CPU: ``"AESCounter"`` (AES-NI) or ``"ChaCha"``."""
    from randomgen import AESCounter

    return "AESCounter" if AESCounter(key=0).use_aesni else "ChaCha"


def secure_generator() -> np.random.Generator:
    """A fresh Generator on a cryptographically secure bit generator keyed from ``os.urandom``.

    The key is set directly (``key=``), not passed through a SeedSequence: all of its 128
    (AESCounter) or 256 (ChaCha) bits come from the operating system. Its stream is never
    duplicated: a pickled or deep-copied secure generator comes back freshly keyed, and a forked
    child process re-keys it (below).
    """
    return np.random.Generator(_fresh_secure_bits())


# A secure stream must never exist twice. Pickling (``multiprocessing``, ``datasets.map(num_proc=…)``,
# Ray, ``copy.deepcopy``) would otherwise ship its key and counter, and a forked child would
# continue its parent's stream: every worker would add the same noise. So the secure bit generators
# are subclasses (same names) whose pickle rebuilds a freshly keyed generator, and a forked child
# re-keys every live one before it runs anything.
_LIVE: weakref.WeakSet = weakref.WeakSet()


def _fresh_key(name: str) -> int:
    return int.from_bytes(os.urandom(16 if name == "AESCounter" else 32), "little")


def _fresh_secure_bits() -> Any:
    """A secure bit generator with a fresh key; also what unpickling one gives."""
    name = secure_bit_generator_name()
    bits = _secure_bit_class(name)(key=_fresh_key(name))
    _LIVE.add(bits)
    return bits


@cache
def _secure_bit_class(name: str) -> type:
    if name == "AESCounter":
        from randomgen import AESCounter as base

        kwargs: dict[str, Any] = {}
    else:
        from randomgen import ChaCha as base

        kwargs = {"rounds": 20}

    def __init__(self, *, key: int) -> None:  # noqa: N807 - a method of the class built below
        base.__init__(self, key=key, **kwargs)

    def __reduce__(self) -> tuple:  # noqa: N807
        return (_fresh_secure_bits, ())

    return type(base.__name__, (base,), {"__init__": __init__, "__reduce__": __reduce__,
                                         "__module__": __name__})


def _rekey_after_fork() -> None:
    for bits in list(_LIVE):
        bits.seed(key=_fresh_key(type(bits).__name__))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_rekey_after_fork)


def seeded_generator(seed: Seed, spawn_key: Sequence[int] = ()) -> np.random.Generator:
    """PCG64 from ``SeedSequence(seed, spawn_key=spawn_key)``: reproducible, not secure.

    With no spawn key this is exactly ``numpy.random.default_rng(seed)``; a SeedSequence (e.g. a
    spawned child) is used as it is.
    """
    if seed is None:
        raise TypeError("a seeded generator needs a seed; use secure_generator() for none")
    if isinstance(seed, np.random.SeedSequence):
        if spawn_key:
            raise TypeError("pass an integer seed with a spawn key, not a SeedSequence")
        return np.random.default_rng(seed)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=tuple(spawn_key)))


def generator(seed: Seed | None = None) -> np.random.Generator:
    """:func:`secure_generator` when ``seed`` is None, else :func:`seeded_generator`."""
    return secure_generator() if seed is None else seeded_generator(seed)


def public_generator(seed: Seed, spawn_key: Sequence[int] = ()) -> np.random.Generator:
    """Randomness that is public by design (a published projection, sampling in an evaluation).

    The same PCG64 stream as :func:`seeded_generator`; the name marks that nothing secret is drawn.
    """
    return seeded_generator(seed, spawn_key)


#: The spawn key under which :func:`library_seed` derives other libraries' seeds: two words, so
#: it never equals a document's one-word key ``(i,)``.
_LIBRARY_KEY = 0x6C6962  # "lib"


def library_seed(seed: Seed, purpose: int = 0, *, high: int = 2**32 - 1) -> int:
    """A seed for another library, in ``[0, high]``, derived from textdp's public generator.

    scikit-learn's ``random_state`` (and numpy's legacy ``RandomState``) take at most
    ``2**32 - 1``, while textdp's seeds are any non-negative integer (its own drawn ones up to
    ``2**63``): passing one through crashes, and reducing it modulo ``2**32`` would merge seeds
    that differ only above bit 32. So a library's seed is drawn from
    ``public_generator(seed, spawn_key=(_LIBRARY_KEY, purpose))``: reproducible from ``seed``,
    distinct per ``purpose`` (one number per use, so two uses do not share a stream), and in
    range. Public, like every seed given to a library: never use it for noise.
    """
    if isinstance(high, bool) or not isinstance(high, int) or high < 1:
        raise ValueError(f"high must be a positive integer, got {high!r}")
    return int(public_generator(seed, (_LIBRARY_KEY, int(purpose))).integers(high, endpoint=True))


def public_python_random(seed: int) -> Any:
    """``random.Random(seed)``: public by design, for generated data whose stream must stay the
    same across numpy versions (:mod:`textdp.datasets.tickets`); never for noise."""
    import random

    return random.Random(seed)


def public_bit_generator(seed: int) -> np.random.PCG64:
    """``numpy.random.PCG64(seed)``, for derivations stated on its raw bit stream (NEP 19)."""
    return np.random.PCG64(seed)


def document_generator(seed: int, position: int) -> np.random.Generator:
    """The generator of document ``position`` in a run seeded with ``seed``."""
    return seeded_generator(seed, (position,))


def describe(seed: int | None, unit: str = "document i") -> dict:
    """The report's ``randomness`` section for a run with ``seed`` (None: the secure default).

    ``unit`` names what stream i feeds (documents for text; a chunk of rows for vectors).
    """
    if seed is None:
        return {"source": "os-entropy", "seeded": False, "bit_generator": secure_bit_generator_name(),
                "cryptographically_secure": True}
    return {"source": "seed", "seeded": True, "seed": seed,
            "derivation": f"{unit} uses default_rng(SeedSequence(seed, spawn_key=(i,)))",
            "note": SEEDED_NOTE, "bit_generator": "PCG64", "cryptographically_secure": False}


_M32 = 0xFFFFFFFF
_M128 = (1 << 128) - 1
_PCG64_MULT = (2549297995355413924 << 64) + 4865540595714422341


class DocumentGenerators:
    """The generators of :func:`document_generator` for many documents at once.

    ``default_rng(SeedSequence(seed, spawn_key=(i,)))`` costs ~8 µs per document, mostly the
    SeedSequence hash in Python-level Cython. Its arithmetic (numpy's ``SeedSequence``: uint32
    hashmix/mix over the entropy words, then ``generate_state``; PCG64's ``srandom``) is redone
    here: the part that depends only on the seed once, the part that depends on i vectorised
    over documents, and one reused Generator receives each document's PCG64 state in turn.
    The result is checked against ``document_generator`` itself at construction; if numpy ever
    derives streams differently, every document falls back to ``document_generator``.
    """

    _INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    _MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715

    def __init__(self, seed: int) -> None:
        self.seed = seed
        words = self._words(seed)
        words += [0] * (4 - len(words))
        self._hc = self._INIT_A
        mixer = [self._hashmix(w) for w in words[:4]]
        for i_src in range(4):
            for i_dst in range(4):
                if i_src != i_dst:
                    mixer[i_dst] = self._mix(mixer[i_dst], self._hashmix(mixer[i_src]))
        for w in words[4:]:
            for i_dst in range(4):
                mixer[i_dst] = self._mix(mixer[i_dst], self._hashmix(w))
        self._mixer = mixer  # pool after the seed's words; the spawn key comes next
        self._bit_generator = np.random.PCG64()
        self._generator = np.random.Generator(self._bit_generator)
        self._exact = True
        probe = [0, 1, 2, 12345, 2**32 - 1]
        for p, g in zip(probe, self.many(np.array(probe)), strict=True):
            mine = g.bit_generator.state, g.random(4).tolist()
            ref_g = document_generator(seed, p)
            if mine != (ref_g.bit_generator.state, ref_g.random(4).tolist()):
                self._exact = False

    @staticmethod
    def _words(n: int) -> list[int]:
        out = []
        while n > 0:
            out.append(n & _M32)
            n >>= 32
        return out or [0]

    def _hashmix(self, value):
        value ^= self._hc
        self._hc = (self._hc * self._MULT_A) & _M32
        value = (value * self._hc) & _M32
        return value ^ (value >> 16)

    @classmethod
    def _mix(cls, x, y):
        r = (cls._MIX_L * x - cls._MIX_R * y) & _M32
        return r ^ (r >> 16)

    def _states(self, positions: np.ndarray) -> list[tuple[int, int]]:
        """(PCG64 state, increment) of the documents at ``positions`` (each < 2^32)."""
        u32 = np.uint32
        with np.errstate(over="ignore"):
            w = positions.astype(np.uint32)
            hc = self._hc
            mixer = []
            for i_dst in range(4):
                h = w ^ u32(hc)
                hc = (hc * self._MULT_A) & _M32
                h *= u32(hc)
                h ^= h >> u32(16)
                r = u32(self._MIX_L) * u32(self._mixer[i_dst]) - u32(self._MIX_R) * h
                r ^= r >> u32(16)
                mixer.append(r)
            hcb = self._INIT_B
            state = []
            for i_dst in range(8):
                v = mixer[i_dst % 4] ^ u32(hcb)
                hcb = (hcb * self._MULT_B) & _M32
                v *= u32(hcb)
                v ^= v >> u32(16)
                state.append(v.astype(np.uint64))
            val = [(state[2 * k] | (state[2 * k + 1] << np.uint64(32))).tolist() for k in range(4)]
        out = []
        for v0, v1, v2, v3 in zip(*val, strict=True):
            inc = ((((v2 << 64) | v3) << 1) | 1) & _M128
            # pcg_setseq_128_srandom_r: state = 0; step; state += initstate; step.
            st = ((inc + ((v0 << 64) | v1)) * _PCG64_MULT + inc) & _M128
            out.append((st, inc))
        return out

    def many(self, positions: np.ndarray) -> Iterator[np.random.Generator]:
        """Generators for ``positions`` in order; each is valid until the next one is taken."""
        positions = np.asarray(positions, dtype=np.int64)
        if not self._exact or (positions.size and int(positions.max()) >= 2**32):
            for p in positions.tolist():
                yield document_generator(self.seed, p)
            return
        bg, g = self._bit_generator, self._generator
        for st, inc in self._states(positions):
            bg.state = {"bit_generator": "PCG64", "state": {"state": st, "inc": inc},
                        "has_uint32": 0, "uinteger": 0}
            yield g
