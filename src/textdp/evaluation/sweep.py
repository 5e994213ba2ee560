"""One sweep over mechanisms × ε: every measurement of the toolkit, one results file, one report.

:func:`run_sweep` measures, for each mechanism and each ε:

* plausible deniability (N_w, S_w over the same sampled words; exact where the mechanism has an
  exact law, else Monte Carlo);
* utility: downstream classification in both settings (train private / test clean, train clean /
  test private) on binary VADER sentiment and fortunes topics, and the SBERT cosine similarity
  between original and private sentences;
* empirical privacy: source attribution (VADER sets) and author attribution (fortunes quotes) by an
  adversary trained on clean text, and the re-identification rate;

then efficiency once per mechanism (fresh process each), and writes into ``out_dir``:
``results.json``, ``report.md``, ``report.html`` (self-contained) and the PNG figures (drawn
and written from the results alone by :mod:`textdp.evaluation.sweep_report`; the task names
are in :mod:`textdp.evaluation.sweep_tasks`).

With ``config.input`` (``textdp evaluate INPUT``) the measurements run on the user's own data
instead of the built-in sets (:data:`DATA_TASKS`): each release is built with
:func:`textdp.spec.release_spec` and run by ``spec.privatizer()`` with the entity/identifier
stage's defaults; N_w/S_w are measured on the data's privatised words weighted by their counts;
utility is the task accuracy on ``config.label_field`` in the MVC paper's two protocols (and
1-Diffractor's both-private), or without labels the SBERT similarity; re-identification runs on
the data; each row records the words/s of privatising the data.

Everything that does not depend on the mechanism — tasks, splits, clean features, clean models,
the adversaries — is computed once. No private text goes into the results or the report unless
``include_text=True``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from textdp import _random
from textdp.evaluation._common import derive_seed, jsonable
from textdp.evaluation.render import write_report
from textdp.evaluation.sweep_report import draw_figures, evaluation_document
from textdp.evaluation.sweep_tasks import (
    ATTACK_TASKS,
    DATA_TASKS,
    TASK_TITLES,
    TASKS,
    UTILITY_TASKS,
)

__all__ = ["SweepConfig", "run_sweep", "evaluation_document", "TASKS", "UTILITY_TASKS",
           "ATTACK_TASKS", "DATA_TASKS"]


@dataclass
class SweepConfig:
    """What :func:`run_sweep` measures, and how much (defaults: a full run of a few minutes per
    mechanism; tests use tiny sizes)."""

    mechanisms: list[str]
    epsilons: list[float]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    words: int = 100
    draws: int = 1000
    docs: int = 2000
    tasks: list[str] = field(default_factory=lambda: list(TASKS))
    features: str = "glove-mean"
    attack_features: str = "tfidf"
    similarity_docs: int = 300
    efficiency: bool = True
    efficiency_tokens: int = 20_000
    oov: str = "mask"
    seed: int | None = 0
    include_text: bool = False
    vocabulary_size: int | None = None
    vocabulary: str | None = None  # a name of textdp.vocab.NAMES (default glove-6b-50d)
    # The user's data (``textdp evaluate INPUT``): when ``input`` is set, ``tasks`` are taken
    # from DATA_TASKS, ``docs`` caps the documents used (drawn uniformly) and the releases run
    # with the entity/identifier stage (``entities``).
    input: str | None = None
    text_field: str = "text"
    label_field: str | None = None
    format: str | None = None
    entities: str = "default"

    def check(self) -> None:
        from textdp import mechanisms as registry

        if self.input is not None:
            self._check_data()
            return
        if not self.mechanisms:
            raise ValueError("give at least one mechanism")
        for m in self.mechanisms:
            registry.get(m)  # ValueError naming the available ones
        if len(set(self.mechanisms)) != len(self.mechanisms):
            raise ValueError("a mechanism is listed twice")
        if not self.epsilons or any(not (e > 0 and np.isfinite(e)) for e in self.epsilons):
            raise ValueError("epsilons must be finite numbers > 0")
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown:
            raise ValueError(f"unknown task(s) {', '.join(unknown)}; choose from {', '.join(TASKS)}")
        for name, value in (("words", self.words), ("draws", self.draws), ("docs", self.docs),
                            ("similarity_docs", self.similarity_docs)):
            if value < 1:
                raise ValueError(f"{name} must be ≥ 1")
        if self.docs < 20 and any(t in self.tasks for t in TASKS[:5]):
            raise ValueError("docs must be ≥ 20 for the classification tasks")

    def _check_data(self) -> None:
        from textdp import mechanisms as registry

        if not self.mechanisms:
            raise ValueError("give at least one mechanism")
        for m in self.mechanisms:
            registry.get(m)
        if len(set(self.mechanisms)) != len(self.mechanisms):
            raise ValueError("a mechanism is listed twice")
        if not self.epsilons or any(not (e > 0 and np.isfinite(e)) for e in self.epsilons):
            raise ValueError("epsilons must be finite numbers > 0")
        unknown = [t for t in self.tasks if t not in DATA_TASKS]
        if unknown:
            raise ValueError(f"task(s) {', '.join(unknown)} run on the built-in sets only; on "
                             f"your data choose from {', '.join(DATA_TASKS)}")
        if "label" in self.tasks and self.label_field is None:
            raise ValueError("the label task needs a label field (--label-field)")
        for name, value in (("words", self.words), ("draws", self.draws), ("docs", self.docs),
                            ("similarity_docs", self.similarity_docs)):
            if value < 1:
                raise ValueError(f"{name} must be ≥ 1")


def _progress(total: int, desc: str) -> Any:
    import sys

    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, disable=not sys.stderr.isatty(),
                leave=False, dynamic_ncols=True)


@dataclass
class _Shared:
    """What does not depend on the mechanism, computed once per sweep."""

    vocab: Any
    word_ids: np.ndarray
    tasks: dict[str, Any]
    evaluators: dict[str, Any]
    reid_corpus: str | None
    similarity: Any
    notes: list[str]
    data: Any = None  # the user's data (textdp.evaluation.data.UserData), sampled to config.docs
    data_info: dict[str, Any] = field(default_factory=dict)
    #: Per mechanism: the words of the data N_w/S_w are measured on, and their weights.
    data_words: dict[str, Any] = field(default_factory=dict)


def run_sweep(config: SweepConfig, out_dir: str | Path, *,
              log: Callable[[str], None] | None = None, data: Any = None) -> dict[str, Any]:
    """Run every measurement of ``config`` and write results.json, report.md/html and PNGs.

    Returns the results dict (what ``results.json`` holds). Tasks whose data are unavailable
    (e.g. no apt for fortunes) or whose encoder is missing are skipped with a note. With
    ``config.input``, ``data`` may hold that file already read
    (:func:`textdp.evaluation.data.read_user_data`); it is read here otherwise. Neither the
    results nor the report hold any of its text unless ``include_text``.
    """
    from textdp._version import __version__

    config.check()
    say = log or (lambda _msg: None)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    rng = _random.generator(config.seed)
    if config.input is not None:
        shared = _prepare_data(config, rng, say, data)
        rows, mech_info, examples = _measure_all(config, shared, rng, _data_release,
                                                 _measure_data)
    else:
        shared = _prepare(config, rng, say)
        rows, mech_info, examples = _measure_all(config, shared, rng, _mechanism, _measure)
    eff_rows = _efficiency_rows(config, shared.notes)
    tasks, reid_corpus, similarity = shared.tasks, shared.reid_corpus, shared.similarity
    results = {
        "schema": "textdp.evaluation/1",
        "textdp_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": jsonable(asdict(config)),
        "vocabulary": shared.vocab.describe(),
        "mechanisms": mech_info,
        "tasks": {n: shared.evaluators[n].describe() for n in shared.evaluators},
        "reidentification_corpus": (shared.data.input if shared.data is not None and reid_corpus
                                    else tasks[reid_corpus].name if reid_corpus else None),
        "similarity_encoder": similarity.describe() if similarity is not None else None,
        "results": rows,
        "efficiency": eff_rows,
        "notes": shared.notes,
        "seconds": time.perf_counter() - t_start,
    }
    if shared.data is not None:
        results["data"] = shared.data_info
    if examples:
        results["examples"] = examples
    results = jsonable(results)
    from textdp.io import atomic_write_json

    # The measurements first: a figure or the report failing afterwards cannot lose them.
    atomic_write_json(out_dir / "results.json", results)
    figures = draw_figures(results, out_dir)
    results["figures"] = {k: p.name for k, p in figures.items()}
    atomic_write_json(out_dir / "results.json", results)
    write_report(evaluation_document(results, figures), out_dir)
    return results


def _prepare(config: SweepConfig, rng: np.random.Generator, say: Callable[[str], None]) -> _Shared:
    """The vocabulary, the sampled words, the tasks with their clean models, the SBERT encoder."""
    from textdp.evaluation import utility
    from textdp.evaluation.deniability import sample_words
    from textdp.vocab import DEFAULT, load

    vocab = load(config.vocabulary or DEFAULT, size=config.vocabulary_size)
    word_ids = sample_words(vocab, config.words, rng)
    notes: list[str] = []
    tasks, evaluators = _load_tasks(config, rng, say, notes)
    reid_corpus = next((n for n in ("sentiment", "source", "topic", "author") if n in tasks), None)
    similarity = None
    if "similarity" in config.tasks and reid_corpus is not None:
        try:
            similarity = utility.make_features("sbert")
            n_sim = min(config.similarity_docs, len(tasks[reid_corpus]))
            sim_clean = list(tasks[reid_corpus].texts[:n_sim])
            similarity.encode(sim_clean, remember=True)
        except (ImportError, OSError, RuntimeError) as exc:
            notes.append(f"SBERT similarity skipped: {exc}")
            similarity = None
    if "reidentification" in config.tasks and reid_corpus is None:
        notes.append("re-identification skipped: no text corpus available")
    return _Shared(vocab, word_ids, tasks, evaluators, reid_corpus, similarity, notes)


def _prepare_data(config: SweepConfig, rng: np.random.Generator, say: Callable[[str], None],
                  data: Any) -> _Shared:
    """The vocabulary, the user's data (sampled to ``config.docs``), the label task with its
    clean model, the SBERT encoder with the clean texts encoded."""
    from textdp.evaluation import utility
    from textdp.evaluation.data import read_user_data
    from textdp.vocab import DEFAULT, load

    vocab = load(config.vocabulary or DEFAULT, size=config.vocabulary_size)
    if data is None:
        assert config.input is not None
        data = read_user_data(config.input, text_field=config.text_field,
                              label_field=config.label_field, format=config.format)
    read = len(data)
    data = data.sample(config.docs, rng)
    info = {**data.describe(), "documents_read": read,
            "sampled": (f"{len(data):,} of {read:,} documents drawn uniformly" if len(data) < read
                        else None)}
    notes: list[str] = []
    tasks: dict[str, Any] = {}
    evaluators: dict[str, Any] = {}
    if "label" in config.tasks:
        task = data.task()
        evaluators["label"] = utility.UtilityEvaluator(task, config.features, rng=rng)
        tasks["label"] = task
    similarity = None
    if "similarity" in config.tasks:
        try:
            similarity = utility.make_features("sbert")
            similarity.encode(list(data.texts[:config.similarity_docs]), remember=True)
        except (ImportError, OSError, RuntimeError) as exc:
            notes.append(f"SBERT similarity skipped: {exc}")
            similarity = None
    say(f"{len(data):,} documents of {data.input}")
    return _Shared(vocab, np.zeros(0, dtype=np.int64), tasks, evaluators,
                   "data" if "reidentification" in config.tasks else None, similarity, notes,
                   data=data, data_info=info)


def _load_tasks(config: SweepConfig, rng: np.random.Generator, say: Callable[[str], None],
                notes: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The classification tasks of ``config`` and their evaluators; a missing one adds a note."""
    from textdp.evaluation import attacks, utility

    tasks: dict[str, Any] = {}
    evaluators: dict[str, Any] = {}
    loaders = {
        "sentiment": lambda: utility.vader_sentiment_task(config.docs, rng),
        "topic": lambda: utility.fortunes_topic_task(config.docs, rng),
        "source": lambda: attacks.source_attribution_task(config.docs, rng),
        "author": lambda: attacks.author_attribution_task(10, rng,
                                                          max_per_author=max(2, config.docs // 10)),
    }
    for name in (*UTILITY_TASKS, *ATTACK_TASKS):
        if name not in config.tasks:
            continue
        try:
            task = loaders[name]()
            if name in UTILITY_TASKS:
                evaluators[name] = utility.UtilityEvaluator(task, config.features, rng=rng)
            else:
                evaluators[name] = attacks.AttackEvaluator(task, config.attack_features, rng=rng)
            tasks[name] = task
        except (RuntimeError, ImportError, OSError, ValueError) as exc:
            notes.append(f"{TASK_TITLES[name]} skipped: {exc}")
            say(f"skipping {name}: {exc}")
    return tasks, evaluators


def _mechanism(config: SweepConfig, shared: _Shared, name: str, eps: float,
               rng: np.random.Generator) -> tuple[Any, Any]:
    """(the mechanism, what the measurement runs: the mechanism itself) on the built-in sets."""
    from textdp import mechanisms as registry

    mech = registry.create(name, shared.vocab, epsilon=float(eps),
                           **dict(config.params.get(name, {})))
    return mech, mech


def _data_release(config: SweepConfig, shared: _Shared, name: str, eps: float,
                  rng: np.random.Generator) -> tuple[Any, Any]:
    """(the mechanism, the release spec) on the user's data: :func:`textdp.spec.release_spec`
    with the sweep's policy and a seed drawn from ``rng``."""
    from textdp.spec import release_spec

    spec = release_spec(name, eps, vocabulary=shared.vocab, oov=config.oov,
                        entities=config.entities, seed=derive_seed(rng),
                        **dict(config.params.get(name, {})))
    return spec.mechanism_object(), spec


def _measure_all(config: SweepConfig, shared: _Shared, rng: np.random.Generator,
                 build: Callable[..., tuple[Any, Any]],
                 measure: Callable[..., tuple[dict[str, Any], dict[str, list[str]]]]
                 ) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """(one row per mechanism and ε, each mechanism's parameters and guarantee, example texts)."""
    rows: list[dict[str, Any]] = []
    mech_info: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []
    steps = len(config.mechanisms) * len(config.epsilons)
    bar = _progress(steps, "evaluate")
    try:
        for name in config.mechanisms:
            for eps in sorted(config.epsilons):
                bar.set_postfix_str(f"{name} ε={eps:g}")
                mech, release = build(config, shared, name, float(eps), rng)
                if name not in mech_info:
                    mech_info[name] = {"parameters": jsonable({k: v for k, v in mech.parameters.items()
                                                               if k != "epsilon"}),
                                       "guarantee": jsonable(mech.guarantee.to_dict())}
                row, private = measure(config, shared, release, name, float(eps), rng)
                if config.include_text and shared.reid_corpus is not None:
                    originals = (shared.data.texts if shared.data is not None
                                 else shared.tasks[shared.reid_corpus].texts)
                    examples.extend({"mechanism": name, "epsilon": float(eps), "original": o,
                                     "private": p} for o, p in
                                    zip(originals[:3], private[shared.reid_corpus][:3],
                                        strict=True))
                rows.append(row)
                bar.update(1)
    finally:
        bar.close()
    return rows, mech_info, examples


def _measure(config: SweepConfig, shared: _Shared, mech: Any, name: str, eps: float,
             rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Every measurement of one mechanism at one ε: (its results row, the private texts per task)."""
    from textdp.evaluation import attacks, utility
    from textdp.evaluation.deniability import plausible_deniability

    tasks, evaluators, reid_corpus = shared.tasks, shared.evaluators, shared.reid_corpus
    row: dict[str, Any] = {"mechanism": name, "epsilon": eps}
    t0 = time.perf_counter()
    den = plausible_deniability(mech, shared.word_ids, config.draws,
                                _random.public_generator(derive_seed(rng)))
    row["deniability"] = den.to_dict()
    private: dict[str, list[str]] = {}
    for tname, task in tasks.items():
        private[tname] = utility.privatize_texts(task.texts, mech, rng, oov=config.oov)
    row["utility"] = {t: evaluators[t].evaluate(private[t]) for t in UTILITY_TASKS if t in evaluators}
    row["attacks"] = {t: evaluators[t].evaluate(private[t]) for t in ATTACK_TASKS if t in evaluators}
    if "reidentification" in config.tasks and reid_corpus is not None:
        row["reidentification"] = attacks.reidentification(
            tasks[reid_corpus].texts, private[reid_corpus])
        row["reidentification"]["corpus"] = tasks[reid_corpus].name
    if shared.similarity is not None:
        n_sim = min(config.similarity_docs, len(tasks[reid_corpus]))
        sim = utility.semantic_similarity(tasks[reid_corpus].texts[:n_sim],
                                          private[reid_corpus][:n_sim],
                                          features=shared.similarity)
        sim.pop("per_text")
        row["similarity"] = sim
    row["seconds"] = time.perf_counter() - t0
    return row, private


def _measure_data(config: SweepConfig, shared: _Shared, spec: Any, name: str, eps: float,
                  rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Every measurement of one release on the user's data: (its row, {"data": private texts}).

    ``spec`` (:func:`_data_release`) runs by ``spec.privatizer()`` on the data; its accounting
    gives the privatised words (counted once per mechanism: the words do not depend on ε) and
    its speed on this data.
    """
    from textdp.evaluation import attacks, utility
    from textdp.evaluation.data import BATCH_SIZE, words_of_run
    from textdp.evaluation.deniability import plausible_deniability

    data = shared.data
    texts = list(data.texts)
    row: dict[str, Any] = {"mechanism": name, "epsilon": eps}
    t0 = time.perf_counter()
    runner = spec.privatizer()
    t_run = time.perf_counter()
    private: list[str] = []
    for i in range(0, len(texts), BATCH_SIZE):
        private += runner.run(texts[i:i + BATCH_SIZE])
    seconds = time.perf_counter() - t_run
    tallies = runner.tallies()
    n_tokens = sum(tallies.by_class.values())
    n_words = tallies.by_policy["privatized"]
    row["efficiency"] = {"documents": len(texts), "tokens": n_tokens, "privatized_words": n_words,
                         "seconds": seconds, "words_per_second": n_words / max(seconds, 1e-9),
                         "tokens_per_second": n_tokens / max(seconds, 1e-9)}
    if name not in shared.data_words:
        words = words_of_run(runner)
        ids, weights, selection = words.select(config.words, rng)
        shared.data_words[name] = (ids, weights)
        shared.data_info.setdefault("words", {})[name] = {**words.describe(),
                                                          "selection": selection}
    ids, weights = shared.data_words[name]
    den = plausible_deniability(spec.mechanism_object(), ids, config.draws,
                                _random.public_generator(derive_seed(rng)), weights=weights)
    row["deniability"] = den.to_dict()
    row["utility"] = {t: shared.evaluators[t].evaluate(private) for t in ("label",)
                      if t in shared.evaluators}
    row["attacks"] = {}
    if shared.reid_corpus is not None:
        row["reidentification"] = attacks.reidentification(texts, private)
        row["reidentification"]["corpus"] = data.input
    if shared.similarity is not None:
        n_sim = min(config.similarity_docs, len(texts))
        sim = utility.semantic_similarity(texts[:n_sim], private[:n_sim],
                                          features=shared.similarity)
        sim.pop("per_text")
        row["similarity"] = sim
    row["seconds"] = time.perf_counter() - t0
    return row, {"data": private}


def _efficiency_rows(config: SweepConfig, notes: list[str]) -> list[dict[str, Any]]:
    """Speed and memory of each mechanism at the middle ε, each in a fresh process."""
    from textdp.evaluation.efficiency import measure_efficiency

    eff_rows: list[dict[str, Any]] = []
    if config.efficiency:
        eps_mid = float(sorted(config.epsilons)[len(config.epsilons) // 2])
        for name in _progress_iter(config.mechanisms, "efficiency"):
            try:
                eff_rows.append(measure_efficiency(
                    name, eps_mid, config.params.get(name), n_tokens=config.efficiency_tokens,
                    vocabulary_size=config.vocabulary_size, vocabulary=config.vocabulary))
            except (RuntimeError, OSError) as exc:
                notes.append(f"efficiency of {name} skipped: {exc}")
    return eff_rows


def _progress_iter(items: Sequence[str], desc: str) -> Any:
    bar = _progress(len(items), desc)
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()
