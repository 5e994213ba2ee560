"""The vector release forms in the grid: PrivEmb sentence embeddings and DeepCandidate document
embeddings.

Form ``embeddings`` releases :class:`textdp.mechanisms.embedding.PrivEmb` (Feyisetan &
Kasiviswanathan, TrustNLP 2021, Algorithm 1) applied to each document's sentence embedding (the
assessment's encoder, MiniLM by default: what ``textdp embed --encode sbert`` releases); form
``documents`` releases :class:`textdp.mechanisms.document.DeepCandidate` (Meehan, Mrini &
Chaudhuri, ACL 2022, §4) over the document's sentence embeddings, choosing one of the user's
public candidates (what ``textdp docembed`` releases). Neither releases text, so:

* **leakage** is not applicable (no word of the document is released: the report says so, and
  the row's entity fields are ``None``, not zero);
* **linkage**: the attacker holds the originals and the public maps (the encoder, PrivEmb's
  public projection Φ, DeepCandidate's candidates), so it computes each original's clean vector
  (Φx; the document's mean sentence embedding) and ranks the originals by their distance to the
  released vector — negative Euclidean distance (the likelihood ranking for PrivEmb's isotropic
  noise) and cosine, the stronger reported;
* **utility**: the same classifier as the text forms without its TF-IDF step (scikit-learn's
  logistic regression, on the vectors) in the same two protocols (train released / test
  released, and train clean / test released), on the same split; ``similarity`` is the mean
  cosine between each released vector and its clean vector;
* **guarantee**: :func:`textdp.assess.scale.document_scale` (the ledger's
  :func:`textdp.privacy.documents.unit_guarantee` and ``whole_document``): for PrivEmb one vector
  per document at the encoder's domain diameter (2 for a unit-norm encoder), for DeepCandidate ε
  per sentence × the document's sentences.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp import _random
from textdp.assess.linkage import rates
from textdp.assess.utility import measured_fields, similarity, wilson

__all__ = ["FORMS", "VECTOR_FORMS", "VectorSetting", "EMBEDDING_EPSILONS", "DOCUMENT_EPSILONS",
           "vector_grid", "vector_attacks", "vector_accuracy", "load_candidates", "command"]

#: Every release form assess knows (``--forms``); ``words`` are the word mechanisms,
#: ``baseline`` the zero-private-data reference row (:mod:`textdp.assess.baseline`).
FORMS = ("words", "embeddings", "documents", "baseline", "prompt", "synthetic")
#: DP-Prompt's ε per document in the grid: at the default 64 new tokens and clip [10, 30]
#: (Δ = 20), T = 2, 1 and 0.5 (readable paraphrases from T ≈ 0.5: docs/dp_prompt.md).
PROMPT_EPSILONS = (1280.0, 2560.0, 5120.0)
#: The forms that release vectors: form → mechanism.
VECTOR_FORMS = {"embeddings": "privemb", "documents": "deepcandidate"}
#: PrivEmb ε on 384-d MiniLM vectors (β = 0.9, δ = 1e-6): within 3 points of chance at ε ≤ 10,
#: near the clean classifier by 300–1000 (docs/results/privemb.md, experiment 4, SBERT).
EMBEDDING_EPSILONS = (10.0, 30.0, 100.0, 300.0, 1000.0)
#: DeepCandidate ε per sentence: the paper's range (below 10 is strong; docs/results/deepcandidate.md).
DOCUMENT_EPSILONS = (1.0, 3.0, 10.0, 30.0)
#: PrivEmb's parameters in the grid: the paper's δ and its recommended large β.
PRIVEMB_DELTA = 1e-6
PRIVEMB_BETA = 0.9
#: :func:`textdp._random.seeded_generator`'s spawn key of the vector forms' noise ("vec").
_NOISE_KEY = 0x766563


@dataclass(frozen=True, slots=True)
class VectorSetting:
    """One vector release of the grid: ``form`` (``embeddings`` or ``documents``) at ``epsilon``."""

    form: str
    epsilon: float

    @property
    def name(self) -> str:
        return VECTOR_FORMS[self.form]

    @property
    def label(self) -> str:
        return self.name


def vector_grid(forms: Sequence[str], epsilons: Mapping[str, Sequence[float]] | None = None
                ) -> list[VectorSetting]:
    """The vector settings of ``forms``: each form's mechanism at ``epsilons[name]`` (default
    :data:`EMBEDDING_EPSILONS`, :data:`DOCUMENT_EPSILONS`)."""
    from textdp.assess.grid import _check_epsilons

    epsilons = epsilons or {}
    defaults = {"privemb": EMBEDDING_EPSILONS, "deepcandidate": DOCUMENT_EPSILONS}
    out = []
    for form, name in VECTOR_FORMS.items():
        if form in forms:
            values = _check_epsilons(epsilons[name]) if name in epsilons else defaults[name]
            out += [VectorSetting(form, float(e)) for e in values]
    return out


def load_candidates(candidates: Any, recoder: Any = None) -> tuple[Any, Any]:
    """(candidates, recoder) from a :class:`CandidateSet`, an (m, d) array or an ``.npz`` path
    (``textdp candidates build``), and a recoder object or path (``textdp recoder train``)."""
    from textdp.mechanisms.document import CandidateSet, Recoder

    if isinstance(candidates, str | os.PathLike):
        candidates = CandidateSet.load(candidates)
    if recoder is not None and not callable(recoder):
        recoder = Recoder.load(recoder)
    return candidates, recoder


def mechanism(setting: VectorSetting, dim: int, candidates: Any = None, recoder: Any = None
              ) -> Any:
    """The built mechanism of ``setting`` (PrivEmb at the encoder's dimension; DeepCandidate over
    the public candidates)."""
    if setting.form == "embeddings":
        from textdp.mechanisms.embedding import PrivEmb

        return PrivEmb(epsilon=setting.epsilon, delta=PRIVEMB_DELTA, beta=PRIVEMB_BETA, dim=dim)
    from textdp.mechanisms.document import DeepCandidate

    return DeepCandidate(candidates, epsilon=setting.epsilon, recoder=recoder)


def release(setting: VectorSetting, mech: Any, vectors: np.ndarray, sentences: Any, seed: int,
            position: int) -> tuple[np.ndarray, np.ndarray]:
    """(released, clean): the released vector of each document and its noise-free counterpart
    in the same space, which the attacker computes from the originals with the public maps."""
    rng = _random.seeded_generator(seed, (_NOISE_KEY, position))
    if setting.form == "embeddings":
        clean = np.asarray(vectors, dtype=np.float64) @ np.asarray(mech.projection).T
        return np.asarray(mech.release(vectors, rng=rng), dtype=np.float64), clean
    released, _ = mech.release_many(sentences, rng)
    return np.asarray(released, dtype=np.float64), document_means(sentences, mech.recoder)


def document_means(sentences: Sequence[np.ndarray], recoder: Any = None) -> np.ndarray:
    """Each document's mean (recoded) sentence embedding: the space of DeepCandidate's public
    candidates (Meehan et al. 2022, §4.1)."""
    out = []
    for s in sentences:
        s = np.asarray(s, dtype=np.float64)
        if recoder is not None:
            s = np.asarray(recoder(s), dtype=np.float64)
        out.append(s.mean(axis=0))
    return np.vstack(out)


def vector_attacks(clean: np.ndarray, released: np.ndarray) -> dict[str, np.ndarray]:
    """attack → (n_released, n_originals) similarity: negative Euclidean distance and cosine."""
    a = np.asarray(released, dtype=np.float64)
    b = np.asarray(clean, dtype=np.float64)
    sq = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * a @ b.T
    na = np.linalg.norm(a, axis=1)[:, None]
    nb = np.linalg.norm(b, axis=1)[None, :]
    return {"nearest-euclidean": -np.maximum(sq, 0.0),
            "nearest-cosine": (a @ b.T) / np.where(na * nb > 0, na * nb, 1.0)}


def vector_accuracy(train: np.ndarray, y_train: np.ndarray, test: np.ndarray,
                    y_test: np.ndarray) -> int:
    """Correct predictions on ``test`` of logistic regression trained on ``train`` (the text
    forms' classifier without its TF-IDF step; the majority label when one label is seen)."""
    from sklearn.linear_model import LogisticRegression

    values, counts = np.unique(y_train, return_counts=True)
    if len(values) < 2:
        return int((y_test == values[np.argmax(counts)]).sum())
    model = LogisticRegression(max_iter=1000).fit(train, y_train)
    return int((model.predict(test) == y_test).sum())


def command(setting: VectorSetting) -> str:
    """The command that makes this release."""
    if setting.form == "embeddings":
        return (f"textdp embed INPUT --encode sbert -m privemb --epsilon {setting.epsilon:g} "
                f"--delta {PRIVEMB_DELTA:g} --beta {PRIVEMB_BETA:g} -o OUTPUT.npy")
    return (f"textdp docembed INPUT --epsilon {setting.epsilon:g} --candidates CANDIDATES.npz "
            "-o OUTPUT.npy")


def measure(setting: VectorSetting, clean: np.ndarray, released: np.ndarray, split: Any,
            seconds: float, words: int) -> dict[str, Any]:
    """The row of one vector setting (the same fields as a word setting's; leakage is not
    applicable, so its fields are None)."""
    n = clean.shape[0]
    link = rates(vector_attacks(clean, released), n)
    sims = similarity(clean, released)
    row: dict[str, Any] = {
        "form": setting.form, "mechanism": setting.name, "variant": "", "label": setting.label,
        "epsilon": setting.epsilon, "epsilon_is_document_budget": False, "release": {},
        "privatize_options": "", "command": command(setting), "documents": n,
        "leakage": "not applicable: the release is a vector, no word of the document is in it",
        "entities_found": None, "entities_survived_count": None, "entities_survived": None,
        "entities_survived_interval": None, "entities_by_kind": {},
        "independent_leakage": None, "independent_survived_count": None,
        "documents_leaking": None, "documents_leaking_interval": None,
        "words_privatized": None, "words_unchanged": None, "words_unchanged_interval": None,
        **measured_fields(link, n, sims, seconds, words),
    }
    if split is not None:
        y_train, y_test = split.labels[split.train], split.labels[split.test]
        own = vector_accuracy(released[split.train], y_train, released[split.test], y_test)
        from_clean = vector_accuracy(clean[split.train], y_train, released[split.test], y_test)
        m = len(split.test)
        row.update(task_accuracy=own / m, task_accuracy_interval=wilson(own, m),
                   task_accuracy_clean_train=from_clean / m,
                   task_accuracy_clean_train_interval=wilson(from_clean, m))
    return row


class BoundedDomain:
    """A vector mechanism seen on a bounded input domain: its notion and privacy map, with the
    domain's diameter, for :func:`textdp.privacy.documents.unit_guarantee` (the ledger's code),
    which states no finite whole-document ε for a vector mechanism without one."""

    def __init__(self, mechanism: Any, diameter: float) -> None:
        self.notion = mechanism.notion
        self.privacy_map = mechanism.privacy_map
        self.domain_diameter = float(diameter)


def unit_norm_diameter(encoder: Any) -> float | None:
    """2 for an encoder documented to return unit vectors (textdp's MiniLM), else None: the
    ledger's code then states the guarantee as unbounded."""
    from textdp.encoders import SBERT

    # Float32 normalisation leaves norms within ~1e-7 of 1: the diameter is stated a little
    # above 2, so that the stated ε is never below the exact one.
    return 2.0 * (1 + 1e-6) if isinstance(encoder, SBERT) else None


def vector_attribute(clean: np.ndarray, released: np.ndarray, split: Any) -> dict[str, Any]:
    """The attribute attack on vectors (:func:`textdp.assess.attacks.attribute_inference`'s two
    attackers, logistic regression on the vectors): the stronger one's accuracy."""
    y_train, y_test = split.labels[split.train], split.labels[split.test]
    scores = {"trained on originals": vector_accuracy(clean[split.train], y_train,
                                                      released[split.test], y_test),
              "trained on private": vector_accuracy(released[split.train], y_train,
                                                    released[split.test], y_test)}
    best = max(scores, key=lambda k: scores[k])
    m = len(split.test)
    return {"accuracy": scores[best] / m, "accuracy_interval": wilson(scores[best], m),
            "attack": best, "by_attack": {k: v / m for k, v in scores.items()}}


def vector_rows(settings: Sequence[VectorSetting], originals: Sequence[str],
                original_embeddings: np.ndarray, embed: Any, split: Any, words: int,
                shared: Any, seed: int, candidates: Any = None, recoder: Any = None,
                progress: Any = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """(rows, built mechanisms) of the vector settings, on the sample's ``originals``.

    ``shared`` is the assessment's :class:`textdp.assess.shared.Shared` (document sizes, persons,
    the attribute split). DeepCandidate's sentence embeddings are computed once for all its
    settings (with the assessment's encoder: the candidates must have been built with it).
    """
    from textdp.assess.attacks import author_linkage
    from textdp.assess.scale import document_scale
    from textdp.assess.utility import chance

    sentences = counts = None
    if any(s.form == "documents" for s in settings):
        from textdp.encoders import encode_documents

        sentences = encode_documents(embed, list(originals))
        counts = np.asarray([s.shape[0] for s in sentences], dtype=np.int64)
    diameter = unit_norm_diameter(embed)
    rows, mechanisms = [], []
    for position, setting in enumerate(settings):
        mech = mechanism(setting, original_embeddings.shape[1], candidates, recoder)
        bar = progress(f"{setting.label} ε={setting.epsilon:g}", len(originals)) \
            if progress is not None else None
        try:
            t0 = time.perf_counter()
            released, clean = release(setting, mech, original_embeddings, sentences, seed,
                                      position)
            seconds = time.perf_counter() - t0
            if bar is not None:
                bar.update(len(originals))
        finally:
            if bar is not None:
                bar.close()
        row = measure(setting, clean, released, split, seconds, words)
        if shared.authors is not None:
            authors = author_linkage(vector_attacks(clean, released), shared.authors)
            row.update(author_linkage=authors, author_linkage_top1=authors["top1"],
                       author_linkage_top1_interval=authors["top1_interval"],
                       author_linkage_chance=authors["chance_top1"])
        if shared.attribute_split is not None:
            attribute = vector_attribute(clean, released, shared.attribute_split)
            row.update(attribute=attribute, attribute_accuracy=attribute["accuracy"],
                       attribute_accuracy_interval=attribute["accuracy_interval"],
                       attribute_chance=chance(shared.attribute_split)
                       / len(shared.attribute_split.test))
        if setting.form == "embeddings":
            seen = mech if diameter is None else BoundedDomain(mech, diameter)
            row["document_guarantee"] = document_scale(seen, shared.sizes, shared.units,
                                                       "vectors")
            if diameter is not None:
                row["document_guarantee"]["domain"] = (
                    f"the encoder's vectors have unit norm, so two documents' vectors are at "
                    f"most {diameter:.7g} apart (the ledger itself states no bound: it does not "
                    "know the encoder)")
        else:
            row["document_guarantee"] = document_scale(mech, counts, shared.authors, "documents")
            row["document_guarantee"]["domain"] = (
                "sentence counts of the sampled documents (textdp.sentences.split_sentences)")
        rows.append(row)
        mechanisms.append(mech)
    return rows, mechanisms


def resolve_forms(forms: str | Sequence[str] | None, mechanisms: Any, candidates: Any,
                  labelled: bool = True) -> tuple[str, ...]:
    """The forms to assess, checked (see :func:`textdp.assess`'s ``forms``)."""
    from textdp.spec import PROMPT_MECHANISMS

    named = [m for m in mechanisms or () if isinstance(m, str) and m in PROMPT_MECHANISMS]
    if named:
        raise ValueError(f"{named[0]} rewrites whole documents with a language model: assess "
                         "it as the prompt form (forms=['prompt'], --forms prompt)")
    if forms is None:
        if mechanisms is not None:
            return ("words",)
        return ("words", "embeddings") + (("documents",) if candidates is not None else ())
    names = ([x.strip() for x in forms.split(",") if x.strip()] if isinstance(forms, str)
             else [str(x) for x in forms])
    unknown = [x for x in names if x not in FORMS]
    if unknown or not names:
        raise ValueError(f"unknown release form {unknown[0]!r}; forms: {', '.join(FORMS)}"
                         if unknown else f"give at least one release form: {', '.join(FORMS)}")
    if "documents" in names and candidates is None:
        raise ValueError("the documents form (DeepCandidate) needs public candidates: give "
                         "candidates= (--candidates FILE, from `textdp candidates build` on "
                         "public documents)")
    for form in ("baseline", "synthetic"):
        if form in names and not labelled:
            raise ValueError(f"the {form} form needs labels: its utility is a classifier "
                             "trained on its output (give labels, --label-field)")
    if mechanisms is not None and "words" not in names:
        raise ValueError("mechanisms name word mechanisms: add 'words' to the forms")
    return tuple(dict.fromkeys(names))


def split_epsilons(epsilons: Any) -> tuple[Any, dict[str, Any]]:
    """(the word mechanisms' ε, the vector mechanisms' ``{name: ε list}``): a per-mechanism
    mapping may name ``privemb`` and ``deepcandidate`` too; a plain list is for words only."""
    if not isinstance(epsilons, Mapping):
        return epsilons, {}
    vectors = {k: v for k, v in epsilons.items()
               if k in (*VECTOR_FORMS.values(), "dp_prompt", "synthesize")}
    words = {k: v for k, v in epsilons.items() if k not in vectors}
    return (words or None), vectors


def vector_guarantee_in_words(row: Mapping[str, Any], mech: Any) -> str:
    """The formal guarantee of a vector setting as a person reads it."""
    g = mech.guarantee
    scale = row.get("document_guarantee") or {}
    med = (scale.get("median") or {}).get("epsilon")
    from textdp.privacy import format_up

    text = f"{row['label']} at ε = {row['epsilon']:g}: {g.per_word}."
    if med is None:
        return text + f" A whole document: no finite bound ({scale.get('why')})."
    unit = scale.get("unit", "document")
    return text + (f" A whole document of your data's median size "
                   f"({scale['median']['units']} {unit}(s)) gets ε ≤ {format_up(med, 4)}"
                   + (f", δ ≤ {format_up(scale['median']['delta'], 4)}" if scale["median"]["delta"] else "")
                   + f" ({scale.get('domain', '')}).")


@dataclass(frozen=True, slots=True)
class FormsPlan:
    """What :func:`textdp.assess` runs beyond the word grid: the forms, the word mechanisms' ε,
    the vector settings and DeepCandidate's public candidates and recoder (loaded)."""

    forms: tuple[str, ...]
    word_epsilons: Any
    vectors: list[VectorSetting]
    candidates: Any = None
    recoder: Any = None
    model: Any = None
    document_kind: str = "text"
    prompts: list[Any] = field(default_factory=list)
    synthetic: list[float] = field(default_factory=list)

    @property
    def words(self) -> bool:
        return "words" in self.forms

    def word_grid(self, mechanisms: Any) -> list[Any]:
        """The word settings (:func:`textdp.assess.grid.default_grid`; none without words)."""
        from textdp.assess.grid import default_grid

        return default_grid(mechanisms, self.word_epsilons) if self.words else []

    @property
    def baseline(self) -> bool:
        return "baseline" in self.forms


def plan(forms: str | Sequence[str] | None, mechanisms: Any, epsilons: Any, candidates: Any,
         recoder: Any, labelled: bool = True, *, model: Any = None, document_kind: str = "text"
         ) -> FormsPlan:
    """The forms of an assessment, checked: ``forms`` (``words``, ``embeddings``,
    ``documents``; a list or a comma-separated string; default words and embeddings, and
    documents with ``candidates``; with ``mechanisms`` given, words only), ``epsilons`` split
    between word and vector mechanisms, and the candidates (a ``CandidateSet`` or its
    ``.npz``) and recoder (an object or its ``.npz``) loaded. ``baseline`` (only when named:
    it runs the language model ``model``, synthesize's, writing ``document_kind``) needs
    labels."""
    if not isinstance(document_kind, str) or not document_kind.strip():
        raise ValueError("document_kind must be a non-empty string")
    chosen = resolve_forms(forms, mechanisms, candidates, labelled)
    words, vectors = split_epsilons(epsilons)
    candidates, recoder = load_candidates(candidates, recoder)
    prompts = []
    if "prompt" in chosen:
        from textdp.assess.grid import Setting, _check_epsilons

        options = (("model", model),) if model is not None else ()
        prompts = [Setting("dp_prompt", float(e), options=options) for e in
                   (_check_epsilons(vectors["dp_prompt"]) if "dp_prompt" in vectors
                    else PROMPT_EPSILONS)]
    synthetic: list[float] = []
    if "synthetic" in chosen:
        from textdp.assess.grid import _check_epsilons
        from textdp.assess.synthetic import SYNTHETIC_EPSILONS

        synthetic = (_check_epsilons(vectors["synthesize"]) if "synthesize" in vectors
                     else list(SYNTHETIC_EPSILONS))
    return FormsPlan(chosen, words, vector_grid(chosen, vectors), candidates, recoder, model,
                     document_kind, prompts, synthetic)
