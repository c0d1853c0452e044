"""A pymoo ``Problem`` over any benchmark, for pymoo's multi-objective algorithms (pymoo's ``_evaluate`` style)."""

from __future__ import annotations

import numpy as np
from pymoo.core.problem import Problem
from pymoo.core.repair import Repair

from nas_envs.benchmarks.base import Benchmark, objective_matrix
from nas_envs.checks import check_flag
from nas_envs.spaces.base import InvalidArchitectureError

#: objectives of the single-objective benchmarks when a multi-objective search asks for none in particular
DEFAULT_TRADE_OFF = ("val_accuracy", "params")


class BenchmarkProblem(Problem):
    """``n_var = D`` integer genes within the space's ``gene_upper_bounds()``, one objective per name of
    ``objectives``, all minimised
    (maximised objectives such as accuracy are negated).

    Args:
        benchmark: any benchmark of :func:`nas_envs.make_benchmark`.
        objectives: which of the benchmark's objectives to optimise; default: a CitySeg problem's own, and
            validation accuracy against parameters for DARTS and FBNet.
        noise: noisy evaluations (seeded once by ``seed``, so that a run is reproducible) or the models' means.

    pymoo's integer operators hand over floats of integral value and know nothing of a space's rules: rows within
    the genes' bounds that break a rule of the space are projected onto it by :class:`LegalGenes` (which an
    algorithm may also take as its ``repair``, so that its population holds what was evaluated). Anything else
    (fractions, NaN, infinities, genes outside the bounds, strings, the wrong width) is refused with the errors
    of :meth:`Benchmark.evaluate <nas_envs.benchmarks.base.Benchmark.evaluate>`, never mapped onto some other
    architecture.
    """

    def __init__(self, benchmark: Benchmark, objectives: tuple[str, ...] | None = None, noise: bool = True,
                 seed: int | None = None) -> None:
        if objectives is None:
            objectives = DEFAULT_TRADE_OFF if set(DEFAULT_TRADE_OFF) <= set(benchmark.objectives) else \
                benchmark.objectives
        unknown = sorted(set(objectives) - set(benchmark.objectives))
        if unknown or not objectives:
            raise ValueError(f"objectives must be a non-empty subset of {benchmark.objectives}; got {objectives}")
        space = benchmark.space
        super().__init__(n_var=space.num_decisions, n_obj=len(objectives), xl=0, xu=space.gene_upper_bounds(),
                         vtype=int)
        self.benchmark = benchmark
        self.objective_names = tuple(objectives)
        self.noise = check_flag("noise", noise)
        self.rng = np.random.default_rng(seed)
        self.evaluated: list[np.ndarray] = []  # every batch of genes evaluated, in order (an optimiser trajectory)

    def _evaluate(self, x: np.ndarray, out: dict, *args, **kwargs) -> None:
        space = self.benchmark.space
        x = np.atleast_2d(np.asarray(x))
        if x.ndim != 2 or x.shape[1] != space.num_decisions:
            raise InvalidArchitectureError(f"{space.name}: expected genes of shape (N, {space.num_decisions}), got "
                                           f"{x.shape}")
        if not len(x):
            out["F"] = np.empty((0, self.n_obj))
            return
        genes = space.integer_genes(x)
        outside = np.flatnonzero(((genes < 0) | (genes > space.gene_upper_bounds())).any(axis=1))
        if len(outside):
            space.validate(genes[outside[0]])  # names the gene and what is allowed
            raise InvalidArchitectureError(f"{space.name}: genes {genes[outside[0]].tolist()} lie outside the "
                                           f"bounds 0..{space.gene_upper_bounds().tolist()}")
        invalid = space.invalid_rows(genes)
        if invalid.any():
            genes[invalid] = LegalGenes.project(space, genes[invalid])
        genes = space.as_batch(genes)
        self.evaluated.append(genes)
        values = self.benchmark.evaluate_genes(genes, self.noise, self.rng)
        view = _Selected(self.benchmark, self.objective_names)
        out["F"] = objective_matrix(view, values, minimise=True)


class _Selected:
    """The objective names and directions of a subset of a benchmark's objectives (for :func:`objective_matrix`)."""

    def __init__(self, benchmark: Benchmark, objectives: tuple[str, ...]) -> None:
        self.objectives = objectives
        self.directions = benchmark.directions


class LegalGenes(Repair):
    """Replaces every gene its predecessors make illegal by the nearest legal choice (lower on ties)."""

    def _do(self, problem: BenchmarkProblem, X: np.ndarray, **kwargs) -> np.ndarray:
        return self.project(problem.benchmark.space, np.rint(X).astype(np.int64)).astype(X.dtype)

    @staticmethod
    def project(space, genes: np.ndarray) -> np.ndarray:
        genes = np.clip(np.atleast_2d(genes), 0, space.num_actions - 1).copy()
        choices = np.arange(space.num_actions)
        for row in genes:
            for step in range(space.num_decisions):
                legal = np.flatnonzero(space.action_mask(row[:step]))
                if not legal.size:
                    break
                if row[step] not in legal:
                    row[step] = legal[np.argmin(np.abs(choices[legal] - row[step]))]
        return genes
