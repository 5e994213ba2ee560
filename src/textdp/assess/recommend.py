"""The recommendation under the user's targets, and the formal guarantee in plain words.

Targets are checked on the safe side: linkage by the upper end of its 95% interval, the
entities by the count that survived in the sample, utility by the lower end of the similarity
interval (and task accuracy, when asked for, by the lower end of its interval).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textdp.privacy import format_up

__all__ = ["Targets", "build_targets", "parse_linkage", "recommend", "guarantee_in_words", "typical_losses"]


def parse_linkage(value: str | float | None, what: str = "max linkage"
                  ) -> tuple[float | None, float | None]:
    """``"5x"`` → (None, 5.0): at most 5 × chance; ``0.05`` or ``"5%"`` → (0.05, None)."""
    if value is None:
        return None, None
    if isinstance(value, str):
        text = value.strip().lower()
        try:
            if text.endswith(("x", "×")):
                times = float(text[:-1])
                if not times >= 1:
                    raise ValueError
                return None, times
            number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ValueError(f"{what} must be a fraction (0.05), a percentage (5%) or a "
                             f"multiple of chance (5x), got {value!r}") from None
    else:
        number = float(value)
    if not 0 <= number <= 1:
        raise ValueError(f"{what} must be between 0 and 1 (a fraction), got {value!r}")
    return number, None


@dataclass(frozen=True, slots=True)
class Targets:
    """What a release must meet.

    Attributes:
        max_linkage: top-1 linkage at most this fraction (None: no bound).
        max_linkage_times_chance: top-1 linkage at most this multiple of chance (1/n).
        max_entities: at most this many entities and identifiers of the sample survive.
        min_utility: mean MiniLM similarity at least this.
        max_author_linkage, max_author_linkage_times_chance: the same bounds on top-1 author
            linkage (checked where it was measured: with a person field).
        max_attribute, max_attribute_times_chance: the attribute attack's accuracy at most this
            fraction, or this multiple of always guessing the most frequent value.
    """

    max_linkage: float | None = None
    max_linkage_times_chance: float | None = 5.0
    max_entities: int | None = 0
    min_utility: float | None = None
    max_author_linkage: float | None = None
    max_author_linkage_times_chance: float | None = None
    max_attribute: float | None = None
    max_attribute_times_chance: float | None = None

    def _bounded(self) -> list[tuple[str, str, str, float | None, float | None]]:
        """(name, row field, chance field, fraction bound, × chance bound) of each risk."""
        return [("linkage", "linkage_top1", "linkage_chance", self.max_linkage,
                 self.max_linkage_times_chance),
                ("author linkage", "author_linkage_top1", "author_linkage_chance",
                 self.max_author_linkage, self.max_author_linkage_times_chance),
                ("attribute inference", "attribute_accuracy", "attribute_chance",
                 self.max_attribute, self.max_attribute_times_chance)]

    def describe(self) -> str:
        parts = []
        if self.max_linkage is not None:
            parts.append(f"linkage at most {self.max_linkage:.1%}")
        if self.max_linkage_times_chance is not None:
            parts.append(f"linkage at most {self.max_linkage_times_chance:g}× chance")
        if self.max_entities is not None:
            parts.append(f"at most {self.max_entities} entities or identifiers surviving")
        if self.min_utility is not None:
            parts.append(f"similarity at least {self.min_utility:g}")
        for name, _, _, fraction, times in self._bounded()[1:]:
            if fraction is not None:
                parts.append(f"{name} at most {fraction:.1%}")
            if times is not None:
                parts.append(f"{name} at most {times:g}× chance")
        return ", ".join(parts) or "no targets"

    def _risks(self, row: Mapping[str, Any]) -> list[tuple[str, float, float, float]]:
        """(name, upper end of the 95% interval, bound, chance) of each bounded risk that
        ``row`` measured (a risk it did not measure is not checked)."""
        out = []
        for name, key, chance_key, fraction, times in self._bounded():
            interval, chance = row.get(key + "_interval"), row.get(chance_key)
            if interval is None or (fraction is None and times is None):
                continue
            bounds = [b for b in (fraction, None if times is None or chance is None
                                  else times * chance) if b is not None]
            if bounds:
                out.append((name, interval[1], min(bounds), chance or 0.0))
        return out

    def misses(self, row: Mapping[str, Any]) -> list[str]:
        """What ``row`` fails, in words (empty: it meets every target)."""
        out = []
        for name, high, bound, chance in self._risks(row):
            if high > bound:
                out.append(f"{name} up to {high:.1%} > {bound:.1%}"
                           + (f" ({high / chance:.1f}× chance)" if chance > 0 else ""))
        if (self.max_entities is not None and row.get("entities_survived_count") is not None
                and row["entities_survived_count"] > self.max_entities):
            out.append(f"{row['entities_survived_count']} entities/identifiers survived > "
                       f"{self.max_entities}")
        if (self.min_utility is not None and row.get("similarity_interval") is not None
                and row["similarity_interval"][0] < self.min_utility):
            out.append(f"similarity from {row['similarity_interval'][0]:.2f} < "
                       f"{self.min_utility:g}")
        return out

    def shortfall(self, row: Mapping[str, Any]) -> float:
        """How far ``row`` is from meeting the targets: the sum of each missed target's relative
        excess (0 when it meets them all)."""
        total = 0.0
        for _, high, bound, _ in self._risks(row):
            total += max(high - bound, 0.0) / max(bound, 1e-12)
        if self.max_entities is not None and row.get("entities_survived_count") is not None:
            total += max(row["entities_survived_count"] - self.max_entities, 0) / (
                self.max_entities + 1)
        if (self.min_utility is not None and self.min_utility > 0
                and row.get("similarity_interval") is not None):
            total += max(self.min_utility - row["similarity_interval"][0], 0.0) / self.min_utility
        return total


#: release_spec keywords that assess() sets itself (or, the ledger, never).
_FORBIDDEN = ("mechanism", "epsilon", "seed", "ledger", "epsilon_document")


def build_targets(release_options: Mapping[str, Any], time_budget: Any, max_linkage: Any,
             max_entities: Any, min_utility: Any, max_author_linkage: Any = None,
             max_attribute: Any = None, *, persons: bool = True, sensitive: bool = True
             ) -> Targets:
    """The targets of :func:`textdp.assess`, checked (and its release options checked for
    keywords it takes itself); the author and attribute targets apply only with ``persons``
    and ``sensitive`` data, but are checked either way (a slip is still a slip)."""
    parse_linkage(max_author_linkage, "max author linkage")
    parse_linkage(max_attribute, "max attribute")
    max_author_linkage = max_author_linkage if persons else None
    max_attribute = max_attribute if sensitive else None
    for name in _FORBIDDEN:
        if name in release_options:
            raise TypeError(f"assess() takes no {name!r}: "
                            + ("it assesses and releases nothing, so it spends no budget"
                               if name == "ledger" else "give mechanisms=, epsilons=, seed="))
    if isinstance(time_budget, bool) or not (isinstance(time_budget, int | float)
                                             and time_budget > 0):
        raise ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
    linkage_fraction, linkage_times = parse_linkage(max_linkage)
    if max_entities is not None and (isinstance(max_entities, bool) or
                                     not isinstance(max_entities, int) or max_entities < 0):
        raise ValueError(f"max_entities must be a non-negative integer, got {max_entities!r}")
    if min_utility is not None:
        if isinstance(min_utility, bool) or not isinstance(min_utility, int | float):
            raise TypeError(f"min_utility must be a number between 0 and 1, got "
                            f"{type(min_utility).__name__}")
        if not 0 <= min_utility <= 1:  # NaN fails too: a target no setting can meet is a slip
            raise ValueError(f"min_utility must lie in [0, 1] (a mean similarity or a task "
                             f"accuracy), got {min_utility!r}")
    author_fraction, author_times = parse_linkage(max_author_linkage, "max author linkage")
    attribute_fraction, attribute_times = parse_linkage(max_attribute, "max attribute")
    return Targets(max_linkage=linkage_fraction, max_linkage_times_chance=linkage_times,
                   max_entities=max_entities,
                   min_utility=None if min_utility is None else float(min_utility),
                   max_author_linkage=author_fraction,
                   max_author_linkage_times_chance=author_times,
                   max_attribute=attribute_fraction, max_attribute_times_chance=attribute_times)



def _utility(row: Mapping[str, Any]) -> float:
    return row["task_accuracy"] if row.get("task_accuracy") is not None else row["similarity"]


def recommend(rows: Sequence[Mapping[str, Any]], targets: Targets) -> dict[str, Any]:
    """The best row meeting ``targets`` (highest task accuracy with labels, else similarity;
    ties: lower linkage), or, when none does, the rows nearest to meeting them. A reference row
    (the zero-private-data baseline) is never picked."""
    candidates = [i for i, r in enumerate(rows) if not r.get("reference")
                  and not r.get("refused")]
    meeting = [i for i in candidates if not targets.misses(rows[i])]
    if meeting:
        # A synthetic corpus has no per-document linkage: it ranks as no linkage.
        best = max(meeting, key=lambda i: (_utility(rows[i]),
                                           -(rows[i].get("linkage_top1") or 0.0)))
        return {"met": True, "index": best, "targets": targets.describe(),
                "meeting": len(meeting)}
    # Nearest: fewest targets missed, then the smallest relative excess, then the most useful.
    order = sorted(candidates, key=lambda i: (len(targets.misses(rows[i])),
                                              targets.shortfall(rows[i]), -_utility(rows[i])))
    nearest = [{"index": i, "misses": targets.misses(rows[i])} for i in order[:3]]
    return {"met": False, "index": None, "targets": targets.describe(), "meeting": 0,
            "nearest": nearest}


def typical_losses(mechanism: Any, word_ids: np.ndarray, rng: np.random.Generator,
                   n_words: int = 200) -> dict[str, float] | None:
    """The privacy loss ε·d (the mechanism's own :meth:`privacy_loss`, rounded up) between a
    word of the data and (a) its nearest other vocabulary word, (b) a random vocabulary word:
    medians over up to ``n_words`` distinct words of the data. None when the mechanism states
    no per-word loss."""
    ids = np.unique(np.asarray(word_ids, dtype=np.int64))
    if ids.size == 0:
        return None
    if ids.size > n_words:
        ids = rng.choice(ids, size=n_words, replace=False)
    size = len(mechanism.vocabulary)
    everything = np.arange(size)
    nearest, random = [], []
    for a in ids.tolist():
        try:
            loss = np.asarray(mechanism.privacy_loss(np.full(size, a), everything),
                              dtype=np.float64)
        except (NotImplementedError, AttributeError):
            return None
        loss[a] = np.inf
        nearest.append(loss.min())
        random.append(loss[rng.integers(size)] if size > 1 else np.inf)
    return {"nearest": float(np.median(nearest)), "random": float(np.median(random)),
            "words": int(ids.size)}


def _factor(loss: float) -> str:
    if not math.isfinite(loss):
        return "unbounded"
    if loss > 700:
        return f"e^{loss:.0f}"
    f = math.exp(loss)
    return f"{f:,.0f}" if f >= 100 else f"{f:.2f}" if f < 10 else f"{f:.1f}"


def _whole(whole: Mapping[str, Any] | None) -> str:
    """The whole-document guarantee (the one the ledger states) as a sentence."""
    if not whole:
        return ""
    if not math.isfinite(whole["epsilon_per_unit"]):
        return f" Two whole documents: no finite bound ({whole['why']})."
    return (f" Two whole documents of n {whole['unit']}s, whatever their {whole['unit']}s: "
            f"ε ≤ n × {format_up(whole['epsilon_per_unit'], 4)} (the {whole['unit']} replaced by "
            f"the farthest one); for the median document of your data (n = "
            f"{whole['median_units']}): ε ≤ {format_up(whole['epsilon_median_document'], 4)}, the "
            "whole-document guarantee the ledger reports.")


def guarantee_in_words(row: Mapping[str, Any], losses: Mapping[str, float] | None,
                       guarantee: Mapping[str, Any]) -> str:
    """The formal guarantee of one setting as a person reads it: which two documents it makes
    hard to tell apart, by what factor, and whether that factor means anything."""
    name = row["mechanism"]
    if not guarantee.get("verified", True):
        return (f"{name}: no formal guarantee could be established for these parameters "
                f"({guarantee.get('notion', '')}); treat the private text as unprotected except "
                "for what the measurements above show.")
    notion = str(guarantee.get("notion", ""))
    if losses is None:
        return f"{name} at ε = {row['epsilon']:g}: {notion}; {guarantee.get('per_word', '')}."
    near, rand = losses["nearest"], losses["random"]
    setting = (f"{row.get('label', name)} at ε = {row['epsilon']:g}"
               + (" (document budget)" if row.get("epsilon_is_document_budget") else "") + ": ")
    scope = ("words in the same output set" if "share an output set" in notion
             else "a word of your data and its nearest neighbour in the vocabulary")
    text = setting + (f"Take two documents that differ in one word: {scope}. Whoever sees the private "
            f"text can tell which of the two it came from with a likelihood ratio of at most "
            f"e^(ε·d) = e^{near:.2f} ≈ {_factor(near)} (median over {losses['words']} words of "
            f"your data). For the word and a random word of the vocabulary the factor is "
            f"{_factor(rand)}. Documents that differ in k such words: the exponents add "
            f"(e^(k·{near:.2f})), for documents of the same length.")
    if "share an output set" in notion:
        text += (" Words in different output sets are not protected from each other at all "
                 "(the factor is unbounded).")
    if row.get("variant") == "allocation uniform":
        text += (f" With the document budget ε_doc = {row['epsilon']:g} split over the words, "
                 "the whole document's exponent is at most ε_doc × the largest distance "
                 "between the two documents' words.")
    text += _whole(row.get("whole_document"))
    if near > 3:
        text += (f" A factor of {_factor(near)} is too weak to mean much: at e^3 ≈ 20 an observer "
                 "who thought the two words equally likely is already 95% sure afterwards. What "
                 "protects this data at this setting is what the measurements show (linkage, "
                 "surviving names), not the formal bound.")
    elif near > 1:
        text += " This is a moderate guarantee (a factor between e and e^3 ≈ 20)."
    else:
        text += " This is a strong guarantee (a factor below e ≈ 2.7)."
    return text
