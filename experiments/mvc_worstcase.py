"""MVC's worst case over a whole vocabulary (Feyisetan et al., WSDM 2020, §4.1, Fig. 2) and the
nearest-neighbour distances of its Fig. 1.

    python -m experiments.mvc_worstcase      # → docs/results/mvc_worstcase.md + a PNG

§4.1 chooses ε from the worst case over words: "at ε = 5, no word yields fewer than 300 distinct
new words (S_w graph), and no word is ever returned more than 500 times in the worst case (N_w
graph)" — of 1,000 draws. A worst case is a statement about every word, so a small uniform sample
can only fail to contradict it: if a share r of the words breaks the bound, n words miss all of
them with probability (1 − r)^n. Here the bound is checked where it can be:

* textdp's default vocabulary (GloVe 6B 50d, frequent alphabetic words): **every word** is
  screened with ``screen_draws`` draws of textdp's MVC; every word whose screened N_w is at least
  ``confirm_n_w``, and the ``confirm_lowest`` words with the fewest distinct outputs, are drawn
  again ``confirm_draws`` = 1,000 times (the paper's number), and the verdict is read from those;
* ``glove-840b-300d`` (33,860 words at 300d) and all 400,000 GloVe 6B 50d words: uniform samples,
  screened and confirmed the same way (a whole-vocabulary screen there would take hours here).

A word with N_w ≥ 0.5 screens below 0.3 in 100 draws with probability P(Binom(100, 0.5) ≤ 29)
≈ 1.6·10⁻⁵, so the screen cannot plausibly hide one. Fig. 1: for k ∈ {1, 5, …, 1000}, the 5th,
20th, 50th, 80th and 95th percentiles over words of the Euclidean distance to the k-th nearest
other word (the paper: 319,000 words common to GloVe and fastText; here every word of the default
table and uniform samples of the others; fastText is not available offline).

The run saves ``mvc_worstcase/results.json``; ``--from-results`` redraws the page.
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
from textdp.evaluation._common import jsonable
from textdp.evaluation.render import Document, fmt

NAME = "mvc_worstcase"
#: §4.1's worst-case criterion at ε = 5, in 1,000 draws.
PAPER = {"epsilon": 5.0, "max_n_w": 0.5, "min_s_w": 300, "draws": 1000}
PERCENTILES = (5, 20, 50, 80, 95)
#: The sample sizes the earlier pages read the criterion from (word_mechanisms.md, mvc300.md).
EARLIER = {"default": 100, "full": 20, "300d": 100}
#: α of the one-sided Clopper–Pearson bounds printed on the page.
ALPHA = 0.05


@dataclass
class Settings:
    seed: int = 0
    epsilon: float = 5.0
    #: ε at which the screen's upper bound is also reported (one set of draws gives every ε).
    grid: tuple[float, ...] = (3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
    neighbours: int = 1000
    screen_draws: int = 100
    screen_keep: float = 0.35
    check_draws: int = 200
    check_keep: float = 0.4
    confirm_draws: int = 1000
    sample_300d: int = 2000
    sample_full: int = 2000
    fig1_k: tuple[int, ...] = (1, 5, 10, 20, 50, 100, 200, 500, 1000)


say = harness.logger(NAME)


def _tables(s: Settings) -> list[tuple[str, Any, int]]:
    """(key, vocabulary, words to check: 0 = every word)."""
    from experiments.word_mechanisms import full_glove
    from textdp.vocab import load, load_default

    return [("default", load_default(), 0), ("300d", load("glove-840b-300d"), s.sample_300d),
            ("full", full_glove(), s.sample_full)]


def knn(vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances and rows of the k nearest other rows of each query, nearest first (exact:
    blocked squared distances, a partial sort per row)."""
    v = np.asarray(vectors, dtype=np.float64)
    block = max(8, min(256, 20_000_000 // len(v)))     # about 160 MB of distances at a time
    sq = np.einsum("ij,ij->i", v, v)
    dist = np.empty((queries.size, k))
    rows = np.empty((queries.size, k), dtype=np.int32)
    for start in range(0, queries.size, block):
        q = queries[start:start + block]
        d2 = sq[q][:, None] + sq[None, :] - 2.0 * (v[q] @ v.T)
        d2[np.arange(q.size), q] = np.inf          # not the word itself
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        pd = np.take_along_axis(d2, part, axis=1)
        order = np.argsort(pd, axis=1)
        rows[start:start + q.size] = np.take_along_axis(part, order, axis=1)
        dist[start:start + q.size] = np.sqrt(np.maximum(np.take_along_axis(pd, order, axis=1), 0))
    return dist, rows


def stay_thresholds(vectors: np.ndarray, queries: np.ndarray, neighbours: np.ndarray,
                    draws: int, rng: np.random.Generator) -> np.ndarray:
    """(len(queries), draws): for each MVC noise draw z = (g/ε)·θ (g ~ Gamma(d, 1), θ uniform on
    the sphere), the ε above which the input is nearer to x + z than each of its listed
    neighbours: ε > g·max_v 2θ·(v − x)/‖v − x‖².

    With every other word listed this is exactly the ε above which MVC returns the input; with
    only the nearest neighbours listed it is smaller or equal, so the share of draws below ε is
    an upper bound on N_w(ε) — from one set of draws, for every ε at once. A neighbour at
    distance 0 (a duplicate vector) is left out, which keeps the bound an upper bound.
    """
    v = np.asarray(vectors, dtype=np.float32)
    d = v.shape[1]
    out = np.empty((queries.size, draws), dtype=np.float32)
    step = 16
    for start in range(0, queries.size, step):
        q = queries[start:start + step]
        diff = v[neighbours[start:start + step]] - v[q][:, None, :]        # (b, k, d)
        n2 = np.einsum("bkd,bkd->bk", diff, diff)
        scale = np.divide(2.0, n2, out=np.zeros_like(n2), where=n2 > 0)  # duplicates: 0
        scaled = diff * scale[:, :, None]
        theta = rng.standard_normal((q.size, draws, d), dtype=np.float32)
        theta /= np.linalg.norm(theta, axis=2, keepdims=True)
        g = rng.gamma(d, 1.0, size=(q.size, draws))
        worst = np.matmul(theta, scaled.transpose(0, 2, 1)).max(axis=2)
        out[start:start + q.size] = g * np.maximum(worst, 0.0)
    return out


def _mvc(vocab: Any, ids: np.ndarray, draws: int, s: Settings,
         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """N_w and distinct outputs in ``draws`` draws of textdp's MVC at ε."""
    from textdp.evaluation.deniability import plausible_deniability
    from textdp.mechanisms import create

    mech = create("mvc", vocab, epsilon=float(s.epsilon))
    n_w, distinct = np.empty(ids.size), np.empty(ids.size)
    step = 100
    for start in range(0, ids.size, step):
        part = ids[start:start + step]
        d = plausible_deniability(mech, part, draws, rng, method="monte_carlo")
        n_w[start:start + part.size] = d.n_w
        distinct[start:start + part.size] = d.distinct
    return n_w, distinct


def worst_case(vocab: Any, ids: np.ndarray, s: Settings, rng: np.random.Generator,
               key: str) -> dict[str, Any]:
    """Fig. 1's distances, the screen's upper bound on N_w, and textdp's MVC on the suspects."""
    t0 = time.perf_counter()
    dist, rows = knn(vocab.vectors, ids, s.neighbours)
    say(f"{key}: {s.neighbours} nearest words of {ids.size:,} words "
        f"({time.perf_counter() - t0:.0f} s)")
    t1 = time.perf_counter()
    thr = stay_thresholds(vocab.vectors, ids, rows, s.screen_draws, rng)
    say(f"{key}: screen, {s.screen_draws} draws per word ({time.perf_counter() - t1:.0f} s)")
    bound = {f"{e:g}": (thr <= e).mean(axis=1) for e in s.grid}
    at = bound[f"{s.epsilon:g}"]
    flagged = np.flatnonzero(at >= s.screen_keep)
    t2 = time.perf_counter()
    check, _ = _mvc(vocab, ids[flagged], s.check_draws, s, rng)
    suspects = flagged[check >= s.check_keep]
    say(f"{key}: checked {flagged.size} words × {s.check_draws} draws "
        f"({time.perf_counter() - t2:.0f} s)")
    t2 = time.perf_counter()
    c_n_w, c_distinct = _mvc(vocab, ids[suspects], s.confirm_draws, s, rng)
    say(f"{key}: confirmed {suspects.size} words × {s.confirm_draws} draws "
        f"({time.perf_counter() - t2:.0f} s); max N_w {c_n_w.max() if c_n_w.size else 0:.3f}")
    nn = dist[:, 0]
    return {
        "vocabulary": vocab.describe(), "n_words": int(ids.size),
        "whole": bool(ids.size == len(vocab)), "screen_draws": s.screen_draws,
        "checked": int(flagged.size), "confirm_draws": s.confirm_draws,
        "screen": {e: {"max": float(b.max()), "word": vocab.words[int(ids[int(np.argmax(b))])],
                       "over": int((b > PAPER["max_n_w"]).sum()), "mean": float(b.mean())}
                   for e, b in bound.items()},
        "confirmed": {"word": [vocab.words[i] for i in ids[suspects]],
                      "bound": at[suspects].tolist(), "check": check[check >= s.check_keep]
                      .tolist(), "n_w": c_n_w.tolist(),
                      "s_w": c_distinct.tolist(), "nn": nn[suspects].tolist(),
                      # share of the checked words farther from their nearest word
                      "nn_share_above": [float(np.mean(nn > x)) for x in nn[suspects]]},
        "fig1": {"queries": int(ids.size),
                 "percentiles": {str(p): np.percentile(dist[:, np.asarray(s.fig1_k) - 1], p,
                                                       axis=0).tolist() for p in PERCENTILES}},
        "seconds": time.perf_counter() - t0}


def run(s: Settings) -> dict[str, Any]:
    from textdp.evaluation.deniability import sample_words

    t0 = time.perf_counter()
    load0 = os.getloadavg()
    out: dict[str, Any] = {"settings": asdict(s), "machine": harness.machine(),
                           "load_before": list(load0), "tables": {}}
    for t_i, (key, vocab, n) in enumerate(_tables(s)):
        rng = harness.rng(s.seed, t_i)
        ids = (np.arange(len(vocab), dtype=np.int64) if n == 0
               else np.sort(sample_words(vocab, min(n, len(vocab)), rng)))
        out["tables"][key] = worst_case(vocab, ids, s, rng, key)
    out["load_after"] = list(os.getloadavg())
    out["seconds"] = time.perf_counter() - t0
    return jsonable(out)


# --- reading the results ------------------------------------------------------------------------
def clopper_pearson_lower(k: int, n: int, alpha: float = ALPHA) -> float:
    """One-sided lower (1 − α) bound on a binomial proportion from k of n."""
    from scipy import stats

    return 0.0 if k <= 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


def summary(table: dict[str, Any]) -> dict[str, Any]:
    """The worst case of one table, read from its confirmed words (1,000 draws each)."""
    c = table["confirmed"]
    n_w, s_w = np.asarray(c["n_w"]), np.asarray(c["s_w"])
    draws = table["confirm_draws"]
    over = n_w > PAPER["max_n_w"]
    lows = [clopper_pearson_lower(round(x * draws), draws) for x in n_w]
    n = table["n_words"]
    screen = table["screen"][f"{PAPER['epsilon']:g}"]
    base = {"n_words": n, "whole": table["whole"], "over": int(over.sum()),
            "over_certain": int(sum(lo > PAPER["max_n_w"] for lo in lows)),
            "share_over": float(over.sum() / n), "screen_max": screen["max"],
            "screen_word": screen["word"], "under_s": int((s_w < PAPER["min_s_w"]).sum()),
            "words_over": [c["word"][k] for k in np.argsort(-n_w, kind="stable") if over[k]]}
    if not n_w.size:     # nothing reached step 3: the screen's bound is all there is
        return {**base, "max_n_w": None, "max_word": "–", "max_lower": None, "min_s_w": None,
                "min_s_w_word": "–"}
    i, j = int(np.argmax(n_w)), int(np.argmin(s_w))
    return {**base, "max_n_w": float(n_w[i]), "max_word": c["word"][i], "max_lower": lows[i],
            "min_s_w": float(s_w[j]), "min_s_w_word": c["word"][j]}


def miss_probability(share: float, n: int) -> float:
    """Probability that n words drawn uniformly miss every word of a share ``share``."""
    return float((1.0 - share) ** n)


def verdict(table: dict[str, Any]) -> str:
    """The page's verdict on §4.1's criterion for one table — the rule the test re-checks."""
    sm = summary(table)
    if sm["over"] or sm["under_s"]:
        return "fails" if sm["whole"] else "fails on the sample"
    return "holds on every word" if sm["whole"] else "not contradicted on the sample"


def _scope(sm: dict[str, Any]) -> str:
    return (f"every one of its {sm['n_words']:,} words" if sm["whole"]
            else f"{sm['n_words']:,} words drawn uniformly")


def figures(results: dict[str, Any], fig_dir: Path) -> dict[str, Path]:
    from textdp.evaluation.plots import _plt

    plt = _plt()
    fig_dir.mkdir(parents=True, exist_ok=True)
    tables = results["tables"]
    fig, axes = plt.subplots(1, len(tables), figsize=(4.2 * len(tables), 3.6), squeeze=False)
    ks = results["settings"]["fig1_k"]
    for ax, t in zip(axes[0], tables.values(), strict=True):
        for p in PERCENTILES:
            ax.plot(ks, t["fig1"]["percentiles"][str(p)], marker="o", markersize=3, label=f"p{p}")
        ax.set_xscale("log")
        ax.set_xlabel("k (k-th nearest word)")
        ax.set_ylabel("Euclidean distance")
        ax.set_title(f"{t['vocabulary']['name']} ({t['fig1']['queries']:,} words)", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("MVC Fig. 1 analogue: distance to the k-th nearest word, percentiles over words")
    fig.tight_layout()
    path = fig_dir / "fig1_distances.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"fig1": path}


def _fig2_section(doc: Document, results: dict[str, Any], s: Settings) -> dict[str, Any]:
    doc.heading("1. Fig. 2's worst case at ε = 5, checked on every word")
    doc.paragraph(
        "Paper (§4.1, Fig. 2, GloVe 50d): \"at ε = 5, no word yields fewer than 300 distinct new "
        "words (S_w graph), and no word is ever returned more than 500 times in the worst case "
        "(N_w graph)\", of 1,000 draws per word; the paper does not say over which words. A worst "
        "case concerns every word, so a uniform sample of n words can only fail to contradict "
        "it: if a share r of the words breaks the bound, the sample misses all of them with "
        "probability (1 − r)^n. The earlier pages read it from 100 words (word_mechanisms.md: "
        "default table; mvc300.md: 300d) and 20 words (all 400,000 GloVe words).")
    doc.paragraph(
        f"Setup, in three steps. (1) A screen of every checked word: {s.screen_draws} MVC "
        f"noise draws per word against its {s.neighbours:,} nearest words only. The input is "
        "returned iff it is nearer to x + z than every other word, i.e. iff ε > g·max_v "
        "2θ·(v − x)/‖v − x‖² for z = (g/ε)θ; over fewer competitors the maximum can only be "
        "smaller, so the share of draws that keep the input is an *upper bound* on N_w, at every "
        f"ε at once. (2) Words whose bound at ε = {s.epsilon:g} is ≥ {s.screen_keep:g} are drawn "
        f"{s.check_draws} times with textdp's own MVC. (3) Words with N_w ≥ {s.check_keep:g} "
        f"there are drawn {s.confirm_draws:,} times (the paper's number); N_w and S_w below are "
        "from those draws. A word with N_w > 0.5 (so a bound > 0.5) is dropped by step 1 or 2 "
        f"with probability below {_miss_screen(s):.1e} (far less when N_w is well above 0.5), "
        "so each count of words above 0.5 is a lower bound, short by less than the count times "
        "that probability in expectation. "
        "'bound' in the first table is the one-sided 95% Clopper–Pearson lower bound on "
        "the worst word's N_w. S_w is measured on the confirmed words only (the words with the "
        "largest N_w, where S_w ≤ 1 + 1,000·(1 − N_w) is smallest).")
    rows, sums = [], {}
    for key, t in results["tables"].items():
        sm = sums[key] = summary(t)
        rows.append([f"`{t['vocabulary']['name']}`", "every word" if sm["whole"] else
                     "uniform sample", sm["n_words"],
                     f"{t['checked']:,} / {len(t['confirmed']['word']):,}",
                     f"{sm['over']} ({100 * sm['share_over']:.3f}%)", sm["over_certain"],
                     f"{fmt(sm['max_n_w'])} ({sm['max_word']})", fmt(sm["max_lower"]),
                     f"{fmt(sm['min_s_w'])} ({sm['min_s_w_word']})", sm["under_s"],
                     verdict(t)])
    doc.table(["table", "words", "checked", f"step 2 / step 3 ({s.confirm_draws:,} draws)",
               "N_w > 0.5", "of them with bound > 0.5", "max N_w (word)", "bound",
               "min S_w (word)", "S_w < 300", "verdict"], rows)
    lines = []
    for key, sm in sums.items():
        name = results["tables"][key]["vocabulary"]["name"]
        n_old = EARLIER.get(key)
        if sm["over"]:
            over = ", ".join(sm["words_over"][:12]) + (", …" if len(sm["words_over"]) > 12 else "")
            miss = (f"; a uniform sample of {n_old} words, the size the earlier page read this "
                    f"from, misses all of them with probability "
                    f"{miss_probability(sm['share_over'], n_old):.2f}" if n_old else "")
            lines.append(f"**{name}** ({_scope(sm)}): {sm['over']} "
                         f"word{'s are' if sm['over'] > 1 else ' is'} returned unchanged "
                         f"more than 500 times in 1,000 draws ({over}){miss}.")
        else:
            worst = (f"max {fmt(sm['max_n_w'])}, {sm['max_word']}" if sm["max_n_w"] is not None
                     else f"the screen's upper bound is at most {fmt(sm['screen_max'])}, "
                     f"{sm['screen_word']}")
            lines.append(f"**{name}** ({_scope(sm)}): no word above 0.5 ({worst})"
                         + ("." if sm["whole"] else "; a share of 1% above it would have been "
                            "missed with probability "
                            f"{miss_probability(0.01, sm['n_words']):.2g}."))
    doc.bullets(lines)
    grid = [f"{e:g}" for e in s.grid]
    doc.paragraph("The screen's upper bound on N_w over the checked words, per ε (one set of "
                  "draws; a maximum ≤ 0.5 means the N_w half of the criterion holds there on "
                  "every checked word, up to the screen's sampling error):")
    rows = []
    for t in results["tables"].values():
        sc = t["screen"]
        rows.append([f"`{t['vocabulary']['name']}`", t["n_words"],
                     *[f"{fmt(sc[e]['max'])} / {sc[e]['over']:,}" for e in grid]])
    doc.table(["table", "words", *[f"ε = {e}: max bound / words > 0.5" for e in grid]], rows)
    iso = []
    for key in sums:
        t = results["tables"][key]
        c = t["confirmed"]
        shares = [c["nn_share_above"][i] for i, x in enumerate(c["n_w"]) if x > PAPER["max_n_w"]]
        if shares:
            iso.append(f"`{t['vocabulary']['name']}`: {_pct(min(shares))}–{_pct(max(shares))} "
                       f"(median {_pct(float(np.median(shares)))})")
    doc.paragraph(
        "Why 100 words did not show it: the words above 0.5 are a fraction of a percent of the "
        "table, so a small sample rarely holds one. Most of them are among the words farthest "
        "from their nearest word, but not all: the share of checked words whose nearest word is "
        "farther than theirs is " + ("; ".join(iso) if iso else "– (none above 0.5)")
        + ". At ε = 5 the noise "
        "is far longer than a nearest-word distance (mean norm d/ε = 10 at 50d against a median "
        "nearest-word distance of about 3, section 2), so whether the input survives depends on "
        "its distances to many words, not to the nearest one. The criterion has to be checked "
        "on every word; `textdp calibrate` reports the worst case over the words it is given.")
    return sums


def _fig1_section(doc: Document, results: dict[str, Any], figs: dict[str, Path],
                  s: Settings) -> None:
    doc.heading("2. Fig. 1: distance to the k-th nearest word")
    doc.paragraph(
        "Paper (§4, Fig. 1): for 319,000 words common to GloVe and fastText, the distance from "
        "each word to its k nearest neighbours, k ∈ {1, 5, 10, 20, 50, 100, 200, 500, 1000}, "
        "summarised by the 5th, 20th, 50th, 80th and 95th percentiles (plotted only; no numbers "
        "are given), and \"the words in fastText have a smoother distance distribution with a "
        "wider spread across percentiles\". Here: the exact Euclidean distance to the k-th "
        "nearest other word, over the words checked in section 1 (every word of the default and "
        "300-d tables, a uniform sample of the 400,000). fastText vectors are not available "
        "offline, so the GloVe/fastText comparison cannot be made.")
    rows = []
    tables = results["tables"]
    for t in tables.values():
        for p in PERCENTILES:
            rows.append([f"`{t['vocabulary']['name']}`", t["fig1"]["queries"], f"p{p}",
                         *[fmt(x) for x in t["fig1"]["percentiles"][str(p)]]])
    doc.table(["table", "words", "percentile", *[f"k = {k:,}" for k in s.fig1_k]], rows)
    doc.image(figs["fig1"], "Distance to the k-th nearest word: percentiles over words, per "
                            "table")
    med = {k: t["fig1"]["percentiles"]["50"] for k, t in tables.items()}
    spread = {k: t["fig1"]["percentiles"]["95"][0] / t["fig1"]["percentiles"]["5"][0]
              for k, t in tables.items()}
    names = {k: t["vocabulary"]["name"] for k, t in tables.items()}
    doc.paragraph(
        "Computed: median distance to the nearest word "
        + ", ".join(f"{fmt(med[k][0])} on `{names[k]}`" for k in med)
        + f"; to the {s.fig1_k[-1]:,}th " + ", ".join(fmt(med[k][-1]) for k in med)
        + ". Spread of the nearest-word distance (p95 / p5): "
        + ", ".join(f"{spread[k]:.2f} on `{names[k]}`" for k in spread)
        + ". The full 400,000-word table is denser than the frequent-word default (rare tokens "
        "fill the space between common words), which is why the same ε changes more words "
        "there (word_mechanisms.md, section 1); the 300-d distances are larger, which is why "
        "300-d MVC needs a larger ε for the same N_w (mvc300.md, section 2).")


def page(results: dict[str, Any], figs: dict[str, Path], s: Settings) -> Document:
    doc = Document("MVC's worst case over the whole vocabulary (Fig. 2, §4.1) and Fig. 1's "
                   "distances")
    la, lb = results["load_after"], results["load_before"]
    doc.paragraph(
        f"Regenerate with `{harness.command(NAME)}` (or `textdp experiment {NAME}`; seed "
        f"{s.seed}; {results['seconds'] / 60:.1f} minutes on {results['machine']}; 1-min load "
        f"average {lb[0]:.1f} before and {la[0]:.1f} after, a machine shared with other jobs). "
        f"Raw numbers: `{NAME}/results.json`; `--from-results` redraws this page.", note=True)
    sums = _fig2_section(doc, results, s)
    _fig1_section(doc, results, figs, s)
    doc.heading("Settings")
    doc.pre(json.dumps(jsonable(asdict(s)), indent=1))
    doc.heading(harness.CLAIMS_HEADING)
    claims = []
    for key, sm in sums.items():
        t = results["tables"][key]
        claims.append([
            "at ε = 5 no word is returned more than 500 times or has fewer than 300 distinct "
            "outputs in 1,000 draws", "§4.1, Fig. 2 (GloVe 50d; words not stated)",
            f"`{t['vocabulary']['name']}`, {_scope(sm)}: {sm['over']} with N_w > 0.5 (max "
            f"{fmt(sm['max_n_w'])}, {sm['max_word']}; bound {fmt(sm['max_lower'])}), "
            f"{sm['under_s']} with S_w < 300 (min {fmt(sm['min_s_w'])})",
            "no: 300d (the paper's figure is 50d)" if key == "300d" else
            "yes (GloVe 6B 50d, 1,000 draws)", verdict(t)])
    claims.append([
        "distances to the k nearest words: percentiles over words (GloVe panel)", "§4, Fig. 1 "
        "(319,000 GloVe ∩ fastText words; plot only)", "table in section 2",
        "partly: GloVe 6B 50d (frequent words and all 400,000) and GloVe 840B 300d; no fastText",
        "computed; the paper gives no numbers to compare"])
    claims.append([
        "fastText has a smoother distance distribution with a wider spread than GloVe",
        "§4, Fig. 1", "–", "no: fastText vectors are not available offline",
        "not checkable offline"])
    doc.table(harness.CLAIMS_HEADER, claims)
    return doc


def _pct(x: float) -> str:
    return f"{100 * x:.2g}%" if x >= 0.0001 else "0%"


def _miss_screen(s: Settings) -> float:
    """Probability that a word whose N_w (and so its bound) is 0.5 is dropped by step 1 or 2."""
    from scipy import stats

    def below(keep: float, n: int) -> float:
        return float(stats.binom.cdf(int(np.ceil(keep * n - 1e-9)) - 1, n, 0.5))

    return below(s.screen_keep, s.screen_draws) + below(s.check_keep, s.check_draws)


def settings(quick: bool, seed: int) -> Settings:
    if not quick:
        return Settings(seed=seed)
    return Settings(seed=seed, neighbours=20, screen_draws=20, check_draws=40, confirm_draws=100,
                    sample_300d=200, sample_full=100, fig1_k=(1, 5, 10))


def render(results: dict[str, Any], out: Path) -> None:
    fig_dir = harness.figure_dir(out)
    figs = figures(results, fig_dir)
    doc = page(results, figs, harness.settings_from(Settings, results["settings"]))
    harness.write_text(out, doc.markdown(out.parent))
    say(f"wrote {out} and {len(figs)} figures in {fig_dir}")


def main(argv: list[str] | None = None) -> int:
    return harness.quick_main(NAME, __doc__, argv, run, settings, render)


if __name__ == "__main__":
    raise SystemExit(main())
