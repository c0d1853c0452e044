"""The noise model's check against repeated seeds (nas_envs.fitting.noise_check)."""

import math

import numpy as np
import pytest

from nas_envs.fitting.noise_check import DRAWS, crps_from_draws, judge_draws


def test_crps_from_draws_is_the_closed_form_of_a_normal_distribution():
    draws = np.random.default_rng(0).normal(0.0, 1.0, 200_000)
    for y in (0.0, 1.5):
        pdf, cdf = math.exp(-y * y / 2) / math.sqrt(2 * math.pi), 0.5 * (1 + math.erf(y / math.sqrt(2)))
        closed = y * (2 * cdf - 1) + 2 * pdf - 1 / math.sqrt(math.pi)
        assert crps_from_draws(draws, np.array([y]))[0] == pytest.approx(closed, abs=5e-3)


def test_a_noise_model_that_knows_each_architectures_spread_beats_the_constant_and_one_that_does_not_loses():
    rng = np.random.default_rng(1)
    spreads = rng.choice([0.001, 0.01], size=60)  # architectures that train steadily and ones that do not
    measured = [rng.normal(0.85, s, 5) for s in spreads]
    knowing = [rng.normal(0.85, s, DRAWS) for s in spreads]
    shuffled = [rng.normal(0.85, s, DRAWS) for s in rng.permutation(spreads)]
    right, wrong = judge_draws(knowing, measured), judge_draws(shuffled, measured)
    assert right["model"]["crps"] < right["constant"]["crps"]
    assert right["model"]["std_error"] < right["constant"]["std_error"]
    assert wrong["model"]["crps"] > wrong["constant"]["crps"]
    assert 0.8 < right["model"]["coverage"] <= 1.0
