"""`textdp.assess`: measure each mechanism × ε on the user's own documents, before releasing any.

Per setting of the grid (:mod:`textdp.assess.grid`), built with :func:`textdp.spec.release_spec`
and run with ``spec.privatizer()`` (the entity and identifier stage at its defaults unless the
caller sets it), on a seeded sample of the documents:

* leakage — entities and identifiers of the originals surviving verbatim
  (:mod:`textdp.assess.leakage`), and words returned unchanged (N_w on this data);
* linkage — an attacker holding the originals links private documents back
  (:mod:`textdp.assess.linkage`), top-1 and top-5 against chance;
* with persons (``units``): author linkage from each person's other documents, and with a
  sensitive field, attribute inference (:mod:`textdp.assess.attacks`);
* the document-level guarantee: the ε (δ) of a whole document of the data's median and
  90th-percentile length, and of a person, by the ledger's code (:mod:`textdp.assess.scale`);
* utility — MiniLM cosine with the original and, with labels, task accuracy in the MVC paper's
  two protocols (:mod:`textdp.assess.utility`);
* cost — words per second.

The assessment reads the private data and its results are not private: they are for the data
owner. Nothing is written or released by it, and no ledger is touched.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp import _random
from textdp.assess.attacks import (
    attribute_attacker,
    attribute_baseline,
    attribute_inference,
    attribute_split,
    author_linkage,
)
from textdp.assess.budget import PILOT, choose, encoded_subsample, pilot_costs
from textdp.assess.grid import Setting, choose_sample, command_line, release_keywords
from textdp.assess.independent import independent_mentions, independent_survival
from textdp.assess.inputs import check_field, check_texts_and_labels
from textdp.assess.leakage import find_mentions, survival
from textdp.assess.linkage import OriginalIndex, rates, rows_of
from textdp.assess.recommend import (
    Targets,
    build_targets,
    guarantee_in_words,
    recommend,
    typical_losses,
)
from textdp.assess.render import HONESTY
from textdp.assess.scale import document_scale, document_sizes
from textdp.assess.shared import Shared, SpanCache
from textdp.assess.utility import (
    Trained,
    accuracy,
    chance,
    measured_fields,
    similarity,
    task_split,
    wilson,
)
from textdp.assess.vectors import plan, vector_guarantee_in_words, vector_rows

__all__ = ["Assessment", "assess", "HONESTY"]
#: The targets' builder under its former name here (callers import it from this module).
_targets = build_targets

#: What every report says about the assessment itself.


_WORD = re.compile(r"\w+")
#: A progress bar factory: (description, total) → an object with update(n) and close().
ProgressFactory = Callable[[str, int], Any]


@dataclass
class Assessment:
    """The measured settings, the recommendation and everything needed to reproduce them.

    Attributes:
        rows: one dict per setting (see :func:`assess` for the fields).
        recommendation: ``{"met", "index", "targets", ...}`` (:func:`textdp.assess.recommend.recommend`).
        meta: sample, seed, baseline, timing, honesty statement.
    """

    rows: list[dict[str, Any]]
    recommendation: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def recommended(self) -> dict[str, Any] | None:
        """The recommended setting's row (None when no setting meets the targets)."""
        i = self.recommendation.get("index")
        return None if i is None else self.rows[i]

    def to_dict(self) -> dict[str, Any]:
        return {"about": HONESTY, **self.meta, "recommendation": self.recommendation,
                "settings": self.rows}

    def to_json(self) -> str:
        from textdp.assess.render import to_json

        return to_json(self)

    def to_markdown(self, *, image: str | None = None) -> str:
        from textdp.assess.render import to_markdown

        return to_markdown(self, image=image)

    def to_html(self) -> str:
        from textdp.assess.render import to_html

        return to_html(self)


def _run(runner: Any, texts: list[str], bar: Any, batch: int = 256) -> list[str]:
    out: list[str] = []
    for a in range(0, len(texts), batch):
        out += runner.run(texts[a:a + batch], start=a)
        if bar is not None:
            bar.update(len(texts[a:a + batch]))
    return out


def _guarantee(mechanism: Any) -> dict[str, Any]:
    g = mechanism.guarantee
    return {"notion": str(getattr(g.notion, "value", g.notion)), "epsilon": g.epsilon,
            "metric": g.metric, "per_word": g.per_word, "verified": bool(g.verified)}


def assess(texts: Sequence[str], labels: Sequence[Any] | None = None, *,
           mechanisms: Sequence[Any] | None = None,
           epsilons: Sequence[float] | Mapping[str, Sequence[float]] | None = None,
           sample: int | None = None, seed: int | None = None, time_budget: float = 300.0,
           max_linkage: str | float | None = "5x", max_entities: int | None = 0,
           min_utility: float | None = None, encoder: Any = "sbert",
           known: Sequence[Sequence[str]] | None = None,
           units: Sequence[Any] | None = None, sensitive: Sequence[Any] | None = None,
           max_author_linkage: str | float | None = "5x", max_attribute: str | float | None = None,
           progress: ProgressFactory | None = None, forms: str | Sequence[str] | None = None,
           candidates: Any = None, recoder: Any = None, model: Any = None,
           document_kind: str = "text", **release_options: Any) -> Assessment:
    """Measure privacy risk and utility of each mechanism × ε on a sample of ``texts``.

    Args:
        texts: the documents (the data owner's own, private).
        labels: optional, one per document (a task label such as the ticket type): adds task
            accuracy in the MVC paper's two protocols.
        mechanisms: mechanism names (default :data:`textdp.assess.grid.DEFAULT_MECHANISMS`
            plus two MVC variants), or built word mechanisms.
        epsilons: ε for every named mechanism, or per mechanism (``{"mvc": [2, 4], "tem":
            [1, 3]}``; default: each mechanism's own grid).
        sample: documents to assess (default: as many as fit ``time_budget``, measured on a
            pilot run; stated in the report).
        seed: the sample, the split and every setting's noise (default: a fresh random seed,
            recorded in the report so that the figures can be reproduced).
        time_budget: seconds the measurements should take when ``sample`` is not given.
        max_linkage, max_entities, min_utility: the targets of the recommendation
            (:class:`textdp.assess.recommend.Targets`; linkage as a fraction, ``"5%"`` or
            ``"5x"`` chance).
        encoder: the sentence encoder of the similarity and of the embedding attack
            (:func:`textdp.encoders.get_encoder`; default the bundled MiniLM).
        known: optional, per document, strings known to be sensitive (customers' names):
            counted as entities of kind ``known``, so the recognisers' misses are measured too.
        units: optional, per document, the person it is about or by (a customer id): adds
            author linkage and the guarantee per person (:mod:`textdp.assess.attacks`,
            :mod:`textdp.assess.scale`).
        sensitive: optional, per document, an attribute to protect (strings, integers or
            booleans): adds the attribute-inference attack.
        max_author_linkage: target on top-1 author linkage, as ``max_linkage`` (checked with
            ``units``).
        max_attribute: target on the attribute attack's accuracy (``"1.2x"`` the majority
            guess, or a fraction; checked with ``sensitive``).
        progress: a factory ``(description, total) → bar`` (``update(n)``, ``close()``).
        forms, candidates, recoder, model, document_kind: the release forms and their
            options (DeepCandidate's public candidates and recoder; the language model and
            what the documents are, for ``baseline``): :func:`textdp.assess.vectors.plan`.
        release_options: any other :func:`textdp.spec.release_spec` option (``oov``,
            ``entities``, ``allow_list``, …), applied to every setting.

    Returns:
        An :class:`Assessment`; ``rows`` hold per setting ``mechanism``, ``variant``,
        ``epsilon``, ``entities_found``, ``entities_survived`` (fraction, None when none was
        found), ``entities_survived_count``, ``entities_by_kind``, ``words_unchanged``,
        ``linkage_top1``, ``linkage_top5``, ``linkage_chance``, ``linkage_attack``,
        ``similarity``, ``task_accuracy`` (train private / test private; None without labels),
        ``task_accuracy_clean_train``, ``words_per_second``, and ``*_interval`` (95%) for each
        measured rate; ``document_guarantee`` with ``document_epsilon_median``/``_p90`` (and
        ``person_epsilon_*`` with ``units``: :mod:`textdp.assess.scale`); with ``units``,
        ``author_linkage`` and ``author_linkage_top1``; with ``sensitive``, ``attribute`` and
        ``attribute_accuracy`` (:mod:`textdp.assess.attacks`). ``meta["originals"]`` holds the
        same attacks on the originals.
    """
    texts, labels, known = check_texts_and_labels(texts, labels, known)
    units = check_field(units, len(texts), "unit")
    sensitive = check_field(sensitive, len(texts), "sensitive value")
    targets = build_targets(release_options, time_budget, max_linkage, max_entities,
                            min_utility, max_author_linkage, max_attribute,
                            persons=units is not None, sensitive=sensitive is not None)
    seed_given = seed is not None
    seed = int(_random.secure_generator().integers(2**63)) if seed is None else int(seed)
    forms_plan = plan(forms, mechanisms, epsilons, candidates, recoder, labels is not None,
                      model=model, document_kind=document_kind)
    grid = forms_plan.word_grid(mechanisms) + forms_plan.prompts
    specs = _specs(grid, release_options, seed)
    rows, recommendation, meta = _assess(
        texts, labels, known, units, sensitive, grid, specs, targets, seed, sample, time_budget,
        encoder, progress, release_options, forms_plan)
    meta["sample"]["seed_given"], meta["forms"] = seed_given, list(forms_plan.forms)
    return Assessment(rows=rows, recommendation=recommendation, meta=meta)


def _private_reader() -> Any:
    """The entity model that reads the private text for :mod:`textdp.assess.independent`
    (None when it is not installed: the patterns still count)."""
    from textdp.text.entities import Entities, EntityModelError

    try:
        return Entities(kinds=("person", "location", "org"))
    except EntityModelError:
        return None


def _attacks_on_originals(originals: list[str], embeddings: np.ndarray, shared: Shared
                          ) -> dict[str, Any]:
    """The author and attribute attacks on the originals themselves: what the data gives away
    before any release (the ceiling each setting is read against)."""
    out: dict[str, Any] = {}
    if shared.authors is not None:
        out["author_linkage"] = author_linkage(shared.index.matrices(originals, embeddings),
                                               shared.authors)
    if shared.attribute_split is not None:
        out["attribute"] = attribute_baseline(originals, shared.attribute_split)
    return out


def _assess(texts: list[str], labels: list[str] | None, known: Any, units: list[str] | None,
            sensitive: list[str] | None, grid: list[Setting], specs: list[Any],
            targets: Targets, seed: int, sample: int | None, time_budget: float, encoder: Any,
            progress: ProgressFactory | None, release_options: Mapping[str, Any],
            forms_plan: Any = None
            ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The measurements of :func:`assess` once its arguments are checked: (rows,
    recommendation, meta)."""
    from textdp.encoders import get_encoder

    started = time.perf_counter()
    embed = get_encoder(encoder)
    order = _random.public_generator(seed).permutation(len(texts))
    # The entity stage and its counts are for text releases only (the entity model is slow to load).
    cache, reader = SpanCache(), (_private_reader() if grid else None)
    n_other = len(forms_plan.vectors) if forms_plan is not None else 0
    n, m, why, pilot = _sample_size(texts, order, sample, specs, embed, float(time_budget),
                                    cache, reader, n_other, started)
    index = np.sort(order[:n])
    originals = [texts[i] for i in index]
    original_embeddings = np.asarray(embed(originals), dtype=np.float64)
    mentions = (_with_known(find_mentions(originals), known, index, len(texts)) if grid
                else [[] for _ in originals])
    split, baseline_info = _baseline(originals, labels, index, seed)
    words = sum(len(_WORD.findall(t)) for t in originals)
    shared = Shared(sizes=document_sizes(texts), units=units,
                    authors=None if units is None else [units[i] for i in index],
                    entities=reader, spans=cache, encoded=encoded_subsample(n, m, seed),
                    index=OriginalIndex(originals, original_embeddings))
    if split is not None:
        shared.clean = Trained([originals[i] for i in split.train], split.labels[split.train])
    if sensitive is not None:
        shared.attribute_split = attribute_split([sensitive[i] for i in index], seed)
        shared.attribute_attacker = attribute_attacker(originals, shared.attribute_split)
    if grid:
        shared.independent = independent_mentions(originals)
    originals_attacked = _attacks_on_originals(originals, original_embeddings, shared)

    rows = [_measure(setting, spec, originals, mentions, original_embeddings, split, words,
                     embed, progress, shared) for setting, spec in zip(grid, specs, strict=True)]
    more, built = vector_rows(forms_plan.vectors if forms_plan else [], originals,
                              original_embeddings, embed, split, words, shared, seed,
                              forms_plan and forms_plan.candidates,
                              forms_plan and forms_plan.recoder, progress)
    for row in more:
        _scale_fields(row, row["document_guarantee"])
    rows += more
    if forms_plan is not None and forms_plan.baseline:
        from textdp.assess.baseline import baseline_row

        rows.append(baseline_row(originals, split, shared, seed=seed, model=forms_plan.model,
                                 document_kind=forms_plan.document_kind, progress=progress))
    if forms_plan is not None and forms_plan.synthetic:
        from textdp.assess.synthetic import synthetic_row

        rows += [synthetic_row(e, originals, split, shared, seed=seed, embed=embed,
                               original_embeddings=original_embeddings, model=forms_plan.model,
                               document_kind=forms_plan.document_kind, progress=progress)
                 for e in forms_plan.synthetic]
    _add_options(rows, release_options)
    recommendation = recommend(rows, targets)
    _explain(rows, [*specs, *built], recommendation, originals, seed)
    meta: dict[str, Any] = {
        "sample": {"documents": n, "of": len(texts), "why": why, "seed": seed,
                   "indices": index.tolist(), "pilot_documents": pilot[0], "words": words,
                   "encoded": m, "cost_ms_per_document": pilot[1]},
        "targets": {name: getattr(targets, name) for name in Targets.__dataclass_fields__},
        "encoder": embed.describe(),
        "release_options": {k: (v if isinstance(v, str | int | float | bool | type(None))
                                else repr(v)) for k, v in release_options.items()},
        "labels": baseline_info, "seconds": time.perf_counter() - started,
        "originals": originals_attacked,
        "entities_found": sum(len(m) for m in mentions),
    }
    return rows, recommendation, meta


def _measure(setting: Setting, spec: Any, originals: list[str], mentions: list[Any],
             original_embeddings: np.ndarray, split: Any, words: int, embed: Any,
             progress: ProgressFactory | None, shared: Shared) -> dict[str, Any]:
    """Privatise the sample with one setting and measure it (the private texts are dropped)."""
    label = (f"{setting.label} ε={setting.epsilon:g}" if setting.epsilon is not None
             else setting.label)
    bar = progress(label, len(originals)) if progress is not None else None
    try:
        t0 = time.perf_counter()
        private, placeholders, counts = _privatize(spec, originals, bar, shared.spans)
        seconds = time.perf_counter() - t0
    finally:
        if bar is not None:
            bar.close()
    encoded = private if shared.encoded is None else [private[i] for i in shared.encoded]
    private_embeddings = np.asarray(embed(encoded), dtype=np.float64)
    leak = survival(mentions, private, placeholders)
    leak["independent"] = independent_survival(originals, private, shared.independent,
                                               placeholders, shared.entities)
    row = _row(setting, spec, originals, private, leak, counts,
               original_embeddings, private_embeddings, split, words, seconds, shared)
    _add_scale(row, spec.mechanism_object(), shared)
    return row


def _privatize(spec: Any, originals: list[str], bar: Any, spans: SpanCache | None = None
               ) -> tuple[list[str], tuple[str, ...], dict[str, int]]:
    """(private texts, the release's placeholders, the word tallies) of one text setting: a
    word mechanism through its Privatizer, DP-Prompt through its engine (no placeholder, no
    word tally: it rewrites the whole document)."""
    if spec.kind == "prompt":
        from textdp.lm.paraphrase import privatize_spec

        private = privatize_spec(spec, originals)[0]
        if bar is not None:
            bar.update(len(originals))
        return private, (), {}
    runner = spec.privatizer()
    if spans is not None:
        spans.attach(runner)
    private = _run(runner, originals, bar)
    return private, runner.rules.placeholders(), dict(runner.tallies().by_policy)


def _add_scale(row: dict[str, Any], mechanism: Any, shared: Shared) -> None:
    """The document-level (and per-person) guarantee of the row's setting."""
    _scale_fields(row, document_scale(mechanism, shared.sizes, shared.units))


def _scale_fields(row: dict[str, Any], scale: dict[str, Any]) -> None:
    """The row's fields of its :func:`textdp.assess.scale.document_scale`."""
    row["document_guarantee"] = scale
    for name in ("median", "p90"):
        row[f"document_epsilon_{name}"] = scale[name]["epsilon"]
        row[f"document_delta_{name}"] = scale[name]["delta"]
        persons = scale["persons"]
        row[f"person_epsilon_{name}"] = None if persons is None else persons[name]["epsilon"]
    row["whole_document"] = {"unit": scale["unit"], "epsilon_per_unit": (
        math.inf if scale["epsilon_per_unit"] is None else scale["epsilon_per_unit"]),
        "median_units": scale["median"]["units"],
        "epsilon_median_document": (math.inf if scale["median"]["epsilon"] is None
                                    else scale["median"]["epsilon"]), "why": scale["why"]}


def _with_known(mentions: list[list[Any]], known: Sequence[Sequence[str]] | None,
                index: np.ndarray, n_texts: int) -> list[list[Any]]:
    if known is None:
        return mentions
    from textdp.assess.leakage import Mention

    return [m + [Mention("known", s) for s in dict.fromkeys(known[i]) if s.strip()]
            for m, i in zip(mentions, index.tolist(), strict=True)]


def _add_options(rows: list[dict[str, Any]], release_options: Mapping[str, Any]) -> None:
    """The release of a row is its setting with the caller's (plain-valued) options."""
    simple = {k: v for k, v in release_options.items()
              if isinstance(v, str | int | float | bool)}
    # Lists and mappings (an allow-list, identifier patterns) are keywords of the release too,
    # but not single flags: the command line spells only the plain ones (the CLI adds the rest).
    plain = {k: (dict(v) if isinstance(v, Mapping) else list(v))
             for k, v in release_options.items() if _strings(v)}
    for row in rows:
        if row["release"] and row.get("form", "words") == "words":
            release = {**simple, **row["release"]}
            if "allocation" in release and "epsilon" in release:
                # The caller's allocation makes the setting's ε a document budget.
                release["epsilon_document"] = release.pop("epsilon")
                row["epsilon_is_document_budget"] = True
            row["privatize_options"] = command_line(release)
            row["release"] = {**release, **plain}


def _strings(value: Any) -> bool:
    """Whether ``value`` is a list of strings or a mapping of strings to strings."""
    if isinstance(value, Mapping):
        return all(isinstance(x, str) for pair in value.items() for x in pair)
    return isinstance(value, list | tuple) and all(isinstance(x, str) for x in value)


def _specs(grid: Sequence[Setting], release_options: Mapping[str, Any], seed: int) -> list[Any]:
    """One release spec per setting, every one checked before any text is privatised."""
    from textdp.spec import PROMPT_MECHANISMS, release_spec

    specs = []
    for setting in grid:
        # DP-Prompt comes from the prompt form only (plan() refuses it among the mechanisms);
        # the word release options do not apply to it.
        prompt = setting.name in PROMPT_MECHANISMS
        spec = release_spec(**setting.release_options({} if prompt else release_options, seed))
        specs.append(spec)
    return specs


def _sample_size(texts: list[str], order: np.ndarray, sample: int | None, specs: list[Any],
                 embed: Any, time_budget: float, cache: SpanCache, reader: Any, n_other: int,
                 started: float) -> tuple[int, int, str, tuple[int, dict[str, float] | None]]:
    """(documents, documents encoded per setting, why, (pilot documents, its costs in ms)):
    without ``sample``, a pilot of the first word setting measures the cost per document of
    each part (:func:`textdp.assess.budget.pilot_costs`) and the sample is what fits the time
    left of ``time_budget`` since ``started`` (:func:`textdp.assess.budget.choose`)."""
    words = [s for s in specs if s.kind == "word"]  # the pilot: a word setting, if any
    if sample is None and len(texts) > 50 and words:
        pilot = [texts[i] for i in order[:min(PILOT, len(texts))]]
        costs = pilot_costs(pilot, words[0], embed, reader, cache)
        left = time_budget - (time.perf_counter() - started)
        n, m, why = choose(len(texts), costs, len(words), n_other, left)
        return n, m, why, (len(pilot), costs.to_dict())
    n, why = choose_sample(len(texts), sample, per_document_seconds=None,
                           n_settings=len(specs), time_budget=time_budget)
    return n, n, why, (0, None)


def _baseline(originals: list[str], labels: list[str] | None, index: np.ndarray, seed: int
              ) -> tuple[Any, dict[str, Any] | None]:
    """The split of the sample and the classifier's accuracy on the originals and chance."""
    if labels is None:
        return None, None
    split = task_split([labels[i] for i in index], seed)
    y_train, y_test = split.labels[split.train], split.labels[split.test]
    right = accuracy([originals[i] for i in split.train], y_train,
                     [originals[i] for i in split.test], y_test)
    guess = chance(split)
    n_test = len(split.test)
    return split, {"accuracy": right / n_test, "accuracy_interval": wilson(right, n_test),
                   "chance": guess / n_test, "chance_interval": wilson(guess, n_test),
                   "train": int(len(split.train)), "test": n_test,
                   "classes": int(len(np.unique(split.labels)))}


def _explain(rows: list[dict[str, Any]], specs: list[Any], recommendation: Mapping[str, Any],
             originals: list[str], seed: int) -> None:
    """The formal guarantee in words, for the recommended setting (or the nearest one)."""
    shown = ([recommendation["index"]] if recommendation["met"]
             else [r["index"] for r in recommendation["nearest"][:1]])
    for i in shown:
        if rows[i].get("form") == "synthetic":
            from textdp.assess.synthetic import guarantee_words

            rows[i]["guarantee_in_words"] = guarantee_words(rows[i])
            continue
        if rows[i].get("form", "words") != "words":
            built = specs[i].mechanism_object() if rows[i]["form"] == "prompt" else specs[i]
            rows[i]["guarantee"] = _guarantee(built)
            rows[i]["guarantee_in_words"] = vector_guarantee_in_words(rows[i], built)
            continue
        mechanism = specs[i].mechanism_object()
        losses = typical_losses(mechanism, _word_ids(mechanism, originals),
                                _random.public_generator(seed))
        rows[i]["guarantee"] = _guarantee(mechanism)
        rows[i]["typical_loss"] = losses
        rows[i]["guarantee_in_words"] = guarantee_in_words(rows[i], losses, rows[i]["guarantee"])


def _independent(count: Mapping[str, Any]) -> dict[str, Any]:
    """The row's fields of the independent leakage count (:mod:`textdp.assess.independent`)."""
    n = count["documents"]
    return {"independent_leakage": dict(count),
            "independent_survived_count": count["survived"] + count["model_survivors"],
            "documents_leaking": count["documents_leaking"] / n if n else None,
            "documents_leaking_interval": wilson(count["documents_leaking"], n) if n else None}


def _word_ids(mechanism: Any, texts: Sequence[str]) -> np.ndarray:
    lookup = mechanism.vocabulary.lookup
    ids = [lookup[w] for t in texts for w in _WORD.findall(t.casefold()) if w in lookup]
    return np.asarray(ids, dtype=np.int64)


def _row(setting: Setting, spec: Any, originals: list[str], private: list[str],
         leak: Mapping[str, Any], counts: Mapping[str, int], original_embeddings: np.ndarray,
         private_embeddings: np.ndarray, split: Any, words: int, seconds: float,
         shared: Shared) -> dict[str, Any]:
    n = len(originals)
    matrices = shared.index.matrices(private, private_embeddings, shared.encoded)
    rows = rows_of(matrices, shared.encoded)
    link = rates(matrices, n, rows)
    sims = similarity(original_embeddings if shared.encoded is None
                      else original_embeddings[shared.encoded], private_embeddings)
    privatized = counts.get("privatized", 0)
    unchanged = counts.get("privatized_unchanged", 0)
    row: dict[str, Any] = {
        "form": spec.kind if spec.kind == "prompt" else "words", "mechanism": setting.name,
        "variant": setting.variant, "label": setting.label,
        "epsilon": (spec.mechanism_object().epsilon if setting.epsilon is None
                    else setting.epsilon),
        "epsilon_is_document_budget": "allocation" in dict(setting.options),
        "release": release_keywords(setting),
        "privatize_options": command_line(release_keywords(setting)),
        "documents": n,
        "entities_found": leak["found"],
        "entities_survived_count": leak["survived"],
        "entities_survived": leak["survived"] / leak["found"] if leak["found"] else None,
        "entities_survived_interval": (wilson(leak["survived"], leak["found"])
                                       if leak["found"] else None),
        "entities_by_kind": leak["by_kind"],
        **_independent(leak["independent"]),
        "words_privatized": privatized,
        "words_unchanged": unchanged / privatized if privatized else None,
        "words_unchanged_interval": wilson(unchanged, privatized) if privatized else None,
        **measured_fields(link, n, sims, seconds, words),
    }
    if shared.authors is not None:
        authors = author_linkage(matrices, shared.authors, rows)
        row.update(author_linkage=authors, author_linkage_top1=authors["top1"],
                   author_linkage_top1_interval=authors["top1_interval"],
                   author_linkage_chance=authors["chance_top1"])
    if shared.attribute_split is not None:
        attribute = attribute_inference(originals, private, shared.attribute_split,
                                        shared.attribute_attacker)
        chance_rate = chance(shared.attribute_split) / len(shared.attribute_split.test)
        row.update(attribute=attribute, attribute_accuracy=attribute["accuracy"],
                   attribute_accuracy_interval=attribute["accuracy_interval"],
                   attribute_chance=chance_rate)
    if split is not None:
        y_train, y_test = split.labels[split.train], split.labels[split.test]
        test_private = [private[i] for i in split.test]
        own = accuracy([private[i] for i in split.train], y_train, test_private, y_test)
        clean = shared.clean.correct(test_private, y_test)
        m = len(split.test)
        row.update(task_accuracy=own / m, task_accuracy_interval=wilson(own, m),
                   task_accuracy_clean_train=clean / m,
                   task_accuracy_clean_train_interval=wilson(clean, m))
    return row
