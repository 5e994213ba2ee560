"""`textdp assess` on generated support tickets and on a VADER sentiment set: the frontier of
each word mechanism, the recommended setting under issue 24's targets, and a re-run check.

Run: ``python -m experiments.assess_page`` (``--quick``: tiny sizes, a smoke run that never
writes into docs/results/; ``--from-results FILE``: redo the page from saved results).

Two data sets, each assessed with :func:`textdp.assess` (one call per mechanism family, all on
the same sample with the same seed; the rows merged and the recommendation recomputed over all
of them with :func:`textdp.assess.recommend.recommend`):

* support tickets (``generate_tickets(describe_issue=True)``): the ``issue`` label is the task,
  the customers' first and last names are passed as ``known=`` so that names the recognisers
  miss count as surviving;
* VADER Amazon review snippets, positive/negative by the sign of the human rating (snippets
  rated within ±0.5 of neutral dropped).

Targets (issue 24, goal 2): top-1 linkage at most 5× chance (upper end of the 95% interval), no
entity or identifier surviving (customer names included), task accuracy as high as possible.
The recommended ticket setting is then released with :func:`textdp.privatize` (its ``release``
keywords) on a fresh set of tickets (another generator seed, another noise seed) and measured
with the same functions; the page compares the two. DP-Prompt is not assessed
(:func:`textdp.assess` measures word mechanisms only); its cost per document with the default
local model is measured instead.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from experiments import _harness

NAME = "assess"
COMMAND = "python -m experiments.assess_page"


@dataclass(frozen=True)
class Settings:
    tickets: int = 300
    sentences: int = 300
    check_tickets: int = 300
    epsilons: tuple[tuple[str, tuple[float, ...]], ...] = (
        ("mvc", (2.0, 4.0, 6.0, 10.0)),
        ("diffractor", (0.5, 1.0, 2.0, 5.0)),
        ("custext", (0.5, 1.0, 2.0, 5.0)),
        ("tem", (1.0, 2.0, 3.0, 8.0)),
        ("santext", (1.0, 2.0, 3.0, 8.0)),
    )
    allocation_epsilons: tuple[float, ...] = (100.0, 200.0, 400.0)
    dp_prompt_documents: int = 3
    seed: int = 0


def settings(quick: bool, seed: int) -> Settings:
    if quick:
        return Settings(tickets=60, sentences=60, check_tickets=60,
                        epsilons=(("mvc", (4.0, 10.0)), ("tem", (2.0, 5.0))),
                        allocation_epsilons=(200.0,), dp_prompt_documents=1, seed=seed)
    return Settings(seed=seed)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _assess_all(texts: list[str], labels: list[str], known: Any, s: Settings,
                log: _harness.Log) -> dict[str, Any]:
    """One :func:`textdp.assess` per mechanism family on the same sample; rows merged."""
    import json

    import textdp
    from textdp.assess.grid import command_line
    from textdp.assess.recommend import Targets, recommend

    calls: list[tuple[str, dict[str, Any]]] = [
        (m, {"mechanisms": [m], "epsilons": list(eps)}) for m, eps in s.epsilons]
    calls.append(("mvc (allocation uniform)",
                  {"mechanisms": ["mvc"], "epsilons": list(s.allocation_epsilons),
                   "allocation": "uniform", "epsilon_ceiling": 12.0}))
    rows: list[dict[str, Any]] = []
    meta: dict[str, Any] = {}
    for label, kwargs in calls:
        t0 = time.perf_counter()
        a = textdp.assess(texts, labels, sample=len(texts), seed=s.seed, known=known,
                          max_linkage="5x", max_entities=0, **kwargs)
        done = json.loads(a.to_json())
        for row in done["settings"]:
            if "allocation" in kwargs:
                # Allocation given as a release option: assess records the row's ε as
                # `epsilon`, but it is the document budget (Setting.release_options builds the
                # spec with epsilon_document): the release keywords must say so.
                row["label"] = label
                row["epsilon_is_document_budget"] = True
                release = dict(row["release"])
                release["epsilon_document"] = release.pop("epsilon")
                row["release"] = release
                row["privatize_options"] = command_line(release)
            rows.append(row)
        meta = {k: v for k, v in done.items() if k not in ("settings", "recommendation")}
        log(f"  {label}: {len(done['settings'])} settings in {time.perf_counter() - t0:.0f} s")
    targets = Targets(max_linkage_times_chance=5.0, max_entities=0)
    recommendation = recommend(rows, targets)
    meta["sample"].pop("indices", None)  # all documents, in order
    return {"rows": rows, "recommendation": recommendation, "meta": meta}


def _tickets(n: int, seed: int) -> tuple[list[str], list[str], list[list[str]]]:
    from textdp.datasets.tickets import generate_tickets

    tickets = generate_tickets(n, seed=seed, describe_issue=True)
    return ([t.text for t in tickets], [t.issue for t in tickets],
            [[t.values["first_name"], t.values["last_name"]] for t in tickets])


def _sentences(n: int, seed: int) -> tuple[list[str], list[str]]:
    import numpy as np

    from textdp.datasets.vader import load_vader

    pool = [x for x in load_vader("amazon") if abs(x.score) >= 0.5]
    pick = np.sort(_harness.rng(seed, 1).choice(len(pool), size=min(n, len(pool)),
                                                replace=False))
    return ([pool[i].text for i in pick],
            ["positive" if pool[i].score > 0 else "negative" for i in pick])


def _check(row: dict[str, Any], s: Settings) -> dict[str, Any]:
    """Release the recommended setting with textdp.privatize on fresh tickets and measure it
    with the assessment's own functions."""
    import numpy as np

    import textdp
    from textdp.assess.leakage import Mention, find_mentions, survival
    from textdp.assess.linkage import linkage
    from textdp.assess.utility import accuracy, task_split, wilson
    from textdp.encoders import get_encoder

    texts, labels, known = _tickets(s.check_tickets, s.seed + 1)
    t0 = time.perf_counter()
    private = textdp.privatize(texts, seed=s.seed + 1, **row["release"]).texts
    seconds = time.perf_counter() - t0
    mentions = [m + [Mention("known", x) for x in dict.fromkeys(k)]
                for m, k in zip(find_mentions(texts), known, strict=True)]
    leak = survival(mentions, private)
    embed = get_encoder("sbert")
    link = linkage(texts, private, np.asarray(embed(texts), dtype=np.float64),
                   np.asarray(embed(private), dtype=np.float64))
    split = task_split(labels, s.seed + 1)
    y = split.labels
    right = accuracy([private[i] for i in split.train], y[split.train],
                     [private[i] for i in split.test], y[split.test])
    m, n = len(split.test), len(texts)
    names = leak["by_kind"].get("known", {"found": 0, "survived": 0})
    return {
        "documents": n, "generator_seed": s.seed + 1, "noise_seed": s.seed + 1,
        "release": row["release"], "seconds": seconds,
        "entities_found": leak["found"], "entities_survived_count": leak["survived"],
        "names_found": names["found"], "names_survived": names["survived"],
        "names_survived_interval": wilson(names["survived"], names["found"]),
        "entities_survived_interval": wilson(leak["survived"], leak["found"]),
        "linkage_top1": link["top1"], "linkage_top1_interval": wilson(link["hits_top1"], n),
        "linkage_chance": link["chance_top1"], "linkage_attack": link["attack"],
        "task_accuracy": right / m, "task_accuracy_interval": wilson(right, m),
    }


def _dp_prompt_cost(texts: list[str], n: int, log: _harness.Log) -> dict[str, Any]:
    """Seconds to load the default local model and per document to paraphrase a ticket."""
    try:
        import textdp

        t0 = time.perf_counter()
        textdp.privatize(texts[:1], mechanism="dp_prompt", temperature=1.0, seed=0)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        textdp.privatize(texts[1:1 + n], mechanism="dp_prompt", temperature=1.0, seed=0)
        per = (time.perf_counter() - t0) / n
    except Exception as err:  # noqa: BLE001 - the page says why it was not measured
        log(f"  dp_prompt: not measured ({type(err).__name__}: {err})")
        return {"measured": False, "why": f"{type(err).__name__}: {err}"}
    log(f"  dp_prompt: first call {first:.1f} s, then {per:.1f} s per ticket")
    return {"measured": True, "documents": n, "first_call_seconds": first,
            "seconds_per_document": per}


def run(s: Settings) -> dict[str, Any]:
    log = _harness.logger(NAME)
    started = time.perf_counter()
    load_start = _load()
    texts, labels, known = _tickets(s.tickets, s.seed)
    log(f"tickets: {len(texts)}")
    tickets = _assess_all(texts, labels, known, s, log)
    rec = tickets["recommendation"]
    chosen = (tickets["rows"][rec["index"]] if rec["met"]
              else tickets["rows"][rec["nearest"][0]["index"]])
    log(f"check: {chosen['privatize_options']} on {s.check_tickets} fresh tickets")
    check = _check(chosen, s)
    sent_texts, sent_labels = _sentences(s.sentences, s.seed)
    log(f"sentences: {len(sent_texts)}")
    sentiment = _assess_all(sent_texts, sent_labels, None, s, log)
    dp_prompt = _dp_prompt_cost(texts, s.dp_prompt_documents, log)
    return {"settings": asdict(s), "tickets": tickets, "check": check, "sentiment": sentiment,
            "dp_prompt": dp_prompt, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": _harness.machine(), "load_start": load_start, "load_end": _load(),
            "seconds": time.perf_counter() - started, "command": COMMAND}


# --------------------------------------------------------------------------- page


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _iv(iv: Any) -> str:
    return "" if iv is None else f" [{100 * iv[0]:.1f}, {100 * iv[1]:.1f}]"


def _eps(row: dict[str, Any]) -> str:
    e = f"{row['epsilon']:g}"
    return f"ε_doc {e}" if row.get("epsilon_is_document_budget") else e


def _table(part: dict[str, Any], names: bool) -> list[str]:
    head = ["setting", "ε"] + (["names surviving"] if names else []) + [
        "entities surviving", "N_w", "linkage top-1 [95%]", "× chance", "similarity",
        "accuracy private/private [95%]", "clean/private", "words/s"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rec = part["recommendation"]
    for i, r in enumerate(part["rows"]):
        mark = " **(recommended)**" if rec["met"] and rec["index"] == i else ""
        k = r["entities_by_kind"].get("known", {"found": 0, "survived": 0})
        cells = [r["label"] + mark, _eps(r)]
        if names:
            cells.append(f"{k['survived']}/{k['found']}")
        cells += [f"{r['entities_survived_count']}/{r['entities_found']}",
                  "–" if r["words_unchanged"] is None else f"{r['words_unchanged']:.3f}",
                  _pct(r["linkage_top1"]) + _iv(r["linkage_top1_interval"]),
                  f"{r['linkage_top1'] / r['linkage_chance']:.1f}",
                  f"{r['similarity']:.2f}",
                  _pct(r["task_accuracy"]) + _iv(r["task_accuracy_interval"]),
                  _pct(r["task_accuracy_clean_train"]),
                  f"{r['words_per_second']:,.0f}"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _recommendation(part: dict[str, Any]) -> list[str]:
    rec, rows = part["recommendation"], part["rows"]
    if rec["met"]:
        r = rows[rec["index"]]
        out = [f"**Recommended** ({rec['meeting']} of {len(rows)} settings meet the targets; "
               f"the one with the highest task accuracy): **{r['label']} {_eps(r)}** — "
               f"`textdp privatize {r['privatize_options']}`: linkage "
               f"{_pct(r['linkage_top1'])}{_iv(r['linkage_top1_interval'])} "
               f"(chance {_pct(r['linkage_chance'])}), "
               f"{r['entities_survived_count']} of {r['entities_found']} entities surviving, "
               f"task accuracy {_pct(r['task_accuracy'])}{_iv(r['task_accuracy_interval'])}, "
               f"similarity {r['similarity']:.2f}."]
        if r.get("guarantee_in_words"):
            out += ["", "The guarantee in words (from the assessment's report): "
                    + r["guarantee_in_words"]]
        return out
    out = ["**No setting meets the targets.** The nearest:", ""]
    for near in rec["nearest"]:
        r = rows[near["index"]]
        out.append(f"- {r['label']} {_eps(r)}: misses " + "; ".join(near["misses"]))
    return out


def _point_reading(part: dict[str, Any]) -> list[str]:
    """The targets read on the point estimates (see the page's note on the safe side)."""
    rows = part["rows"]
    ok = [i for i, r in enumerate(rows)
          if r["linkage_top1"] <= 5 * r["linkage_chance"] and r["entities_survived_count"] == 0]
    if not ok:
        return ["Read on the point estimates, no setting meets the targets either."]
    best = max(ok, key=lambda i: (rows[i]["task_accuracy"], -rows[i]["linkage_top1"]))
    r, base = rows[best], part["meta"]["labels"]
    above = r["task_accuracy_interval"][0] > base["chance"]
    return [
        f"Read on the point estimates (linkage at most 5× chance as measured, no entity "
        f"surviving), {len(ok)} of {len(rows)} settings qualify: "
        + ", ".join(f"{rows[i]['label']} {_eps(rows[i])}" for i in ok)
        + f". The best task accuracy among them is **{r['label']} {_eps(r)}**: "
        f"{_pct(r['task_accuracy'])}{_iv(r['task_accuracy_interval'])} against chance "
        f"{_pct(base['chance'])} and {_pct(base['accuracy'])} on the originals — "
        + ("above chance." if above else
           "**not distinguishable from chance**: where linkage is this low, the private text "
           "no longer carries the label either.")]


def _agree(assessed: float, interval: Any, rerun: float, rerun_interval: Any) -> str:
    inside = interval[0] <= rerun <= interval[1]
    overlap = interval[0] <= rerun_interval[1] and rerun_interval[0] <= interval[1]
    return ("yes (re-run inside the assessed interval)" if inside else
            "yes (intervals overlap)" if overlap else "**no**")


def _check_lines(results: dict[str, Any]) -> list[str]:
    part, c = results["tickets"], results["check"]
    rec = part["recommendation"]
    r = part["rows"][rec["index"] if rec["met"] else rec["nearest"][0]["index"]]
    k = r["entities_by_kind"].get("known", {"found": 0, "survived": 0})
    from textdp.assess.utility import wilson

    names_iv = wilson(k["survived"], k["found"])
    index = rec["index"] if rec["met"] else rec["nearest"][0]["index"]
    ok = [i for i, x in enumerate(part["rows"])
          if x["linkage_top1"] <= 5 * x["linkage_chance"] and x["entities_survived_count"] == 0]
    point = (max(ok, key=lambda i: (part["rows"][i]["task_accuracy"],
                                    -part["rows"][i]["linkage_top1"])) if ok else None)
    which = ("recommended" if rec["met"] else
             "nearest (" + ("also the best on the point estimates" if point == index else
                            "not the best on the point estimates") + ")")
    lines = [
        f"The {which} setting, {r['label']} {_eps(r)}, released with "
        f"`textdp.privatize(texts, seed={c['noise_seed']}, **{c['release']})` on "
        f"{c['documents']} **fresh** tickets (`generate_tickets({c['documents']}, "
        f"seed={c['generator_seed']}, describe_issue=True)`: other customers, other texts, other "
        "noise), measured with the assessment's own functions (`textdp.assess.leakage`, "
        "`.linkage`, `.utility`; the same classifier and a 60/40 split):", "",
        "| measure | assessed [95%] | re-run [95%] | agree? |", "|---|---|---|---|",
        f"| customer names surviving | {k['survived']}/{k['found']}{_iv(names_iv)} | "
        f"{c['names_survived']}/{c['names_found']}{_iv(c['names_survived_interval'])} | "
        + _agree(k["survived"] / max(k["found"], 1), names_iv,
                 c["names_survived"] / max(c["names_found"], 1), c["names_survived_interval"])
        + " |",
        f"| all entities and identifiers surviving | {r['entities_survived_count']}/"
        f"{r['entities_found']}{_iv(r['entities_survived_interval'])} | "
        f"{c['entities_survived_count']}/{c['entities_found']}"
        f"{_iv(c['entities_survived_interval'])} | "
        + _agree(r["entities_survived"], r["entities_survived_interval"],
                 c["entities_survived_count"] / max(c["entities_found"], 1),
                 c["entities_survived_interval"]) + " |",
        f"| linkage top-1 (chance {_pct(r['linkage_chance'])}) | {_pct(r['linkage_top1'])}"
        f"{_iv(r['linkage_top1_interval'])} | {_pct(c['linkage_top1'])}"
        f"{_iv(c['linkage_top1_interval'])} | "
        + _agree(r["linkage_top1"], r["linkage_top1_interval"], c["linkage_top1"],
                 c["linkage_top1_interval"]) + " |",
        f"| task accuracy (train private, test private) | {_pct(r['task_accuracy'])}"
        f"{_iv(r['task_accuracy_interval'])} | {_pct(c['task_accuracy'])}"
        f"{_iv(c['task_accuracy_interval'])} | "
        + _agree(r["task_accuracy"], r["task_accuracy_interval"], c["task_accuracy"],
                 c["task_accuracy_interval"]) + " |",
        "",
        "\"Agree\" means the re-run's figure lies inside the assessed 95% interval, or failing "
        "that that the two 95% intervals overlap (Wilson intervals; two independent samples "
        "of the same size, so some disagreement at the edge is expected by chance). The re-run "
        f"linked with the {c['linkage_attack']} attack (the strongest of the four).",
    ]
    return lines


def _figure(results: dict[str, Any], folder: Path) -> list[str]:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for key, title in (("tickets", "support tickets (issue, 8 classes)"),
                       ("sentiment", "VADER Amazon snippets (sentiment, 2 classes)")):
        part = results[key]
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        families: dict[str, list[dict[str, Any]]] = {}
        for r in part["rows"]:
            families.setdefault(r["label"], []).append(r)
        for label, rows in families.items():
            rows = sorted(rows, key=lambda r: r["epsilon"])
            ax.plot([max(r["linkage_top1"] / r["linkage_chance"], 0.5) for r in rows],
                    [r["task_accuracy"] for r in rows], marker="o", label=label)
        base = part["meta"]["labels"]
        ax.axhline(base["accuracy"], color="k", ls="--", lw=0.8, label="originals")
        ax.axhline(base["chance"], color="grey", ls=":", lw=0.8, label="chance")
        ax.axvline(5, color="r", ls=":", lw=0.8, label="5× chance")
        ax.set_xscale("log")
        ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500) if t <= 1 / max(
            min(r["linkage_chance"] for r in part["rows"]), 1e-9)]
        ax.set_xticks(ticks, [f"{t:g}×" for t in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("top-1 linkage, × chance (log)")
        ax.set_ylabel("task accuracy (train private, test private)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
        fig.tight_layout()
        name = f"frontier_{key}.png"
        fig.savefig(folder / name, dpi=110, metadata={"Software": None})
        plt.close(fig)
        names.append(name)
    return names


def page(results: dict[str, Any], figures: list[str], folder_name: str) -> str:
    s, t, v = results["settings"], results["tickets"], results["sentiment"]
    tb, vb = t["meta"]["labels"], v["meta"]["labels"]
    dp = results["dp_prompt"]
    n_settings = len(t["rows"])
    lines = [
        "# Choosing a release by measurement: `textdp assess` on support tickets and reviews",
        "",
        "> The figures below are the assessment's: they are computed on the original texts and "
        "are not private. Here the data are generated (tickets) or public (VADER).",
        "",
        f"Generated by `{results['command']}` on {results['date']}, {results['machine']}, "
        f"load average {results['load_start'][0]:g} at the start and "
        f"{results['load_end'][0]:g} at the end (the 2 cores shared with other work; run "
        f"under `nice -n 10`); {results['seconds'] / 60:.1f} minutes in all. Seed "
        f"{s['seed']} for the samples, the splits and every setting's noise.",
        "",
        "What was measured, per setting (docs/assess.md gives the definitions): customer names "
        "and all entities/identifiers of the originals surviving verbatim in the private "
        "text; N_w (words returned unchanged); top-1 linkage by an attacker holding the "
        "originals (strongest of word TF-IDF, character TF-IDF, MiniLM and their sum), against "
        "chance 1/n; MiniLM similarity; TF-IDF + logistic-regression accuracy, trained and "
        "tested on private text (and trained on the originals, tested on private text), on a "
        "stratified 60/40 split; words per second (entity stage included, on the loaded "
        "machine: indicative only). Bracketed figures are 95% Wilson intervals.",
        "",
        "**Targets** (issue 24, goal 2): top-1 linkage at most 5× chance at the upper end of its "
        "interval; no entity or identifier surviving (customer names included); among the "
        "settings meeting both, the highest task accuracy.",
        "",
        "**Read on the safe side, the linkage target can be met only by a setting that links "
        "no document at all.** Chance is one document in n (1/n), i.e. an expected one linked "
        "document whatever n is, and the upper end of the 95% Wilson interval of 1 success in "
        "n is about 5.6/n (5.59/n at n = 300, 5.66/n at n = 10,000), of 0 successes about "
        "3.8/n: a release whose linkage is exactly chance fails \"at most 5× chance\" on the "
        "interval's upper end for every sample size. This is arithmetic, not a property of "
        "the mechanisms; the page therefore gives, beside `textdp.assess`'s own "
        "recommendation (safe side), the settings that meet the targets on the point "
        "estimates, and re-runs the best of those.",
        "",
        "## Support tickets",
        "",
        f"{len(t['rows'])} settings on {t['meta']['sample']['documents']} tickets "
        f"(`generate_tickets({s['tickets']}, seed={s['seed']}, describe_issue=True)`, "
        "each ticket's body describing its issue; the customers' first and last names passed as "
        f"`known=`). Classifier on the originals: {_pct(tb['accuracy'])}"
        f"{_iv(tb['accuracy_interval'])} on {tb['test']} test tickets, {tb['classes']} classes; "
        f"chance (most frequent training label) {_pct(tb['chance'])}; linkage chance "
        f"{_pct(t['rows'][0]['linkage_chance'])}. The entity stage is on at its defaults.",
        "",
        *_recommendation(t), "", *_point_reading(t), "",
        f"![frontier, tickets]({folder_name}/{figures[0]})", "",
        "(The frontier plots the point estimates; the linkage target is checked on the upper "
        "end of each interval, in the table.)", "",
        *_table(t, names=True), "",
        "### Check: the chosen setting re-run with `textdp.privatize`", "",
        *_check_lines(results), "",
        "## VADER Amazon review snippets (sentiment)", "",
        f"{len(v['rows'])} settings on {v['meta']['sample']['documents']} snippets drawn "
        "(seeded) from the 3,708 of `textdp.datasets.vader.load_vader(\"amazon\")`, those "
        "rated at least 0.5 from neutral, labelled positive/negative by the sign of the rating. "
        f"Classifier on the originals: {_pct(vb['accuracy'])}{_iv(vb['accuracy_interval'])} on "
        f"{vb['test']} test snippets; chance {_pct(vb['chance'])}; linkage chance "
        f"{_pct(v['rows'][0]['linkage_chance'])}. No `known=` names here: entities are what "
        "the recognisers find.", "",
        *_recommendation(v), "", *_point_reading(v), "",
        f"![frontier, sentiment]({folder_name}/{figures[1]})", "",
        *_table(v, names=False), "",
        "## DP-Prompt", "",
    ]
    if dp["measured"]:
        cost = dp["seconds_per_document"]
        per_mechanism = len(s["epsilons"][0][1])
        total = cost * s["tickets"] * per_mechanism / 60
        lines += [
            "Not assessed: `textdp.assess` measures word mechanisms only (it refuses "
            "`dp_prompt`). Measured cost of a release with the default local model "
            "(SmolLM2-135M-Instruct through `textdp.lm`, temperature 1.0) on this machine, "
            "each `textdp.privatize` call loading the model afresh: "
            f"{dp['first_call_seconds']:.1f} s for a call on one ticket, then "
            f"{cost:.1f} s per ticket for a call on {dp['documents']} tickets (that call's time "
            "over its tickets, the model's loading included). "
            f"Assessing it like the word mechanisms above "
            f"({s['tickets']} tickets × {per_mechanism} settings) "
            f"would take about {total:.0f} minutes of paraphrasing alone, beyond this page's "
            "budget of about 10 minutes.", ""]
    else:
        lines += ["Not assessed: `textdp.assess` measures word mechanisms only, and its cost "
                  f"could not be measured here ({dp['why']}).", ""]
    lines += [
        "## Reading these figures", "",
        f"- Sizes: {s['tickets']} tickets and {s['sentences']} snippets, {n_settings} settings "
        "each, chosen for a run of about 10 minutes on 2 busy cores (it took "
        f"{results['seconds'] / 60:.1f}, DP-Prompt's timing included). With n documents "
        "linkage chance is 1/n, so \"5× chance\" is a smaller fraction on a larger sample; the "
        "intervals shrink as 1/√n.",
        "- \"No name surviving\" is checked on the sample only: 0 of N surviving bounds the rate "
        "by the interval's upper end, not by zero.",
        "- The recommendation is only as good as the attacks and the classifier: a stronger "
        "attacker could link more, a stronger model could classify better.",
        "- Words per second are indicative only: the machine was shared, and some rows (e.g. "
        "1-Diffractor and CusText on the snippets) are tens of times faster than others for "
        "reasons not investigated here.",
        "- On the snippets the classifier barely beats chance even on the originals "
        f"({_pct(vb['accuracy'])} against {_pct(vb['chance'])}, {vb['train']} training "
        "snippets), so their task accuracy says little; their linkage and similarity do.",
        "- TEM and SanText give the same or nearly the same figures at every ε here (their "
        "curves overlap in the plots); not investigated on this page.",
        "- Tickets are generated: real tickets are messier and more varied, which usually "
        "makes linkage easier (rarer words) and classification harder.",
        "",
    ]
    return "\n".join(lines)


def render(results: dict[str, Any], out: Path) -> None:
    folder = _harness.figure_dir(out)
    figures = _figure(results, folder)
    _harness.write_text(out, page(results, figures, folder.name))


def main(argv: list[str] | None = None) -> int:
    ap = _harness.parser(NAME, __doc__)
    ap.prog = COMMAND
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    args = ap.parse_args(argv)
    return _harness.run_or_render(args, lambda: run(settings(args.quick, args.seed)), render,
                                  indent=1)


if __name__ == "__main__":
    raise SystemExit(main())
