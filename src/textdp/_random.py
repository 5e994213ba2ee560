"""Where randomness comes from: OS entropy by default, or a user seed for reproducible runs.

A seeded run derives document i's generator from (seed, i) alone —
``numpy.random.default_rng(numpy.random.SeedSequence(seed, spawn_key=(i,)))`` — so its output
does not depend on the batch size, on how a corpus is split, or on which worker runs a document.
"""

from __future__ import annotations

import numpy as np

SEEDED_NOTE = "reproducible, not for production: anyone who learns the seed can undo the noise"


def document_generator(seed: int, position: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(position,)))


def describe(seed: int | None) -> dict:
    if seed is None:
        return {"source": "os-entropy", "seeded": False}
    return {"source": "seed", "seeded": True, "seed": seed,
            "derivation": "document i uses default_rng(SeedSequence(seed, spawn_key=(i,)))",
            "note": SEEDED_NOTE}
