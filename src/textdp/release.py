"""The one front every library front shares: ``textdp.privatize`` and :func:`run_spec`.

A release is a :class:`textdp.spec.ReleaseSpec` (keyword arguments checked once by
:func:`textdp.spec.release_spec`) run over the texts and guarded by the ledger: the word engine
(:class:`textdp.pipeline.Privatizer`) or, for ``dp_prompt``, the language-model paraphraser
(:func:`textdp.lm.privatize_spec`). It sits above both engines and above the spec, so nothing
below it imports it (no import cycle: tests/test_structure.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from textdp._checks import check_texts
from textdp.allocation import Allocation
from textdp.mechanisms import WordMechanism
from textdp.pipeline import DEFAULT_BATCH_CHARS, DEFAULT_BATCH_SIZE, DEFAULT_MASK
from textdp.privacy.unchanged import DEFAULT_UNCHANGED_WARNING
from textdp.text.entities import Entities
from textdp.text.identifiers import Identifiers
from textdp.vocab import Vocabulary

__all__ = ["PrivatizeResult", "WordEngine", "privatize", "run_spec"]


@dataclass(frozen=True, slots=True)
class PrivatizeResult:
    texts: list[str]
    report: dict[str, Any]


def privatize(texts: Iterable[str], mechanism: str | WordMechanism = "mvc",
              epsilon: float | None = None, *, seed: int | None = None, oov: str = "mask",
              mask_token: str = DEFAULT_MASK, keep_stopwords: bool = False,
              vocabulary: Vocabulary | None = None, batch_size: int | None = None,
              unchanged_warning: float = DEFAULT_UNCHANGED_WARNING,
              batch_chars: int = DEFAULT_BATCH_CHARS,
              identifiers: bool | Identifiers = True,
              identifier_labels: Mapping[str, str] | None = None,
              identifier_patterns: Mapping[str, str] | None = None,
              deny_list: Iterable[str] | None = None, ledger: Any = None,
              ledger_policy: str = "warn", budget: float | None = None,
              input_name: str | None = None,
              allocation: str | Allocation | None = None, epsilon_document: float | None = None,
              epsilon_floor: float | None = None, epsilon_ceiling: float | None = None,
              phone_regions: Sequence[str] | None = None,
              entities: str | Sequence[str] | bool | Entities | None = "default",
              allow_list: Iterable[str] | None = None,
              **params: Any) -> PrivatizeResult:
    """Privatise ``texts`` and report the guarantee: word by word, or (``dp_prompt``) each
    document rewritten by a language model.

    The options are those of :func:`textdp.spec.release_spec` (the same names in every front:
    :data:`textdp.spec.OPTION_NAMES`), plus this front's ``batch_size`` and ledger.

    Args:
        texts: documents (strings).
        mechanism: a name from :func:`textdp.mechanisms.available` (word mechanisms and
            ``dp_prompt``) or a built word mechanism.
        epsilon: privacy parameter (per unit of the mechanism's metric; for ``dp_prompt``, per
            document).
        seed: None (OS entropy, for production) or an integer (reproducible; flagged).
        oov: policy for out-of-vocabulary words, numbers and identifiers: mask, keep, drop,
            random (see :class:`OOVPolicy`).
        identifiers, identifier_labels, identifier_patterns, deny_list, phone_regions: see
            :class:`Privatizer`.
        entities, allow_list: people, locations, organisations and street addresses replaced by
            labels before the mechanism (on by default; ``"none"`` turns it off), and public
            terms released as they are: see :class:`Privatizer`.
        unchanged_warning: warn in the report when the expected fraction of privatised words
            returned unchanged exceeds it (default 0.5).
        batch_size, batch_chars: documents (default 4096; for ``dp_prompt``, documents per
            generation batch, default :data:`textdp.lm.DEFAULT_BATCH_SIZE`) and characters per
            vectorised step (memory vs. speed; never the output of a seeded run).
        ledger, ledger_policy, budget: a privacy ledger (a path or a :class:`textdp.ledger.Ledger`),
            its policy (``warn`` or ``refuse``) and ε budget per input: the report gains
            ``ledger`` (earlier releases of these texts, cumulative guarantee), ``refuse`` raises
            :class:`textdp.ledger.LedgerRefused` before privatising when the budget would be
            exceeded, and the release is appended once it succeeded (docs/accounting.md).
        input_name: what the ledger records to find the release again (a file, a column).
        allocation: a budget-allocation rule (``uniform``, ``position``, ``frequency``) or an
            :class:`textdp.allocation.Allocation`; with a rule name, ``epsilon_document`` (and
            optionally ``epsilon_floor``, ``epsilon_ceiling``) replace ``epsilon``
            (docs/allocation.md).
        **params: further mechanism parameters (for ``dp_prompt``: ``epsilon_per_token`` or
            ``temperature`` instead of ``epsilon``, ``max_new_tokens``, ``clip_low``,
            ``clip_high``, ``template``, and ``model``: a local model path or a
            :class:`textdp.lm.LanguageModel`; the word policy options do not apply to it).

    Returns:
        ``.texts`` (one output per input, in order) and ``.report`` (a JSON-ready dict).
    """
    from textdp.ledger import as_ledger
    from textdp.spec import release_spec

    texts = check_texts(texts)
    book = as_ledger(ledger, ledger_policy, budget)
    spec = release_spec(
        mechanism, epsilon, seed=seed, vocabulary=vocabulary, oov=oov, mask_token=mask_token,
        keep_stopwords=keep_stopwords, identifiers=identifiers,
        identifier_labels=identifier_labels, identifier_patterns=identifier_patterns,
        deny_list=deny_list, phone_regions=phone_regions, entities=entities,
        allow_list=allow_list, allocation=allocation, epsilon_document=epsilon_document,
        epsilon_floor=epsilon_floor, epsilon_ceiling=epsilon_ceiling,
        unchanged_warning=unchanged_warning, batch_chars=batch_chars, **params)
    return run_spec(spec, texts, batch_size=batch_size, book=book, input_name=input_name)


def run_spec(spec: Any, texts: Iterable[str], *, batch_size: int | None = None,
             book: Any = None, input_name: str | None = None) -> PrivatizeResult:
    """Run one release ``spec`` (:class:`textdp.spec.ReleaseSpec`) over ``texts``, guarded by the
    ledger ``book`` (a :class:`textdp.ledger.Ledger` or None): what :func:`textdp.privatize` does
    once its keywords are a spec, for the fronts that build the spec themselves (pandas,
    scikit-learn). The release runs through :func:`textdp.runner.run_release`."""
    from textdp.runner import Texts, run_release

    texts = check_texts(texts)
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                   or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if spec.kind == "prompt":
        from textdp.lm.paraphrase import PromptEngine

        engine: Any = PromptEngine(spec, batch_size)
    else:
        engine = WordEngine(DEFAULT_BATCH_SIZE if batch_size is None else batch_size)
    outcome = run_release(spec, Texts(texts, input_name), engine, ledger=book)
    return PrivatizeResult(outcome.output, outcome.report)


class WordEngine:
    """The local word engine: the spec's :class:`Privatizer` over the texts, ``batch_size``
    documents at a time (never the output of a seeded run)."""

    def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.batch_size = batch_size

    def run(self, spec: Any, source: Any, measurement: Any) -> Any:
        from textdp.runner import Outcome

        runner = spec.privatizer()
        texts, size = source.texts, self.batch_size
        out: list[str] = []
        for s in range(0, len(texts), size):
            out.extend(runner.run(texts[s:s + size]))
        return Outcome(out, runner.report())
