"""nas-envs: surrogate neural-architecture-search benchmarks as Gymnasium environments.

``import nas_envs`` registers the environment ids and is cheap: benchmarks and their models load only when an
environment or benchmark is created. Every id is pinned to one released bundle (see :mod:`nas_envs.assets`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gymnasium import register

from nas_envs.envs.episodes import BudgetExhaustedError

if TYPE_CHECKING:
    from nas_envs.benchmarks.base import Benchmark

__version__ = "0.2.0"

#: environment id -> the released bundle it is pinned to
ENV_BUNDLES: dict[str, str] = {"SurrNAS-DARTS-v0": "darts-v0", "SurrNAS-FBNet-v0": "fbnet-v0"}
ENV_BUNDLES.update({f"CitySeg-MOP{n}-v0": "cityseg-v0" for n in range(1, 16)})

for _space, _class in (("darts", "SurrNASDarts"), ("fbnet", "SurrNASFBNet")):
    _id = f"SurrNAS-{'DARTS' if _space == 'darts' else 'FBNet'}-v0"
    register(id=_id, entry_point=f"nas_envs.envs.{_space}:{_class}Env",
             vector_entry_point=f"nas_envs.envs.{_space}:{_class}VectorEnv", kwargs={"bundle": ENV_BUNDLES[_id]})
for _problem in range(1, 16):
    register(id=f"CitySeg-MOP{_problem}-v0", entry_point="nas_envs.envs.cityseg:CitySegMOPEnv",
             vector_entry_point="nas_envs.envs.cityseg:CitySegMOPVectorEnv",
             kwargs={"problem": _problem, "bundle": ENV_BUNDLES[f"CitySeg-MOP{_problem}-v0"]})


def closest_env_id(name: str) -> str | None:
    """The registered id nearest to ``name``, ignoring case (``"SurrNAS-Darts-v0"`` -> ``"SurrNAS-DARTS-v0"``)."""
    import difflib

    lowered = {env_id.lower(): env_id for env_id in ENV_BUNDLES}
    match = difflib.get_close_matches(str(name).lower(), lowered, n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def make_benchmark(name: str, surrogate: str | None = None, bundle: "str | os.PathLike | None" = None) -> "Benchmark":
    """A benchmark by name (``"darts"``, ``"fbnet"``, ``"cityseg-mop1"`` ... ``"cityseg-mop15"``); see
    :func:`nas_envs.benchmarks.make_benchmark`."""
    from nas_envs.benchmarks import make_benchmark as _make_benchmark

    return _make_benchmark(name, surrogate=surrogate, bundle=bundle)


__all__ = ["BudgetExhaustedError", "ENV_BUNDLES", "__version__", "closest_env_id", "make_benchmark"]
