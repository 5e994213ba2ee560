"""scikit-learn transformers: private text and private vectors inside a ``Pipeline``.

Two fronts, one module each, both adapters onto :func:`textdp.runner.run_release`:

* :class:`TextPrivatizer` (:mod:`textdp.sklearn.text`) — strings → strings with a word mechanism
  or DP-Prompt (:func:`textdp.privatize`; every option of :func:`textdp.spec.release_spec`, same
  names).
* :class:`PrivEmbTransformer` (:mod:`textdp.sklearn.vectors`) — (n, d) arrays → private vectors
  with PrivEmb (Feyisetan & Kasiviswanathan 2021, Algorithm 1) or the Laplace-vector baseline M1
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

from textdp.sklearn.text import PRIVATIZE_MODES, RepeatedReleaseWarning, TextPrivatizer
from textdp.sklearn.vectors import PrivEmbTransformer

__all__ = ["TextPrivatizer", "PrivEmbTransformer", "RepeatedReleaseWarning", "PRIVATIZE_MODES"]
