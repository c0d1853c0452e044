"""The CitySeg/MOP paper's six multi-objective algorithms on CitySeg/MOP, with its settings, and the baseline table:
pymoo's NSGA-II, NSGA-III, MOEA/D and RVEA, and this package's IBEA and HypE (:mod:`nas_envs.agents.indicator_moeas`).

Settings of the paper (Tables 3 and 4): 10,000 evaluations; population 100, 105, 120, 126, 132, 217 for 2..7
objectives; reference directions by Das-Dennis with (H1, H2) = (99, 0), (13, 0), (7, 0), (5, 0), (4, 1), (3, 2)
(two layers, the inner one scaled by 0.5). The hypervolume of a run is that of its final population, re-evaluated
without noise, normalised with the suite's utopian and nadir points (reference point all ones).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from nas_envs import make_benchmark
from nas_envs.benchmarks.base import objective_matrix
from nas_envs.benchmarks.cityseg_problems import POPULATION
from nas_envs.benchmarks.pymoo_adapter import BenchmarkProblem

MOEAS = ("nsga2", "nsga3", "moead", "rvea", "ibea", "hype")

# Table 7 of the paper (mean HV over 31 runs on its own CitySeg/MOP) for NSGA-II, NSGA-III, MOEA/D and RVEA, in the
# order of MOEAS; the rankings compare only the algorithms listed here.
PAPER_TABLE7 = {
    1: (0.9001, 0.8983, 0.8423, 0.8683), 2: (0.7995, 0.7991, 0.7492, 0.6976), 3: (0.8238, 0.8229, 0.7582, 0.7813),
    4: (0.6979, 0.6983, 0.5474, 0.5951), 5: (0.6562, 0.6565, 0.5576, 0.5315), 6: (0.7719, 0.7718, 0.7107, 0.7367),
    7: (0.7311, 0.7312, 0.6745, 0.6810), 8: (0.7324, 0.7324, 0.6843, 0.6889), 9: (0.5767, 0.5768, 0.4804, 0.5405),
    10: (0.5473, 0.5473, 0.4606, 0.5138), 11: (0.6884, 0.6884, 0.5699, 0.6620), 12: (0.4688, 0.4705, 0.3558, 0.4358),
    13: (0.4184, 0.4228, 0.3459, 0.3772), 14: (0.4299, 0.4339, 0.3406, 0.4118), 15: (0.3971, 0.3980, 0.3272, 0.3003),
}


def reference_directions(objectives: int) -> np.ndarray:
    from pymoo.util.ref_dirs import get_reference_directions

    outer, inner = POPULATION[objectives][1]
    directions = get_reference_directions("das-dennis", objectives, n_partitions=outer)
    if inner:
        directions = get_reference_directions(
            "multi-layer", directions,
            get_reference_directions("das-dennis", objectives, n_partitions=inner, scaling=0.5),
        )
    return directions


def make_moea(name: str, objectives: int):
    """An integer-coded pymoo algorithm with the paper's population size."""
    from pymoo.algorithms.moo.moead import MOEAD
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.algorithms.moo.nsga3 import NSGA3
    from pymoo.algorithms.moo.rvea import RVEA
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.repair.rounding import RoundingRepair
    from pymoo.operators.sampling.rnd import IntegerRandomSampling

    if name not in MOEAS:
        raise ValueError(f"unknown algorithm {name!r}; allowed: {MOEAS}")
    operators = {
        "sampling": IntegerRandomSampling(),
        "crossover": SBX(prob=0.9, eta=15, vtype=float, repair=RoundingRepair()),
        "mutation": PM(eta=20, vtype=float, repair=RoundingRepair()),
    }
    population = POPULATION[objectives][0]
    directions = reference_directions(objectives)
    if name == "nsga2":
        return NSGA2(pop_size=population, eliminate_duplicates=True, **operators)
    if name == "nsga3":
        return NSGA3(ref_dirs=directions, pop_size=population, eliminate_duplicates=True, **operators)
    if name == "moead":
        return MOEAD(ref_dirs=directions, n_neighbors=20, **operators)
    if name == "ibea":
        from nas_envs.agents.indicator_moeas import IBEA

        return IBEA(pop_size=population, **operators)
    if name == "hype":
        from nas_envs.agents.indicator_moeas import HypE

        return HypE(pop_size=population, **operators)
    return RVEA(ref_dirs=directions, pop_size=population, **operators)


def run_moea(problem: int, algorithm: str, seed: int, evaluations: int = 10_000, trajectory: Path | None = None,
             bundle: "str | Path | None" = None) -> dict:
    """One run of ``ceil(evaluations / population)`` generations (pymoo's RVEA evaluates fewer offspring where it
    drops duplicates); returns the normalised hypervolume of the final population and the evaluations spent.
    With ``trajectory``, the architectures it evaluated are written there (JSON lines with ``architecture``).
    ``bundle``: the CitySeg bundle (default: the newest release)."""
    from pymoo.optimize import minimize

    benchmark = make_benchmark(f"cityseg-mop{problem}", bundle=bundle)
    pymoo_problem = BenchmarkProblem(benchmark, noise=True, seed=seed)
    moea = make_moea(algorithm, len(benchmark.objectives))
    # A whole number of generations of one population each (the first generation included): pymoo's RVEA turns
    # an evaluation budget into generations its own way, so every algorithm gets the same rule here.
    population = len(moea.ref_dirs) if algorithm == "moead" else moea.pop_size
    generations = -(-evaluations // population)
    result = minimize(pymoo_problem, moea, ("n_gen", generations), seed=seed, verbose=False)
    if trajectory is not None:  # the architectures it visited, for training them for real (nas-envs collect)
        trajectory.parent.mkdir(parents=True, exist_ok=True)
        space = benchmark.space
        lines = [json.dumps({"architecture": space.to_string(space.canonicalize(g))})
                 for batch in pymoo_problem.evaluated for g in batch]
        trajectory.write_text("\n".join(lines) + "\n")
    final = final_population(result)
    return {
        "problem": problem,
        "algorithm": algorithm,
        "seed": seed,
        "evaluations": int(result.algorithm.evaluator.n_eval),
        "hv": benchmark.hypervolume(objective_matrix(benchmark, benchmark.evaluate(final, noise=False))),
    }


def final_population(result) -> np.ndarray:
    """The genes of a pymoo result's final population."""
    return np.rint(np.atleast_2d(result.pop.get("X"))).astype(np.int64)


def plot_hypervolumes(runs: list[dict], output: Path) -> None:
    """Box plots of the runs' hypervolumes, one panel per problem, one box per algorithm that ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = sorted({r["problem"] for r in runs})
    columns = min(5, len(problems))
    rows = -(-len(problems) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3 * columns, 2.6 * rows), squeeze=False)
    for ax, problem in zip(axes.flat, problems):
        ran = [a for a in MOEAS if any(r["problem"] == problem and r["algorithm"] == a for r in runs)]
        ax.boxplot([[r["hv"] for r in runs if r["problem"] == problem and r["algorithm"] == a] for a in ran])
        ax.set_xticks(range(1, len(ran) + 1), ran, fontsize=7)
        ax.set_title(f"MOP{problem}", fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(problems):]:
        ax.axis("off")
    figure.suptitle("normalised hypervolume of the final population, per run", fontsize=10)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=110)
    plt.close(figure)


def plot_front(problem: int, algorithm: str, seed: int, evaluations: int, output: Path,
               bundle: "str | Path | None" = None) -> float:
    """One run's final population (noise-free objectives) on the problem's first two objectives, over 2,000
    random architectures; returns its hypervolume."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from pymoo.optimize import minimize

    benchmark = make_benchmark(f"cityseg-mop{problem}", bundle=bundle)
    moea = make_moea(algorithm, len(benchmark.objectives))
    population = len(moea.ref_dirs) if algorithm == "moead" else moea.pop_size
    result = minimize(BenchmarkProblem(benchmark, noise=True, seed=seed), moea,
                      ("n_gen", -(-evaluations // population)), seed=seed, verbose=False)
    front = benchmark.evaluate(final_population(result), noise=False)
    random = benchmark.evaluate(benchmark.space.sample(2000, seed=seed), noise=False)
    x, y = benchmark.objectives[1], benchmark.objectives[0]
    figure, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(random[x], random[y], s=4, color="#cccccc", label="2,000 random architectures")
    ax.scatter(front[x], front[y], s=12, color="#d62728", label=f"{algorithm}, final population")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    hv = benchmark.hypervolume(objective_matrix(benchmark, front))
    ax.set_title(f"CitySeg/MOP{problem}, {evaluations:,} evaluations, seed {seed}: HV {hv:.4f}", fontsize=9)
    ax.legend(fontsize=8)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=110)
    plt.close(figure)
    return hv


def baseline_table(runs: list[dict]) -> str:
    """Markdown: HV mean (std) per problem and algorithm, our ranking next to the paper's Table 7 ranking of the same
    algorithms (only those that ran are ranked, in both columns)."""
    problems = sorted({r["problem"] for r in runs})
    lines = ["| problem | " + " | ".join(MOEAS) + " | ranking here | ranking in the paper |",
             "|---" * (len(MOEAS) + 3) + "|"]
    for problem in problems:
        means, cells = [], []
        for algorithm in MOEAS:
            hv = [r["hv"] for r in runs if r["problem"] == problem and r["algorithm"] == algorithm]
            means.append(np.mean(hv) if hv else np.nan)
            cells.append(f"{np.mean(hv):.4f} ({np.std(hv):.4f}, n={len(hv)})" if hv else "-")
        ran = [i for i, mean in enumerate(means) if not np.isnan(mean)]
        ours = " > ".join(MOEAS[i] for i in sorted(ran, key=lambda i: -means[i]))
        listed = [i for i in ran if i < len(PAPER_TABLE7[problem])]
        paper = " > ".join(MOEAS[i] for i in sorted(listed, key=lambda i: -PAPER_TABLE7[problem][i]))
        lines.append(f"| MOP{problem} | " + " | ".join(cells) + f" | {ours} | {paper} |")
    return "\n".join(lines)
