"""1-Diffractor's comparisons with their baselines on 300-d vectors (Table 2, Table 3, Fig. 4).

    python -m experiments.baselines300      # → docs/results/baselines300.md

Meisenbacher et al. (1-Diffractor, 2024) compare 1-Diffractor with MVC, Mahalanobis, Vickrey and
TEM run on 300-d embeddings; [word_mechanisms.md](../docs/results/word_mechanisms.md) ran those
baselines on textdp's default GloVe 6B 50d, so its comparison set 50-d baselines against the
paper's 300-d ones. Here every mechanism runs on ``glove-840b-300d`` (1-Diffractor on lists built
from it), with the word-mechanisms page's protocol and documents (same seed, same task, same
split): SBERT cosine on 200 movie-review sentences (Table 2), sentiment accuracy trained and tested
on private text (Table 3; the same mean-GloVe-50d classifier as that page, so that only the
mechanism's table changes), and N_w / S_w by Monte Carlo (Fig. 4). The 50-d rows of the
word-mechanisms run are copied into the results (``from_50d``) so that the page sets the two side
by side from one file. ``--from-results`` redraws the page.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiments import _harness as harness
from experiments import word_mechanisms as wm
from textdp import _random
from textdp.evaluation._common import derive_seed, jsonable
from textdp.evaluation.render import Document

NAME = "baselines300"
V300 = "glove-840b-300d"
LABELS = ("1-D_G", "mvc", "mahalanobis", "vickrey", "tem", "1-D_T")


@dataclass
class Settings:
    seed: int = 0
    epsilons: tuple[float, ...] = wm.PAPER_TABLE2_EPS
    utility_docs: int = 2000
    similarity_docs: int = 200
    fig4_words: int = 50
    fig4_draws: int = 100
    mechanisms: tuple[str, ...] = LABELS


say = harness.logger(NAME)


def _from_50d() -> dict[str, Any]:
    """The 50-d rows of the committed word-mechanisms run, for the side-by-side tables."""
    saved = harness.RESULTS_DIR / "word_mechanisms" / "results.json"
    if not saved.is_file():
        return {}
    r = harness.load_json(saved)
    rows = {}
    for row in r["text"]["rows"]:
        if "skipped" in row:
            continue
        rows.setdefault(row["mechanism"], {})[f"{row['epsilon']:g}"] = {
            "similarity": row["similarity"]["mean"],
            "accuracy": row["utility"]["both_private"]["accuracy"]}
    fig4 = {label: {f"{x['epsilon']:g}": {"n_w": x["n_w"]["mean"], "s_w": x["distinct"]["mean"]}
                    for x in xs if "skipped" not in x}
            for label, xs in r["fig4"]["monte_carlo"].items()}
    return {"text": rows, "fig4": fig4,
            "vocabulary": r["text"]["utility_task"]["features"]["vocabulary"]["name"]}


def run(s: Settings, checkpoint: Path | None = None) -> dict[str, Any]:
    from textdp.evaluation import utility
    from textdp.evaluation.deniability import plausible_deniability, sample_words
    from textdp.vocab import load

    t0 = time.perf_counter()
    load0 = os.getloadavg()
    vocab = load(V300)
    rng = harness.rng(s.seed, 2)  # word_mechanisms' text stream: the same task and split
    sentiment = utility.vader_sentiment_task(s.utility_docs, rng, sets=("movie_reviews",))
    u_eval = utility.UtilityEvaluator(sentiment, "glove-mean", rng=rng)
    sim_features = utility.make_features("sbert")
    n_sim = min(s.similarity_docs, len(sentiment))
    sim_clean = list(sentiment.texts[:n_sim])
    sim_features.encode(sim_clean, remember=True)
    fig_rng = harness.rng(s.seed, 11)
    ids = sample_words(vocab, s.fig4_words, fig_rng)
    out: dict[str, Any] = {"settings": asdict(s), "machine": harness.machine(),
                           "load_before": list(load0), "vocabulary": vocab.describe(),
                           "utility_task": u_eval.describe(), "rows": [], "fig4": {},
                           "from_50d": _from_50d(), "done": []}
    for label in s.mechanisms:
        fig_rows = []
        for eps in s.epsilons:
            t1 = time.perf_counter()
            mech, why = wm._try_make(label, vocab, eps)
            row: dict[str, Any] = {"mechanism": label, "epsilon": float(eps)}
            if mech is None:
                row["skipped"] = why
                out["rows"].append(row)
                fig_rows.append({"epsilon": float(eps), "skipped": why})
                continue
            private = utility.privatize_texts(sentiment.texts, mech, rng)
            row["utility"] = u_eval.evaluate(private)
            sim = utility.semantic_similarity(sim_clean, private[:n_sim], features=sim_features)
            sim.pop("per_text")
            row["similarity"] = sim
            out["rows"].append(row)
            d = plausible_deniability(mech, ids, s.fig4_draws,
                                      _random.public_generator(derive_seed(fig_rng)),
                                      method="monte_carlo").summary()
            fig_rows.append(d)
            say(f"{label} ε = {eps:g}: similarity {sim['mean']:.3f}, accuracy "
                f"{row['utility']['both_private']['accuracy']:.3f}, N_w {d['n_w']['mean']:.3f} "
                f"({time.perf_counter() - t1:.0f} s)")
        out["fig4"][label] = fig_rows
        out["done"].append(label)
        out["seconds"] = time.perf_counter() - t0
        out["load_after"] = list(os.getloadavg())
        if checkpoint is not None:
            harness.save_json(checkpoint, jsonable(out), indent=1)
    return jsonable(out)


def figures(results: dict[str, Any], fig_dir: Path) -> dict[str, Path]:
    """This page is tables only (the 50-d figures are on word_mechanisms.md): no figure."""
    return {}


def _row(out: dict[str, Any], label: str, eps: float) -> dict[str, Any] | None:
    return next((r for r in out["rows"] if r["mechanism"] == label
                 and math.isclose(r["epsilon"], eps) and "skipped" not in r), None)


def _z_sim(a: dict[str, Any], b: dict[str, Any]) -> float:
    se = math.hypot(wm._iqr_se(a["similarity"]), wm._iqr_se(b["similarity"]))
    return (a["similarity"]["mean"] - b["similarity"]["mean"]) / se if se > 0 else 0.0


def page(results: dict[str, Any], s: Settings) -> Document:
    doc = Document("1-Diffractor's baselines on 300-d vectors: Table 2, Table 3, Fig. 4")
    la, lb = results.get("load_after"), results.get("load_before")
    done = results["done"]
    missing = [m for m in s.mechanisms if m not in done]
    doc.paragraph(
        f"Regenerate with `{harness.command(NAME)}` (or `textdp experiment {NAME}`; seed "
        f"{s.seed}; {results['seconds'] / 60:.1f} minutes on {results['machine']}; 1-min load "
        f"average {lb[0]:.1f} before and {la[0]:.1f} after, a machine shared with other jobs). "
        f"Raw numbers: `{NAME}/results.json`; `--from-results` redraws this page."
        + (f" This run stopped before {', '.join(missing)}: not shown." if missing else ""),
        note=True)
    ut = results["utility_task"]
    n = ut["test_documents"]
    prev = results.get("from_50d", {})
    doc.paragraph(
        "Paper: Meisenbacher et al. (1-Diffractor), Table 2 (SBERT cosine), Table 3 (SST-2 "
        "accuracy) and Fig. 4 (N_w, S_w), with MVC, Mahalanobis, Vickrey and TEM on 300-d "
        "embeddings and 1-Diffractor on lists from 300-d models. Here everything runs on "
        f"`{V300}` ({results['vocabulary']['size']:,} words; 1-Diffractor on one list built from "
        "it), on the documents and split of [word_mechanisms.md](word_mechanisms.md) "
        f"({ut['task']['documents']:,} VADER movie-review sentences, {n} test; SBERT cosine on the "
        f"first {s.similarity_docs}; the same mean-GloVe-50d logistic regression); "
        f"N_w / S_w by Monte Carlo on {s.fig4_words} words × {s.fig4_draws} draws. The 50-d "
        f"columns are that page's run (`{prev.get('vocabulary', '–')}`).")
    header = ["mechanism", "table"] + [f"ε={e:g}" for e in s.epsilons]
    for title, key, paper in (("SBERT cosine similarity (Table 2)", "similarity",
                               wm.PAPER_TABLE2),
                              ("Sentiment accuracy, train and test private (Table 3)", "accuracy",
                               wm.PAPER_TABLE3_SST2)):
        rows = []
        for label in done:
            ours = []
            for e in s.epsilons:
                r = _row(results, label, e)
                ours.append(None if r is None else r["similarity"]["mean"] if key == "similarity"
                            else r["utility"]["both_private"]["accuracy"])
            rows.append([label, "300d (ours)"] + ours)
            p50 = prev.get("text", {}).get(label)
            if p50:
                rows.append([label, "50d (word_mechanisms.md)"]
                            + [p50.get(f"{e:g}", {}).get(key) for e in s.epsilons])
            pkey = label if label in paper else "1-D best" if label.startswith("1-D") else None
            if pkey in paper:
                rows.append([label, f"paper{' (%)' if key == 'accuracy' else ''}"
                             + (" (1-D best)" if pkey != label else "")] + list(paper[pkey]))
        doc.heading(title, 3)
        doc.table(header, rows)
    doc.heading("N_w and S_w (Fig. 4), Monte Carlo", 3)
    rows = []
    for label in done:
        for what in ("n_w", "s_w"):
            cells = []
            for x in results["fig4"][label]:
                cells.append(None if "skipped" in x else
                             x["n_w"]["mean"] if what == "n_w" else x["distinct"]["mean"])
            name = "N_w" if what == "n_w" else "S_w"
            rows.append([label, f"{name} 300d"] + cells)
            p50 = prev.get("fig4", {}).get(label)
            if p50:
                rows.append([label, f"{name} 50d"]
                            + [p50.get(f"{e:g}", {}).get(what) for e in s.epsilons])
    doc.table(header, rows)
    verdict, claims = _verdict(results, s)
    doc.paragraph(verdict)
    doc.heading("Settings")
    doc.pre(json.dumps(jsonable(asdict(s)), indent=1))
    doc.heading(harness.CLAIMS_HEADING)
    doc.table(harness.CLAIMS_HEADER, claims)
    return doc


def _verdict(results: dict[str, Any], s: Settings) -> tuple[str, list[list[str]]]:
    n = results["utility_task"]["test_documents"]
    small = [e for e in s.epsilons if e <= 10]
    parts, claims = [], []
    for rival in (m for m in ("mvc", "mahalanobis", "vickrey", "tem") if m in results["done"]):
        zs, za = [], []
        for e in small:
            a, b = _row(results, "1-D_G", e), _row(results, rival, e)
            if a is None or b is None:
                continue
            zs.append(_z_sim(a, b))
            za.append(wm._proportion_z(a["utility"]["both_private"]["accuracy"],
                                       b["utility"]["both_private"]["accuracy"], n))
        if zs:
            parts.append(f"1-D_G against {rival} at 300d: similarity {wm._z_counts(zs)}; "
                         f"accuracy {wm._z_counts(za)}")
            claims.append([f"1-Diffractor keeps more meaning and accuracy than {rival} (ε ≤ 10)",
                           "Tables 2–3 (300-d baselines)",
                           f"similarity {wm._z_counts(zs)}; accuracy {wm._z_counts(za)}",
                           f"yes for the dimension (both on `{V300}`); movie-review snippets and "
                           "a linear classifier, not GLUE and BERT",
                           "holds" if zs and all(v > 1.96 for v in zs) else
                           "holds in direction" if zs and all(v > 0 for v in zs) else
                           "does not hold at every ε"])
    text = ("Computed (z for similarity from the cells' interquartile ranges, unpaired; for "
            "accuracy the two-proportion z on the test documents): " + "; ".join(parts) + "."
            if parts else "Computed: 1-D_G or its rivals were not run.")
    prev = results.get("from_50d", {}).get("text", {})
    lower = []
    for label in (m for m in ("mvc", "mahalanobis", "vickrey", "tem") if m in results["done"]):
        pairs = [(r["similarity"]["mean"], prev[label][f"{e:g}"]["similarity"])
                 for e in s.epsilons if (r := _row(results, label, e)) is not None
                 and f"{e:g}" in prev.get(label, {})]
        if pairs:
            lower.append(f"{label} {sum(a < b for a, b in pairs)} of {len(pairs)}")
    closer, nearer = [], []
    for label in (m for m in ("mvc", "mahalanobis", "vickrey", "tem") if m in results["done"]):
        paper = wm.PAPER_TABLE2.get(label)
        if not paper:
            continue
        d300 = [abs(r["similarity"]["mean"] - y) for e, y in zip(s.epsilons, paper, strict=True)
                if (r := _row(results, label, e)) is not None]
        d50 = [abs(prev[label][f"{e:g}"]["similarity"] - y)
               for e, y in zip(s.epsilons, paper, strict=True) if f"{e:g}" in prev.get(label, {})]
        if d300 and d50:
            if np.median(d300) < np.median(d50):
                nearer.append(label)
            closer.append(f"{label} {float(np.median(d300)):.3f} at 300d against "
                          f"{float(np.median(d50)):.3f} at 50d")
    if closer:
        text += (" Median absolute difference from the paper's Table 2 row: " + "; ".join(closer)
                 + ".")
    if lower:
        text += (" Against the 50-d run, the 300-d similarity (mean) is lower at: "
                 + "; ".join(lower) + " ε. For the additive-noise mechanisms the same ε per unit "
                 "of distance perturbs more on 300-d vectors (SPEC §8); the paper's baselines are "
                 "300-d, so comparisons with them should use these rows"
                 + (f" (nearer the paper's Table 2 than the 50-d rows for {', '.join(nearer)})"
                    if nearer else "") + ". Two rows stay far from the paper on any table: TEM "
                 "(0.38/0.45/0.45 at ε = 3/5/10 there; TEM keeps nearly every word from ε = 5 "
                 "on, under textdp's law and the reference code's alike, so a plateau at 0.45 is "
                 "not the mechanism's — unexplained, [differences.md](differences.md) section 3), "
                 "and the paper's rise in every row between ε = 10 and 25 (a differently set-up "
                 "run, section 1 there). The reference code's approximate search lowers MVC's and "
                 "Mahalanobis' N_w (section 2 there), in the direction of the paper's lower "
                 "similarities; its effect on the similarity itself was not measured.")
    return text, claims


def settings(quick: bool, seed: int) -> Settings:
    if not quick:
        return Settings(seed=seed)
    return Settings(seed=seed, epsilons=(1, 10), utility_docs=200, similarity_docs=20,
                    fig4_words=5, fig4_draws=10, mechanisms=("mvc", "1-D_G"))


def _settings_from(d: dict[str, Any]) -> Settings:
    return harness.settings_from(Settings, d)


def render(results: dict[str, Any], out: Path) -> None:
    doc = page(results, _settings_from(results["settings"]))
    harness.write_text(out, doc.markdown(out.parent))
    say(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(NAME, __doc__)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    ap.add_argument("--checkpoint", type=Path, default=None,
                    help="also write the results so far after each mechanism to this file")
    args = ap.parse_args(argv)
    return harness.run_or_render(
        args, lambda: run(settings(args.quick, args.seed), args.checkpoint), render, indent=1)


if __name__ == "__main__":
    raise SystemExit(main())
