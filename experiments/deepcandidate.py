"""Evaluation of DeepCandidate against its baselines, by one command.

    python -m experiments.deepcandidate            # writes docs/results/deepcandidate.md

Reproduces the experiment of Meehan, Mrini & Chaudhuri (ACL 2022, §5, Figure 4) on the offline
document sets of :mod:`textdp.datasets.documents` (NYT editorials and Amazon reviews: sentiment;
Bible chapters: division of the canon): test-set macro-F1 of a classifier on private document
embeddings, against ε (1…30) and against the number of sentences per document at ε = 10, for

* DeepCandidate (recoder H, candidates F, p projections tuned per ε on a validation split),
* truncation (clip to the central 75% box of public document embeddings, average, Laplace),
* word-level MVC then encode (a *weaker*, word-level metric-DP guarantee at the same ε),
* the non-private mean of sentence embeddings, and a random guess (its expected macro-F1),

with 5 trials over the mechanisms' randomness (mean ± std). Every split, the recoder, the
candidates and the classifiers come from the *public* part of each data set; only the test
documents are privatised. Sentence embeddings are cached on disk (``<cache>/experiments``).

Differences from the paper, all forced by size (stated again in the report): 384-d
all-MiniLM-L6-v2 instead of 768-d SBERT; a few hundred public documents per set instead of
tens of thousands, so F holds the public training documents plus random sub-documents of them
(m = 2,000 instead of 5,000) and k-means uses fewer clusters on the two small sets; logistic
regression instead of MLP classifiers; MVC is evaluated on a sentence-budgeted subsample of the
test documents because every trial re-encodes the privatised text.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiments import _harness as harness
from experiments._harness import Log
from textdp.encoders import SentenceEncoder, encoder_name

NAME = "deepcandidate"
DEFAULT_EPSILONS = (1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 20.0, 25.0, 30.0)
DEFAULT_MVC_EPSILONS = (1.0, 5.0, 10.0, 20.0, 30.0)
PROJECTION_GRID = (10, 25, 50, 100)
K_BINS = ((2, 5), (6, 9), (10, 14), (15, 24), (25, 10_000))
EPS_K = 10.0
METHODS = ("deepcandidate", "truncation", "mvc", "non-private", "random guess")
COLORS = {"deepcandidate": "tab:blue", "truncation": "tab:orange", "mvc": "tab:green",
          "non-private": "black", "random guess": "tab:gray"}


def cached_sentence_embeddings(dataset: str, documents: Sequence[Sequence[str]],
                               encoder: SentenceEncoder, *, log: Log | None = print
                               ) -> list[np.ndarray]:
    """Sentence embeddings of ``documents``, encoded once and cached on disk (float32), keyed by
    the dataset name, the encoder's name and a hash of every sentence."""
    import re

    flat = [s for doc in documents for s in doc]
    counts = np.array([len(doc) for doc in documents], dtype=np.int64)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", encoder_name(encoder))
    emb = harness.cached_encode(harness.cache_root(NAME), f"{dataset}-{safe}", flat, encoder,
                                chunk=1024, log=log)
    return np.split(emb, np.cumsum(counts)[:-1])


class _MemoEncoder:
    """Wraps an encoder with an in-memory sentence → embedding memo (MVC re-encodes a lot)."""

    def __init__(self, encoder: SentenceEncoder) -> None:
        self.encoder = encoder
        self.name = encoder_name(encoder)
        self.memo: dict[str, np.ndarray] = {}

    def __call__(self, sentences: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(s for s in sentences if s not in self.memo))
        if todo:
            for s, e in zip(todo, np.asarray(self.encoder(todo), dtype=np.float64), strict=True):
                self.memo[s] = e
        return np.vstack([self.memo[s] for s in sentences])


# ------------------------------------------------------------------------------------------------
# Metrics and classifiers


def macro_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    """Macro-averaged F1 over the classes present in ``y_true``."""
    scores = []
    for c in np.unique(y_true):
        tp = np.sum((y_pred == c) & (y_true == c))
        fp = np.sum((y_pred == c) & (y_true != c))
        fn = np.sum((y_pred != c) & (y_true == c))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def random_guess_f1(train_labels: np.ndarray, test_labels: np.ndarray, n_classes: int) -> float:
    """Expected macro-F1 of guessing class i with its training frequency q_i.

    On a large test set with class frequencies p_i, precision_i → p_i and recall_i → q_i, so
    F1_i → 2 p_i q_i / (p_i + q_i). (The paper reports Σ q_i², the random guesser's accuracy.)
    """
    q = np.bincount(train_labels, minlength=n_classes) / len(train_labels)
    p = np.bincount(test_labels, minlength=n_classes) / len(test_labels)
    present = p > 0
    f1 = np.where(p + q > 0, 2 * p * q / np.maximum(p + q, 1e-300), 0.0)
    return float(f1[present].mean())


def fit_classifier(x: np.ndarray, y: np.ndarray, seed: int) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000, C=0.5,
                                                             class_weight="balanced",
                                                             random_state=seed))
    return clf.fit(x, y)


# ------------------------------------------------------------------------------------------------
# One data set


@dataclass
class Split:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def stratified_split(labels: np.ndarray, rng: np.random.Generator, test: float = 0.4,
                     val: float = 0.2) -> Split:
    """Per class: a ``test`` share of documents is private; of the rest, ``val`` validates."""
    tr, va, te = [], [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        n_test = int(round(test * idx.size))
        rest = idx[n_test:]
        n_val = int(round(val * rest.size))
        te.append(idx[:n_test])
        va.append(rest[:n_val])
        tr.append(rest[n_val:])
    return Split(*(np.sort(np.concatenate(a)) for a in (tr, va, te)))


def sub_documents(sentences: Sequence[np.ndarray], labels: np.ndarray, ids: Sequence[str],
                  target: int, rng: np.random.Generator, min_sentences: int = 4,
                  ) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
    """Public documents, plus random sub-documents of them until there are ``target``.

    A sub-document keeps a uniformly random subset of at least half of a document's sentences
    (documents of ``min_sentences`` or more). Public data only: this enlarges F without looking
    at any private document.
    """
    docs, labs, names = list(sentences), list(labels), list(ids)
    eligible = [i for i, s in enumerate(sentences) if s.shape[0] >= min_sentences]
    n = 0
    while len(docs) < target and eligible:
        i = eligible[int(rng.integers(len(eligible)))]
        k = sentences[i].shape[0]
        size = int(rng.integers((k + 1) // 2, k))
        keep = np.sort(rng.choice(k, size=size, replace=False))
        docs.append(sentences[i][keep])
        labs.append(labels[i])
        names.append(f"{ids[i]}#sub{n}")
        n += 1
    return docs, np.array(labs), names


def _eps_key(eps: float) -> int:
    return int(round(eps * 1000))


@dataclass
class _Data:
    """One data set, split, with its sentence embeddings (what every method below reads)."""

    name: str
    docs: list[Any]
    classes: list[str]
    y: np.ndarray
    ks: np.ndarray
    sents: list[np.ndarray]
    split: Split
    g: np.ndarray          # non-private document embeddings (mean of sentence embeddings)
    seed: int
    trials: int
    log: Log

    @property
    def n_cls(self) -> int:
        return len(self.classes)

    def f1(self, idx: np.ndarray, pred: np.ndarray) -> float:
        return macro_f1(self.y[idx], pred, self.n_cls)


def _load(name: str, encoder: SentenceEncoder, seed: int, trials: int, log: Log) -> _Data:
    from textdp.datasets.documents import load_documents

    docs = load_documents(name)
    classes = sorted({d.label for d in docs})
    sents = cached_sentence_embeddings(name, [d.sentences for d in docs], encoder, log=log)
    y = np.array([classes.index(d.label) for d in docs])
    data = _Data(name, docs, classes, y, np.array([len(d) for d in docs]), sents,
                 stratified_split(y, harness.rng(seed, 0)),
                 np.vstack([s.mean(axis=0) for s in sents]), seed, trials, log)
    sp = data.split
    log(f"[{name}] {len(docs)} documents ({', '.join(classes)}), public train {sp.train.size}, "
        f"validation {sp.val.size}, private test {sp.test.size}")
    return data


def _non_private(d: _Data, out: dict[str, Any]) -> Any:
    """The non-private baseline and the random guess; returns the non-private classifier."""
    tr, te = d.split.train, d.split.test
    c_nonpriv = fit_classifier(d.g[tr], d.y[tr], d.seed)
    out["non-private"] = d.f1(te, c_nonpriv.predict(d.g[te]))
    out["random guess"] = random_guess_f1(d.y[tr], d.y[te], d.n_cls)
    out["non-private_pred"] = c_nonpriv.predict(d.g[te]).tolist()
    d.log(f"[{d.name}] non-private macro-F1 {out['non-private']:.3f}, random guess "
          f"{out['random guess']:.3f}")
    return c_nonpriv


def _deepcandidate(d: _Data, out: dict[str, Any], epsilons: Sequence[float], n_candidates: int,
                   recoder_epochs: int, encoder: SentenceEncoder) -> None:
    """Recoder H and candidates F from the public training documents; p tuned per ε on the
    validation split (public), as in the paper (App. A.3)."""
    from textdp.mechanisms.document import DeepCandidate, build_candidates, train_recoder

    tr, va, te, seed = d.split.train, d.split.val, d.split.test, d.seed
    n_clusters = int(min(50, max(2, tr.size // 10)))
    t = time.perf_counter()
    fit = train_recoder([d.sents[i] for i in tr], n_clusters=n_clusters, epochs=recoder_epochs,
                        rng=harness.rng(seed, 1), threads=1)
    h = fit.recoder
    d.log(f"[{d.name}] recoder: {n_clusters} clusters, train accuracy {fit.accuracy:.2f}, "
          f"{time.perf_counter() - t:.0f}s")
    cand_docs, cand_y, cand_ids = sub_documents([d.sents[i] for i in tr], d.y[tr],
                                                [d.docs[i].id for i in tr], n_candidates,
                                                harness.rng(seed, 2))
    cands = build_candidates(cand_docs, cand_ids, recoder=h, encoder=encoder_name(encoder))
    c_dc = fit_classifier(cands.embeddings, cand_y, seed)
    gh = np.vstack([h(s).mean(axis=0) for s in d.sents])
    out["recoded non-private"] = d.f1(te, c_dc.predict(gh[te]))
    out["n_clusters"], out["candidates"] = n_clusters, len(cands)
    d.log(f"[{d.name}] {len(cands)} candidates; recoded non-private macro-F1 "
          f"{out['recoded non-private']:.3f}")

    def run_dc(eps: float, p: int, idx: np.ndarray, trial: int) -> np.ndarray:
        mech = DeepCandidate(epsilon=eps, candidates=cands, n_projections=p, recoder=h,
                             projection_seed=seed)
        emb, _ = mech.release_many([d.sents[i] for i in idx],
                                   harness.rng(seed, 3, _eps_key(eps), p, trial, int(idx[0])))
        return c_dc.predict(emb)

    dc: dict[str, Any] = {}
    for eps in epsilons:
        scores = {p: np.mean([d.f1(va, run_dc(eps, p, va, 100 + t)) for t in range(2)])
                  for p in PROJECTION_GRID}
        best = max(scores, key=lambda p: (scores[p], -p))
        preds = [run_dc(eps, best, te, t) for t in range(d.trials)]
        f1 = [d.f1(te, pr) for pr in preds]
        dc[str(eps)] = {"p": best, "f1": f1, "validation": {str(k): v for k, v in scores.items()}}
        if eps == EPS_K:
            dc["k_pred"] = [pr.tolist() for pr in preds]
        d.log(f"[{d.name}] deepcandidate ε={eps:g}: p={best}, macro-F1 {np.mean(f1):.3f} ± "
              f"{np.std(f1):.3f}")
    out["deepcandidate"] = dc


def _truncation(d: _Data, out: dict[str, Any], epsilons: Sequence[float]) -> None:
    """Box from public document embeddings, classifier on clipped means."""
    from textdp.mechanisms.document import Truncation

    tr, te = d.split.train, d.split.test
    box = Truncation.from_public(epsilon=1.0, public_embeddings=d.g[tr])
    c_tr = fit_classifier(np.vstack([box.clipped_mean(d.sents[i]) for i in tr]), d.y[tr], d.seed)
    trunc: dict[str, Any] = {}
    for eps in epsilons:
        mech = Truncation(epsilon=eps, lower=box.lower, upper=box.upper)
        preds = []
        for t in range(d.trials):
            gen = harness.rng(d.seed, 4, _eps_key(eps), t)
            preds.append(c_tr.predict(np.vstack([mech.release(d.sents[i], gen) for i in te])))
        trunc[str(eps)] = {"f1": [d.f1(te, pr) for pr in preds]}
        if eps == EPS_K:
            trunc["k_pred"] = [pr.tolist() for pr in preds]
        d.log(f"[{d.name}] truncation ε={eps:g}: macro-F1 {np.mean(trunc[str(eps)]['f1']):.3f}")
    out["truncation"] = trunc


def _mvc_subsample(d: _Data, budget: int) -> tuple[np.ndarray, int]:
    """A random subsample of the test documents with at most ``budget`` sentences in all."""
    sub, total = [], 0
    for i in harness.rng(d.seed, 5).permutation(d.split.test):
        if total + d.ks[i] > budget and sub:
            continue
        sub.append(i)
        total += d.ks[i]
    return np.sort(np.array(sub)), int(total)


def _mvc(d: _Data, out: dict[str, Any], mvc_epsilons: Sequence[float], mvc_sentences: int,
         encoder: SentenceEncoder, c_nonpriv: Any) -> None:
    """Word-level MVC then encode, on a sentence-budgeted random subsample of the test set."""
    from textdp import privatize

    sub, total = _mvc_subsample(d, mvc_sentences)
    memo = _MemoEncoder(encoder)
    mvc: dict[str, Any] = {"documents": sub.tolist(), "sentences": total,
                           "non-private": d.f1(sub, c_nonpriv.predict(d.g[sub]))}
    flat = [s for i in sub for s in d.docs[i].sentences]
    counts = d.ks[sub]
    for eps in mvc_epsilons:
        preds = []
        t = time.perf_counter()
        for trial in range(d.trials):
            seed = int(harness.rng(d.seed, 6, _eps_key(eps), trial).integers(2**31))
            private = privatize(flat, mechanism="mvc", epsilon=eps, seed=seed,
                                entities="none").texts
            emb = memo(private)
            doc_emb = np.vstack([e.mean(axis=0) for e in np.split(emb, np.cumsum(counts)[:-1])])
            preds.append(c_nonpriv.predict(doc_emb))
        mvc[str(eps)] = {"f1": [d.f1(sub, pr) for pr in preds]}
        if eps == EPS_K:
            mvc["k_pred"] = [pr.tolist() for pr in preds]
        d.log(f"[{d.name}] mvc ε={eps:g}: macro-F1 {np.mean(mvc[str(eps)]['f1']):.3f} "
              f"({len(sub)} documents, {time.perf_counter() - t:.0f}s)")
    out["mvc"] = mvc


def evaluate_dataset(name: str, encoder: SentenceEncoder, *, epsilons: Sequence[float],
                     mvc_epsilons: Sequence[float], trials: int, seed: int,
                     n_candidates: int, mvc_sentences: int, recoder_epochs: int,
                     log: Log = print) -> dict[str, Any]:
    """Every method on one data set: the results a page is drawn from (JSON-able)."""
    t0 = time.perf_counter()
    d = _load(name, encoder, seed, trials, log)
    sp = d.split
    out: dict[str, Any] = {"dataset": name, "classes": d.classes, "documents": len(d.docs),
                           "train": int(sp.train.size), "validation": int(sp.val.size),
                           "test": int(sp.test.size), "test_k": d.ks[sp.test].tolist()}
    c_nonpriv = _non_private(d, out)
    _deepcandidate(d, out, epsilons, n_candidates, recoder_epochs, encoder)
    _truncation(d, out, epsilons)
    _mvc(d, out, mvc_epsilons, mvc_sentences, encoder, c_nonpriv)
    out["test_index"] = sp.test.tolist()
    out["test_labels"] = d.y[sp.test].tolist()
    out["train_labels"] = d.y[sp.train].tolist()
    out["seconds"] = time.perf_counter() - t0
    return out


# ------------------------------------------------------------------------------------------------
# Sentences-per-document sweep, plots and the report


def k_sweep(res: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Macro-F1 per sentence-count bin at ε = 10, per method (trials kept)."""
    te = np.array(res["test_index"])
    y = np.array(res["test_labels"])
    k = np.array(res["test_k"])
    n_cls = len(res["classes"])
    ytr = np.array(res["train_labels"])
    out: dict[str, dict[str, list[float]]] = {}
    mvc_docs = np.array(res["mvc"]["documents"])
    mvc_y = y[np.searchsorted(te, mvc_docs)] if mvc_docs.size else np.array([], dtype=int)
    mvc_k = k[np.searchsorted(te, mvc_docs)] if mvc_docs.size else np.array([], dtype=int)
    for lo, hi in K_BINS:
        label = f"{lo}–{hi}" if hi < 10_000 else f"≥{lo}"
        mask = (k >= lo) & (k <= hi)
        if mask.sum() < 5:
            continue
        row: dict[str, list[float]] = {"n": [int(mask.sum())]}
        for method in ("deepcandidate", "truncation"):
            preds = res[method].get("k_pred")
            if preds:
                row[method] = [macro_f1(y[mask], np.array(p)[mask], n_cls) for p in preds]
        row["non-private"] = [macro_f1(y[mask], np.array(res["non-private_pred"])[mask], n_cls)]
        row["random guess"] = [random_guess_f1(ytr, y[mask], n_cls)]
        m_mask = (mvc_k >= lo) & (mvc_k <= hi)
        if res["mvc"].get("k_pred") and m_mask.sum() >= 5:
            row["mvc"] = [macro_f1(mvc_y[m_mask], np.array(p)[m_mask], n_cls)
                          for p in res["mvc"]["k_pred"]]
        out[label] = row
    return out


def on_mvc_subsample(res: dict[str, Any], method: str = "deepcandidate") -> list[float]:
    """Macro-F1 at ε = 10 of ``method`` restricted to the documents word-level MVC was run on."""
    te = np.array(res["test_index"])
    pos = np.searchsorted(te, np.array(res["mvc"]["documents"], dtype=np.int64))
    y = np.array(res["test_labels"])[pos]
    return [macro_f1(y, np.array(p)[pos], len(res["classes"])) for p in res[method]["k_pred"]]


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std())


def plot_dataset(res: dict[str, Any], path: Path, epsilons: Sequence[float],
                 mvc_epsilons: Sequence[float]) -> None:
    """Figure 4 of the paper for one data set: macro-F1 vs ε (left), vs k at ε = 10 (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for method, eps_list in (("deepcandidate", epsilons), ("truncation", epsilons),
                             ("mvc", mvc_epsilons)):
        stats = [_mean_std(res[method][str(e)]["f1"]) for e in eps_list]
        m = np.array([s[0] for s in stats])
        sd = np.array([s[1] for s in stats])
        label = {"deepcandidate": "DeepCandidate (ε-SentDP)", "truncation": "Truncation "
                 "(ε-SentDP)", "mvc": "word-level MVC (ε per word, weaker)"}[method]
        a1.plot(eps_list, m, "o-", color=COLORS[method], label=label, ms=4)
        a1.fill_between(eps_list, m - sd, m + sd, color=COLORS[method], alpha=0.2)
    a1.axhline(res["non-private"], color=COLORS["non-private"], ls="--", label="non-private")
    a1.axhline(res["random guess"], color=COLORS["random guess"], ls=":", label="random guess")
    a1.set_xlabel("ε")
    a1.set_ylabel("test macro-F1")
    a1.set_title(f"{res['dataset']}: sweep ε")
    a1.set_ylim(0, 1)
    a1.legend(fontsize=7, loc="lower right")

    sweep = k_sweep(res)
    labels = list(sweep)
    x = np.arange(len(labels))
    for method in ("deepcandidate", "truncation", "mvc", "non-private", "random guess"):
        pts = [(i, *_mean_std(sweep[b][method])) for i, b in enumerate(labels) if method in
               sweep[b]]
        if not pts:
            continue
        xi, m, sd = (np.array(v) for v in zip(*pts, strict=True))
        style = "--" if method == "non-private" else ":" if method == "random guess" else "o-"
        a2.plot(xi, m, style, color=COLORS[method], label=method, ms=4)
        a2.fill_between(xi, m - sd, m + sd, color=COLORS[method], alpha=0.2)
    a2.set_xticks(x, [f"{b}\n(n={sweep[b]['n'][0]})" for b in labels], fontsize=8)
    a2.set_xlabel("sentences per document k")
    a2.set_title(f"{res['dataset']}: sweep k at ε = {EPS_K:g}")
    a2.set_ylim(0, 1)
    a2.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt(values: Sequence[float]) -> str:
    m, s = _mean_std(values)
    return f"{m:.3f} ± {s:.3f}"


def _beats(a: Sequence[float], b: Sequence[float]) -> str:
    (ma, sa), (mb, sb) = _mean_std(a), _mean_std(b)
    if ma > mb + sa + sb:
        return "**yes**"
    if ma > mb:
        return "higher, within noise"
    return "no"


def _verdict_section(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Verdict at ε = 10",
        "",
        "| data set | DeepCandidate | truncation | beats truncation | DeepCandidate on the MVC "
        "subsample | word-level MVC (same documents) | beats word-level MVC |",
        "|---|---|---|---|---|---|---|",
    ]
    key = str(EPS_K)
    for r in results:
        dc, tr, mv = r["deepcandidate"][key]["f1"], r["truncation"][key]["f1"], r["mvc"][key]["f1"]
        dc_sub = on_mvc_subsample(r)
        lines.append(f"| {r['dataset']} | {_fmt(dc)} | {_fmt(tr)} | {_beats(dc, tr)} | "
                     f"{_fmt(dc_sub)} | {_fmt(mv)} | {_beats(dc_sub, mv)} |")
    return lines + [
        "", "\"**yes**\": the mean is higher by more than the two standard deviations "
        "together; \"higher, within noise\": higher, but by less than that; \"no\": "
        "not higher. Word-level MVC re-encodes every privatised sentence, so it runs on a "
        "random subsample of the test documents (below); DeepCandidate is compared with "
        "it on exactly those documents. Word-level MVC at the same ε is a *weaker* "
        "guarantee (ε per unit of GloVe distance for each word, not ε for a whole "
        "sentence).", ""]


def _dataset_section(r: dict[str, Any], figure: str, epsilons: Sequence[float]) -> list[str]:
    name = r["dataset"]
    lines = [f"## {name}", "",
             f"![{name}]({figure})", "",
             f"{r['documents']} documents, classes {', '.join(r['classes'])}; "
             f"public: {r['train']} training + {r['validation']} validation documents; "
             f"private test: {r['test']} documents. Recoder: {r['n_clusters']} k-means "
             f"clusters; candidates m = {r['candidates']}. Non-private macro-F1 "
             f"{r['non-private']:.3f} (after the recoder: {r['recoded non-private']:.3f}); "
             f"random guess {r['random guess']:.3f}. Word-level MVC on "
             f"{len(r['mvc']['documents'])} test documents ({r['mvc']['sentences']} "
             f"sentences; non-private on that subsample {r['mvc']['non-private']:.3f}).",
             "",
             "| ε | DeepCandidate (p) | truncation | word-level MVC |",
             "|---|---|---|---|"]
    for eps in epsilons:
        e = str(eps)
        mv = _fmt(r["mvc"][e]["f1"]) if e in r["mvc"] else "–"
        lines.append(f"| {eps:g} | {_fmt(r['deepcandidate'][e]['f1'])} "
                     f"({r['deepcandidate'][e]['p']}) | {_fmt(r['truncation'][e]['f1'])} | "
                     f"{mv} |")
    lines += ["", f"Sentences per document at ε = {EPS_K:g}:", "",
              "| k | documents | DeepCandidate | truncation | word-level MVC | non-private |",
              "|---|---|---|---|---|---|"]
    for b, row in k_sweep(r).items():
        lines.append(f"| {b} | {row['n'][0]} | {_fmt(row['deepcandidate'])} | "
                     f"{_fmt(row['truncation'])} | "
                     f"{_fmt(row['mvc']) if 'mvc' in row else '–'} | "
                     f"{row['non-private'][0]:.3f} |")
    lines.append("")
    return lines


def _setup_section(config: dict[str, Any]) -> list[str]:
    return [
        "## Setup",
        "",
        "- Sentence encoder G: " + config["encoder"] + " (384-d; the paper uses 768-d SBERT), "
        "frozen; sentence embeddings cached on disk. Sentences: the VADER sentence files for "
        "NYT and Amazon, `textdp.sentences.split_sentences` (pysbd) for Bible chapters.",
        "- Splits per data set, stratified by label, seed " + str(config["seed"]) + ": 40% "
        "private test; of the rest, 20% validation (to tune p) and 80% public training "
        "(k-means, recoder H, candidates, classifiers, truncation box).",
        "- Recoder H: MLP 384→384→384→384→384 (ReLU), trained with Adam on the cross-entropy "
        "of a linear layer predicting the k-means cluster of mean H(sentences) "
        f"({config['recoder_epochs']} epochs); n_c = min(50, training documents / 10) "
        "because the public sets are small (the paper: 50 clusters of 48k documents).",
        f"- Candidates F: the public training documents plus random sub-documents of them "
        f"(a random ≥ half of the sentences of documents with ≥ 4 sentences) up to "
        f"m = {config['n_candidates']} (the paper: 5,000 training documents with ≥ 8 "
        "sentences; our public sets are far smaller). Each candidate is the mean of "
        "H(G(s)) over its sentences.",
        "- DeepCandidate: p chosen per ε from " + str(list(PROJECTION_GRID)) + " by the mean "
        "validation macro-F1 of 2 trials (the paper tunes p in 10–100 per ε); projections "
        "from a fixed public seed. Classifier: trained on the candidates (labelled by their "
        "source document). Depth: a candidate's utility is its *lowest* depth over the p "
        "projections (u = min_j u_j, as §4.4's prose and Tukey's definition say); Algorithm 1, "
        "line 15 writes max_j, which is degenerate (every candidate is central on some "
        "projection, so the release tends to a uniform draw): the mechanism's docstring "
        "quotes both and [differences.md](differences.md) measures it. Privacy is the same "
        "either way (Δu = 1).",
        "- Truncation: box = central 75% per dimension of the public training document "
        "embeddings; classifier trained on clipped means of training documents. Noise "
        "allocation: `allocation=\"l1\"` (textdp's default), i.i.d. Laplace of scale "
        "(Σ_j w_j)/(k·ε) on every coordinate — not the paper's App. A.3 allocation "
        "(`allocation=\"per_dimension\"`: scale d·w_j/(k·ε) on coordinate j, ε/d per "
        "coordinate). Both are ε-SentDP; the L1 allocation adds less noise in total (summed "
        "variance at most the paper's, by Cauchy–Schwarz), so this truncation baseline is, if "
        "anything, stronger than the paper's.",
        "- Word-level MVC: `textdp.privatize(sentences, mechanism=\"mvc\", epsilon=ε)` "
        "(GloVe 50-d, OOV words masked), re-encoded, averaged, classified by the non-private "
        f"classifier; ε ∈ {list(config['mvc_epsilons'])} on a random subsample of the test "
        f"documents of at most {config['mvc_sentences']} sentences in all (every trial "
        "re-encodes).",
        "- Why word-level MVC may do better here than in the paper: textdp's default "
        "vocabulary is GloVe **50-d**, where the MVC noise radius is Gamma(50, 1/ε) — mean "
        "50/ε, 5 at ε = 10, comparable to distances between words, so most words survive. "
        "The paper does not say which embedding its MVC baseline used (\"adopted from "
        "(Feyisetan et al, 2019)\"); MVC's own experiments use 300-d GloVe, where the mean "
        "radius is 300/ε: [deepcandidate300.md](deepcandidate300.md) runs that. The guarantee "
        "is also per word and per unit of GloVe distance, far weaker than ε-SentDP.",
        "- DeepCandidate cannot exceed the 'after the recoder' non-private score: it releases "
        "a public candidate in the recoded space, classified by a classifier trained there.",
        "- Classifiers: standardised logistic regression with balanced class weights (the "
        "paper: 4-layer MLPs). Random guess: the expected macro-F1 of guessing each class "
        "with its training frequency.",
        "",
    ]


def page(results: list[dict[str, Any]], figures: dict[str, str], config: dict[str, Any]) -> str:
    """The Markdown page, from the results of :func:`run` and the figures' relative paths."""
    lines = [
        "# DeepCandidate: ε-SentDP document embeddings vs. baselines",
        "",
        "Generated by `" + config["command"] + "` "
        f"({config['date']}, {config['machine']}, {config['minutes']:.0f} min). "
        "Do not edit by hand: rerun the command.",
        "",
        "Test-set **macro-F1** of a classifier on private document embeddings "
        "(Meehan, Mrini & Chaudhuri, ACL 2022, §5, Figure 4), "
        f"{config['trials']} trials over the mechanisms' randomness, mean ± std.",
        "",
    ]
    lines += _verdict_section(results)
    for r in results:
        lines += _dataset_section(r, figures[r["dataset"]], config["epsilons"])
    lines += _setup_section(config)
    lines += harness.claims_lines(_claims(results))
    return "\n".join(lines).rstrip("\n") + "\n"


def _claims(results: list[dict[str, Any]]) -> list[list[str]]:
    """The page's closing table, from the same numbers as the verdict at ε = 10."""
    key = str(EPS_K)
    truncation = [_beats(r["deepcandidate"][key]["f1"], r["truncation"][key]["f1"]) for r in results]
    mvc = [_beats(on_mvc_subsample(r), r["mvc"][key]["f1"]) for r in results]
    names = ", ".join(r["dataset"] for r in results)

    def count(v: list[str]) -> str:
        return (f"ahead by more than the two SDs on {v.count('**yes**')} of {len(v)} ({names}), "
                f"higher within noise on {v.count('higher, within noise')}, not higher on "
                f"{v.count('no')}")

    return [
        [f"DeepCandidate is more useful than truncation at ε = {EPS_K:g}", "§5.4, Fig. 4",
         count(truncation), "partly: MiniLM (384-d) encoder, logistic regression, NYT/Amazon/"
         "Bible document sets instead of the paper's SBERT, MLPs, IMDB/GoodReads/20News",
         "holds" if truncation.count("**yes**") == len(truncation) else "partly"],
        ["DeepCandidate even outperforms word-level Metric-DP (MVC)", "abstract, §5.4, Fig. 4 "
         "(MVC \"adopted from (Feyisetan et al, 2019)\", embedding not stated)",
         count(mvc) + " (on the MVC subsample)", "no: MVC on GloVe 50d, where ε = 10 keeps most "
         "words; 300-d on deepcandidate300.md",
         "holds" if mvc.count("**yes**") == len(mvc) else
         "does not hold here" if mvc.count("**yes**") == 0 else "partly"],
    ]


# ------------------------------------------------------------------------------------------------
# Stages and the command


def run(args: Any, argv: Sequence[str], log: Log) -> dict[str, Any]:
    """Every data set; returns ``{"config": …, "results": […]}`` (what results.json holds)."""
    from textdp.encoders import load_sbert

    t0 = time.perf_counter()
    encoder = load_sbert()
    results = [evaluate_dataset(name, encoder, epsilons=args.epsilons,
                                mvc_epsilons=args.mvc_epsilons, trials=args.trials,
                                seed=args.seed, n_candidates=args.n_candidates,
                                mvc_sentences=args.mvc_sentences,
                                recoder_epochs=args.recoder_epochs, log=log)
               for name in args.datasets]
    config = {"command": harness.command(NAME, argv), "date": time.strftime("%Y-%m-%d"),
              "machine": harness.machine(),
              "minutes": (time.perf_counter() - t0) / 60, "trials": args.trials,
              "seed": args.seed, "epsilons": args.epsilons, "mvc_epsilons": args.mvc_epsilons,
              "n_candidates": args.n_candidates, "mvc_sentences": args.mvc_sentences,
              "recoder_epochs": args.recoder_epochs, "encoder": encoder_name(encoder)}
    return {"config": config, "results": results}


def figures(saved: dict[str, Any], fig_dir: Path) -> dict[str, str]:
    """One PNG per data set; returns their paths relative to the page's folder."""
    config, out = saved["config"], {}
    for r in saved["results"]:
        png = fig_dir / f"{r['dataset']}.png"
        plot_dataset(r, png, config["epsilons"], config["mvc_epsilons"])
        out[r["dataset"]] = f"{fig_dir.name}/{png.name}"
    return out


def render(saved: dict[str, Any], out: Path) -> None:
    """Figures and the page from saved results (``--from-results`` runs only this)."""
    fig_dir = harness.figure_dir(out)
    figs = figures(saved, fig_dir)
    harness.write_text(out, page(saved["results"], figs, saved["config"]))
    print(f"wrote {out} and {len(figs)} figures in {fig_dir}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = harness.parser(NAME, __doc__)
    parser.add_argument("--datasets", nargs="+", default=["nyt", "amazon", "bible"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(DEFAULT_EPSILONS))
    parser.add_argument("--mvc-epsilons", nargs="+", type=float,
                        default=list(DEFAULT_MVC_EPSILONS))
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--candidates", type=int, default=2000, dest="n_candidates")
    parser.add_argument("--mvc-sentences", type=int, default=400)
    parser.add_argument("--recoder-epochs", type=int, default=40)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.from_results is not None:
        render(harness.load_json(args.from_results), args.out)
        return 0
    if EPS_K not in args.epsilons or EPS_K not in args.mvc_epsilons:
        parser.error(f"--epsilons and --mvc-epsilons must include {EPS_K:g}")
    saved = run(args, argv, harness.logger(NAME))
    harness.save_json(harness.figure_dir(args.out) / "results.json", saved)
    render(saved, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
