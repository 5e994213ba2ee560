"""What the library fronts share, so that each front stays an adapter (issue 33).

A front (pandas, scikit-learn, ``datasets``, Ray Data) builds a spec and a source from its own
arguments and calls :func:`textdp.runner.run_release`; what is left over and the same in
several fronts lives here, once:

* the table fronts (pandas, ``datasets``): a column named twice (:func:`check_distinct`), one
  release per named column with the note when one seed drives several of them
  (:func:`correlated`), and the budget of a row's columns (:func:`column_budget`; the splits of a
  ``DatasetDict`` in :func:`split_budget`): the columns of one row belong to one person, so
  their releases compose sequentially, keyed on the spec's measurement as the ledger keys them
  (:func:`textdp.privacy.composition.compose_reports`);
* a word release only, where every worker would load a language model (:func:`word_only`);
* in-process counting of repeated releases of the same texts (:class:`ReleaseCounter`:
  scikit-learn's clones in a search release the same texts again and again).

Nothing here imports a front's framework (pandas, ``datasets``, scikit-learn).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ReleaseCounter", "check_distinct", "column_budget", "correlated", "split_budget",
           "word_only"]


def word_only(spec: Any, why: str) -> Any:
    """``spec`` when it is a word release; a prompt mechanism is refused by a front whose engine
    runs in many processes (``why``: each would load a language model)."""
    if spec.kind != "word":
        raise ValueError(f"{spec.name} {why}")
    return spec


def check_distinct(columns: Sequence[Any]) -> None:
    """A column named twice is refused (its texts would be released twice in one call)."""
    if len(set(columns)) != len(columns):
        raise ValueError(f"a column is named twice in {list(columns)!r}")


def correlated(reports: Mapping[Any, Any], columns: Sequence[Any]) -> dict[Any, Any]:
    """``reports`` (by column) with the note that one seed drives ``columns`` when there are
    several: document i of each draws from the same stream (seed, i)."""
    out = dict(reports)
    if len(columns) > 1:
        note = (f"one seed drives columns {', '.join(map(str, columns))}: document i of each "
                "draws from the same stream (seed, i), so their noise is correlated")
        for c in columns:
            out[c] = out[c].with_context(notes=[note])
    return out


def column_budget(reports: Mapping[str, Any], spec: Any) -> dict[str, Any]:
    """ε per column and in total of one table's column releases (the module docstring; guarantees
    in different metrics are listed side by side, not summed)."""
    from textdp.privacy.composition import compose_reports

    per_column = {c: {"notion": r["guarantee"].get("notion"),
                      "epsilon": r["guarantee"].get("epsilon"),
                      "delta": r["guarantee"].get("delta")} for c, r in reports.items()}
    total = compose_reports(reports, spec.mechanism_object().measurement)
    return {"per_column": per_column, "total": total.to_dict(),
            "composition": "sequential over the columns: a row's texts in every named column "
                           "are released once per column, so their ε's add"}


def split_budget(by_split: Mapping[Any, Mapping[str, Any]], spec: Any) -> dict[str, Any]:
    """ε per split (its columns composed sequentially: a row's texts in every column are
    released once per column) and in total (the splits in parallel: disjoint rows, so a row's
    guarantee is its split's — per group of one metric, the largest split's ε)."""
    from textdp.privacy.composition import compose_reports

    measurement = spec.mechanism_object().measurement
    per_split = {}
    largest: dict[tuple[str, str], tuple[str, float]] = {}
    for split, reports in by_split.items():
        composed = compose_reports(reports, measurement)
        per_split[split] = {"per_column": {c: r["guarantee"].get("epsilon")
                                           for c, r in reports.items()},
                            "columns": composed.to_dict()}
        for g in composed.groups:
            key = (g.family, g.metric_id)
            largest[key] = (g.metric, max(largest.get(key, ("", 0.0))[1], g.epsilon))
        if not composed.bounded:
            largest[("not composable", "")] = ("", float("inf"))
    return {"per_split": per_split,
            "total": [{"family": f, "metric": m, "epsilon": e}
                      for (f, _), (m, e) in largest.items()],
            "composition": "columns of a row: sequential (ε's add); splits: parallel (disjoint "
                           "rows: a row's guarantee is its own split's)"}


class ReleaseCounter:
    """How often each text was released by one front object and its copies, in this process (a
    16-byte digest per distinct text). A ledger sees every process; this count sees the
    releases a search makes without one."""

    def __init__(self) -> None:
        self.counts: dict[bytes, int] = {}
        self.releases = 0
        self.epsilons: set[Any] = set()

    @classmethod
    def of(cls, owner: Any) -> ReleaseCounter:
        """``owner``'s counter (``owner._releases``, made on first use; a copy that should count
        with it is given the same one)."""
        if getattr(owner, "_releases", None) is None:
            owner._releases = cls()
        return owner._releases

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

    def warn(self, texts: list[str], spec: Any, category: type[Warning], who: str) -> None:
        """Count one release of ``texts`` under ``spec``; warn (``category``, pointing at the
        caller's caller: the user's ``transform``) when a text has now been released again."""
        times = self.add(texts, spec.epsilon if spec.allocation is None
                         else spec.allocation.epsilon_document)
        if times > 1:
            eps = ", ".join(sorted(map(str, self.epsilons)))
            warnings.warn(
                f"some texts have now been released {times} times by {who} ({self.releases} "
                f"releases, ε in {{{eps}}}): their ε's add up. A search or cross-validation "
                "refits on every fold and candidate, and a search over epsilon favours the "
                "largest (least private) ε", category, stacklevel=3)
