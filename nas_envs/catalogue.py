"""Which benchmarks exist, declared once.

A :class:`Family` is one search space with everything built on it: its space class, the benchmark names it
serves and the factory that makes them, its environments (entry points) and the ids registered for them, each
pinned to a bundle (:class:`Release`), the surrogates a user may choose and the default, the ground-truth protocol
of its newest bundle and how a training of it is measured, and the command that fits a bundle. Registration with
Gymnasium, :func:`nas_envs.make_benchmark`, :func:`nas_envs.spaces.get_space`, the command line's choices and
defaults, the run settings and the collector all read :data:`FAMILIES`; adding a benchmark is one
:func:`register_family` call and the files it names.

Entries name code as ``"module:attribute"`` strings, imported only when used, so that this module imports nothing
of the package and ``import nas_envs`` stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Release:
    """One registered environment id, pinned to one bundle, serving one benchmark of its family."""

    env_id: str
    bundle: str
    benchmark: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)  # further constructor arguments, e.g. {"problem": 3}
    # "module:Class" of environments other than the family's (a variant such as multi-fidelity); "": the family's
    env: str = ""
    vector_env: str = ""


@dataclass(frozen=True)
class Family:
    """A search space and everything built on it (see the module docstring)."""

    name: str  # the space's name, also the family's: "darts"
    space: str  # "module:Class" of its SearchSpace
    benchmarks: tuple[str, ...]  # the benchmark names make_benchmark accepts
    factory: str  # "module:function": (benchmark name, bundle, surrogate or None) -> Benchmark
    env: str  # "module:Class" of the single environment
    vector_env: str  # "module:Class" of the native vector environment
    releases: tuple[Release, ...]  # oldest first; the last one of the family's own environment names the default
    reward: str  # what an episode's reward is, in a few words ('nas-envs list')
    surrogates: tuple[str, ...] = ()  # accuracy surrogates a user may choose; () when there is nothing to choose
    default_surrogate: str | None = None
    protocol: str = ""  # ground-truth protocol of the newest bundle
    # "module:function": (protocol, genes, seed, device) -> the measured part of a ground-truth record
    measure: str = "nas_envs.groundtruth.train:train"
    measures_on_gpu: bool = True  # whether a measurement may run on a GPU
    network: str = ""  # "module:function": (protocol, genes) -> the torch network a training of it builds
    # "module:function" behind 'nas-envs fit': (space, model, protocol, seed, out_dir, feature_version, lines)
    # -> summary
    fit: str = ""
    models: tuple[str, ...] = ()  # the model kinds 'nas-envs fit --model' accepts; the first is the default

    @property
    def default_bundle(self) -> str:
        """The bundle of the newest release of the family's own environment (variants' bundles are never the
        default)."""
        return [release for release in self.releases if not release.env][-1].bundle


def resolve(reference: str) -> Any:
    """The attribute a ``"module:attribute"`` reference names."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


_SURROGATE_FIT = "nas_envs.fitting.surrogate_fit:fit_command"
_SURROGATE_MODELS = ("xgb", "gin", "runtime", "curve", "stack")
#: the accuracy ensembles of the surrogate families (a user's ``surrogate=``): "xgb+gin" averages both; "stack" is in
#: bundles fitted with it
SURROGATES = ("xgb", "gin", "xgb+gin", "stack")

BUILTIN_FAMILIES: tuple[Family, ...] = (
    Family(
        name="darts", space="nas_envs.spaces.darts:DartsSpace", benchmarks=("darts",),
        factory="nas_envs.benchmarks.surrogate_benchmark:make_surrogate_benchmark",
        env="nas_envs.envs.darts:SurrNASDartsEnv", vector_env="nas_envs.envs.darts:SurrNASDartsVectorEnv",
        releases=(Release("SurrNAS-DARTS-v0", "darts-v0", "darts"),
                  Release("SurrNAS-DARTS-MF-v0", "darts-mf-v0", "darts", env="nas_envs.envs.darts_mf:SurrNASDartsMFEnv",
                          vector_env="nas_envs.envs.darts_mf:SurrNASDartsMFVectorEnv"),
                  Release("SurrNAS-DARTS-v1", "darts-v1", "darts"),
                  Release("SurrNAS-DARTS-MF-v1", "darts-mf-v1", "darts", env="nas_envs.envs.darts_mf:SurrNASDartsMFEnv",
                          vector_env="nas_envs.envs.darts_mf:SurrNASDartsMFVectorEnv")),
        reward="validation accuracy",
        surrogates=SURROGATES, default_surrogate="xgb", protocol="darts-fmnist14-c8l8-e4-v1",
        network="nas_envs.groundtruth.darts_net:build", fit=_SURROGATE_FIT, models=_SURROGATE_MODELS,
    ),
    Family(
        name="fbnet", space="nas_envs.spaces.fbnet:FBNetSpace", benchmarks=("fbnet",),
        factory="nas_envs.benchmarks.surrogate_benchmark:make_surrogate_benchmark",
        env="nas_envs.envs.fbnet:SurrNASFBNetEnv", vector_env="nas_envs.envs.fbnet:SurrNASFBNetVectorEnv",
        releases=(Release("SurrNAS-FBNet-v0", "fbnet-v0", "fbnet"), Release("SurrNAS-FBNet-v1", "fbnet-v1", "fbnet"),
                  Release("SurrNAS-FBNet-MF-v1", "fbnet-mf-v1", "fbnet", env="nas_envs.envs.fbnet_mf:SurrNASFBNetMFEnv",
                          vector_env="nas_envs.envs.fbnet_mf:SurrNASFBNetMFVectorEnv")),
        reward="validation accuracy",
        surrogates=SURROGATES, default_surrogate="xgb", protocol="fbnet-fmnist14-full-e4-v1",
        network="nas_envs.groundtruth.fbnet_net:build", fit=_SURROGATE_FIT, models=_SURROGATE_MODELS,
    ),
    Family(
        name="cityseg", space="nas_envs.spaces.cityseg:CitySegSpace",
        benchmarks=tuple(f"cityseg-mop{n}" for n in range(1, 16)),
        factory="nas_envs.benchmarks.cityseg:make_cityseg_benchmark",
        env="nas_envs.envs.cityseg:CitySegMOPEnv", vector_env="nas_envs.envs.cityseg:CitySegMOPVectorEnv",
        releases=tuple(Release(f"CitySeg-MOP{n}-v0", "cityseg-v0", f"cityseg-mop{n}", MappingProxyType({"problem": n}))
                       for n in range(1, 16)),
        reward="hypervolume gained", protocol="cityseg-scenes64-supernet-v1",
        measure="nas_envs.groundtruth.cityseg_supernet:evaluate_subnet", measures_on_gpu=False,
        network="nas_envs.groundtruth.cityseg_net:build", fit="nas_envs.fitting.cityseg_fit:fit_command",
        models=("ranknet",),
    ),
)

#: every family, by name (the builtin ones, and any added with :func:`register_family`)
FAMILIES: dict[str, Family] = {}
#: environment id -> the bundle it is pinned to, for every registered id
ENV_BUNDLES: dict[str, str] = {}


def register_family(family: Family) -> None:
    """Declare a family: its name, benchmark names and ids become known everywhere, and its ids are registered
    with Gymnasium. A family of a name already declared is refused."""
    taken = {b for f in FAMILIES.values() for b in f.benchmarks} & set(family.benchmarks)
    if family.name in FAMILIES or taken or {r.env_id for r in family.releases} & set(ENV_BUNDLES):
        raise ValueError(f"a benchmark family named {family.name!r}, or one of its benchmarks or ids, is already "
                         "declared")
    FAMILIES[family.name] = family
    ENV_BUNDLES.update({release.env_id: release.bundle for release in family.releases})
    register_ids(family)


def register_ids(family: Family) -> None:
    """Register a family's environment ids with Gymnasium (``import nas_envs`` does it for the builtin ones)."""
    import gymnasium

    for release in family.releases:
        gymnasium.register(id=release.env_id, entry_point=release.env or family.env,
                           vector_entry_point=release.vector_env or family.vector_env,
                           kwargs={**release.kwargs, "bundle": release.bundle})


def unregister_family(name: str) -> None:
    """Forget a family declared with :func:`register_family` (and its Gymnasium ids): for tests and plugins."""
    import gymnasium

    family = FAMILIES.pop(name)
    for release in family.releases:
        ENV_BUNDLES.pop(release.env_id, None)
        gymnasium.registry.pop(release.env_id, None)


def family(name: str) -> Family:
    """A family by name (its space's name)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown search space {name!r}; allowed: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def family_of_benchmark(benchmark: str) -> Family:
    """The family a benchmark name belongs to (``"cityseg-mop3"`` -> the CitySeg family)."""
    for candidate in FAMILIES.values():
        if benchmark in candidate.benchmarks:
            return candidate
    names = list(benchmark_names())
    shown = ", ".join(names if len(names) <= 6 else names[:4] + ["...", names[-1]])
    raise ValueError(f"unknown benchmark {benchmark!r}; allowed: {shown}")


def release_of(env_id: str) -> tuple[Family, Release]:
    """The family and release behind a registered environment id."""
    for candidate in FAMILIES.values():
        for release in candidate.releases:
            if release.env_id == env_id:
                return candidate, release
    raise ValueError(f"unknown environment {env_id!r}; 'nas-envs list' prints the {len(ENV_BUNDLES)} ids")


def benchmark_names() -> tuple[str, ...]:
    """Every benchmark name :func:`nas_envs.make_benchmark` accepts, family by family."""
    return tuple(name for f in FAMILIES.values() for name in f.benchmarks)


class FamilyField(Mapping):
    """A read-only view ``space name -> one field of its family`` that follows :data:`FAMILIES` (for the names
    older code reads, such as ``DEFAULT_BUNDLES`` and ``DEFAULT_PROTOCOL``)."""

    def __init__(self, attribute: str) -> None:
        self._attribute = attribute

    def __getitem__(self, name: str) -> Any:
        if name not in FAMILIES:
            raise KeyError(name)
        return getattr(FAMILIES[name], self._attribute)

    def __iter__(self):
        return iter(FAMILIES)

    def __len__(self) -> int:
        return len(FAMILIES)


for _family in BUILTIN_FAMILIES:
    FAMILIES[_family.name] = _family
    ENV_BUNDLES.update({release.env_id: release.bundle for release in _family.releases})
