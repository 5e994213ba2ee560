"""The accounting of a Private Evolution run: σ calibrated by dp-accounting, the reported ε
computed by dp-accounting directly, δ's default and its refusal at 1/n."""

from __future__ import annotations

import math

import pytest

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402

from textdp.privacy.accounting import DISCRETISATION, epsilon_of, gaussian_event  # noqa: E402
from textdp.synthesis.accountant import default_delta, plan  # noqa: E402


def _direct(sigma: float, rounds: int, delta: float, interval: float) -> float:
    """ε straight from dp-accounting: its PLD accountant, T self-composed Gaussians."""
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma),
                                                          rounds))
    return accountant.get_epsilon(delta)


@pytest.fixture(scope="module")
def measured():
    return {(eps, rounds): plan(epsilon=eps, delta=1e-6, rounds=rounds, units=10_000)
            for eps, rounds in ((1.0, 3), (4.0, 5))}


@pytest.mark.parametrize("key", [(1.0, 3), (4.0, 5)])
def test_the_reported_epsilon_is_the_accountants_rounded_up(measured, key):
    m = measured[key]
    direct = _direct(m.noise_multiplier, m.rounds, m.delta, DISCRETISATION)
    assert direct == m.accountant_epsilon
    assert direct <= m.epsilon <= direct * (1 + 1e-5)  # rounded up, 6 significant digits
    assert m.epsilon <= key[0]  # never above the asked ε
    # dp-accounting's default (finer) discretisation gives an ε no larger.
    assert _direct(m.noise_multiplier, m.rounds, m.delta, 1e-4) <= m.epsilon
    assert m.accounting["events"] == [{"kind": "gaussian", "noise_multiplier": m.noise_multiplier,
                                       "count": m.rounds}]


def test_sigma_is_calibrated_not_wasted(measured):
    """1% less noise than the σ chosen would exceed the target: the search is tight."""
    for (eps, rounds), m in measured.items():
        assert _direct(m.noise_multiplier * 0.99, rounds, 1e-6, DISCRETISATION) > eps


def test_more_rounds_need_more_noise(measured):
    assert measured[(4.0, 5)].noise_multiplier < measured[(1.0, 3)].noise_multiplier
    single = epsilon_of([gaussian_event(measured[(4.0, 5)].noise_multiplier, 1)], 1e-6)
    assert single < 4.0


@pytest.mark.parametrize("n", [2, 9, 10, 200, 10_000, 123_457])
def test_default_delta_is_a_power_of_ten_below_n_to_the_minus_1_1(n):
    delta = default_delta(n)
    assert delta <= n ** -1.1
    assert delta * 10 > n ** -1.1
    assert math.log10(delta) == round(math.log10(delta))


def test_delta_at_or_above_one_over_n_is_refused():
    with pytest.raises(ValueError, match="1/n"):
        plan(epsilon=4, delta=0.01, rounds=3, units=100)
    with pytest.raises(ValueError, match="at least 2"):
        plan(epsilon=4, delta=None, rounds=3, units=1)
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError, match="ε"):
            plan(epsilon=bad, delta=1e-6, rounds=3, units=100)


def test_the_privacy_map_of_a_group_is_the_gaussian_with_sigma_over_g(measured):
    m = measured[(4.0, 5)]
    assert m.privacy_map(0).epsilon == 0
    assert m.privacy_map(1).epsilon == m.epsilon
    two = m.privacy_map(2)
    assert two.epsilon >= _direct(m.noise_multiplier / 2, 5, m.delta, DISCRETISATION)
    assert two.epsilon > 2 * m.epsilon * 0.9
