"""Benchmarks: a search space with its surrogates and cost tables, evaluated in batches."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from nas_envs.assets import assets_dir
from nas_envs.benchmarks.surrogate_benchmark import BudgetExhaustedError, SurrogateBenchmark
from nas_envs.spaces import get_space

if TYPE_CHECKING:
    from nas_envs.benchmarks.cityseg import CitySegBenchmark

CITYSEG_PROBLEMS = tuple(f"cityseg-mop{n}" for n in range(1, 16))
BENCHMARKS = ("darts", "fbnet") + CITYSEG_PROBLEMS


def make_benchmark(name: str, surrogate: str = "xgb") -> "SurrogateBenchmark | CitySegBenchmark":
    """A bundled benchmark by name: ``"darts"``, ``"fbnet"`` or ``"cityseg-mop1"`` ... ``"cityseg-mop15"``.

    Benchmarks are stateless between calls (noise comes from the caller's generator), so one instance per
    (name, surrogate, assets folder) is shared by every environment of the process: assets load once.
    ``surrogate`` applies to DARTS and FBNet; CitySeg has one error predictor (the rank-net).
    """
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; allowed: darts, fbnet, cityseg-mop1 ... cityseg-mop15")
    return _shared_benchmark(name, surrogate, assets_dir())


@lru_cache(maxsize=None)
def _shared_benchmark(name: str, surrogate: str, assets: Path) -> "SurrogateBenchmark | CitySegBenchmark":
    if name in CITYSEG_PROBLEMS:
        from nas_envs.benchmarks.cityseg import CitySegBenchmark
        from nas_envs.benchmarks.cityseg_problems import get_problem

        return CitySegBenchmark(get_problem(int(name[len("cityseg-mop") :])), assets / "models" / "cityseg")
    return SurrogateBenchmark(get_space(name), assets / "models" / name, surrogate=surrogate)


__all__ = ["BENCHMARKS", "CITYSEG_PROBLEMS", "BudgetExhaustedError", "SurrogateBenchmark", "make_benchmark"]
