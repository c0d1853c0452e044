"""Benchmarks: a search space with its surrogates and cost tables, evaluated in batches."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from nas_envs.assets import assets_dir
from nas_envs.benchmarks.surrogate_benchmark import BudgetExhaustedError, SurrogateBenchmark
from nas_envs.spaces import get_space

BENCHMARKS = ("darts", "fbnet")


def make_benchmark(name: str, surrogate: str = "xgb") -> SurrogateBenchmark:
    """A bundled benchmark by name: ``"darts"`` or ``"fbnet"``.

    Benchmarks are stateless between calls (noise comes from the caller's generator), so one instance per
    (name, surrogate, assets folder) is shared by every environment of the process: assets load once.
    """
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; allowed: {BENCHMARKS}")
    return _shared_benchmark(name, surrogate, assets_dir())


@lru_cache(maxsize=None)
def _shared_benchmark(name: str, surrogate: str, assets: Path) -> SurrogateBenchmark:
    return SurrogateBenchmark(get_space(name), assets / "models" / name, surrogate=surrogate)


__all__ = ["BENCHMARKS", "BudgetExhaustedError", "SurrogateBenchmark", "make_benchmark"]
