"""Why NSGA-III is not ahead of NSGA-II on CitySeg/MOP12-15 here, as it is in the paper's Table 7: NSGA-II against
NSGA-III on the many-objective problems as in the table (noisy evaluations), with noise-free evaluations, and
searching without ``h2_energy``.

The energy objectives are modelled from exact counts (docs/cityseg.md): h1 and h2 differ only in how the weights'
transfers are shared over a batch, so ``h2_energy`` is almost an affine copy of ``h1_energy`` (their correlation
over random architectures is printed) and the front lies on a lower-dimensional surface than NSGA-III's reference
directions span. Without ``h2_energy`` both algorithms keep the problem's population, NSGA-III takes the
reference directions of one objective fewer, and the final population is scored on all of the problem's objectives
as in the table. Each row: mean (std) normalised hypervolume over the runs, and the two-sided rank-sum p-value.
About 10 CPU-minutes for 31 runs.

``--algorithms`` compares another pair the same way (e.g. ``nsga3 hype``: whether the redundant objective also
explains HypE's lead over NSGA-III here).

Usage: python studies/moea_ordering.py [--runs 31] [--problems 12 13 14 15] [--algorithms nsga2 nsga3]
"""

from __future__ import annotations

import argparse

import numpy as np
from pymoo.optimize import minimize
from scipy.stats import ranksums

from nas_envs import make_benchmark
from nas_envs.agents.moea import MOEAS, final_population, make_moea
from nas_envs.benchmarks.base import objective_matrix
from nas_envs.benchmarks.cityseg_problems import POPULATION
from nas_envs.benchmarks.pymoo_adapter import BenchmarkProblem

EVALUATIONS = 10_000
# The objective whose values follow another's almost exactly (see the module docstring).
REDUNDANT = "h2_energy"


def hypervolumes(problem: int, algorithm: str, runs: int, noise: bool, drop: str | None) -> np.ndarray:
    benchmark = make_benchmark(f"cityseg-mop{problem}")
    objectives = tuple(o for o in benchmark.objectives if o != drop)
    moea = make_moea(algorithm, len(objectives), population=POPULATION[len(benchmark.objectives)][0])
    values = []
    for seed in range(runs):
        result = minimize(BenchmarkProblem(benchmark, objectives=objectives, noise=noise, seed=seed), moea,
                          ("n_gen", -(-EVALUATIONS // moea.pop_size)), seed=seed, verbose=False)
        front = benchmark.evaluate(final_population(result), noise=False)
        values.append(benchmark.hypervolume(objective_matrix(benchmark, front)))
    return np.array(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--problems", type=int, nargs="+", default=[12, 13, 14, 15])
    parser.add_argument("--algorithms", nargs=2, default=["nsga2", "nsga3"], choices=MOEAS,
                        metavar="ALGORITHM", help=f"the two algorithms to compare, of {', '.join(MOEAS)}")
    args = parser.parse_args()
    if args.algorithms[0] == args.algorithms[1]:
        parser.error(f"--algorithms needs two different algorithms, got {args.algorithms[0]} twice")
    benchmark = make_benchmark("cityseg-mop12")
    random = benchmark.evaluate(benchmark.space.sample(2000, seed=0), noise=False)
    print(f"correlation of h1_energy and {REDUNDANT} over 2,000 random architectures: "
          f"{np.corrcoef(random['h1_energy'], random[REDUNDANT])[0, 1]:.4f}\n")
    print(f"{args.runs} runs of {EVALUATIONS:,} evaluations each\n")
    first, second = args.algorithms
    print(f"| problem | search | {first} | {second} | rank-sum p | ahead |\n| --- | --- | --- | --- | --- | --- |")
    variants = {"as in the table": (True, None), "noise-free evaluations": (False, None),
                f"without {REDUNDANT}": (True, REDUNDANT)}
    for problem in args.problems:
        for name, (noise, drop) in variants.items():
            hv = {a: hypervolumes(problem, a, args.runs, noise, drop) for a in args.algorithms}
            p = ranksums(hv[first], hv[second]).pvalue
            ahead = "tie" if p >= 0.05 else max(hv, key=lambda a: hv[a].mean())
            print(f"| MOP{problem} | {name} | " + " | ".join(f"{v.mean():.4f} ({v.std():.4f})" for v in hv.values())
                  + f" | {p:.2g} | {ahead} |", flush=True)


if __name__ == "__main__":
    main()
