"""How many documents an assessment measures in its time budget, from measured costs.

A pilot on the first documents of the sample measures, per document, what each part of a word
setting costs on this machine with this data (:class:`Costs`): the recognisers on an original
(once per document: :class:`textdp.assess.shared.SpanCache` shares them), one privatisation
with the spans shared, the entity model on a private text (the independent leakage count) and
the encoder. The encoder is by far the slowest part on a CPU (MiniLM: tens of milliseconds per
document against a few for the rest), so when every private text of every setting cannot be
encoded for the sample the budget allows without it, :func:`choose` keeps the sample large for
the figures that need no encoder (leakage, the TF-IDF attacks, task accuracy) and encodes a
seeded sub-sample of each setting's private texts (the same documents for every setting) for
the embedding attack and the similarity: each figure is stated with its own number of
documents and its own 95% interval.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Costs", "pilot_costs", "choose", "encoded_subsample", "PILOT", "TARGET"]

#: Documents of the pilot.
PILOT = 32
#: The sample the budget aims at before it encodes every private text: below it, encoding a
#: sub-sample buys more precision per second than encoding all of fewer documents.
TARGET = 500
#: Share of the budget the encoder sub-sample gets when it cannot encode everything.
ENCODER_SHARE = 0.25
#: The fewest documents encoded per setting (the similarity's interval needs a few dozen).
MIN_ENCODED = 25
#: Seconds per setting that do not scale with the documents (fits, the report's row).
PER_SETTING = 0.5
#: Safety factor on the measured costs (what the pilot does not see: the n × n attacks, the
#: classifiers' fits on more documents, a busier machine).
SLACK = 1.25


@dataclass(frozen=True, slots=True)
class Costs:
    """Measured seconds per document: ``spans`` (recognisers on an original, once),
    ``privatize`` (one word setting, spans shared), ``read`` (the entity model on a private
    text), ``encode`` (the encoder)."""

    spans: float
    privatize: float
    read: float
    encode: float

    def to_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) * 1000 for k in ("spans", "privatize", "read", "encode")}


def _timed(f: Any, *args: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t0


def pilot_costs(pilot: Sequence[str], spec: Any, embed: Any, reader: Any, cache: Any) -> Costs:
    """:class:`Costs` measured on ``pilot`` with the first word setting ``spec`` (the models
    loaded first: a one-time cost is not a per-document one). The pilot's spans stay in
    ``cache`` (its documents are the sample's first)."""
    warm = spec.privatizer()
    embed(warm.run(list(pilot[:2])))
    if reader is not None:
        reader.find(list(pilot[:2]))
    n = len(pilot)
    first = spec.privatizer()
    cache.attach(first)
    _, with_spans = _timed(first.run, list(pilot))
    again = spec.privatizer()
    cache.attach(again)
    private, shared = _timed(again.run, list(pilot))
    _, encode = _timed(embed, private)
    read = _timed(reader.find, private)[1] if reader is not None else 0.0
    return Costs(spans=max(with_spans - shared, 0.0) / n, privatize=shared / n, read=read / n,
                 encode=encode / n)


def choose(n_documents: int, costs: Costs, word_settings: int, other_settings: int,
           budget: float, *, minimum: int = 50, maximum: int = 5000) -> tuple[int, int, str]:
    """(documents, documents encoded per setting, the sentence saying why) for ``budget``
    seconds at ``costs``, with ``word_settings`` text settings and ``other_settings`` vector
    settings (whose per-document cost is negligible beside a text setting's)."""
    usable = budget / SLACK - PER_SETTING * (word_settings + other_settings)
    once = costs.spans + costs.encode + costs.read  # per original: spans, embedding, mentions
    cheap = once + word_settings * (costs.privatize + costs.read)
    encoder = word_settings * costs.encode
    target = min(n_documents, TARGET)
    fit_all = int(max(usable, 0.0) / (cheap + encoder)) if cheap + encoder > 0 else maximum
    if fit_all >= target or encoder == 0:
        n = min(max(min(fit_all, maximum), minimum), n_documents)
        m = n
    else:
        m = int(ENCODER_SHARE * max(usable, 0.0) / encoder)
        n = int((max(usable, 0.0) - m * encoder) / cheap) if cheap > 0 else maximum
        n = min(max(min(n, maximum), minimum), n_documents)
        m = min(max(m, min(n, MIN_ENCODED)), n)
    ms = 1000 * (cheap + encoder) / max(word_settings, 1)
    why = (f"{n} of {n_documents} documents: the number that fits a time budget of "
           f"{budget:g} s for {word_settings + other_settings} settings at the measured "
           f"{ms:.1f} ms per document and text setting")
    if n == n_documents and fit_all >= n_documents:
        why = f"all {n_documents} documents (they fit the time budget of {budget:g} s)"
    if m < n:
        why += (f"; the encoder's figures (the embedding attack, the similarity) on {m} of "
                f"them per setting, the same documents for every setting (MiniLM at "
                f"{costs.encode * 1000:.1f} ms per document is most of the cost)")
    return n, m, why


def encoded_subsample(n: int, m: int, seed: int) -> np.ndarray | None:
    """The sample's documents whose private texts are encoded (sorted; None when all are)."""
    from textdp import _random

    if m >= n:
        return None
    # A stream of its own, so that the sample itself is the same whatever m is.
    rng = _random.public_generator(seed, spawn_key=(_ENCODED_KEY,))
    return np.sort(rng.choice(n, size=m, replace=False))


#: The spawn key of the encoded sub-sample's stream ("enc").
_ENCODED_KEY = 0x656E63
