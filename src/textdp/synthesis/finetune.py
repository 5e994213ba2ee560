"""DP fine-tuning then sampling (``method="finetune"``): LoRA adapters on the packaged language
model, trained by DP-SGD on the masked private documents with the label prompt as context, then
N documents sampled through the language-model engine from the merged weights (Yue et al., ACL
2023, "Synthetic text generation with differential privacy: a simple and practical recipe";
Kurakin et al. 2023, "Harnessing large-language models to generate private synthetic text").

:class:`FinetuneSpec` is the release described once (frozen, checked at construction),
:class:`FinetuneEngine` runs it on this process; both go through
:func:`textdp.runner.run_release` like Private Evolution's (:mod:`textdp.synthesis.api`). The
training step, its sensitivity and its accounting are in :mod:`textdp.synthesis.dpsgd`.

Labels: the adapters learn p(document | label prompt); the output's labels are equal quotas
(N split as evenly as possible over the label names, which are public) — the private label
proportions are not released (that would need its own mechanism and budget).
"""

from __future__ import annotations

import copy
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from textdp._checks import check_epsilon, check_seed
from textdp.runner import Outcome
from textdp.synthesis.prompts import Prompts, clean
from textdp.synthesis.screen import SCREEN_ACTIONS

__all__ = ["FINETUNE_DEFAULTS", "FinetuneEngine", "FinetuneSpec", "label_quotas"]

#: Defaults that run on 2 CPU cores at small scale (docs/synthesize.md).
FINETUNE_DEFAULTS = {"epochs": 3.0, "train_batch": 64, "learning_rate": 2e-3, "clip": 1.0,
                     "lora_rank": 8, "lora_alpha": 16, "max_length": 128, "min_signal": 1.0,
                     "micro_batch": 16}
#: The published seed of the adapters' initial weights (public: no privacy role).
LORA_INIT_SEED = 20230709
_SAMPLE_KEY, _NOISE_KEY, _GENERATE_STAGE = (2**31, 2), (2**31, 3), 2**30


def _finite(value: Any, name: str, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value) or (value <= 0 if positive else value < 0):
        raise ValueError(f"{name} must be a finite number {'>' if positive else '≥'} 0, "
                         f"got {value!r}")
    return float(value)


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}")
    return value


def label_quotas(names: list[str], n: int) -> list[str]:
    """``n`` labels, the names in turn (so every name gets ⌊n/L⌋ or ⌈n/L⌉)."""
    return [names[i % len(names)] for i in range(n)]


@dataclass(frozen=True, slots=True)
class FinetuneSpec:
    """A DP fine-tuning release, described once. See :func:`textdp.synthesize` (``finetune``).

    Attributes (beyond the generation and masking options shared with Private Evolution):
        epochs: expected passes over the units: T = ⌈epochs / q⌉ steps.
        train_batch: expected units per step: q = min(1, train_batch / n).
        learning_rate: Adam's step size on the noisy gradient.
        clip: C, the L2 bound on one unit's gradient.
        lora_rank, lora_alpha: the adapters (on the model's attention projections, peft's
            default targets for the architecture).
        max_length: tokens of a document scored in training (longer ones are cut).
        min_signal: refuse when the expected batch q·n < min_signal·σ (0: never).
        device: where training and sampling run (``auto``, ``cpu``, ``cuda``).
    """

    epsilon: float
    n: int
    delta: float | None = None
    epochs: float = FINETUNE_DEFAULTS["epochs"]
    train_batch: int = FINETUNE_DEFAULTS["train_batch"]
    learning_rate: float = FINETUNE_DEFAULTS["learning_rate"]
    clip: float = FINETUNE_DEFAULTS["clip"]
    lora_rank: int = FINETUNE_DEFAULTS["lora_rank"]
    lora_alpha: float = FINETUNE_DEFAULTS["lora_alpha"]
    max_length: int = FINETUNE_DEFAULTS["max_length"]
    min_signal: float = FINETUNE_DEFAULTS["min_signal"]
    micro_batch: int = FINETUNE_DEFAULTS["micro_batch"]
    seed: int | None = None
    prompts: Prompts = field(default_factory=Prompts)
    temperature: float = 1.0
    top_p: float = 0.95
    max_new_tokens: int = 64
    batch_size: int = 16
    identifiers: Any = True
    entities: Any = "default"
    allow_list: tuple[str, ...] = ()
    screen: str = "mask"
    model: Any = None
    device: str = "auto"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, "ε")  # ε's one check on this path
        for name in ("n", "train_batch", "lora_rank", "max_length", "micro_batch",
                     "max_new_tokens", "batch_size"):
            _positive_int(getattr(self, name), name)
        for name in ("epochs", "learning_rate", "clip", "lora_alpha"):
            _finite(getattr(self, name), name)
        _finite(self.min_signal, "min_signal", positive=False)
        if self.screen not in SCREEN_ACTIONS:
            raise ValueError(f"screen must be one of {', '.join(SCREEN_ACTIONS)}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, got {self.device!r}")
        check_seed(self.seed)
        from textdp.synthesis.generation import NucleusSampler

        NucleusSampler([], temperature=self.temperature, top_p=self.top_p)  # checks both

    def measure(self, source: Any) -> Any:
        """The release's measurement for ``source`` (:func:`textdp.synthesis.dpsgd.plan_dpsgd`);
        :class:`~textdp.synthesis.accountant.DataRefused` for data that cannot be released as asked."""
        from textdp.privacy.accounting import AccountingError
        from textdp.synthesis.accountant import DataRefused, resolve_delta
        from textdp.synthesis.dpsgd import plan_dpsgd

        what = _check_units(source)
        _require_training()  # before the ledger is touched
        units = source.unit_count()
        try:
            delta = resolve_delta(self.delta, units, what)
            m = plan_dpsgd(epsilon=self.epsilon, delta=delta, units=units,
                           expected_batch=self.train_batch, epochs=self.epochs, clip=self.clip,
                           unit=what)
        except (ValueError, AccountingError) as exc:
            raise DataRefused(str(exc)) from None
        if m.expected_batch < self.min_signal * m.noise_multiplier:
            raise DataRefused(
                f"{units} {what}s are too few for the asked ε = {self.epsilon:g} with DP "
                f"fine-tuning: the noise (σ = {m.noise_multiplier:.3g} clipped gradients) would "
                f"exceed the expected batch of {m.expected_batch:.3g} {what}s' gradients; use "
                "more units, a larger ε, fewer --epochs or a larger --train-batch")
        extra = (("expected_batch", m.expected_batch), ("epochs", self.epochs),
                 ("learning_rate", self.learning_rate), ("optimizer", "Adam"),
                 ("lora_rank", self.lora_rank), ("lora_alpha", self.lora_alpha),
                 ("max_length", self.max_length), ("label_mix", "equal"))
        return replace(m, extra=extra)


def _require_training() -> None:
    """opacus and peft (the ``synth`` extra), or ImportError with the one-line install hint."""
    try:
        import opacus  # noqa: F401
        import peft  # noqa: F401
    except ImportError:
        from textdp._guide import MissingExtra, install_hint

        raise MissingExtra(install_hint("synth", "DP fine-tuning (opacus and peft)")) from None


def _check_units(source: Any) -> str:
    """``document`` or ``person``; DataRefused for no documents or a label with one unit."""
    from textdp.synthesis.accountant import DataRefused

    if not source.texts:
        raise DataRefused("no documents: the input is empty")
    what = "document" if source.units is None else "person"
    for label, count in source.units_per_label().items():
        if count < 2 and source.labels is None:
            raise DataRefused(f"the input has only one {what}: a dataset-level release needs "
                              "at least two units")
        if count < 2:
            raise DataRefused(f"label {label!r} has only one {what}: a label needs at least two "
                              "units; merge it into another label or leave it out")
    return what


def _load_model(model: Any) -> Any:
    from textdp.lm import LanguageModel, shared_model

    return model if isinstance(model, LanguageModel) else shared_model(model)


def _adapted(lm: Any, spec: FinetuneSpec, device: str) -> Any:
    """A copy of the model with LoRA adapters (the shared model is left untouched); the
    adapters' A matrices drawn from the published seed (LoRA's own law, uniform ±1/√fan-in),
    B = 0, so the adapted model starts as the base model."""
    import peft
    import torch

    from textdp import _random

    base = copy.deepcopy(lm.model).to(device)
    config = peft.LoraConfig(r=spec.lora_rank, lora_alpha=spec.lora_alpha, lora_dropout=0.0,
                             bias="none", task_type="CAUSAL_LM")
    model = peft.get_peft_model(base, config)
    rng = _random.public_generator(LORA_INIT_SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.requires_grad and ".lora_A." in name:
                bound = 1.0 / math.sqrt(p.shape[1])
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape)).to(p))
    return model


def _examples(lm: Any, spec: FinetuneSpec, texts: list[str], labels: list[str]) -> list[Any]:
    """One training example per masked document: its label's public prompt (chat template),
    then the document's tokens (at most ``max_length``) and the end-of-turn token."""
    from textdp.synthesis.dpsgd import Example

    tok = lm.tokenizer
    end = tok.eos_token_id if tok.eos_token_id is not None else min(lm.eos_ids())
    prompts = {lab: lm.prompt_ids([spec.prompts.first(lab)], "{document}")[0]
               for lab in sorted(set(labels))}
    bodies = tok(texts, add_special_tokens=False)["input_ids"]
    return [Example(tuple(prompts[lab]) + tuple(body[:spec.max_length]) + (int(end),),
                    len(prompts[lab])) for body, lab in zip(bodies, labels, strict=True)]


class FinetuneEngine:
    """Runs DP fine-tuning then sampling on this process.

    ``progress``: ``(description, total) → bar`` with ``update(k)`` and ``close()``, or None."""

    def __init__(self, progress: Callable[[str, int], Any] | None = None) -> None:
        self.progress = progress
        self.generated_tokens = 0

    def _bar(self, what: str, total: int) -> Any:
        return self.progress(what, total) if self.progress is not None else None

    def _train(self, spec: FinetuneSpec, lm: Any, masked: list[str], labels: list[str],
               unit_of: list[int], measurement: Any, device: str) -> Any:
        from textdp import _random
        from textdp.synthesis.dpsgd import train_dpsgd

        def rng(key: tuple[int, int]) -> Any:
            return (_random.seeded_generator(spec.seed, key) if spec.seed is not None
                    else _random.secure_generator())

        model = _adapted(lm, spec, device)
        bar = self._bar("DP fine-tuning (steps)", measurement.steps)
        try:
            train_dpsgd(model, _examples(lm, spec, masked, labels), unit_of, measurement,
                        learning_rate=spec.learning_rate, pad_id=lm.pad_id(), device=device,
                        sample_rng=rng(_SAMPLE_KEY), noise_rng=rng(_NOISE_KEY),
                        micro_batch=spec.micro_batch,
                        progress=None if bar is None else bar.update)
        finally:
            if bar is not None:
                bar.close()
        return model.merge_and_unload()

    def _sample(self, spec: FinetuneSpec, lm: Any, merged: Any, labels: list[str],
                device: str) -> list[str]:
        from textdp.lm import LanguageModel
        from textdp.synthesis.generation import NucleusSampler, generate_ids, row_generators

        tuned = LanguageModel(model=merged.eval(), tokenizer=lm.tokenizer)
        ids = tuned.prompt_ids([spec.prompts.first(lab) for lab in labels], "{document}")
        sampler = NucleusSampler(row_generators(len(ids), spec.seed, _GENERATE_STAGE),
                                 temperature=spec.temperature, top_p=spec.top_p)
        bar = self._bar("sampling", len(ids))
        try:
            rows = generate_ids(tuned, ids, max_new_tokens=spec.max_new_tokens, sampler=sampler,
                                batch_size=spec.batch_size, progress=bar, device=device)
        finally:
            if bar is not None:
                bar.close()
        self.generated_tokens += sum(len(r) for r in rows)
        return [clean(t) for t in lm.tokenizer.batch_decode(rows, skip_special_tokens=True)]

    def run(self, spec: FinetuneSpec, source: Any, measurement: Any) -> Outcome:
        from textdp.lm import resolve_device
        from textdp.synthesis.histogram import label_codes
        from textdp.synthesis.screen import build_masker

        t0 = time.perf_counter()
        masker = build_masker(identifiers=spec.identifiers, entities=spec.entities,
                              allow_list=spec.allow_list)
        masked, private_found = masker.mask(source.texts)  # before the model sees anything
        labels = list(source.labels) if source.labels is not None else [""] * len(masked)
        unit_of = (list(range(len(masked))) if source.units is None
                   else label_codes(source.units, len(masked))[0].tolist())
        device = resolve_device(spec.device)
        lm = _load_model(spec.model)
        merged = self._train(spec, lm, masked, labels, unit_of, measurement, device)
        out_labels = label_quotas(sorted(set(labels)), spec.n)
        texts = self._sample(spec, lm, merged, out_labels, device)
        found = masker.find(texts)
        if spec.screen == "mask":
            texts, _ = masker.mask(texts)
        released = out_labels if source.labels is not None else None
        report = _report(spec, source, measurement, masker=masker, private_found=private_found,
                         output_found=found, texts=texts, labels=released, lm=lm,
                         generated_tokens=self.generated_tokens,
                         seconds=time.perf_counter() - t0, device=device)
        return Outcome((texts, released), report)


def _report(spec: FinetuneSpec, source: Any, m: Any, *, masker: Any, private_found: Counter,
            output_found: list, texts: list[str], labels: list[str] | None, lm: Any,
            generated_tokens: int, seconds: float, device: str) -> Any:
    """The report (kind ``synthesis``) of one DP fine-tuning run, in the layout of Private
    Evolution's (:mod:`textdp.synthesis.report`)."""
    from textdp.privacy.accounting import ACCOUNTANT
    from textdp.privacy.report import release_report
    from textdp.synthesis.report import outcome_sections, output_counts

    by_label, screening, unprotected, warnings = outcome_sections(
        spec, output_found, labels, m.epsilon,
        "n sets the default δ and the sampling rate; treated as public")
    mechanism = {"name": m.name, "parameters": m.parameters,
                 "method": "DP fine-tuning (LoRA adapters trained by DP-SGD) then sampling "
                           "(Yue et al., ACL 2023; Kurakin et al. 2023)"}
    inputs = {"model": lm.describe(), "adapters": {"kind": "LoRA (peft)", "rank": spec.lora_rank,
                                                   "alpha": spec.lora_alpha, "merged": True,
                                                   "init_seed": LORA_INIT_SEED},
              "prompts": spec.prompts.describe(), "device": device,
              "generation": {"temperature": spec.temperature, "top_p": spec.top_p,
                             "max_new_tokens": spec.max_new_tokens},
              "masking": masker.description}
    counts = output_counts(source, m.units, by_label, texts, generated_tokens, private_found)
    accounting = {"accountant": ACCOUNTANT, "mechanism": "Poisson-sampled Gaussian (DP-SGD), "
                  f"each {m.unit}'s gradient clipped to L2 norm C", "steps": m.steps,
                  "sampling_probability": m.sampling_probability,
                  "expected_batch": m.expected_batch, "noise_multiplier": m.noise_multiplier,
                  "clip": m.clip, "epsilon_asked": m.asked_epsilon,
                  "epsilon_accountant": m.accountant_epsilon, "epsilon_reported": m.epsilon,
                  "epsilon_rule": "min(asked ε, the accountant's ε for σ rounded up to 6 "
                                  "significant digits): never below the accountant's ε",
                  "delta": m.delta, "delta_rule": ("given" if spec.delta is not None else
                                                   "default: the largest power of ten ≤ 1/n^1.1"),
                  "units": m.units, "unit": m.unit,
                  "sensitivity": f"each sampled {m.unit}'s gradient (the mean over its documents) "
                                 "is clipped to L2 norm C before the sum: adding or removing one "
                                 "unit moves the summed gradient by at most C",
                  "events": m.accounting["events"]}
    return release_report(
        "synthesis", mechanism, m.guarantee.to_dict(), inputs, counts, unprotected, warnings,
        spec.seed, seconds, (("synthetic_documents", len(texts)),
                             ("generated_tokens", generated_tokens)),
        unit="prompt i", sections={"accounting": accounting, "screening": screening})
