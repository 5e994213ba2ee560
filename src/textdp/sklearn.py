"""scikit-learn transformers: private text and private vectors inside a ``Pipeline``.

* :class:`TextPrivatizer` — strings → strings with a word mechanism (:func:`textdp.privatize`).
* :class:`PrivEmbTransformer` — (n, d) arrays → private vectors with PrivEmb (Feyisetan &
  Kasiviswanathan 2021, Algorithm 1) or the Laplace-vector baseline M1
  (:func:`textdp.mechanisms.embedding.release.release_vectors`).

Both take constructor parameters only (so ``clone``, ``get_params`` / ``set_params`` and grid
search work), and ``fit`` learns nothing from the data: :class:`TextPrivatizer` needs no fit at
all, :class:`PrivEmbTransformer` records the number of input features (``n_features_in_``, which
scikit-learn requires and PrivEmb's projection depends on) and builds its mechanism.

**Every transform is a release.** Each call to ``transform`` (and ``fit_transform``) draws fresh
noise and spends ε again on the rows it is given: a Pipeline that privatises the training set in
``fit`` and the test set in ``predict`` makes one release of each; calling ``transform`` twice on
the same texts releases them twice (2ε for those texts, by sequential composition). With
``seed=N`` a transform is reproducible — the same input gives the same output, document (or chunk
of rows) i drawing from (seed, i) — and its report is flagged "reproducible, not for production".
The report of the last transform is ``report_``.
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
from textdp.pipeline import build_mechanism
from textdp.pipeline import privatize as _privatize
from textdp.privacy.fingerprint import fingerprint_vectors
from textdp.privacy.report import embedding_report

__all__ = ["TextPrivatizer", "PrivEmbTransformer"]


class TextPrivatizer(TransformerMixin, BaseEstimator):
    """Privatise texts word by word: an iterable of strings in, a list of strings out.

    Args:
        mechanism: a word mechanism name (:func:`textdp.mechanisms.available`).
        epsilon: ε per unit of the mechanism's metric.
        seed: None (a fresh secure generator per transform) or an integer (reproducible; flagged).
        oov, mask_token, keep_stopwords, identifiers, entities, allow_list: as in
            :func:`textdp.privatize` (entities on by default).
        mechanism_params: further mechanism parameters (``{"n_lists": 2}``), or None.
        vocabulary: a :class:`textdp.vocab.Vocabulary`, or None for the default.
        ledger, ledger_policy, budget: a privacy ledger (a path) that records every transform,
            as in :func:`textdp.privatize`; ``refuse`` raises before a transform that would
            exceed ``budget`` for its input (docs/accounting.md).
        allocation, epsilon_document, epsilon_floor, epsilon_ceiling: budget allocation over
            each document's words (docs/allocation.md), with ``epsilon=None``.

    Every ``transform`` is a new release spending ε on its texts (module docstring).
    ``report_`` holds the last transform's privacy report.
    """

    def __init__(self, mechanism: str = "mvc", epsilon: float = 8.0, *, seed: int | None = None,
                 oov: str = "mask", mask_token: str = "[MASK]", keep_stopwords: bool = False,
                 identifiers: bool = True, mechanism_params: dict[str, Any] | None = None,
                 vocabulary: Any = None, ledger: Any = None, ledger_policy: str = "warn",
                 budget: float | None = None, allocation: str | None = None,
                 epsilon_document: float | None = None, epsilon_floor: float | None = None,
                 epsilon_ceiling: float | None = None, entities: Any = "default",
                 allow_list: Any = None) -> None:
        self.entities = entities
        self.allow_list = allow_list
        self.allocation = allocation
        self.epsilon_document = epsilon_document
        self.epsilon_floor = epsilon_floor
        self.epsilon_ceiling = epsilon_ceiling
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.seed = seed
        self.oov = oov
        self.mask_token = mask_token
        self.keep_stopwords = keep_stopwords
        self.identifiers = identifiers
        self.mechanism_params = mechanism_params
        self.vocabulary = vocabulary
        self.ledger = ledger
        self.ledger_policy = ledger_policy
        self.budget = budget

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        tags.non_deterministic = self.seed is None
        return tags

    def _built(self) -> tuple[Any, Any]:
        """(the mechanism, the resolved allocation or None), rebuilt when a parameter changed."""
        from textdp.allocation import resolve_allocation

        budget = (self.allocation, self.epsilon_document, self.epsilon_floor, self.epsilon_ceiling)
        key = (self.mechanism, self.epsilon, repr(self.mechanism_params), id(self.vocabulary),
               budget)
        cached = getattr(self, "_mechanism_cache", None)
        if cached is None or cached[0] != key:
            allocation, epsilon = resolve_allocation(budget[0], self.epsilon, *budget[1:],
                                                     self.mechanism)
            mech = build_mechanism(self.mechanism, epsilon, self.vocabulary,
                                   dict(self.mechanism_params or {}))
            cached = (key, (mech, allocation))
            self._mechanism_cache = cached
        return cached[1]

    def fit(self, X: Any, y: Any = None) -> TextPrivatizer:
        """Check the parameters (by building the mechanism); nothing is learned from ``X``."""
        self._built()
        return self

    def transform(self, X: Any) -> list[str]:
        """The private texts of ``X`` (one per input, in order): a new release each call."""
        if isinstance(X, str):
            raise TypeError("X must be an iterable of strings, not a single string")
        texts = X.tolist() if isinstance(X, np.ndarray) else list(X)
        mech, allocation = self._built()
        result = _privatize(texts, mech, seed=self.seed, oov=self.oov,
                            mask_token=self.mask_token, keep_stopwords=self.keep_stopwords,
                            identifiers=self.identifiers, ledger=self.ledger,
                            ledger_policy=self.ledger_policy, budget=self.budget,
                            allocation=allocation, entities=self.entities,
                            allow_list=self.allow_list)
        self.report_ = result.report
        return result.texts


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
        if book is None:
            return self._release(X)
        fingerprint, rows = fingerprint_vectors(X)
        with book.release(mechanism=self.mechanism_, input_fingerprint=fingerprint, records=rows,
                          seed=self.seed, input_kind="vectors",
                          space=f"the input vectors themselves (R^{X.shape[1]})") as release:
            W = self._release(X)
            self.report_ = release.attach(self.report_)
        return W

    def _release(self, X: np.ndarray) -> np.ndarray:
        t0 = time.perf_counter()
        W = release_vectors(self.mechanism_, X, seed=self.seed)
        self.report_ = embedding_report(
            self.mechanism_, vectors_in=X.shape[0], vectors_out=W.shape[0], dim_in=X.shape[1],
            dim_out=W.shape[1], seed=self.seed, seconds=time.perf_counter() - t0,
            chunk_rows=CHUNK_ROWS)
        return W

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        check_is_fitted(self, "mechanism_")
        k = self.mechanism_.output_dim(self.n_features_in_)
        return np.array([f"privemb{i}" for i in range(k)], dtype=object)
