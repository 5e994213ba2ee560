"""DP-SGD on LoRA adapters, per unit (a document, or every document of one person), and what it
spends, accounted by ``dp-accounting``.

One step (Abadi et al., CCS 2016, Algorithm 1, with a person as the unit as in McMahan et al.,
ICLR 2018, "DP-FedAvg"/"DP-SGD at the user level"):

1. **Poisson sampling**: each of the n units is in the step's batch independently with
   probability q (drawn through :mod:`textdp._random`);
2. **per-unit gradient**: the gradient g_u of the mean, over the unit's documents, of each
   document's mean token loss (with the label prompt as context; only the document's tokens are
   scored). The per-document gradients come from Opacus's ``GradSampleModule`` in one backward
   pass per micro-batch and are summed per unit — so a person's documents are clipped
   *together*, not one by one;
3. **clipping**: g_u · min(1, C / ‖g_u‖₂) — every unit's contribution to the sum has L2 norm ≤ C
   (:func:`clip_and_sum`; a brute-force test checks it);
4. **noise**: Σ_u clipped g_u + N(0, σ²C²I) (:func:`add_noise`), divided by the *expected* batch
   size q·n (a fixed, public denominator: the sensitivity stays C / (q·n));
5. the optimiser (Adam) steps on that noisy gradient: post-processing.

Adding or removing one unit changes one step's noisy sum by a vector of norm ≤ C when the unit
is sampled, and not at all otherwise: each step is the Poisson-sampled Gaussian mechanism with
noise multiplier σ, and T steps are its adaptive composition, accounted by dp-accounting's PLD
accountant (:func:`textdp.privacy.accounting.sampled_gaussian_event`). σ is calibrated to the
asked (ε, δ) for the T steps and the rate q by the same accountant
(:func:`~textdp.privacy.accounting.calibrate_sampled_noise_multiplier`). Everything after
training — merging the adapters, sampling N documents — is post-processing.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textdp.privacy import Budget, Guarantee, Notion, check_distance, format_up
from textdp.privacy.accounting import (
    ACCOUNTANT,
    calibrate_sampled_noise_multiplier,
    epsilon_of,
    sampled_gaussian_event,
)
from textdp.synthesis.accountant import DatasetLevel

__all__ = ["DPSGDMeasurement", "Example", "add_noise", "clip_and_sum", "plan_dpsgd",
           "poisson_batch", "train_dpsgd", "unit_gradients"]

REFERENCE = ("Abadi et al., CCS 2016 (DP-SGD), Algorithm 1; McMahan et al., ICLR 2018 (user-level "
             "clipping); Yue et al., ACL 2023 and Kurakin et al. 2023 (DP fine-tuning then "
             "sampling); Poisson-sampled Gaussian composed by dp-accounting's PLD accountant "
             "(Doroshenko et al., PETS 2022)")


@dataclass(frozen=True, slots=True)
class DPSGDMeasurement(DatasetLevel):
    """A DP fine-tuning release as a measurement: notion, input metric, privacy map, and the
    events the ledger's accountant composes.

    Attributes:
        epsilon: min(asked ε, the accountant's ε for σ rounded up to 6 significant digits).
        delta: δ.
        steps: T, the DP-SGD steps.
        sampling_probability: q, each unit's chance to be in a step's batch.
        noise_multiplier: σ (the noise's standard deviation is σ·C on the summed gradient).
        clip: C, the bound on one unit's gradient (L2).
        unit: ``"document"`` or ``"person"``.
        units: n, the number of units in the input.
        asked_epsilon: the ε the release was calibrated for.
        accountant_epsilon: the accountant's ε for σ (unrounded).
    """

    epsilon: float
    delta: float
    steps: int
    sampling_probability: float
    noise_multiplier: float
    clip: float
    unit: str
    units: int
    asked_epsilon: float
    accountant_epsilon: float
    extra: tuple[tuple[str, Any], ...] = field(default=())

    name = "dp_finetune"

    @property
    def expected_batch(self) -> float:
        return self.sampling_probability * self.units

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "steps": self.steps,
                "sampling_probability": self.sampling_probability,
                "noise_multiplier": self.noise_multiplier, "clip": self.clip,
                "unit": self.unit, **dict(self.extra)}

    @property
    def accounting(self) -> dict[str, Any]:
        """What the ledger records for its accountant (:mod:`textdp.privacy.accounting`)."""
        return {"accountant": ACCOUNTANT,
                "events": [sampled_gaussian_event(self.noise_multiplier,
                                                  self.sampling_probability, self.steps)]}

    @property
    def guarantee(self) -> Guarantee:
        per_unit = (f"for any two datasets that differ by one {self.unit}, every set of outputs "
                    f"(the fine-tuned adapters, hence the synthetic documents and their labels) "
                    f"has probability at most e^{format_up(self.epsilon)}·P' + {self.delta:.3g}")
        return Guarantee(
            notion=Notion.APPROXIMATE_DP, epsilon=self.epsilon, delta=self.delta,
            metric=self.metric, per_word=per_unit,
            per_document=(f"the whole release: {self.steps} DP-SGD steps (Poisson sampling at "
                          f"q = {self.sampling_probability:.6g}, each {self.unit}'s gradient "
                          f"clipped to L2 norm {self.clip:g}, Gaussian noise σ = "
                          f"{self.noise_multiplier:.6g}·C), composed by {ACCOUNTANT}; merging "
                          "the adapters and sampling are post-processing"),
            assumptions=("the language model and the prompts are public (their pretraining "
                         "data is not protected by this guarantee)",
                         "label names and the number of units are treated as public",
                         "the initial adapter weights are public (drawn from a published seed)",
                         "idealised floating-point Gaussian noise and Poisson sampling"),
            reference=REFERENCE)

    def privacy_map(self, d_in: Any) -> Budget:
        """(ε, δ) for datasets ``d_in`` units apart: group privacy of (ε, δ)-DP,
        (kε, k·e^{(k−1)ε}·δ) for k = ⌈d⌉ (Dwork & Roth 2014, Lemma 2.2 generalised; a sampled
        mechanism's group has no simpler exact curve in dp-accounting)."""
        d = check_distance(d_in)
        if not isinstance(d, float):
            raise ValueError("the dataset-level map takes one distance")
        if d == 0:
            return Budget(0.0, 0.0)
        k = math.ceil(d)
        if k == 1:
            return Budget(self.epsilon, self.delta)
        delta = min(1.0, k * math.exp((k - 1) * self.epsilon) * self.delta)
        return Budget(float(format_up(k * self.epsilon)), delta)


def plan_dpsgd(*, epsilon: float, delta: float, units: int, expected_batch: int, epochs: float,
               clip: float, unit: str) -> DPSGDMeasurement:
    """σ for T = ⌈epochs / q⌉ steps at q = min(1, expected_batch / units) to meet (ε, δ), by
    the accountant, and the measurement of the release (ε reported as in
    :mod:`textdp.synthesis.accountant`)."""
    q = min(1.0, expected_batch / units)
    steps = max(1, math.ceil(epochs / q))
    sigma = calibrate_sampled_noise_multiplier(float(epsilon), float(delta), q, steps)
    accounted = epsilon_of([sampled_gaussian_event(sigma, q, steps)], float(delta))
    reported = min(float(epsilon), float(format_up(accounted)))
    return DPSGDMeasurement(epsilon=reported, delta=float(delta), steps=steps,
                            sampling_probability=q, noise_multiplier=sigma, clip=float(clip),
                            unit=unit, units=int(units), asked_epsilon=float(epsilon),
                            accountant_epsilon=accounted)


# --- the step ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Example:
    """One training document: its token ids (prompt, then document, then end of turn) and how
    many leading ids are the prompt (context only, not scored)."""

    ids: tuple[int, ...]
    prompt_length: int


def poisson_batch(rng: np.random.Generator, units: int, q: float) -> np.ndarray:
    """The units in one step's batch: each independently with probability ``q``."""
    return np.flatnonzero(rng.random(units) < q)


def clip_and_sum(grads: Any, clip: float) -> Any:
    """Σ_u g_u · min(1, C / ‖g_u‖₂) over the rows of ``grads`` ([k, P] torch tensor): each row's
    contribution has L2 norm ≤ C. A zero row stays zero."""
    norms = grads.norm(dim=1)
    # 1e-12: a zero gradient gets factor ≤ 1 instead of 0/0; C/(‖g‖ + tiny) keeps ‖·‖ ≤ C.
    factors = (clip / (norms + 1e-12)).clamp(max=1.0)
    return (grads * factors[:, None]).sum(0)


def add_noise(total: Any, sigma: float, clip: float, rng: np.random.Generator) -> Any:
    """``total`` + N(0, (σC)² I), the normal draws from ``rng`` (textdp's generator, never
    torch's), cast to the tensor's dtype and device."""
    import torch

    noise = rng.standard_normal(total.numel()) * (sigma * clip)
    return total + torch.from_numpy(noise).to(dtype=total.dtype, device=total.device)


def _pad(examples: Sequence[Example], pad_id: int, device: str) -> tuple[Any, Any, Any]:
    """Right-padded ids, attention mask, and the targets (−100 where not scored)."""
    import torch

    width = max(len(e.ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    targets = torch.full((len(examples), width), -100, dtype=torch.long)
    for i, e in enumerate(examples):
        row = torch.tensor(e.ids, dtype=torch.long)
        ids[i, :len(e.ids)], mask[i, :len(e.ids)] = row, 1
        targets[i, e.prompt_length:len(e.ids)] = row[e.prompt_length:]
    return ids.to(device), mask.to(device), targets.to(device)


def _document_losses(model: Any, examples: Sequence[Example], pad_id: int, device: str) -> Any:
    """Each document's mean token loss (next-token cross-entropy over its scored tokens)."""
    import torch

    ids, mask, targets = _pad(examples, pad_id, device)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
    shifted = targets[:, 1:]
    losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), shifted,
                                               ignore_index=-100, reduction="none")
    scored = (shifted != -100).sum(1).clamp(min=1)
    return losses.sum(1) / scored


def unit_gradients(gsm: Any, params: Sequence[Any], examples: Sequence[Example],
                   owners: Sequence[int], units: int, *, pad_id: int, device: str,
                   micro_batch: int = 16) -> Any:
    """[units, P]: row u is the gradient of the mean, over unit u's documents, of their mean
    token loss (``owners[i]`` is example i's unit, in ``range(units)``). Per-document gradients
    come from Opacus (``gsm``: a ``GradSampleModule``, loss reduction ``sum``), weighted by
    1 / (the unit's document count) and summed per unit."""
    import torch

    owners_t = torch.as_tensor(list(owners), dtype=torch.long)
    weights = 1.0 / torch.bincount(owners_t, minlength=units).clamp(min=1).float()
    sizes = [p.numel() for p in params]
    out = torch.zeros((units, sum(sizes)), dtype=torch.float32, device=device)
    for start in range(0, len(examples), micro_batch):
        chunk = list(range(start, min(start + micro_batch, len(examples))))
        who = owners_t[chunk]
        losses = _document_losses(gsm, [examples[i] for i in chunk], pad_id, device)
        with warnings.catch_warnings():  # the frozen base has no input needing a gradient
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            (losses * weights[who].to(device)).sum().backward()
        per_doc = torch.cat([p.grad_sample.reshape(len(chunk), -1) for p in params], dim=1)
        out.index_add_(0, who.to(device), per_doc.float())
        for p in params:  # Opacus accumulates grad samples across backward passes: reset
            p.grad_sample = None
            p.grad = None
    return out


@dataclass
class _Trainer:
    """The state of one DP-SGD run (see the module docstring)."""

    gsm: Any
    params: list[Any]
    optimizer: Any
    examples: list[Example]
    documents_of: list[list[int]]  # unit code → its examples
    measurement: DPSGDMeasurement
    pad_id: int
    device: str
    micro_batch: int

    def step(self, sample_rng: np.random.Generator, noise_rng: np.random.Generator) -> int:
        """One DP-SGD step; the number of units sampled."""
        import torch

        m = self.measurement
        chosen = poisson_batch(sample_rng, m.units, m.sampling_probability)
        sizes = [p.numel() for p in self.params]
        total = torch.zeros(sum(sizes), dtype=torch.float32, device=self.device)
        if len(chosen):
            picked = [(k, i) for k, u in enumerate(chosen.tolist()) for i in self.documents_of[u]]
            grads = unit_gradients(self.gsm, self.params, [self.examples[i] for _, i in picked],
                                   [k for k, _ in picked], len(chosen), pad_id=self.pad_id,
                                   device=self.device, micro_batch=self.micro_batch)
            total = clip_and_sum(grads, m.clip)
        noisy = add_noise(total, m.noise_multiplier, m.clip, noise_rng) / m.expected_batch
        for p, g in zip(self.params, torch.split(noisy, sizes), strict=True):
            p.grad = g.view_as(p).to(p.dtype)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return len(chosen)


def train_dpsgd(model: Any, examples: list[Example], unit_of: Sequence[int],
                measurement: DPSGDMeasurement, *, learning_rate: float, pad_id: int,
                device: str, sample_rng: np.random.Generator, noise_rng: np.random.Generator,
                micro_batch: int = 16, progress: Callable[[int], Any] | None = None) -> Any:
    """Train the trainable parameters of ``model`` (the LoRA adapters) by DP-SGD for
    ``measurement.steps`` steps; returns ``model`` (trained in place). ``unit_of[i]`` is
    example i's unit code in ``range(measurement.units)``."""
    import torch
    from opacus import GradSampleModule

    params = [p for p in model.parameters() if p.requires_grad]
    documents_of: list[list[int]] = [[] for _ in range(measurement.units)]
    for i, u in enumerate(unit_of):
        documents_of[int(u)].append(i)
    gsm = GradSampleModule(model, batch_first=True, loss_reduction="sum", strict=False)
    gsm.train()
    trainer = _Trainer(gsm, params, torch.optim.Adam(params, lr=learning_rate), examples,
                       documents_of, measurement, pad_id, device, micro_batch)
    try:
        for _ in range(measurement.steps):
            trainer.step(sample_rng, noise_rng)
            if progress is not None:
                progress(1)
    finally:
        gsm.to_standard_module()  # Opacus's hooks removed: the model is used plainly afterwards
    model.eval()
    return model
