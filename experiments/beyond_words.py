"""Beyond word substitution, side by side (issue 16, item 4).

    python -m experiments.beyond_words          # → docs/results/beyond_words.md

On one sample of VADER movie-review sentences (Pang & Lee, the source of SST-2): DP-Prompt (a local
language model paraphrases each sentence; pure ε-DP per document) at a few ε_doc, MVC and
1-Diffractor (1-D_G) at their usual ε, CusText at two ε and CusText+ at one, and "uniform vs
allocated budgets": one document budget ε_doc split over the words by ``allocation='uniform'``
or ``'position'`` (public rules; MVC and CusText) and by ``'frequency'`` (data-dependent, CusText
only; its guarantee is the worst case over every allocation the rule can produce). For each:
SBERT cosine similarity to the original, utility (a sentiment classifier trained on clean
sentences, disjoint from the sample, tested on the private ones: the "test_private" protocol of
textdp.evaluation.utility), a re-identification attack (textdp.evaluation.attacks: is a private
sentence's TF-IDF nearest clean sentence its own original?), and speed. Every guarantee is
translated into one statement per document where the notions allow it, and said plainly where
they do not.

DP-Prompt is slow on a CPU (tens of generated tokens per second), so the sample is small
(``--docs``, default 96); the page states the sizes. ``--from-results`` redraws the page.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from experiments import _harness as harness
from textdp.evaluation._common import jsonable
from textdp.evaluation.render import Document, fmt

NAME = "beyond_words"
say = harness.logger(NAME)

#: DP-Prompt settings: max_new_tokens n and the temperatures tried (clip = the default [10, 30]).
PROMPT_TOKENS = 32
PROMPT_TEMPERATURES = (1.0, 0.5, 0.25)
#: (label, mechanism, keyword arguments of textdp.privatize). Word mechanisms at their usual ε
#: (MVC paper: 1–50 on 50d; 1-Diffractor paper: 0.1–10; CusText paper: ε = 1–3, K = 20).
WORD_CONFIGS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("MVC", "mvc", {"epsilon": 10.0}), ("MVC", "mvc", {"epsilon": 25.0}),
    ("1-D_G", "diffractor", {"method": "geometric", "epsilon": 1.0}),
    ("1-D_G", "diffractor", {"method": "geometric", "epsilon": 3.0}),
    ("CusText", "custext", {"epsilon": 1.0}), ("CusText", "custext", {"epsilon": 3.0}),
    ("CusText+", "custext_plus", {"epsilon": 3.0}))
#: Uniform vs allocated budgets: one ε_doc per document, split by each rule (docs/allocation.md).
#: MVC: ε_doc = 200 ≈ ε = 10 per word at this sample's ~17 words; CusText: ε_doc = 30 ≈ 1.75.
ALLOCATED_CONFIGS: tuple[tuple[str, str, dict[str, Any]], ...] = tuple(
    (label, name, {"allocation": rule, "epsilon_document": eps_doc})
    for label, name, eps_doc, rules in (("MVC", "mvc", 200.0, ("uniform", "position")),
                                        ("CusText", "custext", 30.0,
                                         ("uniform", "position", "frequency")))
    for rule in rules)


def _sample(docs: int, train: int, rng: np.random.Generator) -> dict[str, Any]:
    """A balanced sample of movie-review sentences, and a disjoint clean training set."""
    from textdp.evaluation.utility import vader_sentiment_task

    task = vader_sentiment_task(None, rng, sets=("movie_reviews",))
    order = rng.permutation(len(task))
    pos, neg = order[task.labels[order] == 1], order[task.labels[order] == 0]
    test = np.concatenate([pos[:docs // 2], neg[:docs // 2]])
    rest = np.concatenate([pos[docs // 2:docs // 2 + train // 2],
                           neg[docs // 2:docs // 2 + train // 2]])
    return {"texts": [task.texts[i] for i in test], "labels": task.labels[test],
            "train_texts": [task.texts[i] for i in rest], "train_labels": task.labels[rest],
            "task": task.describe()}


class _Scorer:
    """SBERT similarity to the originals and a clean-trained sentiment classifier (glove-mean)."""

    def __init__(self, sample: dict[str, Any]) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        from textdp.evaluation.utility import make_features

        self.sample = sample
        self.sbert = make_features("sbert")
        self.sbert.encode(sample["texts"], remember=True)
        self.glove = make_features("glove-mean")
        self.model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        self.model.fit(self.glove.encode(sample["train_texts"]), sample["train_labels"])
        self.clean = self.accuracy(sample["texts"])

    def accuracy(self, texts: list[str]) -> float:
        pred = self.model.predict(self.glove.encode(texts))
        return float((pred == self.sample["labels"]).mean())

    def score(self, texts: list[str]) -> dict[str, Any]:
        from textdp.evaluation.attacks import reidentification
        from textdp.evaluation.utility import semantic_similarity

        sim = semantic_similarity(self.sample["texts"], texts, features=self.sbert)
        sim.pop("per_text")
        return {"similarity": sim, "accuracy": self.accuracy(texts),
                "reidentification": reidentification(self.sample["texts"], texts)}


def _word_row(label: str, name: str, kwargs: dict[str, Any], texts: list[str],
              scorer: _Scorer, seed: int) -> dict[str, Any]:
    from textdp import mechanisms
    from textdp.release import privatize

    allocated = "allocation" in kwargs
    params = {k: v for k, v in kwargs.items() if k not in ("allocation", "epsilon_document")}
    # With an allocation the pipeline builds one mechanism per ε level from the name; the probe
    # (any ε) only gives the metric's diameter.
    probe = mechanisms.create(name, **({**params, "epsilon": 1.0} if allocated else params))
    t0 = time.perf_counter()
    # entities="none": the mechanisms as the papers run them
    result = (privatize(texts, name, seed=seed, entities="none", **kwargs) if allocated
              else privatize(texts, probe, seed=seed, entities="none"))
    seconds = time.perf_counter() - t0
    report = result.report
    g = report["guarantee"]
    row: dict[str, Any] = {
        "mechanism": label, "name": name, "epsilon": kwargs.get("epsilon"),
        "kind": "custext" if name.startswith("custext") else "word",
        **scorer.score(result.texts), "seconds": seconds, "docs_per_second": len(texts) / seconds,
        "guarantee": {k: g[k] for k in ("notion", "epsilon", "metric", "per_document")},
        "mean_words": report["tokens"]["by_policy"]["privatized"] / len(texts),
        "examples": result.texts[:3], "diameter": _diameter(probe)}
    if allocated:
        a = report["allocation"]
        row["allocation"] = {k: a.get(k) for k in (
            "rule", "public", "epsilon_document", "epsilon_ceiling", "worst_case_per_word",
            "worst_case_per_document", "per_document")}
    say(f"{_label(row)}: {seconds:.1f} s")
    return row


def _diameter(mech: Any) -> float | None:
    """An upper bound on the largest distance d(w, w′) of the guarantee's metric, or None."""
    if mech.name.startswith("custext"):
        return None  # 0/1 within a group, ∞ across: no finite diameter
    if hasattr(mech, "n_lists") or mech.name == "diffractor":
        return float(len(mech.vocabulary) - 1)  # list positions: at most |V| − 1 apart
    if mech.metric.startswith("Euclidean"):
        norms = np.linalg.norm(mech.vocabulary.vectors.astype(np.float64), axis=1)
        return float(2 * norms.max())  # ‖a − b‖ ≤ ‖a‖ + ‖b‖
    return None


def _prompt_rows(texts: list[str], scorer: _Scorer, seed: int, batch: int) -> list[dict[str, Any]]:
    from textdp.lm import Paraphraser, load_model

    t0 = time.perf_counter()
    lm = load_model()
    load = time.perf_counter() - t0
    say(f"language model loaded in {load:.0f} s")
    rows = []
    for i, temperature in enumerate(PROMPT_TEMPERATURES):
        runner = Paraphraser(model=lm, seed=seed + i, batch_size=batch, temperature=temperature,
                             max_new_tokens=PROMPT_TOKENS)
        t0 = time.perf_counter()
        out = runner.run(texts)
        seconds = time.perf_counter() - t0
        report = runner.report()
        m = runner.mechanism
        rows.append({"mechanism": "DP-Prompt", "kind": "prompt", "epsilon": m.epsilon,
                     "epsilon_per_token": m.epsilon_per_token, "temperature": temperature,
                     "max_new_tokens": m.max_new_tokens, "clip": list(m.clip), **scorer.score(out),
                     "seconds": seconds, "docs_per_second": len(texts) / seconds,
                     "generated_tokens": report["counts"]["generated_tokens"],
                     "tokens_per_second": report["counts"]["generated_tokens"] / seconds,
                     "model": report["inputs"]["model"], "model_load_seconds": load,
                     "guarantee": {"notion": report["guarantee"]["notion"],
                                   "epsilon": report["guarantee"]["epsilon"]},
                     "examples": out[:3]})
        say(f"DP-Prompt T = {temperature:g} (ε_doc = {m.epsilon:g}): {seconds:.0f} s")
    return rows


def run(docs: int, train: int, seed: int, batch: int, prompt: bool = True) -> dict[str, Any]:
    t0 = time.perf_counter()
    rng = harness.rng(seed, 0)
    sample = _sample(docs, train, rng)
    scorer = _Scorer(sample)
    texts = sample["texts"]
    rows = [_word_row(*c, texts, scorer, seed) for c in WORD_CONFIGS + ALLOCATED_CONFIGS]
    say("word mechanisms done")
    if prompt:
        rows += _prompt_rows(texts, scorer, seed, batch)
    return jsonable({"settings": {"docs": docs, "train": train, "seed": seed, "batch": batch},
                     "task": sample["task"], "clean_accuracy": scorer.clean,
                     "originals": texts[:3], "rows": rows, "machine": harness.machine(),
                     "seconds": time.perf_counter() - t0})


SAME_LAYOUT = "two documents of the SAME length and token layout"


def per_document(row: dict[str, Any]) -> str:
    """The guarantee as one statement about a whole document, or why there is none."""
    if row.get("kind") == "prompt":
        return (f"ε = {row['epsilon']:.4g} between ANY two documents (any content, any length ≤ "
                f"{row['max_new_tokens']} generated tokens out)")
    if row.get("kind") == "custext":
        return _custext_statement(row)
    n, diam, alloc = row.get("mean_words", 0.0), row.get("diameter"), row.get("allocation")
    if diam is None:
        return "no per-document translation: the notion holds only between some words"
    if alloc:
        e = alloc["epsilon_document"]
        return (f"ε_doc·max_i d ≤ {e:g}·{diam:.3g} = {e * diam:.4g} for {SAME_LAYOUT} "
                f"(Σ_i ε_i ≤ ε_doc, each ε_i a public function of n and i; n ≈ {n:.1f}); "
                "documents of different lengths: not covered")
    eps = row["epsilon"]
    return (f"ε·Σd ≤ {eps:g}·n·{diam:.3g} = {eps * n * diam:.4g} for {SAME_LAYOUT} "
            f"(n ≈ {n:.1f} privatised words, every word moved up to the "
            f"metric's diameter {diam:.3g}); documents of different lengths: not covered")


def _custext_statement(row: dict[str, Any]) -> str:
    """CusText is output-set DP: bounded only between words of one group, ∞ across groups."""
    n, alloc = row.get("mean_words", 0.0), row.get("allocation")
    if alloc and not alloc["public"]:
        bound = (f"worst case over every allocation the rule can produce (never the realised "
                 f"one): ≤ {alloc['worst_case_per_word']:.3g} per differing word, ≤ "
                 f"{alloc['worst_case_per_document']:.4g} when all n differ (max over this run's "
                 f"lengths; compare ε_doc = {alloc['epsilon_document']:g}) between {SAME_LAYOUT}")
    elif alloc:
        bound = (f"≤ ε_doc = {alloc['epsilon_document']:g} (Σ_i ε_i ≤ ε_doc, ε_i public) "
                 f"between {SAME_LAYOUT}")
    else:
        eps = row["epsilon"]
        bound = (f"≤ ε·(positions that differ) ≤ {eps:g}·n = {eps * n:.3g} (n ≈ {n:.1f}) "
                 f"between {SAME_LAYOUT}")
    kept = "; stop words released unchanged" if row.get("name") == "custext_plus" else ""
    return (f"NOT comparable: {bound}, only if their words pairwise share an output set; "
            f"∞ across groups (an output reveals each word's group){kept}")


def _label(r: dict[str, Any]) -> str:
    if r.get("kind") == "prompt":
        return f"DP-Prompt ε_doc = {r['epsilon']:.4g}"
    if r.get("allocation"):
        a = r["allocation"]
        return f"{r['mechanism']} ε_doc = {a['epsilon_document']:g}, {a['rule']}"
    return f"{r['mechanism']} ε = {r['epsilon']:g}"


def _given(r: dict[str, Any]) -> str:
    """The ε column: the parameter as the user gives it."""
    if r["kind"] == "prompt":
        return (f"T = {r['temperature']:g}, ε_token = {r['epsilon_per_token']:.3g}, "
                f"n = {r['max_new_tokens']}")
    if r.get("allocation"):
        a = r["allocation"]
        public = "public rule" if a["public"] else "data-dependent rule"
        return f"ε_doc = {a['epsilon_document']:g}, {a['rule']} ({public})"
    return f"{r['epsilon']:g} per word (one group)" if r["kind"] == "custext" else \
        f"{r['epsilon']:g} per unit"


def _reid(r: dict[str, Any]) -> str:
    return fmt(r["reidentification"]["rate"]) if "reidentification" in r else "—"


def figures(results: dict[str, Any], fig_dir: Path) -> dict[str, Path]:
    """One scatter: SBERT similarity against sentiment accuracy, one point per row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results["rows"] if "skipped" not in r]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, r in enumerate(rows):
        ax.scatter(r["similarity"]["mean"], r["accuracy"], label=_label(r),
                   marker="os^Dv"[i // 10 % 5], color=plt.get_cmap("tab10")(i % 10))
    ax.axhline(results["clean_accuracy"], color="grey", linestyle="--", label="clean text")
    ax.set_xlabel("mean SBERT cosine to the original")
    ax.set_ylabel("sentiment accuracy (clean-trained)")
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig_dir.mkdir(parents=True, exist_ok=True)
    path = fig_dir / "similarity_accuracy.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"scatter": path}


def page(results: dict[str, Any], figs: dict[str, Path] | None = None) -> Document:
    s = results["settings"]
    doc = Document("Beyond word substitution: DP-Prompt, CusText, allocated budgets, side by side")
    doc.paragraph(f"`{harness.command(NAME)}` — {s['docs']} VADER movie-review sentences "
                  f"(balanced, seed {s['seed']}); the sentiment classifier (logistic regression "
                  f"on mean GloVe) is trained on {s['train']} other clean sentences and tested on "
                  f"the private ones (clean accuracy {fmt(results['clean_accuracy'])}). A small "
                  "sample, because DP-Prompt generates tens of tokens per second on a CPU.")
    head = ["mechanism", "ε (as given)", "SBERT cos (mean)", "accuracy", "re-identified",
            "docs/s", "one statement per document"]
    table = []
    for r in results["rows"]:
        if "skipped" in r:
            table.append([r["mechanism"], fmt(r["epsilon"]), "—", "—", "—", "—",
                          f"skipped: {r['skipped']}"])
            continue
        table.append([r["mechanism"], _given(r), fmt(r["similarity"]["mean"]), fmt(r["accuracy"]),
                      _reid(r), fmt(r["docs_per_second"]), per_document(r)])
    doc.table(head, table)
    acc = results["clean_accuracy"]
    doc.paragraph(f"Accuracy on {s['docs']} sentences has a standard error of about "
                  f"{(acc * (1 - acc) / s['docs']) ** 0.5:.3f} (binomial): differences below "
                  "about 0.1 are not resolved by this sample. SBERT similarity is the mean cosine "
                  "between each original and its private version (all-MiniLM-L6-v2). "
                  "'Re-identified' is the attack of textdp.evaluation.attacks.reidentification: "
                  "the rate at which a private sentence's nearest clean sentence of the sample "
                  f"(TF-IDF cosine) is its own original (chance 1/{s['docs']}, clean text 1; "
                  "lower is better).")
    if figs and "scatter" in figs:
        doc.image(figs["scatter"], "Similarity to the original against sentiment accuracy")
    _guarantees(doc, results)
    _examples(doc, results)
    doc.paragraph(f"Machine: {results['machine']}; whole run {results['seconds']:.0f} s "
                  "(on a machine shared with other jobs: speeds are indicative only; "
                  "BENCHMARKS.md has the DP-Prompt benchmark command).", note=True)
    doc.heading(harness.CLAIMS_HEADING)
    doc.table(harness.CLAIMS_HEADER, _claims(results))
    return doc


def _claims(results: dict[str, Any]) -> list[list[str]]:
    """The closing table. This page compares mechanisms; DP-Prompt's and CusText's papers are not
    among the project's papers, so their claims are taken as SPEC §7 states them."""
    rows = [r for r in results["rows"] if "skipped" not in r]
    prompt = [r for r in rows if r["kind"] == "prompt"]
    custext = [r for r in rows if r["kind"] == "custext"]
    out = []
    if prompt:
        out.append(["DP-Prompt is pure ε-LDP between any two documents, ε = n·2(b_hi − b_lo)/T",
                    "Utpala, Hooker & Chen (Findings of EMNLP 2023), as SPEC §7 states it; the "
                    "paper's text is not in the project",
                    "ε_doc = " + ", ".join(f"{r['epsilon']:.4g}" for r in prompt)
                    + f" for n = {prompt[0].get('max_new_tokens', 32)} tokens, SBERT cosine "
                    + ", ".join(fmt(r["similarity"]["mean"]) for r in prompt),
                    "partly: SmolLM2-135M, not the paper's models", "holds by construction "
                    "(a statement about the sampler, checked in the unit tests)"])
    if custext:
        out.append(["CusText is ε-DP between words that share an output set", "Chen et al. "
                    "(Findings of ACL 2023), as SPEC §7 states it; not in the project",
                    "re-identification " + ", ".join(_reid(r) for r in custext)
                    + "; every output reveals its word's group", "yes for the notion",
                    "holds within a group only (∞ across groups)"])
    out.append(["(ours) word mechanisms give one statement per document", "–",
                "only between documents of the same length and token layout", "–",
                "by composition; documents of different lengths are not covered"])
    return out


def _guarantees(doc: Document, results: dict[str, Any]) -> None:
    doc.heading("How to read the guarantees")
    doc.paragraph(
        "DP-Prompt's ε is pure local DP between any two documents: every generated token is an "
        "exponential-mechanism draw with ε_token = 2(b_hi − b_lo)/T, composed over the fixed cap "
        "of n tokens. The word mechanisms are metric DP: their ε is per unit of a word distance, "
        "composed word by word, and only documents with the same number and layout of tokens are "
        "comparable at all. The per-document figure for them is the worst case of replacing every "
        "privatised word by the farthest word (an upper bound on the metric's diameter: 2·max‖φ‖ "
        "for MVC, |V| − 1 list positions for 1-Diffractor), which is what 'any two documents of "
        "that length' costs; two documents that differ in one near-synonym cost far less. "
        "So the numbers in the last column are comparable to DP-Prompt's only in that worst-case "
        "sense, and they are not defined at all for documents of different lengths, which "
        "DP-Prompt covers.")
    doc.paragraph(
        "CusText's guarantee is of another kind and is not comparable to either: ε-DP only "
        "between words that share an output set (its K = 20-word group); words of different "
        "groups have disjoint output sets, so every output reveals each word's group (log-ratio "
        "∞). Its per-document figure holds only between documents of the same length whose words "
        "pairwise share groups. CusText+ also releases stop words unchanged (docs/custext.md).")
    doc.paragraph(
        "Uniform vs allocated budgets: each document gets ε_doc, split over its n privatised "
        "words. The public rules (uniform: ε_doc/n each; position: the first word twice the "
        "last) depend only on n and positions, which the release gives away anyway, so the "
        "composition is exact: ≤ ε_doc·max_i d(w_i, w′_i). With a fixed ε_doc a long document "
        "gets less per word than a short one, unlike a fixed ε per word. The frequency rule "
        "gives rarer words less ε, so the allocation depends on the private words: its "
        "guarantee is the exact worst case over every allocation it can produce, never the "
        "realised one (docs/allocation.md).")
    for r in results["rows"]:
        a = r.get("allocation") or {}
        if a and not a.get("public"):
            doc.paragraph(f"{_label(r)}, as its report states it: {a['per_document']}.")


def _examples(doc: Document, results: dict[str, Any]) -> None:
    doc.heading("Examples (first three sentences)")
    k = len(results["originals"])  # fewer than three in a smoke run of one or two sentences
    rows = [["original", *results["originals"]]]
    rows += [[_label(r), *r["examples"][:k]] for r in results["rows"] if "examples" in r]
    doc.table(["", *map(str, range(1, k + 1))], rows)


def render(results: dict[str, Any], out: Path) -> None:
    """The figure and the page from results (``--from-results`` runs only this)."""
    figs = figures(results, harness.figure_dir(out))
    harness.write_text(out, page(results, figs).markdown(Path(out).parent))
    say(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(NAME, __doc__)
    ap.add_argument("--docs", type=int, default=96, help="sentences in the sample")
    ap.add_argument("--train", type=int, default=2000, help="clean training sentences")
    ap.add_argument("--batch-size", type=int, default=16, help="DP-Prompt generation batch")
    ap.add_argument("--no-prompt", action="store_true", help="skip DP-Prompt (quick check)")
    args = ap.parse_args(argv)
    fig_dir = harness.figure_dir(args.out)
    if args.from_results is not None:
        results = harness.load_json(args.from_results)
    else:
        results = run(args.docs, args.train, args.seed, args.batch_size, not args.no_prompt)
        harness.save_json(fig_dir / "results.json", results, indent=1)
    render(results, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
