"""Cross-check of this package's IBEA against jMetalPy's (MIT), where jMetalPy is installed: both on ZDT1 (30
variables) and DTLZ2 (3 objectives, 12 variables) with population 100, the same operators (SBX 0.9/15, polynomial
mutation 1/n, 20), kappa 0.05 and the same evaluations; prints the mean and standard deviation of the final
population's hypervolume (reference point 1.1 in every objective) over seeds, and the known front's. jMetalPy is
not a dependency: install it for this script only (pip install jmetalpy).

Usage: python scripts/ibea_crosscheck.py [--seeds 5] [--evaluations 15000]
"""

from __future__ import annotations

import argparse
import random

import numpy as np
from pymoo.indicators.hv import HV
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.optimize import minimize
from pymoo.problems import get_problem
from pymoo.util.ref_dirs import get_reference_directions

from nas_envs.agents.indicator_moeas import IBEA


def ours(name: str, seed: int, evaluations: int) -> np.ndarray:
    problem = get_problem(name) if name == "zdt1" else get_problem(name, n_obj=3)
    algorithm = IBEA(pop_size=100, crossover=SBX(prob=0.9, eta=15), mutation=PM(eta=20))
    return minimize(problem, algorithm, ("n_evals", evaluations), seed=seed, verbose=False).pop.get("F")


def jmetal(name: str, seed: int, evaluations: int) -> np.ndarray:
    from jmetal.algorithm.multiobjective.ibea import IBEA as JMetalIBEA
    from jmetal.operator.crossover import SBXCrossover
    from jmetal.operator.mutation import PolynomialMutation
    from jmetal.problem import DTLZ2, ZDT1
    from jmetal.util.termination_criterion import StoppingByEvaluations

    random.seed(seed)
    np.random.seed(seed)
    problem = ZDT1(number_of_variables=30) if name == "zdt1" else DTLZ2(number_of_variables=12, number_of_objectives=3)
    algorithm = JMetalIBEA(
        problem=problem, population_size=100, offspring_population_size=100, kappa=0.05,
        mutation=PolynomialMutation(probability=1.0 / problem.number_of_variables(), distribution_index=20),
        crossover=SBXCrossover(probability=0.9, distribution_index=15),
        termination_criterion=StoppingByEvaluations(max_evaluations=evaluations),
    )
    algorithm.run()
    return np.array([solution.objectives for solution in algorithm.result()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--evaluations", type=int, default=15_000)
    args = parser.parse_args()
    for name, objectives in (("zdt1", 2), ("dtlz2", 3)):
        hv = HV(ref_point=np.full(objectives, 1.1))
        problem = get_problem(name) if name == "zdt1" else get_problem(name, n_obj=3)
        front = problem.pareto_front(n_pareto_points=1000) if name == "zdt1" else \
            problem.pareto_front(ref_dirs=get_reference_directions("das-dennis", 3, n_partitions=30))
        for label, run in (("nas_envs IBEA", ours), ("jMetalPy IBEA", jmetal)):
            try:
                values = [hv(run(name, seed, args.evaluations)) for seed in range(args.seeds)]
            except Exception as error:  # jMetalPy missing, or failing in its own code: say so and go on
                print(f"{name}: {label}: could not run ({type(error).__name__}: {str(error)[:80]})")
                continue
            print(f"{name}: {label}: hypervolume {np.mean(values):.4f} +- {np.std(values):.4f} over {args.seeds} "
                  f"seeds (front {hv(front):.4f})")


if __name__ == "__main__":
    main()
