"""Benchmarks: a search space with its surrogates and cost tables, evaluated in batches (one interface,
:class:`~nas_envs.benchmarks.base.Benchmark`, for every space)."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from nas_envs.assets import DEFAULT_BUNDLES, assets_dir, check_bundle_argument
from nas_envs.benchmarks.base import Benchmark, objective_matrix
from nas_envs.benchmarks.surrogate_benchmark import SURROGATES, SurrogateBenchmark
from nas_envs.spaces import get_space

CITYSEG_PROBLEMS = tuple(f"cityseg-mop{n}" for n in range(1, 16))
BENCHMARKS = ("darts", "fbnet") + CITYSEG_PROBLEMS


def space_of(name: str) -> str:
    """The search space a benchmark name belongs to (``"cityseg-mop3"`` -> ``"cityseg"``)."""
    return "cityseg" if name in CITYSEG_PROBLEMS else name


def make_benchmark(name: str, surrogate: str | None = None, bundle: "str | os.PathLike | None" = None) -> Benchmark:
    """A benchmark by name: ``"darts"``, ``"fbnet"`` or ``"cityseg-mop1"`` ... ``"cityseg-mop15"``.

    ``bundle``: a released bundle (``"darts-v0"``; default: the space's newest release) or the folder of a bundle
    written by ``nas-envs fit``. ``surrogate`` applies to DARTS and FBNet (``"xgb"``, the default, ``"gin"``,
    ``"xgb+gin"``); CitySeg has one error predictor (the rank-net) and takes none.

    Benchmarks are stateless between calls (noise comes from the caller's generator), so one instance per
    (name, surrogate, bundle, assets folder) is shared by every environment of the process: assets load once.
    """
    if not isinstance(name, str) or name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; allowed: darts, fbnet, cityseg-mop1 ... cityseg-mop15")
    if surrogate is not None and (not isinstance(surrogate, str) or surrogate not in SURROGATES):
        raise ValueError(f"unknown surrogate {surrogate!r}; allowed: {SURROGATES} (DARTS and FBNet), or None for the "
                         "default")
    bundle = DEFAULT_BUNDLES[space_of(name)] if bundle is None else bundle
    check_bundle_argument(bundle)
    if not isinstance(bundle, str):
        bundle = str(Path(bundle).resolve())
    return _shared_benchmark(name, surrogate, bundle, str(assets_dir()))


@cache
def _shared_benchmark(name: str, surrogate: str | None, bundle: str, _assets: str) -> Benchmark:
    if name in CITYSEG_PROBLEMS:
        if surrogate is not None:
            raise ValueError(f"{name} has one error predictor (the rank-net); surrogate={surrogate!r} does not apply")
        from nas_envs.benchmarks.cityseg import CitySegBenchmark
        from nas_envs.benchmarks.cityseg_problems import get_problem

        return CitySegBenchmark(get_problem(int(name[len("cityseg-mop") :])), bundle)
    return SurrogateBenchmark(get_space(name), bundle, surrogate=surrogate or "xgb")


__all__ = ["BENCHMARKS", "CITYSEG_PROBLEMS", "Benchmark", "SurrogateBenchmark", "make_benchmark", "objective_matrix",
           "space_of"]
