"""nas-envs: surrogate neural-architecture-search benchmarks as Gymnasium environments.

``import nas_envs`` registers the environment ids and is cheap: benchmarks and their models load only when an
environment or benchmark is created. Every id is pinned to one released bundle (see :mod:`nas_envs.assets`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from nas_envs.catalogue import BUILTIN_FAMILIES, ENV_BUNDLES, register_ids
from nas_envs.envs.episodes import BudgetExhaustedError

if TYPE_CHECKING:
    from nas_envs.benchmarks.base import Benchmark

__version__ = "0.2.0"

# Every id the catalogue declares (nas_envs.catalogue.ENV_BUNDLES: environment id -> the bundle it is pinned to).
for _family in BUILTIN_FAMILIES:
    register_ids(_family)


def closest_env_id(name: str) -> str | None:
    """The registered id nearest to ``name``, ignoring case (``"SurrNAS-Darts-v0"`` -> ``"SurrNAS-DARTS-v0"``)."""
    import difflib

    lowered = {env_id.lower(): env_id for env_id in ENV_BUNDLES}
    match = difflib.get_close_matches(str(name).lower(), lowered, n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def make_benchmark(name: str, surrogate: str | None = None, bundle: "str | os.PathLike | None" = None) -> "Benchmark":
    """A benchmark by name (``"darts"``, ``"fbnet"``, ``"cityseg-mop1"`` ..., every name of
    :data:`nas_envs.catalogue.FAMILIES`); see
    :func:`nas_envs.benchmarks.make_benchmark`."""
    from nas_envs.benchmarks import make_benchmark as _make_benchmark

    return _make_benchmark(name, surrogate=surrogate, bundle=bundle)


__all__ = ["BudgetExhaustedError", "ENV_BUNDLES", "__version__", "closest_env_id", "make_benchmark"]
