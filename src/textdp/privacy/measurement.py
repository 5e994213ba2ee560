"""Measurements: what a mechanism promises, with stable machine ids for its metric and notion.

A measurement (OpenDP's ``Measurement``; Tumult Core's ``privacy_function``) is the part of a
mechanism a privacy account needs: the **input metric** (how far apart two inputs are), the
**notion** the guarantee is stated in (its output measure), and the **privacy map** d_in → (ε, δ)
the mechanism spends on two inputs at distance d_in, rounded to the safe side. Two releases
compose (their ε's add) only when they are measured in the same metric under the same notion, so
the ledger keys composition on the ids here, never on the prose a report prints: rewording a
sentence must not split one budget into two.

Ids are plain strings, stable across processes and textdp versions (they are written to ledgers):

* notions (:data:`NOTION_IDS`): ``metric-dp``, ``utility-optimised-metric-dp``,
  ``output-set-dp``, ``pure-lipschitz``, ``approx-lipschitz``, ``sentence-dp``, ``local-dp``,
  ``approx-dp`` (dataset level), ``none``;
* input metrics: ``word-euclidean:<vocabulary fingerprint>`` (MVC, Vickrey, Gumbel, TEM,
  SanText), ``word-mahalanobis:lam=<λ>:<fingerprint>``, ``word-list-position:<lists
  fingerprint>`` (1-Diffractor), ``word-output-set:k=<K>[:excluded=…]:<fingerprint>`` (CusText:
  0 / 1 within an output set / ∞ across: a substitution metric over the candidate sets),
  ``vector-l2`` (PrivEmb, LaplaceVector; refined by the input space: ``@vectors`` or
  ``@encoder:<name>:<fingerprint>``), ``sentence-substitution`` (DeepCandidate, Truncation;
  ``@splitter:<name>``), ``document-substitution`` (DP-Prompt: any two documents),
  ``dataset-add-remove:document`` and ``dataset-add-remove:person`` (DP synthetic text: datasets
  that differ by one document, or by all documents of one person).

A word mechanism's id names its vocabulary (or lists), so it is complete; the id of a mechanism
whose inputs reach it through a map the mechanism does not see (an encoder, a sentence
splitter) is completed by the release's input space (:class:`InputSpace`, typed: its id and its
prose are rendered from its fields; only ledger lines written before ids were recorded are read
back from their prose, by :func:`legacy_metric_id`).

Pure: no files, no mechanisms imported (they import :mod:`textdp.privacy`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp.privacy import Budget, Notion, check_distance, round_up_product, round_up_sum

__all__ = ["NOTION_IDS", "InputSpace", "Measurement", "allocated", "composed", "document_map",
           "legacy_metric_id", "measurement_of", "notion_from_id", "notion_id", "space_id"]

#: The stable id of each notion (what ledgers key on; the Notion's value is the prose).
NOTION_IDS: dict[Notion, str] = {
    Notion.METRIC_DP: "metric-dp",
    Notion.UTILITY_OPTIMISED_METRIC_DP: "utility-optimised-metric-dp",
    Notion.OUTPUT_SET_DP: "output-set-dp",
    Notion.PURE_LIPSCHITZ: "pure-lipschitz",
    Notion.APPROXIMATE_LIPSCHITZ: "approx-lipschitz",
    Notion.SENTENCE_DP: "sentence-dp",
    Notion.LOCAL_DP: "local-dp",
    Notion.APPROXIMATE_DP: "approx-dp",
    Notion.NONE: "none",
}
_BY_ID = {v: k for k, v in NOTION_IDS.items()}

#: The id of a metric named only by its prose (a ledger line this textdp cannot map): the hash
#: keeps it apart from every other metric, so it never joins a group it does not belong to.
_PROSE = "prose:"


def notion_id(notion: Notion | str) -> str:
    """The stable id of ``notion`` (a :class:`Notion` or its prose value); ValueError if unknown."""
    return NOTION_IDS[Notion(notion)]


def notion_from_id(ident: str) -> Notion:
    """The :class:`Notion` of a stable id; ValueError if unknown."""
    try:
        return _BY_ID[ident]
    except KeyError:
        raise ValueError(f"unknown notion id {ident!r}") from None


@dataclass(frozen=True, slots=True)
class Measurement:
    """A mechanism's privacy promise as data: input metric, notion and privacy map.

    Attributes:
        name: the mechanism (or composition) it measures.
        input_metric: the stable id of the metric d_in is measured in.
        notion: the stable id of the notion (:data:`NOTION_IDS`).
        map: the privacy map d_in → :class:`Budget` (vectorised over d_in, rounded up).
        metric_text: the metric in words, for reports (rendering only; never compared).
        parts: the measurements a composed measurement is made of (empty for a mechanism).
    """

    name: str
    input_metric: str
    notion: str
    map: Callable[[Any], Budget] = field(repr=False, compare=False)
    metric_text: str = ""
    parts: tuple[Measurement, ...] = ()

    def privacy_map(self, d_in: Any) -> Budget:
        """The (ε, δ) spent on two inputs at distance ``d_in`` (≥ 0), rounded up."""
        return self.map(check_distance(d_in))

    @property
    def key(self) -> tuple[str, str]:
        """(notion id, metric id): what two releases must share for their budgets to add."""
        return self.notion, self.input_metric

    def with_space(self, space: str) -> Measurement:
        """This measurement with its metric completed by the input space (a :func:`space_id`):
        embeddings of texts through an encoder, documents through a sentence splitter."""
        metric = _complete(self.input_metric, space)
        if metric == self.input_metric:
            return self
        return Measurement(self.name, metric, self.notion, self.map, self.metric_text, self.parts)


def _complete(metric: str, space: str) -> str:
    # A word metric names its vocabulary already; a document-substitution metric covers any two
    # documents whatever their encoding: neither is refined.
    if not space or metric.startswith(("word-", "document-substitution", "dataset-")) \
            or "@" in metric:
        return metric
    return f"{metric}@{space}"


def measurement_of(mechanism: Any, space: str = "") -> Measurement:
    """The measurement of a built mechanism (word, embedding, document or prompt): its
    ``input_metric`` id, its ``notion`` and its ``privacy_map``; ``space`` (a :func:`space_id`)
    completes the metric of a mechanism whose inputs reach it through an encoder or splitter."""
    metric = getattr(mechanism, "input_metric", None)
    if not isinstance(metric, str) or not metric:
        raise TypeError(f"{type(mechanism).__name__} has no input_metric id: it cannot be "
                        "measured (every textdp mechanism has one)")
    notion = mechanism.notion
    prose = getattr(mechanism, "metric", "")
    measured = Measurement(name=mechanism.name, input_metric=metric, notion=notion_id(notion),
                           map=mechanism.privacy_map,
                           metric_text=prose if isinstance(prose, str) else "")
    return measured.with_space(space)


def composed(parts: Sequence[Measurement], *, name: str | None = None) -> Measurement:
    """Sequential composition of measurements over the same input and metric: the map is the sum
    of the parts' maps (ε's and δ's add; Dwork & Roth 2014, Thm. 3.16; for metric DP the same
    argument with ε·d), each sum exact and rounded up. ValueError for parts that do not compose
    (different metrics or notions, or a notion without a composable statement). Pure and
    approximate Lipschitz privacy compose into approximate (a pure part has δ = 0)."""
    parts = tuple(parts)
    if not parts:
        raise ValueError("compose at least one measurement")
    notions = {p.notion for p in parts}
    if notions == {"pure-lipschitz", "approx-lipschitz"}:
        notions = {"approx-lipschitz"}
    keys = {(n, p.input_metric) for p in parts for n in notions}
    if len(keys) > 1:
        raise ValueError(f"measurements in different metrics or notions do not compose into one "
                         f"map: {sorted({p.key for p in parts})}")
    (notion, metric), = keys
    if notion in ("none", "utility-optimised-metric-dp"):
        raise ValueError(f"notion {notion!r} has no composable statement")

    def total(d_in: Any) -> Budget:
        budgets = [p.map(d_in) for p in parts]
        delta = min(1.0, round_up_sum(b.delta for b in budgets))
        eps = [np.asarray(b.epsilon, dtype=np.float64) for b in budgets]
        if eps[0].ndim == 0:
            values = [float(e) for e in eps]
            return Budget(math.inf if any(math.isinf(v) for v in values)
                          else round_up_sum(values), delta)
        flat = np.stack([e.ravel() for e in eps])
        out = np.array([math.inf if np.isinf(col).any() else round_up_sum(col.tolist())
                        for col in flat.T]).reshape(eps[0].shape)
        return Budget(out, delta)

    return Measurement(name=name or " + ".join(p.name for p in parts),
                       input_metric=metric, notion=notion, map=total,
                       metric_text=parts[0].metric_text, parts=parts)


def allocated(base: Measurement, *, epsilon_document: float, epsilon_top: float,
              public: bool) -> Measurement:
    """A word mechanism run under a budget allocation (:mod:`textdp.allocation`), as a
    measurement of its own: per word, in the base metric, d ↦ ε_top·d, ε_top the largest per-word
    ε the allocation gives (every word's ε_i ≤ ε_top, and the base map is linear in ε).

    For a public rule the per-document map is ``document_map``: two documents of n privatised
    words with max_i d(w_i, w′_i) = d_in spend Σ_i ε_i·d(w_i, w′_i) ≤ ε_doc·d_in, exactly
    (Meisenbacher et al. 2025; docs/allocation.md). A data-dependent rule's worst case is computed
    from the laws after the run (:meth:`textdp.allocation.Allocator.worst_case_per_word`): this
    measurement states the per-word map only, and under the notion of its base.
    """
    if not (epsilon_top > 0 and epsilon_document >= epsilon_top):
        raise ValueError("an allocation needs 0 < ε_top ≤ ε_doc")

    def per_word(d_in: Any) -> Budget:
        b = base.map(1.0)
        return Budget(round_up_product(epsilon_top, d_in), b.delta)

    rule = "public" if public else "data-dependent"
    return Measurement(name=f"{base.name} (allocation, {rule})", input_metric=base.input_metric,
                       notion=base.notion, map=per_word, metric_text=base.metric_text,
                       parts=(base,))


def document_map(epsilon_document: float, d_in: Any) -> Budget:
    """A public allocation's per-document map: d_in = max_i d(w_i, w′_i) ↦ ε_doc·d_in, rounded
    up (Σ_i ε_i ≤ ε_doc in exact arithmetic)."""
    return Budget(round_up_product(epsilon_document, check_distance(d_in)))


# --- input spaces ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class InputSpace:
    """What else fixes a release's metric besides the mechanism, typed: the vocabulary a word
    mechanism's metric is measured in, the vectors themselves, the encoder that turned texts into
    vectors, the sentence splitter of a document mechanism, or any two documents.

    Its :attr:`id` completes the measurement's metric id (:meth:`Measurement.with_space`) and
    its :attr:`prose` is what the ledger line records as ``space``: both are rendered from the
    fields, and nothing parses the prose back (the lines written before ids were recorded
    aside: :func:`legacy_metric_id`). Build one with the class methods.
    """

    kind: str = ""
    name: str = ""
    fingerprint: str = ""
    dim: int | None = None

    @classmethod
    def vocabulary(cls, fingerprint: str) -> InputSpace:
        return cls("vocabulary", fingerprint=fingerprint)

    @classmethod
    def vectors(cls, dim: int) -> InputSpace:
        return cls("vectors", dim=int(dim))

    @classmethod
    def encoder(cls, name: str, fingerprint: str = "") -> InputSpace:
        return cls("encoder", name=str(name), fingerprint=fingerprint or "")

    @classmethod
    def splitter(cls, name: str) -> InputSpace:
        return cls("splitter", name=str(name))

    @classmethod
    def any_documents(cls) -> InputSpace:
        return cls("documents")

    @classmethod
    def text(cls, prose: str) -> InputSpace:
        """A space known only by its words (a caller's own): its id is a hash of them."""
        return cls("prose", name=prose) if prose else cls()

    @property
    def id(self) -> str:
        """The stable id (``vocabulary:<fp>``, ``vectors``, ``encoder:<name>[:<fp>]``,
        ``splitter:<name>``; ``""`` for any two documents or no space; ``prose:<hash>``)."""
        if self.kind == "vocabulary":
            return f"vocabulary:{self.fingerprint}"
        if self.kind == "vectors":
            return "vectors"
        if self.kind == "encoder":
            return f"encoder:{self.name}" + (f":{self.fingerprint}" if self.fingerprint else "")
        if self.kind == "splitter":
            return f"splitter:{self.name}"
        if self.kind == "prose":
            return _prose_id(self.name)
        return ""

    @property
    def prose(self) -> str:
        """The space in words, as ledger lines record it."""
        if self.kind == "vocabulary":
            return f"vocabulary sha256 {self.fingerprint}"
        if self.kind == "vectors":
            return f"the input vectors themselves (R^{self.dim})"
        if self.kind == "encoder":
            return f"encoder {self.name} {self.fingerprint}".strip()
        if self.kind == "splitter":
            return f"sentence splitter {self.name}"
        if self.kind == "documents":
            return "any two documents"
        return self.name

    def __str__(self) -> str:
        return self.prose


# --- ledger lines written before these ids ---------------------------------------------------------

_SPACES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"vocabulary sha256 ([0-9a-f]{64})\Z"), lambda m: f"vocabulary:{m[1]}"),
    (re.compile(r"the input vectors themselves \(R\^\d+\)\Z"), lambda m: "vectors"),
    (re.compile(r"encoder (\S+)(?: (\S+))?\Z"),
     lambda m: f"encoder:{m[1]}" + (f":{m[2]}" if m[2] else "")),
    (re.compile(r"sentence splitter (\S+)\Z"), lambda m: f"splitter:{m[1]}"),
    (re.compile(r"any two documents\Z"), lambda m: ""),
)


def space_id(space: str | None) -> str:
    """The stable id of the input space recorded in words by a ledger line written before ids
    were recorded (``vocabulary sha256 …``, ``the input vectors themselves (R^d)``, ``encoder NAME
    FP``, ``sentence splitter NAME``, ``any two documents``); other words get ``prose:<sha256>``.
    Only :func:`legacy_metric_id` reads prose: a release made now records the id of its typed
    :class:`InputSpace`."""
    if not space:
        return ""
    for pattern, render in _SPACES:
        m = pattern.match(space)
        if m:
            return render(m)
    return _prose_id(space)


def _prose_id(*words: str) -> str:
    return _PROSE + hashlib.sha256("\x00".join(words).encode("utf-8")).hexdigest()[:16]


_EUCLIDEAN = frozenset({"mvc", "vickrey", "gumbel", "tem", "santext", "santext_plus"})


def legacy_metric_id(name: str, parameters: Mapping[str, Any], metric: str, space: str) -> str:
    """The metric id of a ledger line written before ids were recorded (``textdp.ledger/1`` and
    ``/2`` lines without ``measurement``): derived from the mechanism's name, its recorded
    parameters and the input space, as :func:`measurement_of` would give it now. A line whose
    metric cannot be derived gets an id of its prose (metric and space), so it still composes with
    the lines of the same prose, as it did, and with nothing else."""
    space_ = space_id(space)
    vocabulary = space_[len("vocabulary:"):] if space_.startswith("vocabulary:") else None
    ident: str | None = None
    if name in _EUCLIDEAN and vocabulary:
        ident = f"word-euclidean:{vocabulary}"
    elif name == "mahalanobis" and vocabulary and isinstance(parameters.get("lam"), (int, float)):
        ident = f"word-mahalanobis:lam={float(parameters['lam'])!r}:{vocabulary}"
    elif name == "diffractor" and isinstance(parameters.get("lists_fingerprint"), str):
        ident = f"word-list-position:{parameters['lists_fingerprint']}"
    elif name in ("custext", "custext_plus") and vocabulary and isinstance(parameters.get("k"),
                                                                            int):
        excluded = ""
        if name == "custext_plus":
            excluded = ":excluded=english" if parameters.get("stopwords") == "textdp English" \
                else None  # user-supplied stop words: not recorded, cannot be derived
        if excluded is not None:
            ident = f"word-output-set:k={parameters['k']}{excluded}:{vocabulary}"
    elif name in ("privemb", "laplace-vector"):
        ident = _complete("vector-l2", space_)
    elif name in ("deepcandidate", "truncation"):
        ident = _complete("sentence-substitution", space_)
    elif name == "dp_prompt":
        ident = "document-substitution"
    return ident if ident is not None else _prose_id(metric, space)
