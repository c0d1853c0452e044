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


def make_benchmark(name: str, surrogate: str = "xgb"):
    """A bundled benchmark by name (``"darts"``, ``"fbnet"``); see :class:`nas_envs.benchmarks.SurrogateBenchmark`."""
    from nas_envs.benchmarks import make_benchmark as _make_benchmark

    return _make_benchmark(name, surrogate=surrogate)


__all__ = ["__version__", "make_benchmark"]
