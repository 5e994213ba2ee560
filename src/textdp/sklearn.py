"""scikit-learn transformers: private text and private vectors inside a ``Pipeline``.

* :class:`TextPrivatizer` — strings → strings with a word mechanism or DP-Prompt
  (:func:`textdp.privatize`; every option of :func:`textdp.spec.release_spec`, same names).
* :class:`PrivEmbTransformer` — (n, d) arrays → private vectors with PrivEmb (Feyisetan &
  Kasiviswanathan 2021, Algorithm 1) or the Laplace-vector baseline M1
  (:func:`textdp.mechanisms.embedding.release.release_vectors`).

Both take constructor parameters only, stored as given (so ``clone``, ``get_params`` /
``set_params`` and grid search work), and ``fit`` learns nothing from the data:
:class:`TextPrivatizer` needs no fit at all, :class:`PrivEmbTransformer` records the number of
input features (``n_features_in_``, which scikit-learn requires and PrivEmb's projection depends
on) and builds its mechanism.

**Every transform is a release.** Each call to ``transform`` (and ``fit_transform``) draws fresh
noise and spends ε again on the rows it is given: a Pipeline that privatises the training set in
``fit`` and the test set in ``predict`` makes one release of each; calling ``transform`` twice on
the same texts releases them twice (2ε for those texts, by sequential composition). With
``seed=N`` a transform is reproducible — the same input gives the same output, document (or chunk
of rows) i drawing from (seed, i) — and its report is flagged "reproducible, not for production".
The report of the last transform is ``report_``.

**Searches release many times.** ``GridSearchCV`` and ``cross_validate`` clone the Pipeline for
every fold and candidate, and each clone's ``fit_transform`` releases its training texts (and
``score`` its test texts) again: the ε's of all those releases add up for every text. A
:class:`TextPrivatizer` and its clones count, in this process, how often each text was released
and warn (:class:`RepeatedReleaseWarning`, naming the count) when a text is released again; with
``ledger=`` every release is also recorded in the ledger (whatever the process: ``n_jobs`` runs
clones in other processes, where the in-process count does not see them). A search over
``epsilon`` picks the largest ε that scores best — the least private: choose ε for the privacy
you need, not by the score.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from textdp.ledger import as_ledger
from textdp.mechanisms.embedding import DEFAULT_PROJECTION_SEED, LaplaceVector, PrivEmb
from textdp.mechanisms.embedding.release import CHUNK_ROWS, release_vectors
from textdp.privacy.report import embedding_report
from textdp.release import run_spec
from textdp.runner import Outcome, Vectors, run_release
from textdp.spec import DEFAULT_MASK, OPTION_NAMES, VectorSpec, release_spec

__all__ = ["TextPrivatizer", "PrivEmbTransformer", "RepeatedReleaseWarning", "PRIVATIZE_MODES"]

#: When :class:`TextPrivatizer` privatises: ``"always"`` (every ``transform``) or ``"fit"``
#: (``fit_transform`` only; later ``transform`` calls pass their texts through).
PRIVATIZE_MODES = ("always", "fit")


class RepeatedReleaseWarning(UserWarning):
    """The same texts were released again by a TextPrivatizer or one of its clones."""


class _Releases:
    """How often each text was released by one TextPrivatizer and its clones, in this process
    (a 16-byte digest per distinct text)."""

    def __init__(self) -> None:
        self.counts: dict[bytes, int] = {}
        self.releases = 0
        self.epsilons: set[Any] = set()

    def add(self, texts: list[str], epsilon: Any) -> int:
        """Count one release of ``texts``; returns the largest count among them."""
        self.releases += 1
        self.epsilons.add(epsilon)
        top = 0
        for t in texts:
            key = hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            n = self.counts.get(key, 0) + 1
            self.counts[key] = n
            top = max(top, n)
        return top


class TextPrivatizer(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Privatise texts: an iterable of strings in, a list of strings out (a Series with
    ``set_output(transform="pandas")``).

    Args:
        mechanism: a mechanism name (:func:`textdp.mechanisms.available`: word mechanisms and
            ``dp_prompt``).
        epsilon: ε per unit of the mechanism's metric (``dp_prompt``: per document).
        seed: None (a fresh secure generator per transform) or an integer (reproducible; flagged).
        vocabulary, oov, mask_token, keep_stopwords, identifiers, identifier_labels,
            identifier_patterns, deny_list, phone_regions, entities, allow_list, allocation,
            epsilon_document, epsilon_floor, epsilon_ceiling, unchanged_warning, batch_chars:
            the options of :func:`textdp.privatize`, under the same names
            (:data:`textdp.spec.OPTION_NAMES`); for budget allocation give ``epsilon=None``.
        mechanism_params: further mechanism parameters (``{"n_lists": 2}``), or None.
        privatize: ``"always"`` (default: every ``transform`` is a release) or ``"fit"``:
            ``fit_transform`` privatises (the training texts, a release) and every later
            ``transform`` returns its texts unchanged. Use ``"fit"`` when the model is trained
            on private texts but applied where the texts it is given may be read (the owner's
            own inputs at prediction time): privatising them would release them again for
            nothing and only cost accuracy. Those texts are then **not** protected.
        ledger, ledger_policy, budget: a privacy ledger (a path) that records every release,
            as in :func:`textdp.privatize`; ``refuse`` raises before a release that would
            exceed ``budget`` for its input (docs/accounting.md).

    Every release spends ε on its texts (module docstring). ``report_`` holds the last
    release's privacy report.
    """

    def __init__(self, mechanism: str = "mvc", epsilon: float | None = 8.0, *,
                 seed: int | None = None, vocabulary: Any = None, oov: str = "mask",
                 mask_token: str = DEFAULT_MASK, keep_stopwords: bool = False,
                 identifiers: Any = True, identifier_labels: dict[str, str] | None = None,
                 identifier_patterns: dict[str, str] | None = None, deny_list: Any = None,
                 phone_regions: Any = None, entities: Any = "default", allow_list: Any = None,
                 allocation: Any = None, epsilon_document: float | None = None,
                 epsilon_floor: float | None = None, epsilon_ceiling: float | None = None,
                 unchanged_warning: float = 0.5, batch_chars: int = 1 << 18,
                 mechanism_params: dict[str, Any] | None = None, privatize: str = "always",
                 ledger: Any = None, ledger_policy: str = "warn",
                 budget: float | None = None) -> None:
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.seed = seed
        self.vocabulary = vocabulary
        self.oov = oov
        self.mask_token = mask_token
        self.keep_stopwords = keep_stopwords
        self.identifiers = identifiers
        self.identifier_labels = identifier_labels
        self.identifier_patterns = identifier_patterns
        self.deny_list = deny_list
        self.phone_regions = phone_regions
        self.entities = entities
        self.allow_list = allow_list
        self.allocation = allocation
        self.epsilon_document = epsilon_document
        self.epsilon_floor = epsilon_floor
        self.epsilon_ceiling = epsilon_ceiling
        self.unchanged_warning = unchanged_warning
        self.batch_chars = batch_chars
        self.mechanism_params = mechanism_params
        self.privatize = privatize
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

    def __sklearn_clone__(self) -> TextPrivatizer:
        """A clone (the parameters, as :func:`sklearn.base.clone` copies them) that shares this
        one's count of releases: the clones of a search release the same texts."""
        twin = type(self)(**{k: clone(v, safe=False)
                             for k, v in self.get_params(deep=False).items()})
        twin._releases = self._tracker()
        return twin

    def _tracker(self) -> _Releases:
        if getattr(self, "_releases", None) is None:
            self._releases = _Releases()
        return self._releases

    def _spec(self) -> Any:
        """The release spec of the current parameters (rebuilt when one changed)."""
        if self.privatize not in PRIVATIZE_MODES:
            raise ValueError(f"privatize must be one of {', '.join(PRIVATIZE_MODES)}, "
                             f"got {self.privatize!r}")
        options = {k: getattr(self, k) for k in OPTION_NAMES}
        key = repr(sorted((k, id(v) if k == "vocabulary" else v) for k, v in options.items())) \
            + repr(self.mechanism_params)
        cached = getattr(self, "_spec_cache", None)
        if cached is None or cached[0] != key:
            params = dict(self.mechanism_params or {})
            clash = sorted(set(params) & set(OPTION_NAMES))
            if clash:
                raise ValueError(f"mechanism_params holds options, not parameters: {clash}")
            cached = (key, release_spec(**options, **params))
            self._spec_cache = cached
        return cached[1]

    def fit(self, X: Any, y: Any = None) -> TextPrivatizer:
        """Check the parameters (by building the release spec); nothing is learned from ``X``
        and nothing is released."""
        self._spec()
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """The private texts of ``X``: a release, in both modes (the training texts)."""
        return self._release(X)

    def transform(self, X: Any) -> Any:
        """The private texts of ``X`` (one per input, in order): a new release each call; with
        ``privatize="fit"``, ``X`` unchanged (not protected; see the class docstring)."""
        self._spec()  # the parameters are checked in both modes
        if self.privatize == "fit":
            return self._output(X, self._texts(X))
        return self._release(X)

    @staticmethod
    def _texts(X: Any) -> list[str]:
        if isinstance(X, str):
            raise TypeError("X must be an iterable of strings, not a single string")
        if getattr(X, "ndim", 1) == 2:  # a DataFrame or a 2-D array: one column of texts only
            shape = getattr(X, "shape", (0, 0))
            if shape[1] != 1:
                raise TypeError(f"X has {shape[1]} columns; TextPrivatizer takes one column of "
                                "texts: select it (X['text']), or route the text column to it "
                                "with a ColumnTransformer")
            X = X.iloc[:, 0] if hasattr(X, "iloc") else np.asarray(X)[:, 0]
        if isinstance(X, np.ndarray) or hasattr(X, "to_numpy"):
            return X.to_numpy(dtype=object).tolist() if hasattr(X, "to_numpy") else X.tolist()
        return list(X)

    def _release(self, X: Any) -> Any:
        spec = self._spec()
        texts = self._texts(X)
        book = as_ledger(self.ledger, self.ledger_policy, self.budget)
        result = run_spec(spec, texts, book=book)
        self.report_ = result.report
        self._count_release(texts, spec)
        return self._output(X, result.texts)

    def _count_release(self, texts: list[str], spec: Any) -> None:
        """Count the release, and warn when a text has now been released more than once."""
        tracker = self._tracker()
        times = tracker.add(texts, spec.epsilon if spec.allocation is None
                            else spec.allocation.epsilon_document)
        if times > 1:
            eps = ", ".join(sorted(map(str, tracker.epsilons)))
            warnings.warn(
                f"some texts have now been released {times} times by this TextPrivatizer and its "
                f"clones ({tracker.releases} releases, ε in {{{eps}}}): their ε's add up. A search "
                "or cross-validation refits on every fold and candidate, and a search over "
                "epsilon favours the largest (least private) ε", RepeatedReleaseWarning,
                stacklevel=3)

    # -- output containers ----------------------------------------------------------------------
    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """One output column: the input's name (``input_features`` or the Series' name seen
        last), else ``"text"``."""
        if input_features is not None:
            names = np.asarray(input_features, dtype=object)
            if names.shape != (1,):
                raise ValueError("TextPrivatizer has one input column: give one feature name")
            return names
        return np.array([getattr(self, "_input_name", None) or "text"], dtype=object)

    def set_output(self, *, transform: str | None = None) -> TextPrivatizer:
        """``transform="pandas"``: outputs are a ``pandas.Series`` (the input's index, the name
        of :meth:`get_feature_names_out`); ``"default"``: a list of strings; None: unchanged."""
        if transform is None:
            return self
        if transform not in ("default", "pandas"):
            raise ValueError(f"transform must be 'default' or 'pandas', got {transform!r}")
        self._sklearn_output_config = {"transform": transform}
        return self

    def _output(self, X: Any, texts: list[str]) -> Any:
        name = getattr(X, "name", None)
        if isinstance(name, str):
            self._input_name = name
        if getattr(self, "_sklearn_output_config", {}).get("transform") != "pandas":
            return texts
        import pandas as pd

        index = X.index if isinstance(X, pd.Series | pd.DataFrame) else None
        return pd.Series(texts, index=index, name=self.get_feature_names_out()[0], dtype=object)


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
