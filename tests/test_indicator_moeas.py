"""IBEA and HypE converge on standard problems (pymoo's ZDT1, 2 objectives, and DTLZ2, 3 objectives) to within a
stated hypervolume of the known front, and their selections do what the papers define."""

import numpy as np
import pytest
from pymoo.indicators.hv import HV
from pymoo.optimize import minimize
from pymoo.problems import get_problem
from pymoo.util.ref_dirs import get_reference_directions

from nas_envs.agents.indicator_moeas import IBEA, HypE, epsilon_indicator, hype_fitness, ibea_selection, scaled


def optimum_and_reached(algorithm, name: str, generations: int) -> tuple[float, float]:
    if name == "zdt1":
        problem, ref = get_problem("zdt1"), np.array([1.1, 1.1])
        front = problem.pareto_front(n_pareto_points=1000)
    else:
        problem, ref = get_problem("dtlz2", n_obj=3), np.full(3, 1.1)
        front = problem.pareto_front(ref_dirs=get_reference_directions("das-dennis", 3, n_partitions=30))
    result = minimize(problem, algorithm, ("n_gen", generations), seed=1, verbose=False)
    return HV(ref_point=ref)(front), HV(ref_point=ref)(result.F)


# (algorithm, problem, generations, largest hypervolume gap to the front; measured gaps 0.005, 0.032, 0.012, 0.052)
@pytest.mark.parametrize("algorithm,name,generations,gap", [
    (IBEA, "zdt1", 150, 0.02), (IBEA, "dtlz2", 100, 0.05),
    pytest.param(HypE, "zdt1", 150, 0.03, marks=pytest.mark.slow),
    pytest.param(HypE, "dtlz2", 100, 0.08, marks=pytest.mark.slow),
])
def test_indicator_moeas_converge_to_the_known_front(algorithm, name, generations, gap):
    optimum, reached = optimum_and_reached(algorithm(pop_size=100), name, generations)
    assert optimum - gap < reached <= optimum + 1e-9


def test_the_epsilon_indicator_and_ibea_keep_the_non_dominated_and_spread():
    F = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0], [0.6, 0.6], [0.51, 0.5]])
    indicator = epsilon_indicator(scaled(F))
    assert indicator[1, 3] == pytest.approx(-0.1) and indicator[3, 1] == pytest.approx(0.1)
    kept, fitness = ibea_selection(F, 3)
    assert sorted(kept.tolist()) == [0, 1, 2] and len(fitness) == 3  # the dominated and the near-duplicate go


def test_hype_fitness_with_one_to_remove_is_the_exclusive_hypervolume_contribution():
    import moocore

    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 1, 20))
    F = np.column_stack([x, 1 - np.sqrt(x)])
    from nas_envs.agents.indicator_moeas import HYPE_REFERENCE_OFFSET

    exact = moocore.hv_contributions(scaled(F), ref=np.full(2, 1 + HYPE_REFERENCE_OFFSET))
    estimate = hype_fitness(F, 1, rng, samples=200_000)
    assert np.corrcoef(exact, estimate)[0, 1] > 0.999
    assert np.allclose(estimate, exact, atol=0.003)


def test_hype_fitness_after_removals_is_the_estimate_over_the_points_left():
    """The sampler updates its counts as points leave; the fitness equals HypE's formula computed afresh over the
    points left, on the same samples (the weights alpha_i = prod_{j<i} (k - j) / (n - j) / i)."""
    from nas_envs.agents.indicator_moeas import HypESampler

    rng = np.random.default_rng(3)
    F = rng.random((40, 3))
    sampler = HypESampler(F, np.random.default_rng(0), samples=4000)
    for point in (5, 17, 0, 33):
        sampler.remove(point)
    left = np.flatnonzero(sampler.alive)
    dominated = sampler.dominated[:, left]
    n, k = len(left), 12
    alpha = np.zeros(n + 1)
    for i in range(1, k + 1):
        alpha[i] = np.prod([(k - j) / (n - j) for j in range(1, i)]) / i
    expected = sampler.volume * (dominated.T.astype(float) @ alpha[dominated.sum(axis=1)])
    np.testing.assert_allclose(sampler.fitness(k), expected, rtol=1e-12)
