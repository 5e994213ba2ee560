"""``textdp.synthesize``: N synthetic documents under (ε, δ)-DP at the dataset level, by Private
Evolution, as one guarded release (:func:`textdp.runner.run_release`).

:class:`SynthesisSpec` is the release described once (frozen, checked at construction);
:class:`TextSource` the private data (texts, labels, units); :class:`PrivateEvolutionEngine`
runs the method; :func:`synthesize` is the library front. The command line
(``textdp synthesize``) builds the same three and calls the same runner.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp._checks import check_epsilon, check_seed, check_texts
from textdp.runner import Outcome, run_release
from textdp.synthesis.accountant import DataRefused
from textdp.synthesis.evolution import LABEL_MIXES, Evolution, signal_check
from textdp.synthesis.histogram import label_codes
from textdp.synthesis.prompts import DEFAULT_DOCUMENT_KIND, VARIATION, Prompts, clean
from textdp.synthesis.screen import SCREEN_ACTIONS

__all__ = ["DEFAULTS", "DataRefused", "PrivateEvolutionEngine", "SynthesisResult",
           "SynthesisSpec", "TextSource", "synthesize"]

#: Defaults that run on 2 CPU cores at small scale (docs/synthesize.md).
DEFAULTS: dict[str, Any] = {"rounds": 3, "temperature": 1.0, "top_p": 0.95,
                            "max_new_tokens": 64, "batch_size": 16, "threshold": 0.0,
                            "min_signal": 1.0, "variation_temperature": None}
_NOISE_KEY, _SELECT_KEY = (2**31, 0), (2**31, 1)


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class TextSource:
    """The private data: texts, and per text its label and its unit (person), or None."""

    texts: tuple[str, ...]
    labels: tuple[str, ...] | None = None
    units: tuple[str, ...] | None = None
    name: str | None = None

    @classmethod
    def build(cls, texts: Sequence[str], labels: Sequence[Any] | None = None,
              units: Sequence[Any] | None = None, name: str | None = None) -> TextSource:
        texts = tuple(check_texts(texts))
        out = []
        for what, values in (("labels", labels), ("units", units)):
            if values is None:
                out.append(None)
                continue
            if isinstance(values, str):
                raise TypeError(f"{what} must be a list, one per text, not a single string")
            values = tuple(str(v) for v in values)
            if len(values) != len(texts):
                raise ValueError(f"{len(values)} {what} for {len(texts)} texts: give one per text")
            out.append(values)
        return cls(texts, out[0], out[1], name)

    def fingerprint(self) -> tuple[str, int]:
        from textdp.privacy.fingerprint import fingerprint_texts

        return fingerprint_texts(self.texts)

    def unit_count(self) -> int:
        return len(self.texts) if self.units is None else len(set(self.units))

    def units_per_label(self) -> dict[str, int]:
        """Label → how many distinct units wrote in it (documents, or persons)."""
        labels = self.labels if self.labels is not None else ("",) * len(self.texts)
        keys = self.units if self.units is not None else range(len(self.texts))
        seen: dict[str, set] = {}
        for label, key in zip(labels, keys, strict=True):
            seen.setdefault(label, set()).add(key)
        return {label: len(v) for label, v in sorted(seen.items())}


@dataclass(frozen=True, slots=True)
class SynthesisSpec:
    """A DP synthetic-text release, described once. See :func:`synthesize` for the fields."""

    epsilon: float
    n: int
    delta: float | None = None
    rounds: int = DEFAULTS["rounds"]
    population: int | None = None
    threshold: float = DEFAULTS["threshold"]
    label_mix: str = "noisy"
    min_signal: float = DEFAULTS["min_signal"]
    seed: int | None = None
    prompts: Prompts = field(default_factory=Prompts)
    temperature: float = DEFAULTS["temperature"]
    top_p: float = DEFAULTS["top_p"]
    max_new_tokens: int = DEFAULTS["max_new_tokens"]
    batch_size: int = DEFAULTS["batch_size"]
    variation_temperature: float | None = DEFAULTS["variation_temperature"]
    identifiers: Any = True
    entities: Any = "default"
    allow_list: tuple[str, ...] = ()
    screen: str = "mask"
    model: Any = None
    encoder: Any = None
    device: str = "auto"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, "ε")  # ε's one check on this path
        _positive_int(self.n, "n")
        _positive_int(self.rounds, "rounds")
        _positive_int(self.max_new_tokens, "max_new_tokens")
        _positive_int(self.batch_size, "batch_size")
        if self.population is not None:
            _positive_int(self.population, "population")
        if self.label_mix not in LABEL_MIXES:
            raise ValueError(f"label_mix must be one of {', '.join(LABEL_MIXES)}")
        if self.screen not in SCREEN_ACTIONS:
            raise ValueError(f"screen must be one of {', '.join(SCREEN_ACTIONS)}")
        for name in ("threshold", "min_signal"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
                    math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number ≥ 0, got {v!r}")
        check_seed(self.seed)
        from textdp.synthesis.generation import NucleusSampler

        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")

        NucleusSampler([], temperature=self.temperature, top_p=self.top_p)  # checks both
        if self.variation_temperature is not None:
            NucleusSampler([], temperature=self.variation_temperature)

    def temperature_of(self, stage: int) -> float:
        """The sampling temperature of a generation stage (0: the first population; t ≥ 1: the
        variations of round t)."""
        if stage == 0 or self.variation_temperature is None:
            return self.temperature
        return self.variation_temperature

    def population_of(self, labels: int) -> int:
        """Candidates per label in the rounds before the last: ``population``, else ⌈n / L⌉."""
        return self.population or max(1, math.ceil(self.n / labels))

    def measure(self, source: TextSource) -> Any:
        """The release's measurement for ``source`` (:func:`textdp.synthesis.accountant.plan`);
        ValueError for data that cannot be released as asked (see docs/synthesize.md)."""
        from textdp.synthesis.accountant import plan

        if not source.texts:
            raise DataRefused("no documents: the input is empty")
        per_label = source.units_per_label()
        what = "document" if source.units is None else "person"
        for label, _ in self.prompts.descriptions:
            if source.labels is None or label not in per_label:
                raise DataRefused(f"a description is given for label {label!r}, which no "
                                  "document has" + ("" if source.labels is not None else
                                                     " (the input has no labels)"))
        for label, count in per_label.items():
            if count < 2 and source.labels is None:
                raise DataRefused(f"the input has only one {what}: a dataset-level release "
                                  "needs at least two units")
            if count < 2:
                raise DataRefused(f"label {label!r} has only one {what}: a label needs at least "
                                  "two units (its synthetic documents would follow one unit's "
                                  "votes); merge it into another label or leave it out")
        try:
            measurement = plan(epsilon=self.epsilon, delta=self.delta, rounds=self.rounds,
                               units=source.unit_count(), unit=what)
        except ValueError as exc:
            raise DataRefused(str(exc)) from None
        population = self.population_of(len(per_label))
        why = signal_check(list(per_label.values()), list(per_label), measurement.noise_multiplier,
                           population, self.min_signal)
        if why is not None:
            raise DataRefused(why)
        extra = (("population", population), ("threshold_sigmas", self.threshold),
                 ("label_mix", self.label_mix), ("selection", "∝ max(H̃ − θσ, 0), with "
                 "replacement; distinct parents kept, other draws rewritten"),
                 ("variation", "LM rewrite (paraphrase prompt)"))
        from dataclasses import replace

        return replace(measurement, extra=extra)


@dataclass(frozen=True, slots=True)
class SynthesisResult:
    texts: list[str]
    labels: list[str] | None
    report: Any


def _load_model(model: Any) -> Any:
    from textdp.lm import LanguageModel, shared_model

    # A path or None: the process's one copy of the model (loaded once, then kept).
    return model if isinstance(model, LanguageModel) else shared_model(model)


def _load_encoder(encoder: Any) -> Any:
    from textdp.encoders import SBERT, get_encoder

    return SBERT() if encoder is None else get_encoder(encoder)


class PrivateEvolutionEngine:
    """Runs Private Evolution on this process (the language model and the encoder here).

    ``progress``: ``(description, total) → bar`` with ``update(k)`` and ``close()``, or None."""

    def __init__(self, progress: Callable[[str, int], Any] | None = None) -> None:
        self.progress = progress
        #: Tokens generated by the model in this engine's runs.
        self.generated_tokens = 0

    def _generator(self, spec: SynthesisSpec, lm: Any) -> Callable[[list[str], int], list[str]]:
        from textdp.synthesis.generation import NucleusSampler, generate_ids, row_generators

        def generate(prompts: list[str], stage: int) -> list[str]:
            ids = lm.prompt_ids(prompts, "{document}")
            sampler = NucleusSampler(row_generators(len(prompts), spec.seed, stage),
                                     temperature=spec.temperature_of(stage), top_p=spec.top_p)
            what = "initial population" if stage == 0 else f"round {stage}/{spec.rounds}"
            bar = self.progress(what, len(prompts)) if self.progress is not None else None
            try:
                rows = generate_ids(lm, ids, max_new_tokens=spec.max_new_tokens, sampler=sampler,
                                    batch_size=spec.batch_size, progress=bar,
                                    device=spec.device)
            finally:
                if bar is not None:
                    bar.close()
            self.generated_tokens += sum(len(r) for r in rows)
            return [clean(t) for t in lm.decode(rows)]

        return generate

    def run(self, spec: SynthesisSpec, source: TextSource, measurement: Any) -> Outcome:
        from textdp import _random
        from textdp.synthesis.report import synthesis_report
        from textdp.synthesis.screen import build_masker

        t0 = time.perf_counter()
        masker = build_masker(identifiers=spec.identifiers, entities=spec.entities,
                              allow_list=spec.allow_list)
        masked, private_found = masker.mask(source.texts)
        codes, names = label_codes(source.labels, len(source.texts))
        units = None if source.units is None else label_codes(source.units, len(source.texts))[0]
        encoder = _load_encoder(spec.encoder)
        private = np.asarray(encoder(masked), dtype=np.float64)
        lm = _load_model(spec.model)
        seeded = spec.seed is not None
        evolution = Evolution(
            labels=names, generate=self._generator(spec, lm),
            embed=lambda texts: encoder(texts), prompts=spec.prompts,
            noise_multiplier=measurement.noise_multiplier, rounds=spec.rounds,
            population=spec.population_of(len(names)), threshold=spec.threshold,
            label_mix=spec.label_mix,
            noise_rng=(_random.seeded_generator(spec.seed, _NOISE_KEY) if seeded
                       else _random.secure_generator()),
            select_rng=(_random.seeded_generator(spec.seed, _SELECT_KEY) if seeded
                        else _random.secure_generator()))
        final = evolution.run(private, codes, units, spec.n)
        texts = list(final.texts)
        found = masker.find(texts)
        if spec.screen == "mask":
            texts, _ = masker.mask(texts)
        labels = [names[c] for c in final.labels.tolist()] if source.labels is not None else None
        report = synthesis_report(
            spec, source, measurement, evolution=evolution, masker=masker,
            private_found=private_found, output_found=found, texts=texts, labels=labels,
            generated_tokens=self.generated_tokens, model=lm.describe(),
            encoder=encoder.describe(), seconds=time.perf_counter() - t0)
        return Outcome((texts, labels), report)


def synthesize(texts: Sequence[str], *, labels: Sequence[Any] | None = None,
               units: Sequence[Any] | None = None, epsilon: float, delta: float | None = None,
               n: int, rounds: int = DEFAULTS["rounds"], population: int | None = None,
               seed: int | None = None, document_kind: str = DEFAULT_DOCUMENT_KIND,
               prompt: str | None = None, variation_prompt: str = VARIATION,
               temperature: float = DEFAULTS["temperature"], top_p: float = DEFAULTS["top_p"],
               max_new_tokens: int = DEFAULTS["max_new_tokens"],
               batch_size: int = DEFAULTS["batch_size"],
               threshold: float = DEFAULTS["threshold"], label_mix: str = "noisy",
               min_signal: float = DEFAULTS["min_signal"], identifiers: Any = True,
               entities: Any = "default", allow_list: Sequence[str] | None = None,
               screen: str = "mask", model: Any = None, encoder: Any = None,
               ledger: Any = None, ledger_policy: str = "warn", budget: float | None = None,
               input_name: str | None = None, progress: Callable[[str, int], Any] | None = None,
               method: str = "evolution", finetune: dict[str, Any] | None = None,
               device: str = "auto", label_descriptions: Mapping[str, str] | None = None,
               variation_temperature: float | None = None) -> SynthesisResult:
    """``n`` synthetic documents (with labels when ``labels`` are given) under (ε, δ)-DP at the
    dataset level, by Private Evolution (Xie et al., ICML 2024) or, with ``method="finetune"``,
    by DP fine-tuning then sampling (docs/synthesize.md).

    Args:
        texts: the private documents.
        labels: one label per document (label-conditional generation; label names are public).
        units: one unit (person) per document: the guarantee then protects all documents of a
            person (each person's votes split one vote of L2 norm 1 per round).
        epsilon, delta, n: the target, n documents; δ defaults to the largest power of ten
            ≤ 1/n_units^1.1 and must be < 1/n_units.
        rounds: T, rounds of DP nearest-neighbour voting (each a Gaussian mechanism).
        population: candidates per label in each round (default ⌈n / labels⌉).
        seed: None (secure randomness) or an integer (reproducible; not for production).
        document_kind, prompt, variation_prompt: public prompts (:mod:`.prompts`; ``{label}``).
        label_descriptions: label → PUBLIC text about it (a definition or an invented example)
            for the first prompts (``{description}``); a label no document has is refused.
        temperature, top_p, max_new_tokens, batch_size: generation.
        variation_temperature: the variations' temperature (None: ``temperature``).
        threshold: θ, candidates with noisy count ≤ θσ are not selected.
        label_mix: ``noisy`` (output label quotas from the noisy histograms) or ``equal``.
        min_signal: refuse when a label's units n_l < min_signal·σ·√population (0: never).
        identifiers, entities, allow_list: the masking of the private documents (as
            :func:`textdp.privatize`); the same recognisers screen the output.
        screen: ``mask`` (what they find in the output is masked and counted) or ``keep``.
        model: a :class:`textdp.lm.LanguageModel` or a path (default SmolLM2-135M-Instruct).
        encoder: an encoder or callable ``texts → (k, d)`` (default all-MiniLM-L6-v2).
        ledger, ledger_policy, budget, input_name: as :func:`textdp.privatize`.
        progress: ``(description, total) → bar`` for the generation of each round.
        method: ``evolution`` (the default) or ``finetune`` (DP-SGD on LoRA adapters, then
            sampling: :mod:`.finetune`; Private Evolution's own options are not used).
        finetune: options of :class:`textdp.synthesis.finetune.FinetuneSpec` (epochs,
            train_batch, learning_rate, clip, lora_rank, lora_alpha, max_length, min_signal,
            micro_batch, device) for ``method="finetune"``.
        device: where the model runs (``auto``: a GPU if any; ``cpu``; ``cuda``).

    Returns ``.texts``, ``.labels`` (None without labels) and ``.report``.

    Raises ValueError for bad options or data that cannot be released as asked (docs/synthesize.md),
    textdp.ledger.LedgerRefused when the ledger's budget would be exceeded (nothing generated).
    """
    from textdp.ledger import as_ledger

    book = as_ledger(ledger, ledger_policy, budget)
    source = TextSource.build(texts, labels, units, input_name)
    described = tuple((str(k), v) for k, v in (label_descriptions or {}).items())
    shared = {"epsilon": epsilon, "n": n, "delta": delta, "seed": seed, "temperature": temperature,
              "top_p": top_p, "max_new_tokens": max_new_tokens, "batch_size": batch_size,
              "identifiers": identifiers, "entities": entities, "screen": screen, "model": model,
              "allow_list": tuple(allow_list or ())}  # the options both methods take, by name
    if _method(method, finetune) == "finetune":  # finetune's options may set the device
        from textdp.synthesis.finetune import FinetuneEngine, FinetuneSpec

        spec: Any = FinetuneSpec(prompts=Prompts(document_kind, prompt, descriptions=described),
                                 **shared, **({"device": device} | (finetune or {})))
        outcome = run_release(spec, source, FinetuneEngine(progress), ledger=book)
    else:
        spec = SynthesisSpec(rounds=rounds, population=population, threshold=threshold, label_mix=label_mix,
                             min_signal=min_signal, encoder=encoder, device=device, **shared,
                             variation_temperature=variation_temperature,
                             prompts=Prompts(document_kind, prompt, variation_prompt, described))
        outcome = run_release(spec, source, PrivateEvolutionEngine(progress), ledger=book)
    return SynthesisResult(*outcome.output, outcome.report)


def _method(method: str, finetune: dict[str, Any] | None) -> str:
    """``evolution`` or ``finetune``; ``finetune`` options only with the latter."""
    if method not in ("evolution", "finetune"):
        raise ValueError(f"method must be evolution or finetune, got {method!r}")
    if method != "finetune" and finetune:
        raise ValueError("finetune options are for method='finetune'")
    return method
