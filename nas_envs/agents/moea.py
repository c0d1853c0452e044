"""The CitySeg/MOP paper's six multi-objective algorithms on CitySeg/MOP, with its settings, and the baseline table:
pymoo's NSGA-II, NSGA-III, MOEA/D and RVEA, and this package's IBEA and HypE (:mod:`nas_envs.agents.indicator_moeas`).

Settings of the paper (Tables 3 and 4): 10,000 evaluations; population 100, 105, 120, 126, 132, 217 for 2..7
objectives; reference directions by Das-Dennis with (H1, H2) = (99, 0), (13, 0), (7, 0), (5, 0), (4, 1), (3, 2)
(two layers, the inner one scaled by 0.5). The hypervolume of a run is that of its final population, re-evaluated
without noise, normalised with the suite's utopian and nadir points (reference point all ones).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np

from nas_envs import make_benchmark
from nas_envs.benchmarks import CITYSEG_PROBLEMS
from nas_envs.benchmarks.base import objective_matrix
from nas_envs.benchmarks.cityseg_problems import POPULATION
from nas_envs.benchmarks.pymoo_adapter import BenchmarkProblem

MOEAS = ("nsga2", "nsga3", "moead", "rvea", "ibea", "hype")

# Table 7 of the paper: mean HV over 31 runs on its own CitySeg/MOP, in the order of MOEAS, and the algorithms it
# marks as best (bold: the best mean, and those its rank-sum test cannot tell apart from it).
PAPER_TABLE7 = {
    1: (0.9001, 0.8983, 0.8423, 0.8683, 0.8990, 0.8967), 2: (0.7995, 0.7991, 0.7492, 0.6976, 0.7739, 0.7949),
    3: (0.8238, 0.8229, 0.7582, 0.7813, 0.7830, 0.8134), 4: (0.6979, 0.6983, 0.5474, 0.5951, 0.6006, 0.6979),
    5: (0.6562, 0.6565, 0.5576, 0.5315, 0.5612, 0.6563), 6: (0.7719, 0.7718, 0.7107, 0.7367, 0.7692, 0.7706),
    7: (0.7311, 0.7312, 0.6745, 0.6810, 0.7090, 0.7303), 8: (0.7324, 0.7324, 0.6843, 0.6889, 0.7225, 0.7284),
    9: (0.5767, 0.5768, 0.4804, 0.5405, 0.4923, 0.5768), 10: (0.5473, 0.5473, 0.4606, 0.5138, 0.4726, 0.5472),
    11: (0.6884, 0.6884, 0.5699, 0.6620, 0.6634, 0.6840), 12: (0.4688, 0.4705, 0.3558, 0.4358, 0.3889, 0.4527),
    13: (0.4184, 0.4228, 0.3459, 0.3772, 0.3503, 0.4150), 14: (0.4299, 0.4339, 0.3406, 0.4118, 0.3569, 0.4214),
    15: (0.3971, 0.3980, 0.3272, 0.3003, 0.3376, 0.3956),
}
_NSGAS = frozenset({"nsga2", "nsga3"})
PAPER_BEST = {
    **dict.fromkeys((1, 2, 3, 8, 11), _NSGAS), **dict.fromkeys((4, 5, 7, 9, 10), _NSGAS | {"hype"}),
    6: _NSGAS | {"ibea", "hype"}, **dict.fromkeys((12, 13, 14, 15), frozenset({"nsga3"})),
}
# The paper's many-objective problems, where it finds NSGA-III ahead of NSGA-II (elsewhere the two tie).
MANY_OBJECTIVE_PROBLEMS = range(12, 16)
# Two samples of runs are told apart where the rank-sum test's p-value is below this (the paper's test).
RANK_SUM_LEVEL = 0.05


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


def make_moea(name: str, objectives: int, population: int | None = None):
    """An integer-coded pymoo algorithm for ``objectives`` objectives, with the paper's population size and
    reference directions for that many (``population`` overrides the size; MOEA/D's is its directions')."""
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
    population = population or POPULATION[objectives][0]
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
        "bundle": benchmark.bundle.manifest_sha256,
    }


def moea_run_key(row: dict) -> tuple:
    """What makes a run of ``nas-envs moea`` the same run: its bundle, problem, algorithm, seed and budget."""
    return row.get("bundle"), row["problem"], row["algorithm"], row["seed"], row.get("evaluations_asked")


def moea_run_problem(row: dict) -> str | None:
    """What makes a line no run of ``nas-envs moea`` (naming the field), or None: a runs file is read with it, so
    that no table averages in a line it should not."""
    def whole(value: object, low: int) -> bool:
        return type(value) is int and value >= low

    if not (whole(row.get("problem"), 1) and row["problem"] <= len(CITYSEG_PROBLEMS)):
        return f"field 'problem' is {row.get('problem')!r}; a problem is an integer from 1 to {len(CITYSEG_PROBLEMS)}"
    if row.get("algorithm") not in MOEAS:
        return f"field 'algorithm' is {row.get('algorithm')!r}; allowed: {', '.join(MOEAS)}"
    for field, low in (("seed", 0), ("evaluations", 0), ("evaluations_asked", 1)):
        if not whole(row.get(field), low):
            return f"field {field!r} is {row.get(field)!r}; it is an integer >= {low}"
    hv = row.get("hv")
    if type(hv) not in (int, float) or not 0.0 <= hv <= 1.0:  # NaN fails both comparisons
        return f"field 'hv' is {hv!r}; a normalised hypervolume is a finite number in [0, 1]"
    if not isinstance(row.get("bundle"), str):
        return "field 'bundle' (the manifest sha256 of the bundle the run used) is missing"
    return None


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


def _hypervolumes(runs: list[dict], problem: int) -> dict[str, np.ndarray]:
    """The runs' hypervolumes on one problem, per algorithm that ran (in the order of MOEAS)."""
    return {a: hv for a in MOEAS
            if len(hv := np.array([r["hv"] for r in runs if r["problem"] == problem and r["algorithm"] == a]))}


def rank_sum_marks(hypervolumes: dict[str, np.ndarray]) -> dict[str, str]:
    """Table 7's marks: ``-`` where the rank-sum test tells a sample apart from the best mean's (two-sided, at
    RANK_SUM_LEVEL), ``≈`` where it does not, and ``+`` for the best where every other one is told apart."""
    from scipy.stats import ranksums

    best = max(hypervolumes, key=lambda a: hypervolumes[a].mean())
    marks = {a: "≈" if ranksums(hv, hypervolumes[best]).pvalue >= RANK_SUM_LEVEL else "-"
             for a, hv in hypervolumes.items() if a != best}
    marks[best] = "≈" if "≈" in marks.values() else "+"
    return marks


def best_group(marks: dict[str, str]) -> list[str]:
    """The algorithms :func:`rank_sum_marks` puts in the best group (bold), in the order of MOEAS."""
    return [a for a in MOEAS if marks.get(a, "-") != "-"]


def baseline_table(runs: list[dict]) -> str:
    """Markdown in the style of the paper's Table 7: HV mean (std) per problem and algorithm, the best group in bold
    with the rank-sum marks of :func:`rank_sum_marks`, and the paper's best group beside it (among the algorithms
    that ran here)."""
    lines = ["| problem | " + " | ".join(MOEAS) + " | runs | best here | best in the paper |",
             "|---" * (len(MOEAS) + 4) + "|"]
    for problem in sorted({r["problem"] for r in runs}):
        hypervolumes = _hypervolumes(runs, problem)
        marks = rank_sum_marks(hypervolumes)
        cells = []
        for algorithm in MOEAS:
            if algorithm not in hypervolumes:
                cells.append("-")
                continue
            cell = f"{hypervolumes[algorithm].mean():.4f} ({hypervolumes[algorithm].std():.4f})"
            cells.append(f"**{cell}** {marks[algorithm]}" if marks[algorithm] != "-" else f"{cell} -")
        counts = sorted({len(hv) for hv in hypervolumes.values()})
        best = ", ".join(best_group(marks))
        paper = ", ".join(a for a in MOEAS if a in PAPER_BEST[problem] and a in hypervolumes) or "-"
        lines.append(f"| MOP{problem} | " + " | ".join(cells) + f" | {'-'.join(map(str, counts))} | {best} | {paper} |")
    return "\n".join(lines + table_notes(runs))


def runs_to_tell_apart() -> int:
    """The fewest runs per algorithm with which the rank-sum test can tell two samples apart at RANK_SUM_LEVEL (when
    every run of one beats every run of the other)."""
    from scipy.stats import ranksums

    n = 2
    while ranksums(np.arange(n), np.arange(n) + n).pvalue >= RANK_SUM_LEVEL:
        n += 1
    return n


def table_notes(runs: list[dict]) -> list[str]:
    """What a reader of :func:`baseline_table` should know: too few runs for the marks to mean anything, and
    algorithms that stopped short of the evaluations asked (their generations do not divide the budget)."""
    notes = []
    fewest = min(collections.Counter((r["problem"], r["algorithm"]) for r in runs).values())
    needed = runs_to_tell_apart()
    if fewest < needed:
        notes.append(f"With {fewest} run(s) of an algorithm the rank-sum test cannot tell any two apart at "
                     f"{RANK_SUM_LEVEL:.0%} (every mark is ≈): it needs at least {needed} runs each.")
    for algorithm in MOEAS:
        short = [r for r in runs if r["algorithm"] == algorithm
                 and r.get("evaluations", 0) < r.get("evaluations_asked", 0)]
        if short:
            spent = sorted({r["evaluations"] for r in short})
            notes.append(f"{algorithm}: {len(short)} run(s) stopped at {spent[0]:,}"
                         + (f" to {spent[-1]:,}" if len(spent) > 1 else "")
                         + f" of {short[0]['evaluations_asked']:,} evaluations asked (its generations do not divide "
                         "the budget, and duplicates are dropped).")
    return ["", *notes] if notes else []


def paper_claims(means: dict[str, float], best: set[str], problem: int) -> tuple[bool, bool]:
    """The paper's two findings on one problem, given each algorithm's mean HV and the best group: NSGA-II or
    NSGA-III is among the best (on MANY_OBJECTIVE_PROBLEMS: NSGA-III has the best mean and NSGA-II does not tie with
    it), and MOEA/D and RVEA have the two lowest means."""
    if problem in MANY_OBJECTIVE_PROBLEMS:
        nsga_best = max(means, key=means.get) == "nsga3" and "nsga2" not in best
    else:
        nsga_best = bool(best & _NSGAS)
    return nsga_best, set(sorted(means, key=means.get)[:2]) == {"moead", "rvea"}


def paper_ordering_table(runs: list[dict]) -> str:
    """Markdown, per problem where all six algorithms ran: the ranking by mean HV here and in the paper, their Kendall
    tau, and whether each of the paper's two findings (:func:`paper_claims`) holds here and in the paper's own table."""
    from scipy.stats import kendalltau

    lines = ["| problem | ranking here | ranking in the paper | Kendall tau | NSGA-II/III best: here (paper) | "
             "MOEA/D and RVEA last: here (paper) |", "|---" * 6 + "|"]
    yes = {True: "yes", False: "no"}
    for problem in sorted({r["problem"] for r in runs}):
        hypervolumes = _hypervolumes(runs, problem)
        if len(hypervolumes) < len(MOEAS):
            continue
        marks = rank_sum_marks(hypervolumes)
        here = {a: float(hv.mean()) for a, hv in hypervolumes.items()}
        paper = dict(zip(MOEAS, PAPER_TABLE7[problem]))
        ours = paper_claims(here, set(best_group(marks)), problem)
        theirs = paper_claims(paper, set(PAPER_BEST[problem]), problem)
        tau = kendalltau([here[a] for a in MOEAS], [paper[a] for a in MOEAS]).statistic
        lines.append(f"| MOP{problem} | {' > '.join(sorted(here, key=lambda a: -here[a]))} | "
                     f"{' > '.join(sorted(paper, key=lambda a: -paper[a]))} | {tau:+.2f} | "
                     f"{yes[ours[0]]} ({yes[theirs[0]]}) | {yes[ours[1]]} ({yes[theirs[1]]}) |")
    return "\n".join(lines) if len(lines) > 2 else "No problem has runs of all six algorithms yet."
