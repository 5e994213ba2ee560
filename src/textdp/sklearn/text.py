"""The scikit-learn text front: :class:`TextPrivatizer`, strings → strings inside a ``Pipeline``.

Each ``transform`` builds the release spec of the parameters (:func:`textdp.spec.release_spec`,
cached until one changes), runs it through :func:`textdp.release.run_spec` (the runner) and counts
the release in this process (:class:`textdp._fronts.ReleaseCounter`, shared with its clones).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone

from textdp._fronts import ReleaseCounter
from textdp.ledger import as_ledger
from textdp.release import run_spec
from textdp.spec import DEFAULT_MASK, OPTION_NAMES, release_spec

__all__ = ["TextPrivatizer", "RepeatedReleaseWarning", "PRIVATIZE_MODES"]

#: When :class:`TextPrivatizer` privatises: ``"always"`` (every ``transform``) or ``"fit"``
#: (``fit_transform`` only; later ``transform`` calls pass their texts through).
PRIVATIZE_MODES = ("always", "fit")


class RepeatedReleaseWarning(UserWarning):
    """The same texts were released again by a TextPrivatizer or one of its clones."""


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
            ``transform`` returns its texts unchanged, **not** protected — for a model applied
            where its inputs may be read (docs/integrations/sklearn.md).
        ledger, ledger_policy, budget: a privacy ledger (a path) that records every release,
            as in :func:`textdp.privatize` (docs/accounting.md).

    Every release spends ε on its texts (:mod:`textdp.sklearn`); ``report_`` is the last one's.
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
        twin._releases = ReleaseCounter.of(self)
        return twin

    def _spec(self) -> Any:
        """The release spec of the current parameters (rebuilt when one changed)."""
        if self.privatize not in PRIVATIZE_MODES:
            raise ValueError(f"privatize must be one of {', '.join(PRIVATIZE_MODES)}, "
                             f"got {self.privatize!r}")
        options = {k: getattr(self, k) for k in OPTION_NAMES}
        key = repr(sorted((k, id(v) if k == "vocabulary" else v) for k, v in options.items())) \
            + repr(self.mechanism_params)
        if getattr(self, "_spec_cache", (None,))[0] != key:
            params = dict(self.mechanism_params or {})
            clash = sorted(set(params) & set(OPTION_NAMES))
            if clash:
                raise ValueError(f"mechanism_params holds options, not parameters: {clash}")
            self._spec_cache = (key, release_spec(**options, **params))
        return self._spec_cache[1]

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
        ReleaseCounter.of(self).warn(texts, spec, RepeatedReleaseWarning,
                                     "this TextPrivatizer and its clones")
        return self._output(X, result.texts)

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
