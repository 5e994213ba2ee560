"""The report of a sweep (:func:`textdp.evaluation.sweep.run_sweep`), from its results dict alone:
the PNG figures (:func:`draw_figures`) and the Markdown/HTML document
(:func:`evaluation_document`, rendered by :mod:`textdp.evaluation.render`).

Its sections follow the papers the measurements come from: plausible deniability (MVC §3.2,
Fig. 2), utility in the MVC paper's two settings and 1-Diffractor's both-private one with the
SBERT similarity (1-Diffractor Table 2), empirical privacy (1-Diffractor Table 4) and efficiency
(1-Diffractor §6, Table 5, Fig. 6).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textdp.evaluation.render import Document, fmt
from textdp.evaluation.sweep_tasks import ATTACK_TASKS, REPORTED_UTILITY, TASK_TITLES

__all__ = ["draw_figures", "evaluation_document"]


# --- figures ----------------------------------------------------------------------------------------
def _by_mechanism(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in results["results"]:
        out.setdefault(r["mechanism"], []).append(r)
    for rows in out.values():
        rows.sort(key=lambda r: r["epsilon"])
    return out


def draw_figures(results: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """Every PNG of the report, from the results dict alone."""
    from textdp.evaluation import plots

    by_mech = _by_mechanism(results)
    colors = plots.mechanism_colors(list(by_mech))
    figs: dict[str, Path] = {}
    figs["deniability_curves"] = plots.deniability_curves(
        {m: [r["deniability"] for r in rows] for m, rows in by_mech.items()},
        out_dir / "deniability_curves.png", title="Plausible deniability against ε")
    for m, rows in by_mech.items():
        figs[f"deniability_{m}"] = plots.deniability_histograms(
            [r["deniability"] for r in rows], out_dir / f"deniability_{m}.png",
            title=f"{m}: N_w and S_w over {rows[0]['deniability']['n_words']} words")
    tasks = results.get("tasks", {})
    panels = []
    for t in REPORTED_UTILITY:
        if t not in tasks:
            continue
        lines = {}
        for m, rows in by_mech.items():
            eps = [r["epsilon"] for r in rows]
            lines[f"{m} · train private"] = {"eps": eps, "style": "-o",
                                             "y": [r["utility"][t]["train_private"]["accuracy"]
                                                   for r in rows]}
            lines[f"{m} · test private"] = {"eps": eps, "style": "--s",
                                            "y": [r["utility"][t]["test_private"]["accuracy"]
                                                  for r in rows]}
        panels.append({"title": TASK_TITLES[t], "ylabel": "accuracy", "lines": lines,
                       "baseline": tasks[t]["clean"]["accuracy"], "chance": tasks[t]["chance_accuracy"]})
    if any("similarity" in r for r in results["results"]):
        panels.append({"title": TASK_TITLES["similarity"], "ylabel": "mean cosine",
                       "lines": {m: {"eps": [r["epsilon"] for r in rows],
                                     "y": [r["similarity"]["mean"] for r in rows]}
                                 for m, rows in by_mech.items()},
                       "baseline": 1.0})
    if panels:
        figs["utility"] = plots.privacy_utility_curves(panels, out_dir / "utility.png", colors=colors)
    panels = []
    for t in ATTACK_TASKS:
        if t not in tasks:
            continue
        panels.append({"title": TASK_TITLES[t], "ylabel": "adversary accuracy",
                       "lower_is_better": True,
                       "lines": {m: {"eps": [r["epsilon"] for r in rows],
                                     "y": [r["attacks"][t]["private"]["accuracy"] for r in rows]}
                                 for m, rows in by_mech.items()},
                       "baseline": tasks[t]["clean"]["accuracy"], "chance": tasks[t]["chance_accuracy"]})
    if any("reidentification" in r for r in results["results"]):
        first = next(r["reidentification"] for r in results["results"] if "reidentification" in r)
        panels.append({"title": "re-identification", "ylabel": "rate", "lower_is_better": True,
                       "lines": {m: {"eps": [r["epsilon"] for r in rows],
                                     "y": [r["reidentification"]["rate"] for r in rows]}
                                 for m, rows in by_mech.items()},
                       "chance": first["chance"]})
    if panels:
        figs["privacy"] = plots.privacy_utility_curves(panels, out_dir / "privacy.png", colors=colors)
    x_task = next((t for t in ATTACK_TASKS if t in tasks), None)
    y_task = next((t for t in REPORTED_UTILITY if t in tasks), None)
    if x_task and y_task:
        pts = {m: [(r["epsilon"], r["attacks"][x_task]["private"]["accuracy"],
                    r["utility"][y_task]["test_private"]["accuracy"]) for r in rows]
               for m, rows in by_mech.items()}
        figs["tradeoff"] = plots.tradeoff_plot(
            pts, out_dir / "tradeoff.png", colors=colors,
            xlabel=f"{TASK_TITLES[x_task]}: adversary accuracy (lower = more private)",
            ylabel=f"{TASK_TITLES[y_task]}: accuracy, test private")
    if results.get("efficiency"):
        figs["efficiency"] = plots.efficiency_plot(results["efficiency"], out_dir / "efficiency.png",
                                                   colors=colors)
    return figs


# --- the report ---------------------------------------------------------------------------------------
def evaluation_document(results: dict[str, Any], figures: dict[str, Path]) -> Document:
    """The Markdown/HTML report of a sweep (see :mod:`textdp.evaluation.render`)."""
    cfg = results["config"]
    by_mech = _by_mechanism(results)
    doc = Document("textdp evaluation: privacy, utility and efficiency of word mechanisms")
    vocab = results["vocabulary"]
    doc.paragraph(
        f"Mechanisms {', '.join(f'`{m}`' for m in cfg['mechanisms'])} at ε ∈ "
        f"{{{', '.join(f'{e:g}' for e in sorted(cfg['epsilons']))}}} on the vocabulary "
        f"`{vocab['name']}` ({vocab['size']:,} words × {vocab['dimension']}). "
        f"Seed {cfg['seed']}; textdp {results['textdp_version']}; {results['created']}; "
        f"{results['seconds']:.0f} s.")
    if results.get("data"):
        _data_paragraph(doc, results["data"])
    if results.get("data"):
        # Measured on the user's data, the words N_w/S_w name are words of that data.
        doc.paragraph("No document of your data appears in this report"
                      + (" except the examples at the end (--include-text)"
                         if results.get("examples") else "")
                      + "; single words of it do (the words N_w and S_w are measured on, in "
                        "results.json; the worst ones here). It is for the data owner only.",
                      note=True)
    else:
        doc.paragraph("No private text appears in this report"
                      + (" except the examples at the end (--include-text)."
                         if results.get("examples") else "."), note=True)
    if results.get("notes"):
        doc.bullets(results["notes"])
    _summary_section(doc, results, by_mech, figures)
    _deniability_section(doc, results, by_mech, figures)
    _utility_section(doc, results, by_mech, figures)
    _privacy_section(doc, results, by_mech, figures)
    _efficiency_section(doc, results, figures)
    doc.heading("Mechanisms and guarantees")
    for m, info in results["mechanisms"].items():
        g = info["guarantee"]
        doc.paragraph(f"**{m}** — {g['notion']}, ε per unit of: {g['metric']}. {g['per_word']}. "
                      f"Reference: {g.get('reference', '')}.")
    if results.get("examples"):
        doc.heading("Examples (private text, shown because of --include-text)")
        doc.table(["mechanism", "ε", "original", "private"],
                  [[e["mechanism"], e["epsilon"], e["original"], e["private"]]
                   for e in results["examples"]])
    doc.heading("Reproduce")
    doc.pre(json.dumps(cfg, indent=1))
    return doc


_Rows = dict[str, list[dict[str, Any]]]


def _data_paragraph(doc: Document, data: dict[str, Any]) -> None:
    """What the user's data gave: documents, labels, and what each release privatised."""
    labels = data.get("label_counts")
    doc.paragraph(
        f"Measured on **your data**, `{data['input']}` ({data['format']}"
        + (f", text field `{data['text_field']}`" if data.get("text_field") else "") + "): "
        f"{data['documents']:,} documents"
        + (f" ({data['sampled']})" if data.get("sampled") else "")
        + (f"; labels from `{data['label_field']}`, {len(labels)} classes" if labels else "")
        + ". Each release ran with the entity and identifier stage; the words privatised, "
          "weighted by how often they occur, are what N_w and S_w are measured on.")
    rows = []
    for m, w in data.get("words", {}).items():
        sel = w["selection"]
        apart = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in w["not_privatized"].items())
        rows.append([m, w["privatized_words"], w["distinct_privatized_words"], sel["measured"],
                     sel["measured_occurrences"] / max(sel["occurrences"], 1), apart or "–"])
    if rows:
        doc.table(["mechanism", "privatised words", "distinct", "measured", "share of "
                   "occurrences measured", "not privatised (not measured)"], rows)


def _summary_columns(results: dict[str, Any]
                     ) -> list[tuple[str, Callable[[dict[str, Any]], Any], Any, Any]]:
    """The summary's measurement columns: (header, value of a row, clean-text value, chance)."""
    tasks = results.get("tasks", {})
    rows = results["results"]
    cols: list[tuple[str, Callable[[dict[str, Any]], Any], Any, Any]] = []
    for t in REPORTED_UTILITY:
        if t in tasks:
            cols.append((f"{t} acc. (test private)",
                         lambda r, t=t: r["utility"][t]["test_private"]["accuracy"],
                         tasks[t]["clean"]["accuracy"], tasks[t]["chance_accuracy"]))
    if any("similarity" in r for r in rows):
        cols.append(("SBERT cos", lambda r: r["similarity"]["mean"], 1.0, None))
    for t in ATTACK_TASKS:
        if t in tasks:
            cols.append((f"{t} attack acc.", lambda r, t=t: r["attacks"][t]["private"]["accuracy"],
                         tasks[t]["clean"]["accuracy"], tasks[t]["chance_accuracy"]))
    if any("reidentification" in r for r in rows):
        cols.append(("re-id rate", lambda r: r["reidentification"]["rate"], None,
                     next(r["reidentification"]["chance"] for r in rows if "reidentification" in r)))
    return cols


def _summary_section(doc: Document, results: dict[str, Any], by_mech: _Rows,
                     figures: dict[str, Path]) -> None:
    cfg = results["config"]
    doc.heading("Summary")
    cols = _summary_columns(results)
    header = ["mechanism", "ε", "max N_w", "min S_w", *(c[0] for c in cols)]
    table = []
    for m, rows in by_mech.items():
        for r in rows:
            d = r["deniability"]
            table.append([m, r["epsilon"], d["max_n_w"], d["min_distinct"]]
                         + [f(r) if _has(f, r) else None for _, f, _, _ in cols])
    base = ["clean text", None, None, None, *(c[2] for c in cols)]
    chance = ["chance", None, None, None, *(c[3] for c in cols)]
    doc.table(header, [*table, base, chance])
    doc.paragraph("Utility columns: higher is better. Attack columns and N_w: lower is more "
                  "private. S_w: distinct outputs per word in "
                  f"{cfg['draws']} draws (exact expectation where the mechanism has an exact law).",
                  note=True)
    if "tradeoff" in figures:
        doc.image(figures["tradeoff"], "Privacy–utility trade-off (labels: ε)")


def _deniability_section(doc: Document, results: dict[str, Any], by_mech: _Rows,
                         figures: dict[str, Path]) -> None:
    cfg = results["config"]
    doc.heading("Plausible deniability (MVC §3.2, Fig. 2)")
    over = (f"over the privatised words of your data (at most {cfg['words']}: all, or the most "
            "frequent half and a uniform sample of the rest), means and quantiles weighted by "
            "each word's count" if results.get("data")
            else f"over {cfg['words']} vocabulary words drawn uniformly")
    doc.paragraph(
        f"N_w = Pr[M(w) = w] and S_w (distinct outputs) {over}, "
        f"{cfg['draws']} draws per word; mechanisms with an exact output law are "
        "measured exactly (N_w = p(w|w), S_w = expected distinct count), the others by Monte "
        "Carlo in one vectorised call. The worst cases (max N_w, min S_w) are what the MVC paper "
        "calibrates ε on — see `textdp calibrate`.")
    if "deniability_curves" in figures:
        doc.image(figures["deniability_curves"], "N_w and S_w against ε (solid: worst case, "
                                                 "dotted: mean)")
    rows_t = []
    for m, rows in by_mech.items():
        for r in rows:
            d = r["deniability"]
            rows_t.append([m, r["epsilon"], d["method"].replace("_", " "), d["n_w"]["mean"],
                           d["max_n_w"], f"`{d['max_n_w_word']}`", d["distinct"]["mean"],
                           d["min_distinct"], f"`{d['min_distinct_word']}`",
                           d["s_w"]["min"] if d["method"] == "exact" else None])
    doc.table(["mechanism", "ε", "method", "mean N_w", "max N_w", "worst word", "mean S_w",
               "min S_w", "worst word",
               f"min S_w (1−η mass, η={results['results'][0]['deniability']['eta']:g})"],
              rows_t)
    for m in by_mech:
        key = f"deniability_{m}"
        if key in figures:
            doc.image(figures[key], f"{m}: histograms of S_w (top) and N_w (bottom) over words, "
                                    "per ε")


def _task_heading(doc: Document, task: str, info: dict[str, Any], clean: str) -> None:
    """A task's sub-heading and the sentences describing it; ``clean`` states the clean-text score."""
    doc.heading(TASK_TITLES[task], 3)
    doc.paragraph(f"{info['task']['description']}; {info['train_documents']} train / "
                  f"{info['test_documents']} test documents. {clean}; "
                  f"chance {fmt(info['chance_accuracy'])}.")


def _utility_section(doc: Document, results: dict[str, Any], by_mech: _Rows,
                     figures: dict[str, Path]) -> None:
    tasks = results.get("tasks", {})
    if not (any(t in tasks for t in REPORTED_UTILITY) or any("similarity" in r for r in results["results"])):
        return
    doc.heading("Utility")
    doc.paragraph(
        f"Logistic regression on `{results['config']['features']}` features, in the MVC paper's two "
        "settings: *train private* (train on private text, test on clean) and *test private* "
        "(train on clean, test on private), and 1-Diffractor's *both private*. The SBERT "
        "similarity is the mean cosine between each original sentence and its private "
        "version (1-Diffractor Table 2).")
    for t in REPORTED_UTILITY:
        if t not in tasks:
            continue
        clean = tasks[t]["clean"]
        _task_heading(doc, t, tasks[t], f"Clean baseline accuracy {fmt(clean['accuracy'])}, "
                                        f"macro-F1 {fmt(clean['macro_f1'])}")
        doc.table(["mechanism", "ε", "train private: acc.", "train private: F1",
                   "test private: acc.", "test private: F1", "both private: acc."],
                  [[m, r["epsilon"], r["utility"][t]["train_private"]["accuracy"],
                    r["utility"][t]["train_private"]["macro_f1"],
                    r["utility"][t]["test_private"]["accuracy"],
                    r["utility"][t]["test_private"]["macro_f1"],
                    r["utility"][t].get("both_private", {}).get("accuracy")]
                   for m, rows in by_mech.items() for r in rows])
    if "utility" in figures:
        doc.image(figures["utility"], "Utility against ε (solid: train private, dashed: test "
                                      "private; grey: clean baseline and chance)")


def _privacy_section(doc: Document, results: dict[str, Any], by_mech: _Rows,
                     figures: dict[str, Path]) -> None:
    tasks = results.get("tasks", {})
    has_reid = any("reidentification" in r for r in results["results"])
    if not (any(t in tasks for t in ATTACK_TASKS) or has_reid):
        return
    doc.heading("Empirical privacy (lower is better)")
    doc.paragraph(
        f"An adversary (logistic regression on `{results['config']['attack_features']}` features) "
        "is trained on clean text and applied to private text (1-Diffractor Table 4). "
        "Re-identification: the rate at which a private text's nearest clean text (TF-IDF cosine) "
        "is its own original. Word mechanisms release length, punctuation, casing and the "
        "positions of out-of-vocabulary tokens, so attacks stay above chance even at tiny ε.")
    for t in ATTACK_TASKS:
        if t not in tasks:
            continue
        _task_heading(doc, t, tasks[t], f"Adversary on clean text: {fmt(tasks[t]['clean']['accuracy'])}")
        doc.table(["mechanism", "ε", "accuracy", "macro-F1"],
                  [[m, r["epsilon"], r["attacks"][t]["private"]["accuracy"],
                    r["attacks"][t]["private"]["macro_f1"]]
                   for m, rows in by_mech.items() for r in rows])
    if has_reid:
        doc.heading(TASK_TITLES["reidentification"], 3)
        first = next(r["reidentification"] for r in results["results"] if "reidentification" in r)
        doc.paragraph(f"Pool: {first['pool']} texts of `{first['corpus']}`; chance "
                      f"{fmt(first['chance'])}.")
        doc.table(["mechanism", "ε", "re-identification rate"],
                  [[m, r["epsilon"], r["reidentification"]["rate"]]
                   for m, rows in by_mech.items() for r in rows if "reidentification" in r])
    if "privacy" in figures:
        doc.image(figures["privacy"], "Adversary accuracy against ε (grey: clean baseline and "
                                      "chance)")


def _efficiency_section(doc: Document, results: dict[str, Any], figures: dict[str, Path]) -> None:
    on_data = [r for r in results["results"] if "efficiency" in r]
    if on_data:
        doc.heading("Speed on your data")
        doc.paragraph("The whole release (tokeniser, identifier and entity stage, mechanism, "
                      "detokeniser) on the documents above, in this process.")
        doc.table(["mechanism", "ε", "documents", "privatised words", "seconds", "words/s",
                   "tokens/s"],
                  [[r["mechanism"], r["epsilon"], r["efficiency"]["documents"],
                    r["efficiency"]["privatized_words"], r["efficiency"]["seconds"],
                    r["efficiency"]["words_per_second"], r["efficiency"]["tokens_per_second"]]
                   for r in on_data])
    if not results.get("efficiency"):
        return
    from textdp.evaluation.efficiency import efficiency_table

    doc.heading("Efficiency (1-Diffractor §6, Table 5, Fig. 6)")
    doc.paragraph("Each mechanism in a fresh Python process: setup (building tables/lists, "
                  "vocabulary already loaded; cached word lists load from disk), peak traced "
                  "memory while privatising 1,000 random words in one call, words per second "
                  "ids → ids (best of 3), and whole-pipeline tokens per second on VADER movie "
                  "review sentences.")
    doc.pre(efficiency_table(results["efficiency"]))
    if "efficiency" in figures:
        doc.image(figures["efficiency"], "Speed and memory per mechanism")


def _has(f: Callable[[dict[str, Any]], Any], r: dict[str, Any]) -> bool:
    try:
        f(r)
    except (KeyError, TypeError):
        return False
    return True
