"""MVC's privacy audit (Feyisetan et al., WSDM 2020, §6, Tables 3-4): a provenance auditor.

    python -m experiments.provenance        # → docs/results/provenance.md

In the manner of Song & Shmatikov (KDD 2019, "Auditing data provenance in text-generation
models"): a word-level text model (bigram counts with unigram back-off) is trained on the texts of
100 *member* users; the auditor trains *shadow* models of the same kind on disjoint users, turns
each user's texts into features — the histogram of the ranks the model gives each of the user's
words after its predecessor — and fits a binary classifier (member / non-member) on the shadow
users. It is then applied to the target model's 100 members and 100 non-members (their original
texts). MVC's defence: the members' texts are privatised with MVC before the target model is
trained ("the original queries" is the undefended baseline). Precision, recall, accuracy and AUC
per ε, over several random splits of the users. Users: the authors of Debian's fortunes with at
least three quotes (offline; AOL's query logs are not).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiments import _harness as harness
from textdp.evaluation._common import jsonable
from textdp.evaluation.render import Document, fmt

NAME = "provenance"
V300 = "glove-840b-300d"
#: MVC Table 4 (ε for GloVe 300d): the auditor's scores on MVC-privatised queries.
PAPER_EPS = (6, 12, 17, 23, 29, 35, 41, 47, 52)
PAPER_TABLE4 = {"precision": (0.00, 0.00, 0.00, 0.00, 0.67, 0.90, 0.93, 1.00, 1.00),
                "recall": (0.00, 0.00, 0.00, 0.00, 0.02, 0.09, 0.14, 0.30, 0.50),
                "accuracy": (0.50, 0.50, 0.50, 0.50, 0.51, 0.55, 0.57, 0.65, 0.75),
                "auc": (0.06, 0.04, 0.11, 0.36, 0.61, 0.85, 0.88, 0.93, 0.98)}
METRICS = ("precision", "recall", "accuracy", "auc")
#: log-rank bins of the rank features: 1, 2-3, 4-10, 11-100, 101-1000, > 1000, unseen word.
BINS = (1, 3, 10, 100, 1000)
WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


@dataclass
class Settings:
    seed: int = 0
    members: int = 100
    splits: int = 3
    min_quotes: int = 3
    epsilons: tuple[float, ...] = PAPER_EPS


say = harness.logger(NAME)


def tokens(text: str) -> list[str]:
    return WORD.findall(text.lower())


class BigramModel:
    """Bigram counts with unigram back-off: the rank of word b after word a is its place among
    a's observed successors (by count), and after those, among all words by unigram count."""

    def __init__(self, texts: list[str]) -> None:
        self.uni: Counter[str] = Counter()
        self.bi: dict[str, Counter[str]] = defaultdict(Counter)
        for t in texts:
            ws = ["<s>", *tokens(t)]
            self.uni.update(ws[1:])
            for a, b in zip(ws, ws[1:], strict=False):
                self.bi[a][b] += 1
        counts = np.array(sorted(self.uni.values(), reverse=True))
        self._uni_sorted = -counts  # ascending, for searchsorted

    def _uni_rank(self, b: str) -> int:
        c = self.uni.get(b, 0)
        return int(np.searchsorted(self._uni_sorted, -c, side="left")) + 1

    def rank(self, a: str, b: str) -> int | None:
        """1 = the model's first guess; None when b was never seen."""
        if b not in self.uni:
            return None
        succ = self.bi.get(a)
        if succ and b in succ:
            c = succ[b]
            return 1 + sum(1 for v in succ.values() if v > c)
        return (len(succ) if succ else 0) + self._uni_rank(b)


def features(model: BigramModel, texts: list[str]) -> np.ndarray:
    """The user's rank histogram: the share of their bigrams in each log-rank bin, unseen last."""
    h = np.zeros(len(BINS) + 2)
    for t in texts:
        ws = ["<s>", *tokens(t)]
        for a, b in zip(ws, ws[1:], strict=False):
            r = model.rank(a, b)
            h[len(BINS) + 1 if r is None else int(np.searchsorted(BINS, r, side="left"))] += 1
    return h / max(h.sum(), 1.0)


def users(min_quotes: int) -> dict[str, list[str]]:
    from textdp.datasets.fortunes import load_fortunes

    by: dict[str, list[str]] = defaultdict(list)
    for e in load_fortunes():
        if e.author:
            by[e.author].append(e.text)
    return {a: qs for a, qs in sorted(by.items()) if len(qs) >= min_quotes}


def _scores(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import accuracy_score, precision_score, recall_score, roc_auc_score

    pred = (p >= 0.5).astype(int)
    return {"precision": float(precision_score(y, pred, zero_division=0)),
            "recall": float(recall_score(y, pred, zero_division=0)),
            "accuracy": float(accuracy_score(y, pred)), "auc": float(roc_auc_score(y, p))}


def run(s: Settings) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from textdp.evaluation import utility
    from textdp.mechanisms import create
    from textdp.vocab import load

    t0 = time.perf_counter()
    load0 = os.getloadavg()
    pool = users(s.min_quotes)
    names = list(pool)
    vocab = load(V300)
    out: dict[str, Any] = {"settings": asdict(s), "machine": harness.machine(),
                           "load_before": list(load0), "users": len(names),
                           "quotes": sum(len(v) for v in pool.values()), "splits": []}
    for k in range(s.splits):
        g = harness.rng(s.seed, 1, k)
        order = [names[i] for i in g.permutation(len(names))]
        members, outsiders = order[:s.members], order[s.members:2 * s.members]
        shadow = order[2 * s.members:]
        half = len(shadow) // 2
        # Two shadow models, each on half of its users; the other half are its non-members.
        X, y = [], []
        for part in (shadow[:half], shadow[half:]):
            inside, outside = part[:len(part) // 2], part[len(part) // 2:]
            model = BigramModel([q for u in inside for q in pool[u]])
            X += [features(model, pool[u]) for u in inside + outside]
            y += [1] * len(inside) + [0] * len(outside)
        auditor = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        auditor.fit(np.array(X), np.array(y))
        y_target = np.array([1] * len(members) + [0] * len(outsiders))
        member_texts = [q for u in members for q in pool[u]]
        split: dict[str, Any] = {"shadow_users": len(shadow), "rows": []}
        for e_i, eps in enumerate((None, *s.epsilons)):
            t1 = time.perf_counter()
            if eps is None:
                trained, unchanged = member_texts, 1.0
            else:
                trained = utility.privatize_texts(member_texts, create("mvc", vocab, epsilon=eps),
                                                  harness.rng(s.seed, 2, k, e_i))
                unchanged = _unchanged(member_texts, trained, vocab)
            model = BigramModel(trained)
            feats = np.array([features(model, pool[u]) for u in members + outsiders])
            scores = _scores(y_target, auditor.predict_proba(feats)[:, 1])
            split["rows"].append({"epsilon": eps, "unchanged": unchanged, **scores})
            say(f"split {k} ε = {eps}: unchanged {unchanged:.3f}, AUC {scores['auc']:.3f} "
                f"({time.perf_counter() - t1:.0f} s)")
        out["splits"].append(split)
    out["load_after"] = list(os.getloadavg())
    out["seconds"] = time.perf_counter() - t0
    return jsonable(out)


def _unchanged(clean: list[str], private: list[str], vocab: Any) -> float:
    """Of the in-vocabulary words MVC privatised, the fraction returned unchanged."""
    same = total = 0
    for a, b in zip(clean, private, strict=True):
        ta, tb = a.split(), b.split()
        if len(ta) != len(tb):
            continue
        for x, z in zip(ta, tb, strict=True):
            w = x.strip(".,;:!?\"'()").lower()
            if w and w in vocab:
                total += 1
                same += x == z
    return same / total if total else float("nan")


def figures(results: dict[str, Any], fig_dir: Path) -> dict[str, Path]:
    """The auditor's AUC against ε, ours (mean ± sd over splits) and the paper's Table 4."""
    from textdp.evaluation.plots import _plt

    plt = _plt()
    fig_dir.mkdir(parents=True, exist_ok=True)
    rows = list(zip(*[r["rows"][1:] for r in results["splits"]], strict=True))
    eps = [cells[0]["epsilon"] for cells in rows]
    auc = np.array([[c["auc"] for c in cells] for cells in rows])
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.errorbar(eps, auc.mean(axis=1), yerr=auc.std(axis=1, ddof=1) if auc.shape[1] > 1 else None,
                marker="o", capsize=3, label="ours (fortunes authors, bigram model)")
    ax.plot(PAPER_EPS, PAPER_TABLE4["auc"], marker="s", linestyle="--", label="paper, Table 4")
    base = np.mean([r["rows"][0]["auc"] for r in results["splits"]])
    ax.axhline(base, color="grey", linewidth=1, label="ours, original texts")
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("ε (MVC, 300-d GloVe)")
    ax.set_ylabel("auditor AUC (lower is more private)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = fig_dir / "auc.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"auc": path}


def _ms(xs: list[float]) -> str:
    a = np.asarray(xs, dtype=float)
    return f"{a.mean():.2f} ± {a.std(ddof=1):.2f}" if a.size > 1 else f"{a.mean():.2f}"


def page(results: dict[str, Any], s: Settings, figs: dict[str, Path] | None = None) -> Document:
    doc = Document("MVC's privacy audit (Tables 3–4): a provenance auditor on fortunes authors")
    la, lb = results["load_after"], results["load_before"]
    doc.paragraph(
        f"Regenerate with `{harness.command(NAME)}` (or `textdp experiment {NAME}`; seed "
        f"{s.seed}; {results['seconds'] / 60:.1f} minutes on {results['machine']}; 1-min load "
        f"average {lb[0]:.1f} before and {la[0]:.1f} after). Raw numbers: "
        f"`{NAME}/results.json`; `--from-results` redraws this page.", note=True)
    doc.paragraph(
        "Paper: Feyisetan et al. (WSDM 2020) §6: a privacy auditor after Song & Shmatikov is "
        "trained against models built on AOL search queries; \"for each evaluation baseline, we "
        "dropped an existing user, then created a new user and injected the scrambled queries\"; "
        "Table 4 gives precision, recall, accuracy and AUC of the auditor for MVC on 300-d GloVe "
        "at ε = 6 … 52 (AUC 0.06 at ε = 6 to 0.98 at ε = 52), and §6 says ε = 23 is \"better "
        "than chance\" on every metric. Here: users are the "
        f"{results['users']} authors of Debian's fortunes with at least {s.min_quotes} quotes "
        f"({results['quotes']:,} quotes); per split, {s.members} members train the target "
        f"model (a bigram model with unigram back-off), {s.members} others are the non-members, "
        "and the rest train two shadow models (half members, half not) on which the auditor "
        "(logistic regression on each user's rank histogram: the shares of the user's words "
        f"ranked 1, 2–3, 4–10, 11–100, 101–1000, beyond, or unseen) is fitted. MVC privatises "
        f"the members' quotes (on `{V300}`) before the target model is trained; the auditor "
        "reads the users' original quotes. 'Unchanged' is the measured fraction of privatised "
        f"words MVC returned as they were. {s.splits} random splits of the users: mean ± sd.")
    doc.paragraph(
        "What differs from AOL query logs: fortunes authors have a handful of quotes each "
        "(a few sentences of edited prose), AOL users hundreds of short queries; the text model "
        "is a bigram counter, not the paper's (unstated) query model; the shadow models are "
        "trained on clean text; the paper's per-baseline 'dropped user / injected queries' "
        "protocol is replaced by whole-model membership of 100 users.")
    rows = []
    n_rows = len(results["splits"][0]["rows"])
    for i in range(n_rows):
        cells = [r["rows"][i] for r in results["splits"]]
        eps = cells[0]["epsilon"]
        paper = ([PAPER_TABLE4[m][PAPER_EPS.index(int(eps))] for m in METRICS]
                 if eps is not None and int(eps) in PAPER_EPS else [None] * 4)
        rows.append(["original texts" if eps is None else fmt(eps),
                     _ms([c["unchanged"] for c in cells])]
                    + [_ms([c[m] for c in cells]) for m in METRICS]
                    + [f"{x:.2f}" if x is not None else "–" for x in paper])
    doc.table(["ε (MVC)", "unchanged", "precision", "recall", "accuracy", "AUC",
               "paper precision", "paper recall", "paper accuracy", "paper AUC"], rows)
    if figs and "auc" in figs:
        doc.image(figs["auc"], "Auditor AUC against ε: ours (mean ± sd over splits) and the "
                               "paper's Table 4")
    base = [r["rows"][0]["auc"] for r in results["splits"]]
    at = {}
    for i in range(1, n_rows):
        at[results["splits"][0]["rows"][i]["epsilon"]] = float(np.mean(
            [r["rows"][i]["auc"] for r in results["splits"]]))
    near = [e for e, a in at.items() if a < 0.6]
    kept = {results["splits"][0]["rows"][i]["epsilon"]: float(np.mean(
        [r["rows"][i]["unchanged"] for r in results["splits"]])) for i in range(1, n_rows)}
    matched = min(kept, key=lambda e: abs(kept[e] - 0.97))
    rising = all(b >= a - 0.02 for a, b in zip(list(at.values()), list(at.values())[1:],
                                                strict=False))
    doc.paragraph(
        f"Computed: on the original texts the auditor reaches AUC {_ms(base)}; with MVC the AUC "
        "is " + ", ".join(f"{a:.2f} at ε = {e:g}" for e, a in at.items())
        + (f"; below 0.6 only at ε = {', '.join(f'{e:g}' for e in near)}" if near else "")
        + f". Matched by words unchanged rather than by ε: the paper's ε = 23 leaves about 97% "
        "of randomly drawn words unchanged on the 33,860-word 300-d table (mvc300.md, section "
        f"1: N_w 0.956 at ε = 20, 0.992 at ε = 30); on these quotes' words ε = 23 leaves "
        f"{kept.get(23.0, float('nan')):.1%}, and the ε nearest 97% is ε = {matched:g} "
        f"({kept[matched]:.1%} unchanged), where the AUC is {at[matched]:.2f} (paper at ε = 23: "
        "0.36). Verdict: the "
        + ("direction of Table 4 is reproduced (the AUC rises with ε towards the undefended "
           "value), " if rising else "AUC does not rise steadily with ε on this grid, ")
        + "but not its levels: this auditor keeps its full power while MVC leaves most words "
        "unchanged, and loses it only where MVC changes most words; the paper's AUC far below "
        "0.5 at small ε (0.04–0.11, an auditor that is reliably wrong) is not privacy: negated, "
        "its score orders 89–96% of member/non-member pairs correctly, as informative as an AUC "
        "of 0.89–0.96 ([differences.md](differences.md), section 4). Not like for like (users, "
        "model, "
        "auditor features), so only the shape is compared.")
    doc.heading("Settings")
    doc.pre(json.dumps(jsonable(asdict(s)), indent=1))
    e23 = at.get(23.0)
    full = next((e for e, a in at.items() if a >= float(np.mean(base)) - 0.02), None)
    doc.heading(harness.CLAIMS_HEADING)
    doc.table(harness.CLAIMS_HEADER, [
        ["the provenance auditor's AUC rises from 0.06 at ε = 6 to 0.98 at ε = 52", "Table 4",
         ", ".join(f"ε = {e:g}: {a:.2f}" for e, a in at.items()) + f" (original texts: "
         f"{_ms(base)})", "no: fortunes authors, a bigram model, rank-histogram auditor",
         ("rises with ε, as in the paper, but reaches the undefended AUC "
          + (f"from ε = {full:g}" if full is not None else "at no ε of the grid"))
         if rising else "not monotone in ε on this grid"],
        ["at ε = 23 every metric is better than chance for privacy", "§6, Table 4 (AUC 0.36)",
         (f"AUC {e23:.2f} at ε = 23; {at[matched]:.2f} at ε = {matched:g}, the ε with "
          f"{kept[matched]:.0%} unchanged") if e23 is not None else "–", "as above",
         "consistent" if e23 is not None and at[matched] <= 0.55 else "not reproduced here"
         if e23 is not None else "–"]])
    return doc


def settings(quick: bool, seed: int) -> Settings:
    if not quick:
        return Settings(seed=seed)
    return Settings(seed=seed, members=40, splits=2, epsilons=(6, 52))


def _settings_from(d: dict[str, Any]) -> Settings:
    return harness.settings_from(Settings, d)


def render(results: dict[str, Any], out: Path) -> None:
    figs = figures(results, harness.figure_dir(out))
    doc = page(results, _settings_from(results["settings"]), figs)
    harness.write_text(out, doc.markdown(out.parent))
    say(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    return harness.quick_main(NAME, __doc__, argv, run, settings, render)


if __name__ == "__main__":
    raise SystemExit(main())
