"""nas-envs: surrogate neural-architecture-search benchmarks as Gymnasium environments.

``import nas_envs`` registers the environment ids and is cheap: benchmarks, surrogates and torch load only when
an environment or benchmark is created.
"""

from __future__ import annotations

from gymnasium import register

__version__ = "0.1.0"

register(
    id="SurrNAS-DARTS-v0",
    entry_point="nas_envs.envs.darts:SurrNASDartsEnv",
    vector_entry_point="nas_envs.envs.darts:SurrNASDartsVectorEnv",
)
register(
    id="SurrNAS-FBNet-v0",
    entry_point="nas_envs.envs.fbnet:SurrNASFBNetEnv",
    vector_entry_point="nas_envs.envs.fbnet:SurrNASFBNetVectorEnv",
)

for _problem in range(1, 16):
    register(id=f"CitySeg-MOP{_problem}-v0", entry_point="nas_envs.envs.cityseg:CitySegMOPEnv",
             vector_entry_point="nas_envs.envs.cityseg:CitySegMOPVectorEnv", kwargs={"problem": _problem})


def make_benchmark(name: str, surrogate: str = "xgb"):
    """A bundled benchmark by name (``"darts"``, ``"fbnet"``, ``"cityseg-mop1"`` ... ``"cityseg-mop15"``); see
    :class:`nas_envs.benchmarks.SurrogateBenchmark` and :class:`nas_envs.benchmarks.cityseg.CitySegBenchmark`."""
    from nas_envs.benchmarks import make_benchmark as _make_benchmark

    return _make_benchmark(name, surrogate=surrogate)


__all__ = ["__version__", "make_benchmark"]
