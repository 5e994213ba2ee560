"""A configured release: what to run, on which words, with what policy — built and checked once.

Every front (the CLI's local, Ray and LM engines, :func:`textdp.privatize`, Ray Data, pandas,
``datasets``, scikit-learn) turns its keyword arguments into one :class:`ReleaseSpec` — a
:class:`WordSpec` or a :class:`PromptSpec`, checked at construction — with
:func:`release_spec`, and runs that. The spec is frozen and picklable: a worker process receives
the spec (a recipe: mechanism name, ε, parameters, policy), never a generator, and builds the
mechanism once per process (:meth:`ReleaseSpec.mechanism_object`).

Every option has the same name in every front: :data:`OPTION_NAMES` is the one list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from numbers import Real
from typing import Any

from textdp._checks import check_probability, check_seed
from textdp._guide import names_listing
from textdp.mechanisms.prompt import MECHANISMS as _PROMPT_CLASSES

__all__ = ["KINDS", "ReleaseSpec", "WordSpec", "PromptSpec", "TokenPolicy", "VectorSpec",
           "release_spec", "OPTION_NAMES", "POLICY_OPTIONS", "PROMPT_MECHANISMS", "DEFAULT_MASK"]

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
    """One release of text, fully described and checked once, at construction: a
    :class:`WordSpec` (a word mechanism) or a :class:`PromptSpec` (a language model rewrites each
    document). :func:`release_spec` builds the right one from keyword arguments; a front that
    has its options typed already builds one directly.

    Attributes:
        mechanism: a registered mechanism name (:func:`textdp.mechanisms.available`) or a
            built mechanism object.
        epsilon: ε the mechanism is built with (None for a built mechanism; with an allocation,
            its top level). Its range is checked where the mechanism is built, once
            (:func:`textdp._checks.check_epsilon`).
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

    def __post_init__(self) -> None:
        if type(self) is ReleaseSpec:
            raise TypeError("a release is a WordSpec or a PromptSpec: build one of them, or call "
                            "textdp.spec.release_spec")
        built = not isinstance(self.mechanism, str)
        if built and (self.epsilon is not None or self.params or self.vocabulary is not None):
            raise ValueError("pass parameters to the mechanism object, not with it")
        if not isinstance(self.policy, TokenPolicy):
            raise TypeError(f"policy must be a TokenPolicy, got {type(self.policy).__name__}")
        if (isinstance(self.batch_chars, bool) or not isinstance(self.batch_chars, int)
                or self.batch_chars < 1):
            raise ValueError(f"batch_chars must be a positive integer, got {self.batch_chars!r}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "unchanged_warning", check_probability(
            self.unchanged_warning, "unchanged_warning", open_low=False, open_high=False))
        self._check_kind()
        self.mechanism_object()  # every mechanism error now (ε's range among them), once

    def _check_kind(self) -> None:
        raise NotImplementedError

    @property
    def name(self) -> str:
        """The mechanism's registered name."""
        return self.mechanism if isinstance(self.mechanism, str) else self.mechanism.name

    @property
    def kind(self) -> str:
        """``"prompt"`` (a language model rewrites each document) or ``"word"``: the class."""
        return "prompt" if isinstance(self, PromptSpec) else "word"

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
        # Entities objects may hold dicts); a parameter that cannot be hashed is not cached. ε's
        # type too: True == 1.0, and must meet the mechanism's check, not 1.0's mechanism.
        key = (self.mechanism, type(self.epsilon), self.epsilon, self.params, id(self.vocabulary))
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
        raise ValueError(f"mechanism {self.name!r} rewrites whole documents with a language "
                         "model: run it with textdp.lm.paraphrase or `textdp privatize`")


@dataclass(frozen=True, slots=True)
class WordSpec(ReleaseSpec):
    """A release by a word mechanism: each word of the vocabulary privatised, the token policy
    around it (:class:`textdp.pipeline.Privatizer`). Checked at construction: the mechanism is
    built (its parameters, ε among them) and so is the token policy."""

    def _check_kind(self) -> None:
        from textdp.mechanisms.base import WordMechanism

        if isinstance(self.mechanism, str):
            if self.epsilon is None:
                raise ValueError("epsilon is required")
        elif not isinstance(self.mechanism, WordMechanism):
            raise TypeError("mechanism must be a name or a textdp word mechanism")

    def __post_init__(self) -> None:
        ReleaseSpec.__post_init__(self)
        self.privatizer()  # every policy error now

    def privatizer(self) -> Any:
        from textdp.pipeline import Privatizer

        return Privatizer.of(self)


@dataclass(frozen=True, slots=True)
class PromptSpec(ReleaseSpec):
    """A release by a language-model mechanism (``dp_prompt``): identifiers and entities masked
    (the policy's identifier and entity options; the word options do not apply), then each
    document rewritten (:mod:`textdp.lm`). Checked at construction."""

    def _check_kind(self) -> None:
        if self.allocation is not None:
            raise ValueError("dp_prompt spends ε per document: it takes no allocation")
        # A prompt mechanism masks identifiers and entities before the model reads a document
        # (textdp.lm.masking), as the word mechanisms do; the word options do not apply.
        unused = [name for name in _WORD_POLICY
                  if getattr(self.policy, name) != getattr(_DEFAULT_POLICY, name)]
        if unused:
            raise ValueError(f"{', '.join(unused)}: not used by {self.name} (it rewrites whole "
                             "documents with a language model)")

    def __post_init__(self) -> None:
        ReleaseSpec.__post_init__(self)
        from textdp.lm.masking import DocumentMasker

        DocumentMasker(self.policy)  # every identifier and entity option error now


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
    """Keyword arguments as a release: a :class:`WordSpec` or a :class:`PromptSpec`, which
    checks them once, when it is built (every front's options end here).

    Here the loose forms become the object's: mappings become sorted pairs, lists tuples, an
    allocation rule with ``epsilon_document`` (and floor, ceiling) an
    :class:`~textdp.allocation.Allocation` and the ε the mechanism is built with.

    ``params`` are the mechanism's own parameters (``n_lists``, ``k``, …; for ``dp_prompt``
    also ``model``, the language model: a path or a :class:`textdp.lm.LanguageModel`, and
    ``device``: ``auto``, ``cpu`` or ``cuda``); a name that is
    neither an option nor a parameter of the mechanism is a ValueError naming the nearest
    option. The mechanism is built with the spec (so every error surfaces before any text is
    read) and kept in a per-process cache.
    """
    from textdp import mechanisms as registry
    from textdp.allocation import resolve_allocation

    names = registry.available()  # word and prompt mechanisms
    if isinstance(mechanism, str) and mechanism not in names:
        raise ValueError(f"unknown mechanism {mechanism!r}; "
                         f"{names_listing(str(mechanism), names, 'available')}")
    prompt = isinstance(mechanism, str) and mechanism in PROMPT_MECHANISMS
    if not prompt:  # a rule name and ε_doc become an Allocation and the ε to build with
        allocation, epsilon = resolve_allocation(allocation, epsilon, epsilon_document,
                                                 epsilon_floor, epsilon_ceiling, mechanism)
    policy = TokenPolicy(
        oov=oov, mask_token=mask_token, keep_stopwords=bool(keep_stopwords),
        identifiers=identifiers, identifier_labels=_pairs(identifier_labels, "identifier_labels"),
        identifier_patterns=_pairs(identifier_patterns, "identifier_patterns"),
        deny_list=_terms(deny_list, "deny_list"),
        phone_regions=None if phone_regions is None else _terms(phone_regions, "phone_regions"),
        entities=tuple(entities) if isinstance(entities, list) else entities,
        allow_list=_terms(allow_list, "allow_list"))
    kind = PromptSpec if prompt else WordSpec
    return kind(mechanism=mechanism, epsilon=_number(epsilon), params=tuple(sorted(params.items())),
                vocabulary=vocabulary, policy=policy, allocation=allocation, seed=seed,
                unchanged_warning=unchanged_warning, batch_chars=batch_chars)


def _number(epsilon: Any) -> Any:
    """ε as the spec keeps it: a float when it is a real number (its range is the mechanism's
    to check, once); anything else as given, for the mechanism to refuse."""
    if isinstance(epsilon, Real) and not isinstance(epsilon, bool):
        try:
            return float(epsilon)
        except OverflowError:  # 10**400: the mechanism names it
            return epsilon
    return epsilon


#: The policy options of the word mechanisms alone (what becomes of out-of-vocabulary words).
_WORD_POLICY = ("oov", "mask_token", "keep_stopwords")


_DEFAULT_POLICY = TokenPolicy()
