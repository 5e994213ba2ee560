"""One privacy report for every release: word, embedding and document mechanisms.

Every report has the same top-level keys (:data:`REPORT_KEYS`), whatever its ``kind``:

* ``schema``, ``kind`` (``"word"``, ``"embedding"`` or ``"document"``), ``textdp_version``,
  ``textdp_extras`` (the optional extras installed where it ran), ``created`` (UTC);
* ``mechanism``: ``name``, ``parameters`` and, for embedding and document mechanisms, what
  their ``describe()`` adds (projection, noise, snapping, …);
* ``guarantee``: the mechanism's :class:`~textdp.privacy.Guarantee` as a dict;
* ``inputs``: what the release was computed against besides the private data (vocabulary and
  policy; encoder and dimension; candidates, recoder, projections, sentence splitter);
* ``counts``: how much was released (documents and tokens; vectors; documents and sentences);
* ``unprotected``: list of ``{kind, count, why}`` released as it is;
* ``warnings``, ``randomness`` (:func:`textdp._random.describe`) and ``performance``.

Word reports also keep their sections of ``textdp.report/1`` at the top level (``vocabulary``,
``policy``, ``documents``, ``tokens``: the same objects as under ``inputs`` and ``counts``). The
command line adds ``io`` (files, records in and out). :func:`summary_line` is the one-line
summary of any kind.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from textdp import _random
from textdp.privacy import format_up
from textdp.privacy.unchanged import (
    DEFAULT_UNCHANGED_WARNING,
    expected_unchanged,
    percent,
    unchanged_warning,
)

__all__ = ["REPORT_KEYS", "SCHEMA", "Report", "ReportContext", "Section", "document_report",
           "embedding_report", "generation_report", "json_ready", "release_report",
           "summary_line", "word_report"]

SCHEMA = "textdp.report/1"

#: The top-level keys of every report, in order.
REPORT_KEYS = ("schema", "kind", "textdp_version", "textdp_extras", "created", "mechanism",
               "guarantee", "inputs", "counts", "unprotected", "warnings", "randomness",
               "performance")

_STRUCTURE = "structure: kept as it is by design"


# ------------------------------------------------------------------------------------------------
# The immutable report


def _readonly(*_: Any, **__: Any) -> Any:
    raise TypeError("a privacy report is immutable: pass what it should say to its builder "
                    "(textdp.privacy.report), or copy it with Report.to_dict()")


class _FrozenList(list):
    """A list that refuses every change (JSON and ``==`` see a list)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _readonly
    append = extend = insert = pop = remove = clear = sort = reverse = _readonly

    def __reduce__(self) -> tuple[Any, ...]:
        return (_FrozenList, (list(self),))

    def __copy__(self) -> _FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _FrozenList:
        return self


class _FrozenDict(dict):
    """A dict that refuses every change (JSON and ``==`` see a dict)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _readonly
    update = pop = popitem = setdefault = clear = _readonly

    def __reduce__(self) -> tuple[Any, ...]:
        return (_FrozenDict, (dict(self),))

    def __copy__(self) -> _FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _FrozenDict:
        return self


def _freeze(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return _FrozenDict((k, _freeze(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return _FrozenList(_freeze(v) for v in obj)
    return obj


def _thaw(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _thaw(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_thaw(v) for v in obj]
    return obj


@dataclass(frozen=True, slots=True)
class Section:
    """A report section a part of the run contributes (identifiers, entities): its body under
    ``name``, what it released unprotected and its warnings."""

    name: str
    body: Mapping[str, Any]
    unprotected: tuple[Mapping[str, Any], ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReportContext:
    """How and where a release ran: what a front adds to the report of its mechanism.

    Attributes:
        engine, workers: the engine (``"ray"``, ``"pandas"``, ``"datasets"``) and its workers.
        wall_seconds: the wall-clock time of a run split over workers: the report's rates are
            then per wall second and the summed time inside the workers is ``worker_seconds``.
        worker_peak_rss_bytes, driver_peak_rss_bytes: the largest worker RSS, this process's.
        sections: front sections (``pandas``, ``datasets``), ``(name, body)`` in order.
        ledger: a ledger release (its ``section`` and ``warnings``: :mod:`textdp.ledger`).
        notes: the front's own warnings, after the ledger's.
        io: the command line's files and records.
    """

    engine: str | None = None
    workers: int | None = None
    wall_seconds: float | None = None
    worker_peak_rss_bytes: int = 0
    driver_peak_rss_bytes: int | None = None
    sections: tuple[tuple[str, Any], ...] = ()
    ledger: Any = None
    notes: tuple[str, ...] = ()
    io: Any = None


@dataclass(frozen=True, slots=True)
class _LedgerPart:
    """What a ledger release adds to a report, read once when the report is built."""

    section: Mapping[str, Any]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Parts:
    """What a report is built from: the mechanism's content, the rates, the time, the context."""

    core: Mapping[str, Any]
    warnings: tuple[str, ...]
    rates: tuple[tuple[str, int], ...]
    seconds: float
    context: ReportContext = field(default_factory=ReportContext)


class Report(_FrozenDict):
    """A privacy report: built once by :func:`_build` (through :func:`word_report`,
    :func:`embedding_report`, :func:`document_report` or :func:`generation_report`), never
    edited. It reads as the JSON-ready mapping of :data:`REPORT_KEYS` (and the sections of its
    kind); every nested value is read-only too. :meth:`to_dict` gives a mutable copy,
    :meth:`with_context` a new report of the same release in a wider context (engine, ledger, io)."""

    __slots__ = ("_parts",)

    def __reduce__(self) -> tuple[Any, ...]:  # a copy elsewhere reads, it is not extended
        return (_restore, (dict(self), None))

    @property
    def kind(self) -> str:
        return self["kind"]

    @property
    def guarantee(self) -> Mapping[str, Any]:
        return self["guarantee"]

    @property
    def warnings(self) -> Sequence[str]:
        return self["warnings"]

    def to_dict(self) -> dict[str, Any]:
        """A mutable deep copy (plain dicts and lists)."""
        return _thaw(self)

    def with_context(self, *, sections: Mapping[str, Any] | None = None,
               notes: Iterable[str] = (), **context: Any) -> Report:
        """The report of the same release built again in a wider context: ``sections`` and
        ``notes`` are added after the existing ones, the other :class:`ReportContext` fields
        (``engine``, ``ledger``, ``io``, …) replace them."""
        parts = getattr(self, "_parts", None)
        if parts is None:
            raise TypeError("this report was not built here: it cannot be extended")
        old = parts.context
        new = replace(old, sections=(*old.sections, *(sections or {}).items()),
                      notes=(*old.notes, *notes), **context)
        return _build(replace(parts, context=new))


def _restore(data: dict[str, Any], parts: _Parts | None) -> Report:
    report = Report((k, _freeze(v)) for k, v in data.items())
    report._parts = parts
    return report


def _rate(count: int, seconds: float) -> float | None:
    """``count`` per second: one decimal from 10 up, else three significant digits (50 documents
    in 1,601 s are 0.0312 per second, not 0.0)."""
    if seconds <= 0:
        return None
    rate = count / seconds
    return round(rate, 1) if rate >= 10 else float(f"{rate:.3g}")


def _build(parts: _Parts) -> Report:
    """The one builder: the mechanism's content, the time and rates, and the context, in the
    order of :data:`REPORT_KEYS` (then the kind's sections, the engine, the front's sections,
    the ledger and the files)."""
    c = parts.context
    if c.ledger is not None and not isinstance(c.ledger, _LedgerPart):  # read once
        c = replace(c, ledger=_LedgerPart(c.ledger.section, tuple(c.ledger.warnings)))
        parts = replace(parts, context=c)
    core = dict(parts.core)
    if c.wall_seconds is None:
        performance: dict[str, Any] = {"wall_seconds": round(parts.seconds, 6)}
        performance.update((f"{u}_per_second", _rate(n, parts.seconds)) for u, n in parts.rates)
    else:
        wall = c.wall_seconds
        performance = {f"{u}_per_second": _rate(n, wall) for u, n in parts.rates}
        performance.update(worker_seconds=round(parts.seconds, 6), wall_seconds=round(wall, 6))
        if c.worker_peak_rss_bytes:
            performance["worker_peak_rss_mib"] = round(c.worker_peak_rss_bytes / 2**20, 1)
    if c.driver_peak_rss_bytes is not None:
        performance["driver_peak_rss_mib"] = round(c.driver_peak_rss_bytes / 2**20, 1)
    warnings = list(parts.warnings)
    extra: dict[str, Any] = {}
    if c.engine is not None:
        extra["engine"] = c.engine
    if c.workers is not None:
        extra["workers"] = int(c.workers)
    extra.update(c.sections)
    if c.ledger is not None:
        extra["ledger"] = c.ledger.section
        warnings += c.ledger.warnings
    warnings += c.notes
    if c.io is not None:
        extra["io"] = c.io
    head = {k: core.pop(k) for k in REPORT_KEYS[:REPORT_KEYS.index("warnings")]}
    data = {**head, "warnings": warnings, "randomness": core.pop("randomness"),
            "performance": performance, **core, **extra}
    return _restore(data, parts)


def _report(kind: str, mechanism: Mapping[str, Any], guarantee: Mapping[str, Any],
            inputs: Mapping[str, Any], counts: Mapping[str, Any],
            unprotected: list[dict[str, Any]], warnings: list[str], seed: int | None,
            seconds: float, rates: Sequence[tuple[str, int]], unit: str = "document i",
            sections: Mapping[str, Any] | None = None, late_warnings: Sequence[str] = (),
            context: ReportContext | None = None) -> Report:
    """The envelope every kind shares; a seeded run is always warned about. ``sections`` follow
    :data:`REPORT_KEYS`; ``late_warnings`` follow the seeded-run warning."""
    from textdp._guide import installed_extras
    from textdp._version import __version__

    warnings = list(warnings)
    if seed is not None and not any(w.startswith("seeded run") for w in warnings):
        warnings.append("seeded run: " + _random.SEEDED_NOTE)
    warnings += late_warnings
    core = {"schema": SCHEMA, "kind": kind, "textdp_version": __version__,
            "textdp_extras": installed_extras(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "mechanism": dict(mechanism), "guarantee": dict(guarantee), "inputs": dict(inputs),
            "counts": dict(counts), "unprotected": list(unprotected),
            "randomness": _random.describe(seed, unit), **(sections or {})}
    return _build(_Parts(core=_freeze(core), warnings=tuple(warnings), rates=tuple(rates),
                         seconds=float(seconds), context=context or ReportContext()))


def release_report(kind: str, mechanism: Mapping[str, Any], guarantee: Mapping[str, Any],
                   inputs: Mapping[str, Any], counts: Mapping[str, Any],
                   unprotected: list[dict[str, Any]], warnings: list[str], seed: int | None,
                   seconds: float, rates: Sequence[tuple[str, int]], *, unit: str = "document i",
                   sections: Mapping[str, Any] | None = None) -> Report:
    """The report of a release of another ``kind`` (``synthesis``: :mod:`textdp.synthesis`),
    built by the same builder and envelope as the others."""
    return _report(kind, mechanism, guarantee, inputs, counts, unprotected, warnings, seed,
                   seconds, rates, unit=unit, sections=sections)


def _details(description: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A mechanism's ``describe()`` split into the ``mechanism`` section and its warnings."""
    mechanism = {k: v for k, v in description.items() if k not in ("guarantee", "warnings")}
    if "mechanism" in mechanism:  # the document mechanisms name themselves under "mechanism"
        mechanism["name"] = mechanism.pop("mechanism")
    first = {"name": mechanism.pop("name"), "parameters": mechanism.pop("parameters")}
    return {**first, **mechanism}, list(description.get("warnings", []))


def word_report(mechanism: Any, tallies: Any, *, policy: Mapping[str, Any], seed: int | None,
                unchanged_threshold: float = DEFAULT_UNCHANGED_WARNING,
                sections: Sequence[Section] = (), allocation: Any = None,
                context: ReportContext | None = None) -> Report:
    """The report of a word-by-word privatisation (:class:`textdp.Privatizer`).

    Args:
        mechanism: the word mechanism (its ``name``, ``parameters``, ``guarantee``, ``vocabulary``).
        tallies: what the run counted (:class:`textdp.tallies.Tallies`): tokens per class and
            per policy, documents, time, and the per-row counts that give the ``deniability``
            section (:func:`textdp.privacy.unchanged.expected_unchanged`).
        policy: ``oov``, ``mask_token``, ``keep_stopwords``.
        seed: the run's seed (None: OS entropy).
        unchanged_threshold: warn when the expected unchanged fraction exceeds it.
        sections: the token policy's sections (``identifiers``, ``entities``), in order.
        allocation: a budget allocation's composed measurement
            (:meth:`textdp.allocation.Allocator.for_run`): the report then states its
            guarantee, parameters, observed unchanged fraction and warnings.
        context: engine, front sections, ledger, files (:class:`ReportContext`).
    """
    from textdp.tallies import CLASS_COUNTS, POLICY_COUNTS

    by_class = {k: tallies.by_class.get(k, 0) for k in CLASS_COUNTS}
    by_policy = {k: tallies.by_policy.get(k, 0) for k in POLICY_COUNTS}
    documents = {"count": tallies.documents, "empty": tallies.empty_documents,
                 "max_privatized_words_per_document": tallies.max_privatized}
    total = sum(by_class.values())
    unprotected = _word_unprotected(by_class, by_policy, documents["count"], policy)
    warnings = []
    if policy["oov"] == "keep" and (by_policy["oov_words_kept"] or by_policy["numbers_kept"]):
        warnings.append(
            f"released unprotected by oov=keep: {by_policy['oov_words_kept']} out-of-vocabulary "
            f"word token(s), {by_policy['numbers_kept']} number token(s)")
    word_counts = tallies.dense_word_counts(len(mechanism.vocabulary))
    deniability = _deniability(mechanism, word_counts, seed, unchanged_threshold)
    guarantee = mechanism.guarantee.to_dict()
    parameters = mechanism.parameters
    epsilon = mechanism.epsilon
    late = [w for s in sections for w in s.warnings]
    extra = {s.name: s.body for s in sections}
    if allocation is not None:  # a composed measurement: its own guarantee, stated once
        guarantee = allocation.guarantee(guarantee)
        parameters = allocation.parameters(parameters)
        deniability = allocation.deniability(deniability, by_policy)
        epsilon = allocation.epsilon
        late += allocation.warnings()
        extra["allocation"] = allocation.section
    message = unchanged_warning(deniability, unchanged_threshold, epsilon)
    if message:
        warnings.insert(0, message)
    vocabulary = mechanism.vocabulary.describe()
    tokens = {"total": total, "by_class": by_class, "by_policy": by_policy}
    # The sections of textdp.report/1, kept where its readers look for them.
    legacy = {"vocabulary": vocabulary, "policy": dict(policy), "documents": documents,
              "tokens": tokens, "deniability": deniability}
    return _report(
        "word", {"name": mechanism.name, "parameters": parameters}, guarantee,
        {"vocabulary": vocabulary, "policy": dict(policy)},
        {"documents": documents, "tokens": tokens},
        [*unprotected, *(u for s in sections for u in s.unprotected)], warnings, seed,
        tallies.seconds, (("tokens", total), ("words", by_class["word"])),
        sections={**legacy, **extra}, late_warnings=late, context=context)


def _deniability(mechanism: Any, word_counts: Any, seed: int | None,
                 threshold: float) -> dict[str, Any]:
    """The ``deniability`` section: the expected fraction of privatised words returned unchanged."""
    if word_counts is None:
        import numpy as np

        word_counts = np.zeros(len(mechanism.vocabulary), dtype=np.int64)
    section = expected_unchanged(mechanism, word_counts, seed=seed)
    section["warning_threshold"] = threshold
    section["note"] = ("N_w = Pr[M(w) = w] (Feyisetan et al., WSDM 2020) averaged over this run's "
                       "privatised words, weighted by their counts; computed from the private "
                       "input, so this figure, like the counts, is not itself protected")
    return section


def _word_unprotected(by_class: Mapping[str, int], by_policy: Mapping[str, int], documents: int,
                      policy: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = [
        {"kind": "whitespace", "count": by_class["whitespace"], "why": _STRUCTURE},
        {"kind": "punctuation", "count": by_class["punctuation"], "why": _STRUCTURE},
        {"kind": "other", "count": by_class["other"],
         "why": "symbols, emoji and control characters are kept as they are"},
        {"kind": "case pattern", "count": by_policy["privatized"],
         "why": "each replacement copies the lower/Title/UPPER pattern of the input word"},
        {"kind": "document length", "count": documents,
         "why": "the number and position of tokens in each document is released"},
    ]
    kept = [("out-of-vocabulary words", "oov_words_kept", "oov=keep releases them unchanged"),
            ("numbers", "numbers_kept", "oov=keep releases them unchanged"),
            ("stopwords", "stopwords_kept", "keep_stopwords=True releases them unchanged"),
            ("clitics", "clitics_kept",
             "the clitics of English contractions ('s, n't, 're, 've, 'll, 'd, 'm) are kept "
             "with their apostrophe; the word they lean on is privatised (It|'s, do|n't)")]
    out += [{"kind": kind, "count": by_policy[key], "why": why}
            for kind, key, why in kept if by_policy[key]]
    return out


def embedding_report(mechanism: Any, *, vectors_in: int, vectors_out: int, dim_in: int,
                     dim_out: int, seed: int | None, seconds: float,
                     encoder: Mapping[str, Any] | None = None, empty_texts: int | None = None,
                     audit: Any = None, chunk_rows: int | None = None,
                     context: ReportContext | None = None) -> Report:
    """The report of an embedding release (PrivEmb, LaplaceVector: ``textdp embed``).

    ``audit`` is PrivEmb's :class:`ProjectionAudit` of the input (or None); ``encoder`` the
    ``describe()`` of the encoder that made the vectors from texts, ``empty_texts`` how many texts
    it encoded as the zero vector; ``chunk_rows`` the rows each seeded stream i feeds (rows
    chunk_rows·i onwards), for the report's derivation.
    """
    description = mechanism.describe() if hasattr(mechanism, "m") else mechanism.describe(dim_in)
    details, warnings = _details(description)
    if empty_texts:
        warnings.append(f"{empty_texts} text(s) have no in-vocabulary word and were encoded as "
                        "the zero vector")
    if audit is not None and not audit.passed:
        warnings.append(f"the audit found {audit.count_above:,} pair(s) of input vectors stretched "
                        f"beyond the calibrated sensitivity {audit.bound:.4g} (max "
                        f"{audit.max_ratio:.4g}): their guarantee is weaker than ε·‖x − x′‖; "
                        "consider --strict")
    inputs = {"dim": int(dim_in), "encoder": dict(encoder) if encoder is not None else None,
              "audit": audit.to_dict() if audit is not None else None}
    counts = {"vectors_in": int(vectors_in), "vectors_out": int(vectors_out),
              "dim_out": int(dim_out), "empty_texts": empty_texts}
    unprotected = [{"kind": "number of vectors", "count": int(vectors_in),
                    "why": "one private vector is released per input vector, in order"}]
    return _report("embedding", details, mechanism.guarantee.to_dict(), inputs, counts,
                   unprotected, warnings, seed, seconds, (("vectors", int(vectors_out)),),
                   unit="vector i" if not chunk_rows else
                   f"rows {chunk_rows}·i … {chunk_rows}·i + {chunk_rows - 1}", context=context)


def document_report(mechanism: Any, *, sentence_counts: Any, seed: int | None, seconds: float,
                    encoder: str | None = None, sentence_splitter: str | None = None,
                    context: ReportContext | None = None) -> Report:
    """The report of a document-embedding release (DeepCandidate: ``textdp docembed``).

    ``sentence_counts`` holds the number of sentences of each released document: it is released
    too (the guarantee covers documents of the same sentence count only).
    """
    details, warnings = _details(mechanism.describe())
    inputs = {key: details.pop(key) for key in ("candidates", "recoder_fingerprint",
                                                "projections_fingerprint", "box_fingerprint")
              if key in details}
    inputs.update(encoder=encoder, sentence_splitter=sentence_splitter)
    k = [int(c) for c in sentence_counts]
    counts = {"documents": len(k), "sentences": {"total": sum(k), "min": min(k, default=0),
                                                 "max": max(k, default=0)}}
    unprotected = [{"kind": "sentence count", "count": len(k),
                    "why": "ε-SentDP covers documents of the same number of sentences: inserting "
                           "or deleting a sentence is not covered"}]
    return _report("document", details, mechanism.guarantee.to_dict(), inputs, counts,
                   unprotected, warnings, seed, seconds, (("documents", len(k)),),
                   context=context)


def generation_report(mechanism: Any, *, model: Mapping[str, Any], documents: int,
                      generated_tokens: int, stopped_at_eos: int, seed: int | None,
                      seconds: float, context: ReportContext | None = None,
                      sections: Sequence[Section] = ()) -> Report:
    """The report of a language-model rewrite (DP-Prompt: ``textdp privatize -m dp_prompt``).

    ``model`` is :meth:`textdp.lm.LanguageModel.describe` (name, file, sha256); ``documents`` the
    number of documents rewritten, ``generated_tokens`` the tokens sampled before each stopped,
    ``stopped_at_eos`` how many stopped at the end-of-sequence token before the cap;
    ``sections``: what was masked before the model (``identifiers``, ``entities``,
    ``placeholders``: :mod:`textdp.lm.masking`).
    """
    details, warnings = _details(mechanism.describe())
    details.pop("sensitivity", None)
    p = mechanism.parameters
    details["privacy"] = {
        "notion": str(mechanism.notion), "epsilon_per_document": mechanism.epsilon,
        "epsilon_per_token": mechanism.epsilon_per_token, "temperature": p["temperature"],
        "clip_low": p["clip_low"], "clip_high": p["clip_high"],
        "max_new_tokens": p["max_new_tokens"],
        "scope": "holds for the clipped logits whatever the model"}
    inputs = {"model": dict(model), "prompt_template": p["template"]}
    counts = {"documents": int(documents), "generated_tokens": int(generated_tokens),
              "stopped_at_eos": int(stopped_at_eos)}
    unprotected = [{"kind": "number of documents", "count": int(documents),
                    "why": "one rewritten document is released per input document, in order"}]
    if mechanism.epsilon > 10:
        warnings.append(f"ε per document is {format_up(mechanism.epsilon)}: a pure-DP bound "
                        "this large "
                        "says little against an adversary who knows the candidate documents; "
                        "compare mechanisms at matched utility, not at nominal ε")
    return _report("document", details, mechanism.guarantee.to_dict(), inputs, counts,
                   [*unprotected, *(u for s in sections for u in s.unprotected)], warnings, seed,
                   seconds,
                   (("documents", int(documents)), ("generated_tokens", int(generated_tokens))),
                   sections={s.name: s.body for s in sections},
                   late_warnings=[w for s in sections for w in s.warnings], context=context)


def summary_line(report: Mapping[str, Any]) -> str:
    """One line: the guarantee, what was released, and what was released unprotected."""
    g = report["guarantee"]
    eps = format_up(g["epsilon"])  # printed ε is never below the true one
    name = report["mechanism"]["name"]
    per_unit = g.get("metric") and report.get("kind") != "synthesis"
    parts = [f"{name}: {g['notion']}, ε = {eps} per unit of {g['metric']}" if per_unit
             else f"{name}: {g['notion']}, ε = {eps}"]
    if g.get("delta"):
        parts[0] += f", δ = {format_up(g['delta'])}"
    if "allocation" in report:  # budget allocation: ε above is the largest per-word level
        a = report["allocation"]
        parts[0] += (f" (at most, per word); allocation {a['rule']} "
                     f"({'public' if a['public'] else 'data-dependent'}), "
                     f"ε_doc = {format_up(a['epsilon_document'])} per document")
    parts += _released(report)
    parts += _identifiers(report)
    parts += _unchanged(report)
    unprotected = [f"{u['kind']} {u['count']}" for u in report["unprotected"] if u["count"]]
    parts.append("unprotected: " + (", ".join(unprotected) if unprotected else "none"))
    return "; ".join(parts)


def _released(report: Mapping[str, Any]) -> list[str]:
    counts = report["counts"]
    kind = report.get("kind", "word")
    if kind == "embedding":
        return [f"{counts['vectors_out']} vectors released"]
    if kind == "document" and "generated_tokens" in counts:
        return [f"{counts['documents']} documents rewritten ({counts['generated_tokens']} tokens "
                "generated)"]
    if kind == "document":
        return [f"{counts['documents']} documents embedded"]
    if kind == "synthesis":
        return [f"{counts['synthetic_documents']} synthetic documents from "
                f"{counts['units']} {report['mechanism']['parameters']['unit']}(s)"]
    tokens = counts["tokens"]
    by_policy = tokens["by_policy"]
    parts = [f"{by_policy.get('privatized', 0)} of {tokens['total']} tokens privatised"]
    verb = {"mask": "masked", "keep": "kept", "drop": "dropped",
            "random": "randomized"}[report["inputs"]["policy"]["oov"]]
    oov = by_policy.get(f"oov_words_{verb}", 0) + by_policy.get(f"numbers_{verb}", 0)
    if oov:
        parts.append(f"{oov} out-of-vocabulary words and numbers {verb}")
    parts += _entities(report.get("entities"))
    return parts


def _entities(section: Mapping[str, Any] | None) -> list[str]:
    """Entity counts by kind (textdp.text.entities), or that recognition was off."""
    if section is None:
        return []
    if not section["enabled"]:
        return ["entities: off (names and places may pass through)"]
    verb = "dropped" if section.get("dropped") else "masked"
    counts = ", ".join(f"{n} {k}" for k, n in section["by_kind"].items())
    return [f"entities {verb}: {counts}"]


def _identifiers(report: Mapping[str, Any]) -> list[str]:
    """``identifiers: 2 masked, 1 kept (email 2, phone 1)``, or nothing when none was found."""
    section = report.get("identifiers") or {}
    found = {kind: n for kind, n in (section.get("by_kind") or {}).items() if n}
    if not found:
        return []
    handled = [f"{section[k]} {k}" for k in ("masked", "kept", "dropped") if section.get(k)]
    kinds = ", ".join(f"{kind} {n}" for kind, n in found.items())
    return [f"identifiers: {', '.join(handled) or sum(found.values())} ({kinds})"]


def _unchanged(report: Mapping[str, Any]) -> list[str]:
    section = report.get("deniability") or {}
    value = section.get("expected_unchanged_fraction")
    if value is None:
        return []
    if section["method"] == "exact":
        return [f"expected unchanged: {percent(value)} of privatised words (exact)"]
    low, high = section["interval"]
    return [f"expected unchanged: {percent(value)} of privatised words ({section['method']}, "
            f"{section['interval_method']} {percent(low)}–{percent(high)}, "
            f"{section['draws']} draws)"]


def json_ready(obj: Any) -> Any:
    """JSON has no infinity or NaN: write non-finite floats as strings ("inf", "nan")."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, Mapping):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return obj
