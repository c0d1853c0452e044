"""Benchmarks: a search space with its surrogates and cost tables, evaluated in batches (one interface,
:class:`~nas_envs.benchmarks.base.Benchmark`, for every space)."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from nas_envs.assets import assets_dir, check_bundle_argument
from nas_envs.benchmarks.base import Benchmark, objective_matrix
from nas_envs.benchmarks.surrogate_benchmark import SurrogateBenchmark
from nas_envs.catalogue import family, family_of_benchmark, resolve

CITYSEG_PROBLEMS = family("cityseg").benchmarks


def space_of(name: str) -> str:
    """The search space a benchmark name belongs to (``"cityseg-mop3"`` -> ``"cityseg"``)."""
    return family_of_benchmark(name).name


def make_benchmark(name: str, surrogate: str | None = None, bundle: "str | os.PathLike | None" = None) -> Benchmark:
    """A benchmark by name: ``"darts"``, ``"fbnet"``, ``"cityseg-mop1"`` ... ``"cityseg-mop15"``, or any other name
    of :data:`nas_envs.catalogue.FAMILIES`.

    ``bundle``: a released bundle (``"darts-v0"``; default: the family's newest release) or the folder of a bundle
    written by ``nas-envs fit``. ``surrogate``: one of the family's surrogates (DARTS and FBNet: ``"xgb"``, the
    default, ``"gin"``, ``"xgb+gin"``); families with one predictor (CitySeg's rank-net) take none.

    Benchmarks are stateless between calls (noise comes from the caller's generator), so one instance per
    (name, surrogate, bundle, assets folder) is shared by every environment of the process: assets load once.
    """
    if not isinstance(name, str):
        raise ValueError(f"a benchmark name must be a string, got {type(name).__name__} {name!r}")
    chosen = family_of_benchmark(name)
    if surrogate is not None and (not isinstance(surrogate, str) or surrogate not in chosen.surrogates):
        allowed = f"{chosen.surrogates}, or None for the default" if chosen.surrogates else \
            "none: it has one predictor (surrogate must be None)"
        raise ValueError(f"unknown surrogate {surrogate!r} for {name}; allowed: {allowed}")
    bundle = chosen.default_bundle if bundle is None else bundle
    check_bundle_argument(bundle)
    if not isinstance(bundle, str):
        bundle = str(Path(bundle).resolve())
    return _shared_benchmark(name, surrogate or chosen.default_surrogate, bundle, str(assets_dir()))


@cache
def _shared_benchmark(name: str, surrogate: str | None, bundle: str, _assets: str) -> Benchmark:
    return resolve(family_of_benchmark(name).factory)(name, bundle, surrogate)


__all__ = ["CITYSEG_PROBLEMS", "Benchmark", "SurrogateBenchmark", "make_benchmark", "objective_matrix",
           "space_of"]
