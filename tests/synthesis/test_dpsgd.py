"""DP-SGD for ``synthesize(method="finetune")``: per-unit gradients (Opacus) against autograd on
each unit alone, the clipping bound checked by brute force (one unit's contribution to the
noised sum is ≤ C), the noise's law against the calibrated σ (with power checks), Poisson
sampling's law, and the accounting recomputed with dp-accounting directly."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

dp_accounting = pytest.importorskip("dp_accounting")
torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
peft = pytest.importorskip("peft")
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from scipy import stats  # noqa: E402

from textdp import _random  # noqa: E402
from textdp.privacy import format_up  # noqa: E402
from textdp.privacy.accounting import DISCRETISATION, AccountingError, check_event  # noqa: E402
from textdp.synthesis import dpsgd  # noqa: E402
from textdp.synthesis.dpsgd import (  # noqa: E402
    Example,
    add_noise,
    clip_and_sum,
    plan_dpsgd,
    poisson_batch,
    unit_gradients,
)


def _direct(sigma, q, steps, delta, interval=DISCRETISATION):
    """ε straight from dp-accounting: T self-composed Poisson-sampled Gaussians, PLD."""
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
        q, dp_accounting.GaussianDpEvent(sigma)), steps))
    return accountant.get_epsilon(delta)


@pytest.fixture(scope="module")
def planned():
    # q = 500 / 10,000 = 0.05, T = ⌈1 / 0.05⌉ = 20 steps.
    return plan_dpsgd(epsilon=4.0, delta=1e-6, units=10_000, expected_batch=500, epochs=1.0,
                      clip=1.0, unit="person")


# --- accounting -----------------------------------------------------------------------------


def test_the_reported_epsilon_is_dp_accountings_rounded_up(planned):
    m = planned
    assert (m.sampling_probability, m.steps) == (0.05, 20)
    direct = _direct(m.noise_multiplier, 0.05, 20, 1e-6)
    assert direct == m.accountant_epsilon
    assert direct <= m.epsilon <= direct * (1 + 1e-5) and m.epsilon <= 4.0
    assert _direct(m.noise_multiplier, 0.05, 20, 1e-6, 1e-4) <= m.epsilon  # finer grid
    # σ is tight: 1% less noise misses the target.
    assert _direct(m.noise_multiplier * 0.99, 0.05, 20, 1e-6) > 4.0
    assert m.accounting["events"] == [{"kind": "poisson_gaussian",
                                       "noise_multiplier": m.noise_multiplier,
                                       "sampling_probability": 0.05, "count": 20}]


def test_sampling_is_what_buys_the_privacy(planned):
    """Without sampling (q = 1) the same σ over the same steps spends far more."""
    from textdp.privacy.accounting import epsilon_of, gaussian_event

    assert epsilon_of([gaussian_event(planned.noise_multiplier, planned.steps)], 1e-6) > 20


@pytest.mark.parametrize("event", [
    {"kind": "poisson_gaussian", "noise_multiplier": 1.0, "count": 3},
    {"kind": "poisson_gaussian", "noise_multiplier": 1.0, "sampling_probability": 0, "count": 3},
    {"kind": "poisson_gaussian", "noise_multiplier": 1.0, "sampling_probability": 1.5,
     "count": 3},
    {"kind": "laplace", "noise_multiplier": 1.0, "count": 3},
])
def test_a_malformed_event_is_refused(event):
    with pytest.raises(AccountingError):
        check_event(event)


def test_group_privacy_is_not_below_k_times_epsilon(planned):
    b = planned.privacy_map(3)
    assert b.epsilon >= 3 * planned.epsilon
    assert b.delta >= 3 * planned.delta


# --- Poisson sampling and noise ---------------------------------------------------------------


def test_poisson_batch_sizes_follow_the_binomial_law(chisquare_merged):
    rng = _random.seeded_generator(5)
    n, q, draws = 50, 0.2, 20_000
    sizes = np.array([len(poisson_batch(rng, n, q)) for _ in range(draws)])
    probs = stats.binom.pmf(np.arange(n + 1), n, q)
    counts = np.bincount(sizes, minlength=n + 1)
    assert chisquare_merged(counts, probs) > 1e-6
    wrong = stats.binom.pmf(np.arange(n + 1), n, q * 1.1)  # power: a 10% wrong rate rejects
    assert chisquare_merged(counts, wrong) < 1e-6


class _Record:
    """An optimiser that records the gradient it is given."""

    def __init__(self, params):
        self.params, self.seen = params, []

    def step(self):
        self.seen.append(torch.cat([p.grad.reshape(-1) for p in self.params]).clone())

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None


def test_the_steps_noise_has_the_calibrated_std(planned, monkeypatch):
    """Every unit's gradient is zero here, so the step's gradient is the noise alone:
    N(0, (σC / (q·n))²) per coordinate with the calibrated σ (KS, 200,000 draws)."""
    from dataclasses import replace

    monkeypatch.setattr(dpsgd, "unit_gradients", lambda gsm, params, ex, owners, k, **kw:
                        torch.zeros((k, 4000)))
    params = [torch.zeros(2500, requires_grad=True), torch.zeros(1500, requires_grad=True)]
    record = _Record(params)
    m = replace(planned, units=400)  # the calibrated σ, C and q; fewer units to sample
    trainer = dpsgd._Trainer(None, params, record, [], [[] for _ in range(400)], m, 0, "cpu", 4)
    sample, noise = _random.seeded_generator(1, (0,)), _random.seeded_generator(1, (1,))
    for _ in range(50):
        trainer.step(sample, noise)
    draws = torch.cat(record.seen).double().numpy()
    assert draws.size == 200_000
    scale = planned.noise_multiplier * planned.clip / (0.05 * 400)
    assert stats.kstest(draws / scale, "norm").pvalue > 1e-6
    for wrong in (1.05, 1 / 1.05):  # power: 5% more or less noise rejects
        assert stats.kstest(draws / (scale * wrong), "norm").pvalue < 1e-6


def test_add_noise_draws_from_the_generator_it_is_given():
    a = add_noise(torch.zeros(5), 1.0, 2.0, _random.seeded_generator(3))
    b = add_noise(torch.zeros(5), 1.0, 2.0, _random.seeded_generator(3))
    assert torch.equal(a, b) and not torch.equal(a, torch.zeros(5))


# --- per-unit gradients and clipping ---------------------------------------------------------


@pytest.fixture(scope="module")
def adapted(tiny_lm):
    """The tiny model with LoRA adapters whose B is non-zero (so every adapter has a gradient)."""
    model = peft.get_peft_model(copy.deepcopy(tiny_lm.model), peft.LoraConfig(
        r=2, lora_alpha=4, lora_dropout=0.0, target_modules=["q_proj", "v_proj"]))
    rng = _random.public_generator(11)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.copy_(torch.from_numpy(rng.normal(0, 0.5, p.shape)).to(p))
    return model


def _examples():
    rng = _random.public_generator(2)
    out = []
    for length in (5, 7, 4, 6, 3, 8):
        ids = tuple(int(t) for t in rng.integers(3, 64, length + 3))
        out.append(Example(ids, 3))
    return out


OWNERS = [0, 0, 1, 2, 0, 2]  # unit 0 wrote three documents, unit 1 one, unit 2 two


def _per_unit(model, examples, owners, units):
    from opacus import GradSampleModule

    params = [p for p in model.parameters() if p.requires_grad]
    gsm = GradSampleModule(model, batch_first=True, loss_reduction="sum", strict=False)
    try:
        return unit_gradients(gsm, params, examples, owners, units, pad_id=0, device="cpu",
                              micro_batch=4)
    finally:
        gsm.to_standard_module()


def _brute(model, examples):
    """The gradient of the mean of these documents' losses, by plain autograd on them alone."""
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.grad = None
    losses = torch.stack([dpsgd._document_losses(model, [e], 0, "cpu")[0] for e in examples])
    losses.mean().backward()
    out = torch.cat([p.grad.reshape(-1) for p in params])
    for p in params:
        p.grad = None
    return out


def test_per_unit_gradients_equal_autograd_on_each_unit_alone(adapted):
    examples = _examples()
    grads = _per_unit(adapted, examples, OWNERS, 3)
    for u in range(3):
        mine = [e for e, o in zip(examples, OWNERS, strict=True) if o == u]
        assert torch.allclose(grads[u], _brute(adapted, mine), rtol=1e-4, atol=1e-6)
    # Micro-batches split units (micro_batch = 4 < 6 documents); the rows are still whole.
    assert grads.norm(dim=1).min() > 0


def test_one_units_contribution_to_the_noised_sum_is_at_most_c(adapted):
    """Brute force: remove each unit from the batch, recompute everything, and compare the
    noised sums drawn with the same noise — the difference has norm ≤ C."""
    examples, clip = _examples(), 0.05
    grads = _per_unit(adapted, examples, OWNERS, 3)
    assert (grads.norm(dim=1) > clip).all()  # the clip is active for every unit
    full = add_noise(clip_and_sum(grads, clip), 1.0, clip, _random.seeded_generator(9))
    for u in range(3):
        keep = [i for i, o in enumerate(OWNERS) if o != u]
        remap = {o: k for k, o in enumerate(sorted({OWNERS[i] for i in keep}))}
        without = _per_unit(adapted, [examples[i] for i in keep],
                            [remap[OWNERS[i]] for i in keep], 2)
        other = add_noise(clip_and_sum(without, clip), 1.0, clip, _random.seeded_generator(9))
        gap = float((full - other).norm())
        assert gap <= clip * (1 + 1e-5)
        assert gap >= clip * (1 - 1e-4)  # clipped to exactly C here (every norm was above)
    # Power: clipping each document instead of each unit (document-level DP-SGD run on a
    # person's documents) lets unit 0, with three documents, move the sum by more than C.
    per_doc = _per_unit(adapted, examples, list(range(6)), 6)
    assert float(clip_and_sum(per_doc[[0, 1, 4]], clip).norm()) > 1.5 * clip


def test_clip_and_sum_keeps_short_rows_and_zero_rows():
    g = torch.tensor([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    total = clip_and_sum(g, 1.0)
    assert torch.allclose(total, torch.tensor([0.6 + 0.3, 0.8 + 0.4]))
    assert math.isfinite(float(total.norm()))


def test_the_measurement_composes_in_the_ledger_with_private_evolutions(tmp_path, planned):
    """A finetune release and a Private Evolution release of the same input: one group,
    composed by the accountant from both lines' events (recomputed here directly)."""
    from textdp.ledger import Ledger, iter_inputs
    from textdp.runner import Outcome, run_release
    from textdp.synthesis import TextSource
    from textdp.synthesis.accountant import plan

    class Spec:
        seed = None

        def __init__(self, m):
            self.m = m

        def measure(self, source):
            return self.m

    class Engine:
        def run(self, spec, source, m):
            return Outcome([], {"guarantee": m.guarantee.to_dict(), "warnings": []})

    from dataclasses import replace

    tuned = replace(planned, unit="document")
    evolved = plan(epsilon=2.0, delta=1e-6, rounds=3, units=10_000)
    book = Ledger(tmp_path / "book.jsonl")
    source = TextSource.build([f"doc {i}" for i in range(20)])
    for m in (tuned, evolved):
        run_release(Spec(m), source, Engine(), ledger=book)
    (_, entries, composition), = list(iter_inputs(book.read()))
    (group,) = composition.groups
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=DISCRETISATION)
    accountant.compose(dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
            0.05, dp_accounting.GaussianDpEvent(tuned.noise_multiplier)), 20),
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(evolved.noise_multiplier), 3)]))
    direct = accountant.get_epsilon(2e-6)
    assert group.epsilon == float(format_up(direct)) < tuned.epsilon + evolved.epsilon
    assert entries[0]["accounting"]["events"][0]["kind"] == "poisson_gaussian"
