"""A pymoo ``Problem`` over a CitySeg/MOP benchmark, for pymoo's multi-objective algorithms."""

from __future__ import annotations

import numpy as np
from pymoo.core.problem import Problem

from nas_envs.benchmarks.cityseg import CitySegBenchmark
from nas_envs.spaces.cityseg import CHOICES


class CitySegPymooProblem(Problem):
    """``n_var = 24`` integer genes in ``[0, CHOICES - 1]``, ``n_obj = M`` objectives, all minimised.

    pymoo's integer operators (``RoundingRepair``) hand over floats of integral value; they are rounded here.
    Noisy objectives come from this problem's own generator, seeded once, so a run is reproducible.
    """

    def __init__(self, benchmark: CitySegBenchmark, noise: bool = True, seed: int | None = None) -> None:
        super().__init__(n_var=len(CHOICES), n_obj=len(benchmark.objectives), xl=0, xu=CHOICES - 1, vtype=int)
        self.benchmark = benchmark
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.evaluated: list[np.ndarray] = []  # every batch of genes evaluated, in order (an optimiser trajectory)

    def _evaluate(self, x: np.ndarray, out: dict, *args, **kwargs) -> None:
        genes = np.rint(x).astype(np.int64)
        self.evaluated.append(genes)
        out["F"] = self.benchmark.evaluate(genes, noise=self.noise, seed=self.rng)
