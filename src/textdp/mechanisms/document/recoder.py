"""The cluster-preserving recoder H of DeepCandidate (Meehan, Mrini & Chaudhuri, ACL 2022, §4.3).

H: R^d → R^d is an MLP on top of the frozen sentence encoder G, so that G' = H ∘ G. It is trained
on *public* documents only: k-means finds n_c clusters (n_c = 50 in the paper) among the public
document embeddings g(x) = mean_l G(s_l); then H and a linear layer L are trained jointly, with
Adam and the cross-entropy loss, so that L(mean_l H(G(s_l))) predicts the document's cluster
(Figure 3; App. A.3). Documents of one cluster then embed close together and clusters far apart,
which makes deep candidates both likely and representative.

Training needs torch (optional extra ``sbert``) and scikit-learn (k-means); applying a trained
recoder does not: :class:`Recoder` holds the weights as numpy arrays and runs the forward pass in
numpy, so the mechanism and its tests need neither. Training randomness (k-means initialisation,
torch initialisation and batch order) is seeded from the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from textdp._checks import check_rng
from textdp._guide import MissingExtra, install_hint
from textdp.mechanisms.document._files import save_npz

__all__ = ["Recoder", "RecoderTraining", "train_recoder"]

_FORMAT = "textdp.recoder/1"


class Recoder:
    """A trained H: ReLU MLP with weights ``[(W_1, b_1), …, (W_L, b_L)]``, W_i of shape (in, out).

    ``H(x) = W_L^T relu(… relu(W_1^T x + b_1) …) + b_L``, no activation after the last layer
    (the paper's MLP_768 with output dimension equal to its input dimension).
    """

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], *,
                 metadata: dict[str, Any] | None = None) -> None:
        if not layers:
            raise ValueError("a recoder needs at least one layer")
        checked = []
        prev = None
        for i, (w, b) in enumerate(layers):
            w = np.array(w, dtype=np.float64)
            b = np.array(b, dtype=np.float64)
            if w.ndim != 2 or b.shape != (w.shape[1],):
                raise ValueError(f"layer {i}: weight {w.shape} and bias {b.shape} do not match")
            if prev is not None and w.shape[0] != prev:
                raise ValueError(f"layer {i} takes {w.shape[0]} inputs, layer {i - 1} gives {prev}")
            if not (np.isfinite(w).all() and np.isfinite(b).all()):
                raise ValueError(f"layer {i} has a non-finite weight")
            w.setflags(write=False)
            b.setflags(write=False)
            checked.append((w, b))
            prev = w.shape[1]
        self._layers = tuple(checked)
        self.metadata = dict(metadata or {})
        h = hashlib.sha256()
        for w, b in self._layers:
            for a in (w, b):
                h.update(repr(a.shape).encode())
                h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
        self._fingerprint = h.hexdigest()

    @property
    def layers(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        return self._layers

    @property
    def input_dim(self) -> int:
        return self._layers[0][0].shape[0]

    @property
    def output_dim(self) -> int:
        return self._layers[-1][0].shape[1]

    @property
    def fingerprint(self) -> str:
        """sha256 of every weight (shape and float64 bytes)."""
        return self._fingerprint

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """H applied to each row of ``x`` (n, d) → (n, d')."""
        h = np.asarray(x, dtype=np.float64)
        if h.ndim != 2 or h.shape[1] != self.input_dim:
            raise ValueError(f"the recoder takes (n, {self.input_dim}) arrays, got {h.shape}")
        last = len(self._layers) - 1
        for i, (w, b) in enumerate(self._layers):
            h = h @ w + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def save(self, path: str | os.PathLike) -> Path:
        arrays = {}
        for i, (w, b) in enumerate(self._layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        meta = {"format": _FORMAT, "n_layers": len(self._layers), "fingerprint": self.fingerprint,
                "metadata": self.metadata}
        return save_npz(path, meta, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Recoder:
        """Read a file written by :meth:`save`; verify its fingerprint."""
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                layers = [(z[f"w{i}"], z[f"b{i}"]) for i in range(int(meta["n_layers"]))]
        except FileNotFoundError:
            raise
        except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile,
                zlib.error) as exc:  # TypeError: a .npy array is no archive
            raise ValueError(f"{path}: not a textdp recoder file ({exc})") from None
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a textdp recoder file")
        out = cls(layers, metadata=meta.get("metadata"))
        if out.fingerprint != meta.get("fingerprint"):
            raise ValueError(f"{path}: weights do not match the fingerprint (corrupt or edited)")
        return out

    def __repr__(self) -> str:
        dims = [self.input_dim] + [w.shape[1] for w, _ in self._layers]
        return f"Recoder({'→'.join(map(str, dims))}, fingerprint={self._fingerprint[:12]})"


@dataclass
class RecoderTraining:
    """The result of :func:`train_recoder`: the recoder and what training saw."""

    recoder: Recoder
    clusters: np.ndarray                 # k-means cluster of each public document
    losses: list[float] = field(default_factory=list)   # mean cross-entropy per epoch
    accuracy: float = float("nan")       # final training accuracy of L on the clusters


def train_recoder(sentence_embeddings: Sequence[np.ndarray], *, n_clusters: int = 50,
                  hidden_layers: Sequence[int] = (384, 384, 384), epochs: int = 40,
                  batch_size: int = 32, learning_rate: float = 1e-3, weight_decay: float = 0.0,
                  rng: np.random.Generator | None = None, threads: int | None = None,
                  ) -> RecoderTraining:
    """Train the cluster-preserving recoder H on public documents (Meehan et al. 2022, §4.3).

    Args:
        sentence_embeddings: one (k_i, d) array of G(s) per *public* document.
        n_clusters: n_c of k-means on the public document embeddings (paper: 50); lowered to
            the number of documents when there are fewer.
        hidden_layers: widths of H's hidden layers (paper: a 4-layer MLP, i.e. three hidden
            layers); the output width is d.
        epochs, batch_size, learning_rate, weight_decay: Adam on the cross-entropy of
            L(mean_l H(s_l)) against the document's cluster.
        rng: seeds k-means, torch's initialisation and the batch order.
        threads: torch intra-op threads (None leaves torch's default).

    Returns:
        :class:`RecoderTraining` with a numpy :class:`Recoder`.
    """
    torch = _training_modules()
    rng = check_rng(rng)
    docs = [np.asarray(s, dtype=np.float32) for s in sentence_embeddings]
    if len(docs) < 2:
        raise ValueError("training the recoder needs at least 2 public documents")
    if any(d.ndim != 2 or d.shape[0] == 0 for d in docs):
        raise ValueError("every public document needs a non-empty (k, d) array of sentences")
    dim = docs[0].shape[1]
    n_c = int(min(n_clusters, len(docs)))
    clusters = _clusters(docs, n_c, rng)
    if threads is not None:
        torch.set_num_threads(int(threads))
    gen = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
    widths = [dim, *[int(h) for h in hidden_layers], dim]
    linears = [_linear(torch, a, b, gen) for a, b in zip(widths[:-1], widths[1:], strict=True)]
    head = _linear(torch, dim, n_c, gen)
    losses = _fit(torch, linears, head, docs, clusters, rng, epochs=int(epochs),
                  batch_size=batch_size, learning_rate=learning_rate, weight_decay=weight_decay)
    layers = [(lin.weight.detach().numpy().T.astype(np.float64),
               lin.bias.detach().numpy().astype(np.float64)) for lin in linears]
    out = Recoder(layers, metadata={"n_clusters": n_c, "hidden_layers": list(widths[1:-1]),
                                    "epochs": int(epochs), "learning_rate": learning_rate,
                                    "documents": len(docs),
                                    "reference": "Meehan, Mrini & Chaudhuri, ACL 2022, §4.3"})
    with torch.no_grad():
        pooled = np.vstack([out(d).mean(axis=0) for d in docs]).astype(np.float32)
        pred = head(torch.from_numpy(pooled)).argmax(dim=1).numpy()
    return RecoderTraining(out, clusters, losses, float(np.mean(pred == clusters)))


def _training_modules() -> Any:
    """torch (and a check that scikit-learn is there too), with an install hint if not."""
    try:
        import sklearn.cluster  # noqa: F401
        import torch
    except ImportError as exc:  # pragma: no cover - depends on optional extras
        raise MissingExtra(f"{install_hint('sbert', 'training the recoder (torch)')}: {exc}") from None
    return torch


def _clusters(docs: list[np.ndarray], n_c: int, rng: np.random.Generator) -> np.ndarray:
    """k-means clusters of the public document embeddings g(x) = mean_l G(s_l) (§4.3)."""
    from sklearn.cluster import KMeans

    means = np.vstack([d.mean(axis=0) for d in docs])
    kmeans = KMeans(n_clusters=n_c, n_init=10, random_state=int(rng.integers(2**31 - 1)))
    return kmeans.fit_predict(means)


def _linear(torch: Any, a: int, b: int, gen: Any) -> Any:
    """A linear layer a → b with torch's default initialisation, drawn from our generator."""
    layer = torch.nn.Linear(a, b)
    bound = 1.0 / np.sqrt(a)
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=gen)
        layer.bias.uniform_(-bound, bound, generator=gen)
    return layer


def _fit(torch: Any, linears: list[Any], head: Any, docs: list[np.ndarray], clusters: np.ndarray,
         rng: np.random.Generator, *, epochs: int, batch_size: int, learning_rate: float,
         weight_decay: float) -> list[float]:
    """Adam on the cross-entropy of L(mean_l H(s_l)) against each document's cluster (Fig. 3);
    returns the mean loss of every epoch."""
    modules: list[Any] = []
    for i, layer in enumerate(linears):
        modules.append(layer)
        if i < len(linears) - 1:
            modules.append(torch.nn.ReLU())
    recoder = torch.nn.Sequential(*modules)
    opt = torch.optim.Adam(list(recoder.parameters()) + list(head.parameters()), lr=learning_rate,
                           weight_decay=weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss()
    dim = docs[0].shape[1]
    flat = torch.from_numpy(np.vstack(docs))
    counts = np.array([d.shape[0] for d in docs])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    labels = torch.from_numpy(clusters.astype(np.int64))
    losses = []
    for _ in range(epochs):
        order = rng.permutation(len(docs))
        total = 0.0
        for b0 in range(0, len(order), batch_size):
            batch = order[b0:b0 + batch_size]
            rows = np.concatenate([np.arange(starts[i], starts[i] + counts[i]) for i in batch])
            seg = torch.from_numpy(np.repeat(np.arange(len(batch)), counts[batch]))
            h = recoder(flat[torch.from_numpy(rows)])
            pooled = torch.zeros(len(batch), dim).index_add_(0, seg, h)
            pooled = pooled / torch.from_numpy(counts[batch].astype(np.float32))[:, None]
            loss = loss_fn(head(pooled), labels[torch.from_numpy(batch)])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(batch)
        losses.append(total / len(docs))
    return losses
