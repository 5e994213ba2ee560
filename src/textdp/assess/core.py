"""`textdp.assess`: measure each mechanism × ε on the user's own documents, before releasing any.

Per setting of the grid (:mod:`textdp.assess.grid`), built with :func:`textdp.spec.release_spec`
and run with ``spec.privatizer()`` (the entity and identifier stage at its defaults unless the
caller sets it), on a seeded sample of the documents:

* leakage — entities and identifiers of the originals surviving verbatim
  (:mod:`textdp.assess.leakage`), and words returned unchanged (N_w on this data);
* linkage — an attacker holding the originals links private documents back
  (:mod:`textdp.assess.linkage`), top-1 and top-5 against chance;
* utility — MiniLM cosine with the original and, with labels, task accuracy in the MVC paper's
  two protocols (:mod:`textdp.assess.utility`);
* cost — words per second.

The assessment reads the private data and its results are not private: they are for the data
owner. Nothing is written or released by it, and no ledger is touched.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp import _random
from textdp._checks import check_texts
from textdp.assess.grid import Setting, choose_sample, command_line, default_grid, release_keywords
from textdp.assess.leakage import find_mentions, survival
from textdp.assess.linkage import linkage
from textdp.assess.recommend import Targets, guarantee_in_words, parse_linkage, recommend, typical_losses
from textdp.assess.render import HONESTY
from textdp.assess.utility import accuracy, chance, mean_interval, similarity, task_split, wilson

__all__ = ["Assessment", "assess", "HONESTY"]

#: What every report says about the assessment itself.


_WORD = re.compile(r"\w+")
_FORBIDDEN = ("mechanism", "epsilon", "seed", "ledger", "epsilon_document")
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


def _check_texts(texts: Any, labels: Any, known: Any = None
                 ) -> tuple[list[str], list[str] | None, list[Any] | None]:
    texts = check_texts(texts)
    if len(texts) < 2:
        raise ValueError(f"assess needs at least 2 documents, got {len(texts)}")
    if known is not None:
        known = [list(k) if not isinstance(k, str) else k for k in known]
        if len(known) != len(texts) or any(isinstance(k, str) for k in known):
            raise ValueError("known must hold one list of strings per document")
    if labels is None:
        return texts, None, known
    if isinstance(labels, str):
        raise TypeError("labels must be a sequence, one per document, not one string")
    labels = [_label(i, x) for i, x in enumerate(labels)]
    if len(labels) != len(texts):
        raise ValueError(f"{len(labels)} labels for {len(texts)} documents")
    return texts, labels, known


def _label(i: int, value: Any) -> str:
    """A class label as text: strings, integers and booleans (numpy's too), as Hugging Face
    datasets and most labelled sets give them; an integral float (a pandas integer column with a
    missing value becomes float) is its integer, so 3 and 3.0 are one class."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_ | int | np.integer):
        return str(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    raise TypeError(f"label {i} is {value!r}: a label is a class, given as a string, an integer "
                    "or a boolean")


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
           mechanisms: Sequence[Any] | None = None, epsilons: Sequence[float] | None = None,
           sample: int | None = None, seed: int | None = None, time_budget: float = 300.0,
           max_linkage: str | float | None = "5x", max_entities: int | None = 0,
           min_utility: float | None = None, encoder: Any = "sbert",
           known: Sequence[Sequence[str]] | None = None,
           progress: ProgressFactory | None = None, **release_options: Any) -> Assessment:
    """Measure privacy risk and utility of each mechanism × ε on a sample of ``texts``.

    Args:
        texts: the documents (the data owner's own, private).
        labels: optional, one per document (a task label such as the ticket type): adds task
            accuracy in the MVC paper's two protocols.
        mechanisms: mechanism names (default :data:`textdp.assess.grid.DEFAULT_MECHANISMS`
            plus two MVC variants), or built word mechanisms.
        epsilons: ε for every named mechanism (default: each mechanism's own grid).
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
        progress: a factory ``(description, total) → bar`` (``update(n)``, ``close()``).
        release_options: any other :func:`textdp.spec.release_spec` option (``oov``,
            ``entities``, ``allow_list``, …), applied to every setting.

    Returns:
        An :class:`Assessment`; ``rows`` hold per setting ``mechanism``, ``variant``,
        ``epsilon``, ``entities_found``, ``entities_survived`` (fraction, None when none was
        found), ``entities_survived_count``, ``entities_by_kind``, ``words_unchanged``,
        ``linkage_top1``, ``linkage_top5``, ``linkage_chance``, ``linkage_attack``,
        ``similarity``, ``task_accuracy`` (train private / test private; None without labels),
        ``task_accuracy_clean_train``, ``words_per_second``, and ``*_interval`` (95%) for each
        measured rate.
    """
    texts, labels, known = _check_texts(texts, labels, known)
    targets = _targets(release_options, time_budget, max_linkage, max_entities, min_utility)
    seed_given = seed is not None
    seed = int(_random.secure_generator().integers(2**63)) if seed is None else int(seed)
    started = time.perf_counter()

    from textdp.encoders import get_encoder

    grid = default_grid(mechanisms, epsilons)
    specs = _specs(grid, release_options, seed)
    embed = get_encoder(encoder)
    order = _random.public_generator(seed).permutation(len(texts))
    n, why, pilot_n = _sample_size(texts, order, sample, specs, embed, float(time_budget))
    index = np.sort(order[:n])
    originals = [texts[i] for i in index]
    original_embeddings = np.asarray(embed(originals), dtype=np.float64)
    mentions = _with_known(find_mentions(originals), known, index, len(texts))
    split, baseline_info = _baseline(originals, labels, index, seed)
    words = sum(len(_WORD.findall(t)) for t in originals)

    rows = [_measure(setting, spec, originals, mentions, original_embeddings, split, words,
                     embed, progress) for setting, spec in zip(grid, specs, strict=True)]
    _add_options(rows, release_options)
    recommendation = recommend(rows, targets)
    _explain(rows, specs, recommendation, originals, seed)
    meta: dict[str, Any] = {
        "sample": {"documents": n, "of": len(texts), "why": why, "seed": seed,
                   "seed_given": seed_given, "indices": index.tolist(),
                   "pilot_documents": pilot_n, "words": words},
        "targets": {"max_linkage": targets.max_linkage,
                    "max_linkage_times_chance": targets.max_linkage_times_chance,
                    "max_entities": targets.max_entities, "min_utility": targets.min_utility},
        "encoder": embed.describe(),
        "release_options": {k: (v if isinstance(v, str | int | float | bool | type(None))
                                else repr(v)) for k, v in release_options.items()},
        "labels": baseline_info, "seconds": time.perf_counter() - started,
        "entities_found": sum(len(m) for m in mentions),
    }
    return Assessment(rows=rows, recommendation=recommendation, meta=meta)


def _measure(setting: Setting, spec: Any, originals: list[str], mentions: list[Any],
             original_embeddings: np.ndarray, split: Any, words: int, embed: Any,
             progress: ProgressFactory | None) -> dict[str, Any]:
    """Privatise the sample with one setting and measure it (the private texts are dropped)."""
    label = (f"{setting.label} ε={setting.epsilon:g}" if setting.epsilon is not None
             else setting.label)
    bar = progress(label, len(originals)) if progress is not None else None
    try:
        runner = spec.privatizer()
        t0 = time.perf_counter()
        private = _run(runner, originals, bar)
        seconds = time.perf_counter() - t0
    finally:
        if bar is not None:
            bar.close()
    private_embeddings = np.asarray(embed(private), dtype=np.float64)
    leak = survival(mentions, private, runner.rules.placeholders())
    return _row(setting, spec, originals, private, leak, dict(runner.tallies().by_policy),
                original_embeddings, private_embeddings, split, words, seconds)


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
    for row in rows:
        if row["release"]:
            release = {**simple, **row["release"]}
            if "allocation" in release and "epsilon" in release:
                # The caller's allocation makes the setting's ε a document budget.
                release["epsilon_document"] = release.pop("epsilon")
                row["epsilon_is_document_budget"] = True
            row["release"] = release
            row["privatize_options"] = command_line(release)


def _targets(release_options: Mapping[str, Any], time_budget: Any, max_linkage: Any,
             max_entities: Any, min_utility: Any) -> Targets:
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
    return Targets(max_linkage=linkage_fraction, max_linkage_times_chance=linkage_times,
                   max_entities=max_entities,
                   min_utility=None if min_utility is None else float(min_utility))


def _specs(grid: Sequence[Setting], release_options: Mapping[str, Any], seed: int) -> list[Any]:
    """One release spec per setting, every one checked before any text is privatised."""
    from textdp.spec import release_spec

    specs = []
    for setting in grid:
        spec = release_spec(**setting.release_options(release_options, seed))
        if spec.kind != "word":
            raise ValueError(f"{spec.name} rewrites whole documents with a language model; "
                             "assess measures word mechanisms only")
        specs.append(spec)
    return specs


def _sample_size(texts: list[str], order: np.ndarray, sample: int | None, specs: list[Any],
                 embed: Any, time_budget: float) -> tuple[int, str, int]:
    """(documents, why, pilot documents): without ``sample``, a pilot of the first setting
    measures the cost per document and setting (after loading the models once)."""
    per_doc = None
    pilot_n = 0
    if sample is None and len(texts) > 50:
        pilot_n = min(32, len(texts))
        pilot = [texts[i] for i in order[:pilot_n]]
        # Load the models first (entity model, MiniLM): a one-time cost is not a per-document one.
        embed(specs[0].privatizer().run(pilot[:2]))
        t0 = time.perf_counter()
        embed(specs[0].privatizer().run(pilot))
        per_doc = (time.perf_counter() - t0) / pilot_n
    n, why = choose_sample(len(texts), sample, per_document_seconds=per_doc,
                           n_settings=len(specs), time_budget=time_budget)
    return n, why, pilot_n


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
        mechanism = specs[i].mechanism_object()
        losses = typical_losses(mechanism, _word_ids(mechanism, originals),
                                _random.public_generator(seed))
        rows[i]["guarantee"] = _guarantee(mechanism)
        rows[i]["typical_loss"] = losses
        rows[i]["whole_document"] = _whole_document(mechanism, originals)
        rows[i]["guarantee_in_words"] = guarantee_in_words(rows[i], losses, rows[i]["guarantee"])


def _whole_document(mechanism: Any, texts: Sequence[str]) -> dict[str, Any]:
    """What a whole document gets (the ledger's whole-document guarantee,
    :func:`textdp.privacy.documents.unit_guarantee`): ε per word replaced by any other, and ε for
    the median document of ``texts`` (its alphanumeric runs: an upper bound on its words)."""
    from textdp.privacy.documents import normal_forms, unit_guarantee, whole_document

    unit = unit_guarantee(mechanism)
    sizes = sorted(f[1] for f in normal_forms(list(texts)) if f is not None) or [0]
    median = sizes[(len(sizes) - 1) // 2]
    eps, _, why = whole_document(unit, median)
    return {"unit": unit.unit, "epsilon_per_unit": unit.epsilon, "median_units": median,
            "epsilon_median_document": eps, "why": why}


def _word_ids(mechanism: Any, texts: Sequence[str]) -> np.ndarray:
    lookup = mechanism.vocabulary.lookup
    ids = [lookup[w] for t in texts for w in _WORD.findall(t.casefold()) if w in lookup]
    return np.asarray(ids, dtype=np.int64)


def _row(setting: Setting, spec: Any, originals: list[str], private: list[str],
         leak: Mapping[str, Any], counts: Mapping[str, int], original_embeddings: np.ndarray,
         private_embeddings: np.ndarray, split: Any, words: int, seconds: float
         ) -> dict[str, Any]:
    n = len(originals)
    link = linkage(originals, private, original_embeddings, private_embeddings)
    sims = similarity(original_embeddings, private_embeddings)
    privatized = counts.get("privatized", 0)
    unchanged = counts.get("privatized_unchanged", 0)
    row: dict[str, Any] = {
        "mechanism": setting.name, "variant": setting.variant, "label": setting.label,
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
        "words_privatized": privatized,
        "words_unchanged": unchanged / privatized if privatized else None,
        "words_unchanged_interval": wilson(unchanged, privatized) if privatized else None,
        "linkage_top1": link["top1"], "linkage_top1_interval": wilson(link["hits_top1"], n),
        "linkage_top5": link["top5"], "linkage_top5_interval": wilson(link["hits_top5"], n),
        "linkage_chance": link["chance_top1"], "linkage_chance_top5": link["chance_top5"],
        "linkage_attack": link["attack"], "linkage_by_attack": link["by_attack"],
        "similarity": float(sims.mean()), "similarity_interval": mean_interval(sims),
        "task_accuracy": None, "task_accuracy_interval": None,
        "task_accuracy_clean_train": None, "task_accuracy_clean_train_interval": None,
        "seconds": seconds, "words_per_second": words / seconds if seconds > 0 else None,
    }
    if split is not None:
        y_train, y_test = split.labels[split.train], split.labels[split.test]
        test_private = [private[i] for i in split.test]
        own = accuracy([private[i] for i in split.train], y_train, test_private, y_test)
        clean = accuracy([originals[i] for i in split.train], y_train, test_private, y_test)
        m = len(split.test)
        row.update(task_accuracy=own / m, task_accuracy_interval=wilson(own, m),
                   task_accuracy_clean_train=clean / m,
                   task_accuracy_clean_train_interval=wilson(clean, m))
    return row
