"""A configured release: what to run, on which words, with what policy — built and checked once.

Every front (the CLI's local, Ray and LM engines, :func:`textdp.privatize`, Ray Data, pandas,
``datasets``, scikit-learn) turns its keyword arguments into one :class:`ReleaseSpec` with
:func:`release_spec` and runs that. The spec is frozen and picklable: a worker process receives
the spec (a recipe: mechanism name, ε, parameters, policy), never a generator, and builds the
mechanism once per process (:meth:`ReleaseSpec.mechanism`).

Every option has the same name in every front: :data:`OPTION_NAMES` is the one list.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from numbers import Real
from typing import Any

from textdp._checks import check_probability, check_real, check_seed
from textdp._guide import names_listing
from textdp.mechanisms.prompt import MECHANISMS as _PROMPT_CLASSES

__all__ = ["KINDS", "ReleaseSpec", "TokenPolicy", "VectorSpec", "release_spec", "OPTION_NAMES",
           "POLICY_OPTIONS", "PROMPT_MECHANISMS", "DEFAULT_MASK"]

DEFAULT_MASK = "[MASK]"
#: Mechanisms that rewrite whole documents with a language model (run by :mod:`textdp.lm`):
#: the names of :data:`textdp.mechanisms.prompt.MECHANISMS`.
PROMPT_MECHANISMS = frozenset(_PROMPT_CLASSES)


def _pairs(value: Mapping[str, str] | None, name: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of name to string, got {type(value).__name__}")
    return tuple(sorted((str(k), str(v)) for k, v in value.items()))


def _terms(value: Iterable[str] | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        raise TypeError(f"{name} must be a list of terms, not a single string")
    terms = tuple(value)
    for t in terms:
        if not isinstance(t, str):
            raise TypeError(f"{name} holds {type(t).__name__}, expected strings")
    return terms


@dataclass(frozen=True, slots=True)
class TokenPolicy:
    """What happens to each kind of token before and around the mechanism.

    See :class:`textdp.pipeline.Privatizer` for the meaning of each field. Mappings are kept as
    sorted ``(name, value)`` pairs and lists as tuples, so a policy is hashable and compares by
    value.
    """

    oov: str = "mask"
    mask_token: str = DEFAULT_MASK
    keep_stopwords: bool = False
    identifiers: Any = True  # bool or a textdp.text.identifiers.Identifiers
    identifier_labels: tuple[tuple[str, str], ...] = ()
    identifier_patterns: tuple[tuple[str, str], ...] = ()
    deny_list: tuple[str, ...] = ()
    phone_regions: tuple[str, ...] | None = None
    entities: Any = "default"  # "default", "none", kinds, or a textdp.text.entities.Entities
    allow_list: tuple[str, ...] = ()

    def options(self) -> dict[str, Any]:
        """The policy as :class:`textdp.pipeline.Privatizer` keywords."""
        return {"oov": self.oov, "mask_token": self.mask_token,
                "keep_stopwords": self.keep_stopwords, "identifiers": self.identifiers,
                "identifier_labels": dict(self.identifier_labels) or None,
                "identifier_patterns": dict(self.identifier_patterns) or None,
                "deny_list": list(self.deny_list) or None,
                "phone_regions": (list(self.phone_regions) if self.phone_regions is not None
                                  else None),
                "entities": list(self.entities) if isinstance(self.entities, tuple)
                else self.entities,
                "allow_list": list(self.allow_list) or None}


#: The options of :class:`TokenPolicy`, by name.
POLICY_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(TokenPolicy))


@dataclass(frozen=True, slots=True)
class ReleaseSpec:
    """One release, fully described: build it with :func:`release_spec`, never by hand.

    Attributes:
        mechanism: a registered mechanism name (:func:`textdp.mechanisms.available`) or a
            built mechanism object.
        epsilon: ε the mechanism is built with (None for a built mechanism; with an allocation,
            its top level).
        params: further mechanism parameters, sorted ``(name, value)`` pairs.
        vocabulary: a :class:`textdp.vocab.Vocabulary` or None (the mechanism's default).
        policy: the :class:`TokenPolicy`.
        allocation: a :class:`textdp.allocation.Allocation` or None.
        seed: None (OS entropy) or an integer (reproducible; flagged in the report).
        unchanged_warning, batch_chars: report threshold and memory bound
            (:class:`textdp.pipeline.Privatizer`).
    """

    mechanism: Any
    epsilon: float | None = None
    params: tuple[tuple[str, Any], ...] = ()
    vocabulary: Any = None
    policy: TokenPolicy = field(default_factory=TokenPolicy)
    allocation: Any = None
    seed: int | None = None
    unchanged_warning: float = 0.5
    batch_chars: int = 1 << 18

    @property
    def name(self) -> str:
        """The mechanism's registered name."""
        return self.mechanism if isinstance(self.mechanism, str) else self.mechanism.name

    @property
    def kind(self) -> str:
        """``"prompt"`` (a language model rewrites each document) or ``"word"``."""
        return "prompt" if self.name in PROMPT_MECHANISMS else "word"

    @property
    def space(self) -> Any:
        """The input space the ledger records (:func:`textdp.runner.run_release`): a prompt
        mechanism's neighbours are any two documents; a word mechanism's space is its
        vocabulary (None: the ledger reads it from the mechanism)."""
        if self.kind != "prompt":
            return None
        from textdp.privacy.measurement import InputSpace

        return InputSpace.any_documents()

    def measure(self, source: Any) -> Any:
        """What the ledger records for this release (:func:`textdp.runner.run_release`): the
        built mechanism (its name, parameters, guarantee and measurement)."""
        return self.mechanism_object()

    def mechanism_object(self) -> Any:
        """The built mechanism (built once per process and spec; a worker builds its own)."""
        if not isinstance(self.mechanism, str):
            return self.mechanism
        # Keyed on what the mechanism is built from (not the policy, whose Identifiers or
        # Entities objects may hold dicts); a parameter that cannot be hashed is not cached.
        key = (self.mechanism, self.epsilon, self.params, id(self.vocabulary))
        try:
            hit = _BUILT.get(key)
        except TypeError:
            return _build(self)
        if hit is None or hit[0] is not self.vocabulary:
            hit = (self.vocabulary, _build(self))
            if len(_BUILT) >= 8:
                _BUILT.pop(next(iter(_BUILT)))
            _BUILT[key] = hit
        return hit[1]

    def privatizer(self) -> Any:
        """A fresh :class:`textdp.pipeline.Privatizer` running this spec (word mechanisms)."""
        if self.kind != "word":
            raise ValueError(f"mechanism {self.name!r} rewrites whole documents with a language "
                             "model: run it with textdp.lm.paraphrase or `textdp privatize`")
        from textdp.pipeline import Privatizer

        return Privatizer(self.mechanism_object(), seed=self.seed,
                          unchanged_warning=self.unchanged_warning, batch_chars=self.batch_chars,
                          allocation=self.allocation, **self.policy.options())


_BUILT: dict[tuple[Any, ...], tuple[Any, Any]] = {}

#: The kinds of release a spec describes: word and prompt (:class:`ReleaseSpec`), embedding and
#: document (:class:`VectorSpec`), synthetic (:class:`textdp.synthesis.SynthesisSpec`).
KINDS = ("word", "prompt", "embedding", "document", "synthetic")


@dataclass(frozen=True, slots=True)
class VectorSpec:
    """A release of vectors (``kind="embedding"``: PrivEmb, LaplaceVector over an (N, d) array)
    or of documents (``kind="document"``: DeepCandidate, Truncation over sentence embeddings):
    the built mechanism and the seed, checked once here.

    Attributes:
        mechanism: a built embedding or document mechanism (it checked its own parameters).
        seed: None (OS entropy) or an integer (reproducible; flagged in the report).
        kind: ``"embedding"`` or ``"document"``.
        start: the position of the first document in the whole corpus (seeded document runs).
    """

    mechanism: Any
    seed: int | None = None
    kind: str = "embedding"
    start: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("embedding", "document"):
            raise ValueError(f"a vector release is an embedding or a document release, got "
                             f"{self.kind!r}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        if not hasattr(self.mechanism, "release"):
            raise TypeError(f"{type(self.mechanism).__name__} is not an embedding or document "
                            "mechanism")

    @property
    def name(self) -> str:
        return self.mechanism.name

    def measure(self, source: Any) -> Any:
        """What the ledger records: the built mechanism."""
        return self.mechanism


def _build(spec: ReleaseSpec) -> Any:
    params = dict(spec.params)
    if spec.kind == "prompt":
        from textdp.mechanisms.prompt import DPPrompt

        if spec.vocabulary is not None:
            raise ValueError("dp_prompt takes no vocabulary")
        params.pop("model", None)  # the language model runs the mechanism (paraphraser())
        if params.pop("device", "auto") not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {dict(spec.params)['device']!r}")
        return DPPrompt(epsilon=spec.epsilon, **params)
    from textdp.mechanisms import create

    return create(spec.mechanism, spec.vocabulary, epsilon=spec.epsilon, **params)


#: Every option :func:`release_spec` accepts besides the mechanism's own parameters, in the
#: order the documentation lists them. Every front takes exactly these names.
OPTION_NAMES: tuple[str, ...] = (
    "mechanism", "epsilon", "seed", "vocabulary", *POLICY_OPTIONS, "allocation",
    "epsilon_document", "epsilon_floor", "epsilon_ceiling", "unchanged_warning", "batch_chars")


def release_spec(mechanism: Any = "mvc", epsilon: float | None = None, *,
                 seed: int | None = None, vocabulary: Any = None, oov: str = "mask",
                 mask_token: str = DEFAULT_MASK, keep_stopwords: bool = False,
                 identifiers: Any = True, identifier_labels: Mapping[str, str] | None = None,
                 identifier_patterns: Mapping[str, str] | None = None,
                 deny_list: Iterable[str] | None = None,
                 phone_regions: Sequence[str] | None = None, entities: Any = "default",
                 allow_list: Iterable[str] | None = None, allocation: Any = None,
                 epsilon_document: float | None = None, epsilon_floor: float | None = None,
                 epsilon_ceiling: float | None = None, unchanged_warning: float = 0.5,
                 batch_chars: int = 1 << 18, **params: Any) -> ReleaseSpec:
    """The one place keyword arguments become a release: checked here, once, for every front.

    ``params`` are the mechanism's own parameters (``n_lists``, ``k``, …; for ``dp_prompt``
    also ``model``, the language model: a path or a :class:`textdp.lm.LanguageModel`, and
    ``device``: ``auto``, ``cpu`` or ``cuda``); a name that is
    neither an option nor a parameter of the mechanism is a ValueError naming the nearest
    option. The mechanism is built here (so every error surfaces before any text is read) and
    kept in a per-process cache.
    """
    from textdp import mechanisms as registry
    from textdp.allocation import resolve_allocation
    from textdp.mechanisms.base import WordMechanism

    built = not isinstance(mechanism, str)
    names = registry.available()  # word and prompt mechanisms
    if not built and mechanism not in names:
        raise ValueError(f"unknown mechanism {mechanism!r}; "
                         f"{names_listing(str(mechanism), names, 'available')}")
    if built and (epsilon is not None or params or vocabulary is not None):
        raise ValueError("pass parameters to the mechanism object, not with it")
    if isinstance(mechanism, str) and mechanism in PROMPT_MECHANISMS:
        if allocation is not None:
            raise ValueError("dp_prompt spends ε per document: it takes no allocation")
    else:
        allocation, epsilon = resolve_allocation(allocation, epsilon, epsilon_document,
                                                 epsilon_floor, epsilon_ceiling, mechanism)
        if not built and epsilon is None:
            raise ValueError("epsilon is required")
        if built and not isinstance(mechanism, WordMechanism):
            raise TypeError("mechanism must be a name or a textdp word mechanism")
    if epsilon is not None and (isinstance(epsilon, bool) or not isinstance(epsilon, Real)):
        raise TypeError(f"epsilon must be a number, got {epsilon!r}")
    if epsilon is not None and not math.isfinite(check_real(epsilon, "epsilon")):
        # 10**400 is refused here in one sentence, not by an OverflowError deep in a mechanism.
        raise ValueError(f"epsilon must be a finite number > 0, got {_short(epsilon)}")
    if isinstance(batch_chars, bool) or not isinstance(batch_chars, int) or batch_chars < 1:
        raise ValueError(f"batch_chars must be a positive integer, got {batch_chars!r}")
    policy = TokenPolicy(
        oov=oov, mask_token=mask_token, keep_stopwords=bool(keep_stopwords),
        identifiers=identifiers, identifier_labels=_pairs(identifier_labels, "identifier_labels"),
        identifier_patterns=_pairs(identifier_patterns, "identifier_patterns"),
        deny_list=_terms(deny_list, "deny_list"),
        phone_regions=None if phone_regions is None else _terms(phone_regions, "phone_regions"),
        entities=tuple(entities) if isinstance(entities, list) else entities,
        allow_list=_terms(allow_list, "allow_list"))
    spec = ReleaseSpec(mechanism=mechanism, epsilon=None if epsilon is None else float(epsilon),
                       params=tuple(sorted(params.items())), vocabulary=vocabulary,
                       policy=policy, allocation=allocation, seed=check_seed(seed),
                       unchanged_warning=check_probability(
                           unchanged_warning, "unchanged_warning", open_low=False,
                           open_high=False),
                       batch_chars=batch_chars)
    if spec.kind == "prompt":
        # A prompt mechanism masks identifiers and entities before the model reads a document
        # (textdp.lm.masking), as the word mechanisms do; the word options do not apply.
        unused = [name for name in _WORD_POLICY
                  if getattr(policy, name) != getattr(_DEFAULT_POLICY, name)]
        if unused:
            raise ValueError(f"{', '.join(unused)}: not used by {spec.name} (it rewrites whole "
                             "documents with a language model)")
    spec.mechanism_object()  # every mechanism error now, before any text is read
    if spec.kind == "word":
        spec.privatizer()  # every policy error now
    else:
        from textdp.lm.masking import DocumentMasker

        DocumentMasker(policy)  # every identifier and entity option error now
    return spec


#: The policy options of the word mechanisms alone (what becomes of out-of-vocabulary words).
_WORD_POLICY = ("oov", "mask_token", "keep_stopwords")


_DEFAULT_POLICY = TokenPolicy()


def _short(value: Any) -> str:
    """``value`` as a message shows it: an integer of hundreds of digits by its size."""
    text = repr(value)
    return text if len(text) <= 40 else f"a number of {len(text)} digits ({text[:12]}…)"
