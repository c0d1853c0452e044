"""Benchmarks: a search space with its surrogates and cost tables, evaluated in batches."""

from __future__ import annotations

from nas_envs.assets import assets_dir
from nas_envs.benchmarks.surrogate_benchmark import BudgetExhaustedError, SurrogateBenchmark
from nas_envs.spaces import get_space

BENCHMARKS = ("darts", "fbnet")


def make_benchmark(name: str, surrogate: str = "xgb") -> SurrogateBenchmark:
    """A bundled benchmark by name: ``"darts"`` or ``"fbnet"``."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; allowed: {BENCHMARKS}")
    return SurrogateBenchmark(get_space(name), assets_dir() / "models" / name, surrogate=surrogate)


__all__ = ["BENCHMARKS", "BudgetExhaustedError", "SurrogateBenchmark", "make_benchmark"]
