"""The scikit-learn vector front: :class:`PrivEmbTransformer`, (n, d) arrays → private vectors.

``fit`` builds the embedding mechanism (PrivEmb, Feyisetan & Kasiviswanathan 2021, Algorithm 1;
or the Laplace-vector baseline M1); each ``transform`` runs a
:class:`textdp.spec.VectorSpec` over the rows (:class:`textdp.runner.Vectors`) through
:func:`textdp.runner.run_release`, with :func:`release_vectors` as the engine.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from textdp.ledger import as_ledger
from textdp.mechanisms.embedding import DEFAULT_PROJECTION_SEED, LaplaceVector, PrivEmb
from textdp.mechanisms.embedding.release import CHUNK_ROWS, release_vectors
from textdp.privacy.report import embedding_report
from textdp.runner import Outcome, Vectors, run_release
from textdp.spec import VectorSpec

__all__ = ["PrivEmbTransformer"]


class PrivEmbTransformer(TransformerMixin, BaseEstimator):
    """Release private vectors: an (n, d) array in, an (n, k) float64 array out.

    Args:
        mechanism: ``"privemb"`` (random projection + noise; k = m) or ``"laplace-vector"``
            (x + noise; k = d).
        epsilon: ε per unit of Euclidean distance between input vectors.
        delta, beta, gaussian_width, domain_size, projection_seed, calibration, strict: PrivEmb's
            parameters (:class:`textdp.mechanisms.embedding.PrivEmb`); ``delta`` and ``beta``
            are required for PrivEmb and ignored by the Laplace baseline.
        snap: None, an integer k (outputs on the grid 2^k) or ``"auto"``.
        seed: None (fresh secure noise per transform) or an integer (rows chunk c ↦ (seed, c),
            :data:`~textdp.mechanisms.embedding.release.CHUNK_ROWS` rows a chunk; flagged).
        ledger, ledger_policy, budget: a privacy ledger (a path) that records every transform
            ((ε, δ) add up per input; docs/accounting.md).

    ``fit`` records ``n_features_in_`` and builds ``mechanism_`` (PrivEmb's projection depends on
    d only, never on the data). Every ``transform`` is a new release spending ε on its rows;
    ``report_`` holds the last one's report. The projection audit of ``textdp embed`` is not run.
    """

    def __init__(self, mechanism: str = "privemb", epsilon: float = 1.0, *,
                 delta: float | None = None, beta: float | None = None,
                 gaussian_width: float | None = None, domain_size: int | None = None,
                 projection_seed: int = DEFAULT_PROJECTION_SEED, calibration: str = "paper",
                 strict: bool = False, snap: int | str | None = None,
                 seed: int | None = None, ledger: Any = None, ledger_policy: str = "warn",
                 budget: float | None = None) -> None:
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.beta = beta
        self.gaussian_width = gaussian_width
        self.domain_size = domain_size
        self.projection_seed = projection_seed
        self.calibration = calibration
        self.strict = strict
        self.snap = snap
        self.seed = seed
        self.ledger = ledger
        self.ledger_policy = ledger_policy
        self.budget = budget

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.seed is None
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _build(self, dim: int) -> Any:
        if self.mechanism == "laplace-vector":
            return LaplaceVector(epsilon=self.epsilon, snap=self.snap)
        if self.mechanism != "privemb":
            raise ValueError(f"mechanism must be 'privemb' or 'laplace-vector', got {self.mechanism!r}")
        missing = [k for k in ("delta", "beta") if getattr(self, k) is None]
        if missing:
            raise ValueError(f"PrivEmb needs {' and '.join(missing)}")
        return PrivEmb(epsilon=self.epsilon, delta=self.delta, beta=self.beta, dim=dim,
                       gaussian_width=self.gaussian_width, domain_size=self.domain_size,
                       projection_seed=self.projection_seed, calibration=self.calibration,
                       strict=self.strict, snap=self.snap)

    def fit(self, X: Any, y: Any = None) -> PrivEmbTransformer:
        """Record the number of features and build the mechanism; the values are not used."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        self.mechanism_ = self._build(X.shape[1])
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Private vectors of the rows of ``X``: fresh noise, a new release each call."""
        check_is_fitted(self, "mechanism_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        book = as_ledger(self.ledger, self.ledger_policy, self.budget)
        spec = VectorSpec(self.mechanism_, seed=self.seed)
        outcome = run_release(spec, Vectors(X), _VectorEngine(), ledger=book)
        self.report_ = outcome.report
        return outcome.output

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        check_is_fitted(self, "mechanism_")
        k = self.mechanism_.output_dim(self.n_features_in_)
        return np.array([f"privemb{i}" for i in range(k)], dtype=object)


class _VectorEngine:
    """The runner's engine for :class:`PrivEmbTransformer` (:func:`textdp.runner.run_release`):
    the private vectors of ``source.X`` (:func:`release_vectors`) and their report."""

    @staticmethod
    def run(spec: Any, source: Any, measurement: Any) -> Outcome:
        X = source.X
        t0 = time.perf_counter()
        W = release_vectors(spec.mechanism, X, seed=spec.seed)
        return Outcome(W, embedding_report(
            spec.mechanism, vectors_in=X.shape[0], vectors_out=W.shape[0], dim_in=X.shape[1],
            dim_out=W.shape[1], seed=spec.seed, seconds=time.perf_counter() - t0,
            chunk_rows=CHUNK_ROWS))
