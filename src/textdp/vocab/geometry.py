"""Embedding geometry: how far each word is from its k-th nearest neighbour (MVC, Fig. 1).

Feyisetan et al. (WSDM 2020, "Privacy- and Utility-Preserving Textual Analysis via Calibrated
Multivariate Perturbations") plot, for k = 1 … 1000, the distribution over vocabulary words of the
Euclidean distance to the k-th nearest other word. A metric-DP mechanism that is ε-DP per unit of
distance makes a word and its k-th neighbour (ε · d_k)-indistinguishable, so these distances say
what an ε means on a given embedding: ε · d_k ≈ 1 is where the k nearest words start to blur.

The search is exact (float64-certified blocked GEMM, :mod:`textdp.neighbors`); a word's own row is
excluded, so a word with an identical vector elsewhere has d_1 = 0.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from textdp.vocab.base import Vocabulary

__all__ = ["KS", "PERCENTILES", "NeighborDistances", "neighbor_distances", "plot_neighbor_distances"]

#: The neighbour ranks of MVC's Fig. 1.
KS = (1, 5, 10, 20, 50, 100, 200, 500, 1000)
PERCENTILES = (5.0, 20.0, 50.0, 80.0, 95.0)
_CHUNK = 2048  # queries per engine call: a (2048, 1000) int64 + float64 result is 31 MiB


@dataclass(frozen=True)
class NeighborDistances:
    """Percentiles (over words) of the distance to the k-th nearest other word.

    Attributes:
        table: (len(ks), len(percentiles)) float64; row i holds the percentiles of d_{ks[i]}.
        mean: (len(ks),) mean of d_k over the words.
        n_words: how many words were queried (all, or a uniform sample of ``sample``).
    """

    vocabulary: dict
    ks: tuple[int, ...]
    percentiles: tuple[float, ...]
    table: np.ndarray
    mean: np.ndarray
    n_words: int
    sample: int | None
    seconds: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"vocabulary": self.vocabulary, "ks": list(self.ks),
                "percentiles": list(self.percentiles),
                "distances": {str(k): {f"p{p:g}": float(v) for p, v in zip(self.percentiles, row,
                                                                           strict=True)}
                              | {"mean": float(m)}
                              for k, row, m in zip(self.ks, self.table, self.mean, strict=True)},
                "n_words": self.n_words, "sample": self.sample, "seconds": round(self.seconds, 2),
                "notes": self.notes}

    def markdown(self) -> str:
        """The table in Markdown: one row per k, one column per percentile, then the mean."""
        head = "| k | " + " | ".join(f"p{p:g}" for p in self.percentiles) + " | mean |"
        rule = "|---:|" + "---:|" * (len(self.percentiles) + 1)
        rows = [f"| {k} | " + " | ".join(f"{v:.3f}" for v in row) + f" | {m:.3f} |"
                for k, row, m in zip(self.ks, self.table, self.mean, strict=True)]
        return "\n".join([head, rule, *rows])


def _kth_distances(vectors: np.ndarray, rows: np.ndarray, k: int) -> Iterator[np.ndarray]:
    """Per chunk of ``rows``: the sorted distances to their k nearest other rows (exact).

    The one place that calls the neighbour engine, so that a change of its API touches only this.
    """
    from textdp.neighbors import NearestNeighbors

    engine = NearestNeighbors(vectors)
    for start in range(0, rows.size, _CHUNK):
        chunk = rows[start:start + _CHUNK]
        _, distances = engine.kneighbors(vectors[chunk], k, exclude=chunk)
        yield distances


def neighbor_distances(vocabulary: Vocabulary, ks: Sequence[int] = KS, *,
                       percentiles: Sequence[float] = PERCENTILES, sample: int | None = None,
                       rng: np.random.Generator | None = None) -> NeighborDistances:
    """The distance from each word to its k-th nearest other word, summarised by percentiles.

    Args:
        vocabulary: the words and vectors.
        ks: neighbour ranks; those ≥ |V| are dropped (with a note).
        percentiles: in [0, 100], over the queried words.
        sample: query only this many words, drawn uniformly without replacement (their
            neighbours are still searched among all words); None queries every word.
        rng: the generator of the sample (default: OS entropy).
    """
    n = len(vocabulary)
    ks_all = sorted({int(k) for k in ks})
    if not ks_all or ks_all[0] < 1:
        raise ValueError(f"ks must be positive integers, got {list(ks)}")
    if any(not 0 <= p <= 100 for p in percentiles):
        raise ValueError(f"percentiles must lie in [0, 100], got {list(percentiles)}")
    kept = [k for k in ks_all if k <= n - 1]
    notes = [f"k = {', '.join(map(str, sorted(set(ks_all) - set(kept))))} dropped: the vocabulary "
             f"has {n} words"] if len(kept) < len(ks_all) else []
    if not kept:
        raise ValueError(f"every k exceeds the {n - 1} other words of the vocabulary")
    if sample is not None and not 1 <= sample:
        raise ValueError(f"sample must be a positive integer, got {sample}")
    if sample is None or sample >= n:
        rows, sample = np.arange(n), None
    else:
        from textdp import _random

        rng = rng if rng is not None else _random.generator()
        rows = np.sort(rng.choice(n, size=sample, replace=False))
    t0 = time.perf_counter()
    columns = np.array(kept) - 1
    kth = np.concatenate([d[:, columns] for d in _kth_distances(vocabulary.vectors, rows,
                                                                 kept[-1])])
    table = np.percentile(kth, list(percentiles), axis=0).T
    return NeighborDistances(vocabulary.describe(), tuple(kept), tuple(float(p) for p in percentiles),
                             table, kth.mean(axis=0), int(rows.size), sample,
                             time.perf_counter() - t0, notes)


def plot_neighbor_distances(result: NeighborDistances, path: str | Path) -> None:
    """A PNG like MVC's Fig. 1: d_k against k (log scale), the median and the percentile bands."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    ks = np.array(result.ks)
    t = result.table
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    try:
        pairs = [(i, len(result.percentiles) - 1 - i) for i in range(len(result.percentiles) // 2)]
        for depth, (lo, hi) in enumerate(pairs):
            ax.fill_between(ks, t[:, lo], t[:, hi], color="tab:blue", alpha=0.15 + 0.15 * depth,
                            linewidth=0, label=f"p{result.percentiles[lo]:g}–"
                                                 f"p{result.percentiles[hi]:g}")
        if len(result.percentiles) % 2:
            mid = len(result.percentiles) // 2
            ax.plot(ks, t[:, mid], color="tab:blue", marker="o", markersize=3,
                    label=f"p{result.percentiles[mid]:g}")
        ax.set_xscale("log")
        ax.set_xlabel("k (neighbour rank)")
        ax.set_ylabel("Euclidean distance to the k-th nearest word")
        voc = result.vocabulary
        words = f"{result.n_words:,} sampled words" if result.sample else f"all {voc['size']:,} words"
        ax.set_title(f"{voc['name']} ({voc['dimension']}-d): {words}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
