"""1-Diffractor like for like: Table 2 with the reference code's stopword policy, 300-d lists,
speed end to end on text, list-build time and memory.

    python -m experiments.diffractor      # → docs/results/diffractor.md + PNGs in docs/results/diffractor/

Meisenbacher, Chevli, Matthes (IWSPA 2024):

1. **Table 2** (SBERT all-MiniLM-L6-v2 cosine between each sentence and its private version) for
   1-D_G and 1-D_T at the paper's ε, in three settings: textdp's default (stopwords privatised,
   out-of-vocabulary tokens masked); stopwords kept (the reference code's ``get_cand`` never
   perturbs stopwords; textdp's ``keep_stopwords=True``); and, for 1-D_G, the reference code's
   full text policy (stopwords and out-of-vocabulary tokens left in place, ``oov="keep"``). Lists
   built from GloVe 6B 50d (``glove-6b-50d``) and from the 300-d model (``glove-840b-300d``). The
   sentences are the 200 VADER movie-review snippets of ``docs/results/word_mechanisms.md``.
2. **Speed** (§6, Table 5): words per second of 1-D_G, 1-D_T and MVC ids → ids
   (``privatize_ids`` on random vocabulary ids, the figure behind the 5,671× headline) next to
   end to end on real text (``textdp.pipeline.Privatizer`` on 1,000 VADER sentences: tokenise,
   privatise, restore case), each mechanism in a fresh process.
3. **List build** (§6: "ca. 20 seconds per list on a CPU … and 150 MiB for the initialization of
   L0"): one list built without the cache, timed, with the traced peak of its allocations and
   the process's peak RSS, in a fresh process per vocabulary.

``--from-results`` redraws the page from ``diffractor/results.json``; ``--quick`` is a smoke run.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiments import _harness as harness
from textdp.evaluation._common import derive_seed, jsonable
from textdp.evaluation.render import Document

NAME = "diffractor"
VOCABULARIES = ("glove-6b-50d", "glove-840b-300d")
PAPER_EPS = (0.1, 0.5, 1, 3, 5, 10, 25, 50)
#: 1-Diffractor Table 2 (mean SBERT cosine; 1-D rows average five 300-d models and L0–L2).
PAPER_TABLE2 = {"1-D_G": (0.37, 0.57, 0.66, 0.80, 0.82, 0.82, 0.99, 0.99),
                "1-D_T": (0.31, 0.48, 0.57, 0.73, 0.79, 0.82, 1.00, 1.00),
                "mvc": (0.08, 0.08, 0.08, 0.09, 0.10, 0.15, 0.64, 0.77)}
#: The paper's §6: list initialisation "ca. 20 seconds per list", "150 MiB for … L0" (5 lists).
PAPER_LIST_SECONDS = 20.0
PAPER_L0_MIB = 150.0
#: The text policies compared: name → (privatize keyword arguments, methods it runs for).
POLICIES: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "default": ({"keep_stopwords": False, "oov": "mask"}, ("1-D_G", "1-D_T")),
    "stopwords kept": ({"keep_stopwords": True, "oov": "mask"}, ("1-D_G", "1-D_T")),
    "stopwords and OOV kept": ({"keep_stopwords": True, "oov": "keep"}, ("1-D_G",)),
}
METHODS = {"1-D_G": "geometric", "1-D_T": "tem"}


@dataclass
class Settings:
    seed: int = 0
    utility_docs: int = 2000
    similarity_docs: int = 200
    epsilons: tuple[float, ...] = PAPER_EPS
    vocabularies: tuple[str, ...] = VOCABULARIES
    efficiency: bool = True
    n_tokens: int = 20_000
    n_texts: int = 1000


say = harness.logger(NAME)


# --- 1. Table 2 ---------------------------------------------------------------------------------------
def _sentences(s: Settings) -> list[str]:
    """The similarity sentences of docs/results/word_mechanisms.md (same seed key, same draw)."""
    from textdp.evaluation import utility

    task = utility.vader_sentiment_task(s.utility_docs, harness.rng(s.seed, 2),
                                        sets=("movie_reviews",))
    return list(task.texts[: s.similarity_docs])


def _similarity(texts: list[str], private: list[str], feats: Any) -> float:
    from textdp.evaluation import utility

    # Remembered: a private sentence met again (at large ε most come back unchanged) is encoded once.
    feats.encode(private, remember=True)
    return float(utility.semantic_similarity(texts, private, features=feats)["mean"])


def part_table2(s: Settings, rng: np.random.Generator) -> dict[str, Any]:
    from textdp.evaluation import utility
    from textdp.mechanisms import create
    from textdp.release import privatize
    from textdp.vocab import load

    texts = _sentences(s)
    feats = utility.make_features("sbert")
    feats.encode(texts, remember=True)
    out: dict[str, Any] = {"n_sentences": len(texts), "vocabularies": {}}
    for vname in s.vocabularies:
        vocab = load(vname)
        info: dict[str, Any] = {"vocabulary": vocab.describe(), "ceiling": {}, "rows": []}
        keep_all = create("diffractor", vocab, epsilon=1000.0)  # N_w = tanh(500) = 1
        for policy, (kw, _) in POLICIES.items():
            res = privatize(texts, keep_all, seed=derive_seed(rng), entities="none", **kw)
            info["ceiling"][policy] = {"similarity": _similarity(texts, res.texts, feats),
                                       "tokens": res.report["tokens"]}
        for policy, (kw, methods) in POLICIES.items():
            for label in methods:
                t0 = time.perf_counter()
                sims = []
                for eps in s.epsilons:
                    mech = create("diffractor", vocab, epsilon=float(eps), method=METHODS[label])
                    res = privatize(texts, mech, seed=derive_seed(rng), entities="none", **kw)
                    sims.append(_similarity(texts, res.texts, feats))
                info["rows"].append({"mechanism": label, "policy": policy, "similarity": sims})
                say(f"Table 2: {vname}, {label}, {policy} ({time.perf_counter() - t0:.0f} s)")
        out["vocabularies"][vname] = info
    return out


# --- 2 and 3. speed and list build -------------------------------------------------------------------------
def part_efficiency(s: Settings) -> dict[str, Any]:
    from textdp.evaluation.efficiency import measure_efficiency

    speed, build = [], []
    for vname in s.vocabularies:
        for label, name, eps, params in (("1-D_G", "diffractor", 1.0, {"method": "geometric"}),
                                         ("1-D_T", "diffractor", 1.0, {"method": "tem"}),
                                         ("mvc", "mvc", 10.0, {})):
            r = measure_efficiency(name, eps, params, n_tokens=s.n_tokens, n_texts=s.n_texts,
                                   vocabulary=vname)
            speed.append({"label": label, **r})
            say(f"speed: {vname} {label}: {r['words_per_second']:,.0f} ids/s, "
                f"{r['text_words_per_second']:,.0f} text words/s")
        r = measure_efficiency("diffractor", 1.0, {"cache": False}, n_tokens=1000, repeats=1,
                               text=False, vocabulary=vname)
        build.append(r)
        say(f"list build: {vname}: {r['setup_seconds']:.1f} s, {r['setup_peak_mib']:.0f} MiB traced")
    return {"speed": speed, "build": build}


def run(s: Settings) -> dict[str, Any]:
    t0 = time.perf_counter()
    results: dict[str, Any] = {"settings": asdict(s), "machine": harness.machine(),
                               "load_before": list(os.getloadavg())}
    results["table2"] = part_table2(s, harness.rng(s.seed, 0))
    if s.efficiency:
        results["efficiency"] = part_efficiency(s)
    results["load_after"] = list(os.getloadavg())
    results["seconds"] = time.perf_counter() - t0
    results["cpu_seconds"] = time.process_time()  # this process (all threads), not the children
    return jsonable(results)


# --- figures -------------------------------------------------------------------------------------------
def figures(results: dict[str, Any], fig_dir: Path) -> dict[str, Path]:
    from textdp.evaluation import plots

    s = results["settings"]
    eps = list(s["epsilons"])
    panels = []
    for vname, info in results["table2"]["vocabularies"].items():
        lines = {f"{r['mechanism']}, {r['policy']}": {"eps": eps, "y": r["similarity"]}
                 for r in info["rows"]}
        lines.update({f"{k} (paper)": {"eps": list(PAPER_EPS), "y": list(v), "style": "--x"}
                      for k, v in PAPER_TABLE2.items() if k.startswith("1-D")})
        panels.append({"title": f"lists from {vname}", "ylabel": "mean SBERT cosine",
                       "baseline": info["ceiling"]["default"]["similarity"], "lines": lines})
    return {"table2": plots.privacy_utility_curves(panels, fig_dir / "table2.png")}


# --- the page ----------------------------------------------------------------------------------------------
def _table2_section(doc: Document, results: dict[str, Any], figs: dict[str, Path],
                    s: Settings) -> None:
    t2 = results["table2"]
    doc.heading("1. Table 2: SBERT similarity, stopwords kept and privatised, 50d and 300d lists")
    doc.paragraph(
        "Paper: Table 2, mean SBERT (all-MiniLM-L6-v2) cosine between original and perturbed "
        "sentences of MRPC, RTE and SST-2; its 1-D rows average lists from five 300-d (one 200-d) "
        "models and three list settings. The reference code's `get_cand` never perturbs stopwords "
        "and leaves words without an embedding in place. Setup: the "
        f"{t2['n_sentences']} VADER movie-review sentences of the word-mechanisms page, one list "
        "(seed 0) per vocabulary, three text policies — **default** (textdp: stopwords "
        "privatised, out-of-vocabulary tokens masked), **stopwords kept** (`keep_stopwords=True`, "
        "the reference's stopword rule), **stopwords and OOV kept** (`keep_stopwords=True, "
        "oov=\"keep\"`, the reference's whole text policy; 1-D_G only). 'ceiling' is the "
        "similarity with every in-vocabulary word kept (ε = 1000) under the policy. Deviation: "
        "one model and one list instead of five models × L0–L2; movie-review snippets instead of "
        "GLUE sentences.")
    header = ["lists", "mechanism", "policy", "ceiling"] + [f"ε={e:g}" for e in s.epsilons]
    rows = []
    for vname, info in t2["vocabularies"].items():
        for r in info["rows"]:
            rows.append([vname, r["mechanism"], r["policy"], info["ceiling"][r["policy"]]["similarity"],
                         *r["similarity"]])
    for k, v in PAPER_TABLE2.items():
        paper = dict(zip(PAPER_EPS, v, strict=True))
        rows.append(["paper", k, "reference code", None, *[paper.get(e) for e in s.epsilons]])
    doc.table(header, rows)
    doc.paragraph(_table2_verdict(t2, s))
    doc.image(figs["table2"], "Mean SBERT cosine against ε, per list vocabulary and text policy; "
                              "dashed: the paper; grey line: the default policy's ceiling "
                              "(every in-vocabulary word kept)")


def _cell(t2: dict[str, Any], vname: str, label: str, policy: str, eps: float,
          s: Settings) -> float | None:
    info = t2["vocabularies"].get(vname)
    if info is None or eps not in s.epsilons:
        return None
    row = next((r for r in info["rows"] if r["mechanism"] == label and r["policy"] == policy), None)
    return None if row is None else row["similarity"][list(s.epsilons).index(eps)]


def _table2_verdict(t2: dict[str, Any], s: Settings) -> str:
    parts = []
    for vname in t2["vocabularies"]:
        a = _cell(t2, vname, "1-D_G", "default", 1, s)
        b = _cell(t2, vname, "1-D_G", "stopwords kept", 1, s)
        c = _cell(t2, vname, "1-D_G", "stopwords and OOV kept", 1, s)
        if a is not None and b is not None:
            parts.append(f"lists from `{vname}`, 1-D_G at ε = 1: {a:.3f} with stopwords privatised, "
                         f"{b:.3f} kept" + (f", {c:.3f} with OOV kept too" if c is not None else ""))
    diffs: dict[str, list[float]] = {}
    for vname, info in t2["vocabularies"].items():
        for r in info["rows"]:
            paper = PAPER_TABLE2[r["mechanism"]]
            for e, y in zip(s.epsilons, r["similarity"], strict=True):
                if e in PAPER_EPS:
                    diffs.setdefault(f"`{vname}`, {r['policy']}", []).append(
                        abs(y - paper[PAPER_EPS.index(e)]))
    best = min(diffs.items(), key=lambda kv: float(np.median(kv[1])), default=None)
    text = "Computed: " + "; ".join(parts) + " (paper: 0.66)."
    if best is not None:
        text += (" Median absolute difference from the paper over the 1-D cells, per setting: "
                 + "; ".join(f"{k} {np.median(v):.3f}" for k, v in diffs.items())
                 + f". Closest: {best[0]}.")
    wins = []
    for vname in t2["vocabularies"]:
        for label in ("1-D_G", "1-D_T"):
            pairs = [(_cell(t2, vname, label, "stopwords kept", e, s),
                      _cell(t2, vname, label, "default", e, s)) for e in s.epsilons if e <= 10]
            pairs = [(k, d) for k, d in pairs if k is not None and d is not None]
            if pairs:
                wins.append(f"{label} on `{vname}` at {sum(k > d for k, d in pairs)} of "
                            f"{len(pairs)} ε ≤ 10 (largest difference "
                            f"{max(abs(k - d) for k, d in pairs):.3f})")
    big = [_cell(t2, v, "1-D_G", "stopwords and OOV kept", e, s)
           for v in t2["vocabularies"] for e in s.epsilons if e >= 25]
    big = [b for b in big if b is not None]
    mid = [_cell(t2, v, "1-D_G", "stopwords and OOV kept", e, s)
           for v in t2["vocabularies"] for e in s.epsilons if 5 <= e <= 10]
    mid = [b for b in mid if b is not None]
    text += (" The mean similarity is higher with stopwords kept for " + "; ".join(wins)
             + " (means over the same sentences; the run kept no spread, so these counts are "
               "not a test)." if wins else "")
    if big:
        text += (f" With out-of-vocabulary tokens left in place too, 1-D_G reaches "
                 f"{min(big):.3f}–{max(big):.3f} at ε ≥ 25 (paper 0.99)"
                 + (f", and already {min(mid):.3f}–{max(mid):.3f} at ε = 5–10, where the paper "
                    "has 0.82" if mid else "") + ".")
    return (text + " Verdict: the text policy moves the level, not the shape: the reference code "
            "releases stopwords and unknown tokens as they are, textdp privatises stopwords and "
            "masks unknown tokens by default, and with the reference policy our similarity comes "
            "close to the paper's at ε ≥ 25; but that policy puts us near 1.0 already at "
            "ε = 5–10, where the paper is at 0.82, so it does not explain the paper's rise "
            "between ε = 10 and 25: at ε = 10 1-D_G already keeps all but 9·10⁻⁵ of the words "
            "(tanh(ε/2)), so that rise is not the mechanism's — the paper's ε ≥ 25 columns come "
            "from a differently set-up run ([differences.md](differences.md), section 1). Kept "
            "stopwords and "
            "OOV tokens are released unchanged and unprotected; textdp's report lists them. "
            "Other differences (one list from one model here; the paper averages five models "
            "and three list settings; its GLUE sentences) are not separated.")


def _speed_section(doc: Document, results: dict[str, Any]) -> None:
    eff = results.get("efficiency")
    if not eff:
        return
    doc.heading("2. Speed: ids → ids against end to end on text (§6, Table 5)")
    doc.paragraph(
        "Paper: 1-Diffractor perturbs \"greater than 15x the speed\" of previous mechanisms (§1), "
        "measured as tokens per day. Setup: each mechanism in a fresh process "
        "(`textdp.evaluation.efficiency.measure_efficiency`): ids → ids is `privatize_ids` on "
        f"{results['settings']['n_tokens']:,} random vocabulary ids (best of 3); text is "
        f"`Privatizer.run` on {results['settings']['n_texts']:,} VADER movie-review sentences "
        "(tokenise, privatise, restore case), counting privatised words. MVC at ε = 10, "
        "1-Diffractor at ε = 1 (speed does not depend on ε).")
    rows = []
    by = {(r["vocabulary"]["name"], r["label"]): r for r in eff["speed"]}
    for (vname, label), r in by.items():
        rows.append([vname, label, r["words_per_second"], r["text_words_per_second"],
                     r["text_tokens_per_second"], r["peak_mib_per_1000_words"]])
    doc.table(["vocabulary", "mechanism", "ids → ids words/s", "text words/s", "text tokens/s",
               "MiB per 1,000 words"], rows)
    parts = []
    for vname in {k[0] for k in by}:
        g, m = by.get((vname, "1-D_G")), by.get((vname, "mvc"))
        if g and m:
            parts.append(f"`{vname}`: 1-D_G is {g['words_per_second'] / m['words_per_second']:,.0f}× "
                         f"faster than MVC ids → ids and "
                         f"{g['text_words_per_second'] / m['text_words_per_second']:,.1f}× end to end "
                         f"on text (1-D_G's text rate is "
                         f"{g['text_words_per_second'] / g['words_per_second']:.1%} of its ids rate)")
    doc.paragraph("Computed: " + "; ".join(sorted(parts)) + ". One measurement per cell, on the "
                  "loaded machine stated at the top: absolute rates and ratios are rough (MVC's "
                  "BLAS search suffers more from a shared CPU than 1-Diffractor's lookups). "
                  "MVC's rates here are lower than on [word_mechanisms.md](word_mechanisms.md) "
                  "(same vocabulary and protocol): that run was two days earlier, before the "
                  "neighbour search was rewritten (a larger query block here: compare the MiB per "
                  "1,000 words), and this one ran at the load stated at the top; compare ratios "
                  "within one run. MVC is the only earlier mechanism measured here and not the "
                  "slowest one: on word_mechanisms.md (one run, ids → ids) TEM (13,618 words/s) "
                  "and Vickrey (18,663) are slower than MVC (22,209), Mahalanobis (20,482) is "
                  "close to it, so against TEM the ratios would be larger still. Against the "
                  "fastest earlier one (truncated Gumbel, measured on "
                  "word_mechanisms.md) 1-D_G is about 55× faster ids → ids and about 11× end to "
                  "end, below the paper's \"over 90x from an empirical measurement\" (§6). "
                  "Verdict: the paper's direction holds "
                  "(1-Diffractor far faster than MVC), but the ids → ids ratio is not what a user "
                  "sees: on text, tokenising and restoring case cost the same for every mechanism "
                  "and dominate 1-Diffractor's time, so the end-to-end ratio is the honest "
                  "headline. MVC's cost grows with the dimension (one search over the vocabulary "
                  "per word), 1-Diffractor's does not.")


def _build_section(doc: Document, results: dict[str, Any]) -> None:
    eff = results.get("efficiency")
    if not eff:
        return
    doc.heading("3. List build: time and memory (§6)")
    doc.paragraph(
        f"Paper: \"ca. {PAPER_LIST_SECONDS:g} seconds per list on a CPU\" and \"{PAPER_L0_MIB:g} "
        "MiB for the initialization of L0\" (five lists). Setup: one list built with the cache "
        "off (`cache=False`), in a fresh process per vocabulary; 'traced peak' is the peak of "
        "Python/numpy allocations during the build above what was live before (tracemalloc). "
        "The build is timed with tracemalloc on, which slows allocation-heavy Python code, on "
        "the loaded machine stated at the top, so the times are upper bounds; BENCHMARKS.md "
        "has the quiet, untraced figure for the 47,883-word default (\"first exact list\": "
        "4.9–5.5 s). The children's peak RSS is not shown: this run read it with getrusage, which "
        "Linux carries over from the parent process across exec (every child reported the "
        "parent's 1.1 GiB).")
    rows = [[r["vocabulary"]["name"], r["vocabulary"]["size"], r["vocabulary"]["dimension"],
             r["setup_seconds"], r["setup_peak_mib"]] for r in eff["build"]]
    doc.table(["vocabulary", "words", "dim", "build s (one list)", "traced peak MiB"], rows)
    parts = [f"`{r['vocabulary']['name']}`: {r['setup_seconds']:.1f} s and {r['setup_peak_mib']:.0f} "
             f"MiB traced per list" for r in eff["build"]]
    most = max(r["setup_peak_mib"] for r in eff["build"])
    doc.paragraph("Computed: " + "; ".join(parts) + f" (paper: ≈ {PAPER_LIST_SECONDS:g} s per "
                  f"list, {PAPER_L0_MIB:g} MiB for five). Verdict on memory: textdp's exact build "
                  f"needs more than the paper's figure (up to {most:.0f} MiB for one list, against "
                  f"{PAPER_L0_MIB:g} MiB for five): its certified candidate graph holds about 64 "
                  "neighbours per word and blocks of the distance matrix, the price of exact "
                  "chains (the reference's are approximate, SPEC §2.7). Lists are cached per "
                  "vocabulary fingerprint and seed, so the build is paid once.")


def _cpu(results: dict[str, Any]) -> str:
    cpu = results.get("cpu_seconds")
    return f", {cpu / 60:.1f} minutes of CPU in the main process" if cpu else ""


def page(results: dict[str, Any], figs: dict[str, Path], s: Settings) -> Document:
    doc = Document("1-Diffractor like for like: Table 2 stopword policy, 300-d lists, speed on "
                   "text, list build")
    la, lb = results.get("load_after"), results.get("load_before")
    load = (f"; 1-min load average {lb[0]:.1f} before and {la[0]:.1f} after" if la and lb else "")
    doc.paragraph(
        f"Regenerate with `{harness.command(NAME)}` (or `textdp experiment {NAME}`; seed {s.seed}; "
        f"{results['seconds'] / 60:.1f} minutes wall clock{_cpu(results)} on "
        f"{results['machine']}{load}, a machine shared "
        f"with other jobs). Raw numbers: `{NAME}/results.json`; `--from-results` redraws this "
        "page. Every statement below is computed from those numbers.", note=True)
    _table2_section(doc, results, figs, s)
    _speed_section(doc, results)
    _build_section(doc, results)
    doc.heading("Settings")
    doc.pre(json.dumps(jsonable(asdict(s)), indent=1))
    doc.heading(harness.CLAIMS_HEADING)
    doc.table(harness.CLAIMS_HEADER, _claims(results, s))
    return doc


def _claims(results: dict[str, Any], s: Settings) -> list[list[str]]:
    """The page's closing table, from the same numbers as its sections."""
    rows: list[list[str]] = []
    t2 = results.get("table2")
    if t2:
        cells = {(v, pol): _cell(t2, v, "1-D_G", pol, 1, s) for v in t2["vocabularies"]
                 for pol in ("default", "stopwords kept", "stopwords and OOV kept")}
        have = [f"`{v}` " + ", ".join(f"{pol} {x:.3f}" for (v2, pol), x in cells.items()
                                     if v2 == v and x is not None) for v in t2["vocabularies"]]
        rows.append(["1-D_G keeps SBERT cosine 0.66 at ε = 1 (average of its lists)",
                     "Table 2: 0.66 at ε = 1, 0.99 at ε ≥ 25",
                     "at ε = 1: " + "; ".join(have),
                     "partly: one list per vocabulary (the paper averages five models and three "
                     "list settings); movie-review snippets, not GLUE",
                     "close with stopwords kept; not reproduced at ε ≥ 25 by the default policy"])
        mid = [_cell(t2, v, "1-D_G", "stopwords and OOV kept", e, s)
               for v in t2["vocabularies"] for e in s.epsilons if 5 <= e <= 10]
        mid = [x for x in mid if x is not None]
        if mid:
            rows.append(["(ours) the paper's 0.99 at ε ≥ 25 comes from unknown tokens left in place",
                         "not claimed by the paper (an explanation an earlier page gave)",
                         f"with stopwords and OOV kept, 1-D_G reaches {min(mid):.3f}–"
                         f"{max(mid):.3f} already at ε = 5–10, where the paper has 0.82",
                         "as above", "not supported: the policy sets the level, not the paper's "
                                     "rise between ε = 10 and 25"])
    eff = results.get("efficiency")
    if eff:
        by = {(r["vocabulary"]["name"], r["label"]): r for r in eff["speed"]}
        parts = []
        for vname in sorted({k[0] for k in by}):
            g, m = by.get((vname, "1-D_G")), by.get((vname, "mvc"))
            if g and m:
                parts.append(f"`{vname}`: {g['words_per_second'] / m['words_per_second']:,.0f}× "
                             f"ids → ids, {g['text_words_per_second'] / m['text_words_per_second']:,.0f}× "
                             "on text")
        rows.append(["1-Diffractor perturbs at \"greater than 15x the speed\" of previous "
                     "mechanisms", "§1; §6: \"over 90x from an empirical measurement\"",
                     "against MVC: " + "; ".join(parts) + " (against truncated Gumbel, the "
                     "fastest earlier one: see word_mechanisms.md, about 11× on text)",
                     "partly: other machine and code; one measurement on a loaded machine",
                     "> 15× holds against MVC; > 90× not against the fastest on text"])
        build = eff.get("build", [])
        if build:
            rows.append([f"a list builds in ca. {PAPER_LIST_SECONDS:g} s, L0 needs "
                         f"{PAPER_L0_MIB:g} MiB", "§6",
                         "; ".join(f"`{r['vocabulary']['name']}`: {r['setup_seconds']:.0f} s, "
                                   f"{r['setup_peak_mib']:.0f} MiB traced (one list)"
                                   for r in build),
                         "no: exact certified lists here (the reference's are approximate), "
                         "timed under tracemalloc on a loaded machine",
                         "slower and larger here; BENCHMARKS.md: about 5 s untraced and quiet"])
    return rows


def settings(quick: bool, seed: int) -> Settings:
    if not quick:
        return Settings(seed=seed)
    return Settings(seed=seed, utility_docs=200, similarity_docs=20, epsilons=(1, 50),
                    efficiency=False)


def render(results: dict[str, Any], out: Path) -> None:
    fig_dir = harness.figure_dir(out)
    figs = figures(results, fig_dir)
    s = harness.settings_from(Settings, results["settings"])
    harness.write_text(out, page(results, figs, s).markdown(out.parent))
    say(f"wrote {out} and {len(figs)} figures in {fig_dir}")


def main(argv: list[str] | None = None) -> int:
    return harness.quick_main(NAME, __doc__, argv, run, settings, render)


if __name__ == "__main__":
    raise SystemExit(main())
