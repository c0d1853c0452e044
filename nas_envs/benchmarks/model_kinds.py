"""The kinds of surrogate a benchmark bundles, and how each turns architectures into its inputs.

``xgb`` and ``gin`` predict validation and test accuracy; ``curve`` the validation accuracy after each epoch (the
learning curve, for multi-fidelity queries); ``runtime`` (a bootstrap ridge ensemble on the space's
cost features) predicts the log of a training's CPU seconds and serves both. Each kind knows its targets, its input
encoding (from the space and the bundle's exact cost table), how to fit and save an ensemble for all its targets at
once, and how to load it back as a predictor of ``(N, members, targets)``; fitting
(:mod:`nas_envs.fitting.surrogate_fit`) and evaluation share these definitions.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from nas_envs.assets import UNREADABLE, AssetError, bundle_file
from nas_envs.extras import require
from nas_envs.spaces.base import SearchSpace

#: what a bundle's cost table gives, each exactly linear in the space's cost features
COSTS = ("params", "flops")


def exact_costs(cost_table: dict, cost_features: np.ndarray) -> dict[str, np.ndarray]:
    """Params and FLOPs from a bundle's cost table: exactly linear in the space's cost features."""
    return {name: np.rint(cost_table[name]["intercept"] + cost_features @ np.asarray(cost_table[name]["weights"]))
            for name in COSTS}


class Encodings:
    """The encodings of one batch of architectures, each computed once whichever models read it: the exact costs,
    the runtime model and the accuracy models share the cost features, XGB and GIN the tabular features."""

    def __init__(self, space: SearchSpace, genes: np.ndarray, cost_table: dict, feature_version: int | None = None
                 ) -> None:
        self.space = space
        self.genes = genes
        self.cost_table = cost_table
        self.feature_version = feature_version  # of the space's features; None: the newest, what a fit reads

    @cached_property
    def cost_features(self) -> np.ndarray:
        return self.space.cost_features(self.genes)

    @cached_property
    def costs(self) -> dict[str, np.ndarray]:
        return exact_costs(self.cost_table, self.cost_features)

    @cached_property
    def features_and_log_costs(self) -> np.ndarray:
        """The space's tabular features plus the log of the exact params and FLOPs: float32 ``(N, F + 2)``."""
        log_costs = np.log(np.column_stack([self.costs["params"], self.costs["flops"]]))
        return np.concatenate([self.space.features(self.genes, self.cost_features, self.feature_version), log_costs],
                              axis=1).astype(np.float32)


class Predictor(Protocol):
    def predict(self, inputs: Any) -> np.ndarray:
        """``(N, members, targets)`` member predictions."""
        ...


class _TargetMajorForests:
    """One :class:`~nas_envs.surrogates.forest.ForestEnsemble` over the members of every target (target-major), so that
    a batch costs one XGBoost call for all targets."""

    def __init__(self, forests, num_targets: int) -> None:
        self.forests = forests
        self.num_targets = num_targets

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        out = self.forests.predict(inputs)
        return out.reshape(len(out), self.num_targets, -1).transpose(0, 2, 1)


class _TabularKind:
    """Models of the named targets on one of the matrix :class:`Encodings` (the attribute ``input_name``)."""

    input_name: str
    reads_features: bool  # whether the input holds the space's features, whose version a bundle records

    def __init__(self, name: str, targets: tuple[str, ...]) -> None:
        self.name = name
        self.targets = targets

    def inputs(self, encodings: Encodings) -> np.ndarray:
        return getattr(encodings, self.input_name)


class ForestKind(_TabularKind):
    """XGBoost ensembles on the space's tabular features plus the log of the exact params and FLOPs: trees split
    on one column where params are a weighted sum of many (``python studies/xgb_features.py`` compares the
    inputs)."""

    input_name = "features_and_log_costs"
    reads_features = True

    def fit_and_save(self, inputs: np.ndarray, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
        """One ensemble per target column of ``y`` ``(N, targets)``, in ``folder/<target>/``, each with its
        cross-validated leaf size and number of rounds (members of different tree counts still merge into one
        XGBoost call)."""
        from nas_envs.surrogates.xgb import cross_validated_settings, fit_xgb_ensemble

        paths = []
        for column, target in enumerate(self.targets):
            params, rounds = cross_validated_settings(inputs, y[:, column], seed=seed)
            paths += fit_xgb_ensemble(inputs, y[:, column], folder / target, seed=seed, params=params, rounds=rounds)
        return paths

    def load(self, paths: list[Path]) -> Predictor:
        from nas_envs.surrogates.forest import ForestEnsemble

        return _TargetMajorForests(ForestEnsemble.from_files(paths), len(self.targets))


class StackKind(_TabularKind):
    """A stack per target of the XGB recipe, a bootstrap ridge and XGBoost's random-forest mode on the XGB input,
    weighted on out-of-fold predictions (:mod:`nas_envs.surrogates.stack`): torch-free, three tabular predictions a
    query."""

    input_name = "features_and_log_costs"
    reads_features = True

    def fit_and_save(self, inputs: np.ndarray, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
        from nas_envs.surrogates.stack import fit_stack

        return [path for column, target in enumerate(self.targets)
                for path in fit_stack(inputs, y[:, column], folder / target, seed)]

    def load(self, paths: list[Path]) -> Predictor:
        from nas_envs.surrogates.stack import StackEnsemble

        # files of a target: <target>/stack.json, <target>/ridge.npz, <target>/<trees|forest>/member_<i>.json
        stacks = [StackEnsemble.load([p for p in paths if target in (p.parent.name, p.parent.parent.name)])
                  for target in self.targets]
        return _StackedTargets(stacks)


class _StackedTargets:
    """One :class:`~nas_envs.surrogates.stack.StackEnsemble` per target: ``(N, members, targets)``."""

    def __init__(self, stacks: list) -> None:
        self.stacks = stacks

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        return np.stack([stack.predict(inputs) for stack in self.stacks], axis=2)


class RidgeKind(_TabularKind):
    """Bootstrap ridge ensembles on the space's cost features (op counts per cell and input position for DARTS,
    per-layer blocks for FBNet). A training's time is close to a sum of per-op costs: its cross-validated error is
    below an XGBoost ensemble's (``python studies/runtime_models.py``), and one matrix product costs
    microseconds."""

    input_name = "cost_features"
    reads_features = False

    def fit_and_save(self, inputs: np.ndarray, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
        from nas_envs.surrogates.linear import RidgeEnsemble, cross_validated_alpha

        alpha = cross_validated_alpha(inputs, y, seed=seed)
        return [RidgeEnsemble.fit(inputs, y, alpha, seed=seed).save(folder / "ridge.npz")]

    def load(self, paths: list[Path]) -> Predictor:
        from nas_envs.surrogates.linear import RidgeEnsemble

        return RidgeEnsemble.load(paths[0])


class GINKind:
    """GIN ensembles on the space's typed graphs, each graph with the XGB surrogate's tabular input as features.
    A fit reads the features only where it has at least ``records_per_feature`` records per feature: with fewer, the
    features let the GIN overfit (compare ``python studies/gin_settings.py '{}' '{"num_features": 0}'
    --noise-subset``)."""

    name = "gin"
    targets = ("val_accuracy", "test_accuracy")
    input_name = "graphs_with_features_and_log_costs"
    reads_features = True
    records_per_feature = 5

    def inputs(self, encodings: Encodings):
        from nas_envs.surrogates.gin import GraphBatch

        space = encodings.space
        if not hasattr(space, "graphs"):
            raise ValueError(f"the {space.name} space has no graph encoding; use the xgb surrogate")
        return GraphBatch(*space.graphs(encodings.genes), features=encodings.features_and_log_costs)

    def config(self, inputs):
        """The release recipe's ``GINConfig`` for a fit on ``inputs``."""
        from nas_envs.surrogates.gin import GINConfig

        width = inputs.features.shape[1]
        num_features = width if len(inputs) >= self.records_per_feature * width else 0
        return GINConfig.for_graphs(inputs, len(self.targets), num_features=num_features)

    def fit_and_save(self, inputs, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
        from nas_envs.surrogates.gin import GINEnsemble

        return GINEnsemble.fit(inputs, y, self.config(inputs), seed=seed).save(folder)

    def load(self, paths: list[Path]) -> Predictor:
        require("torch_geometric", "gin", "the GIN surrogate")
        from nas_envs.surrogates.gin import GINEnsemble

        folder = paths[0].parent
        return GINEnsemble.load(folder, count=sum(p.suffix == ".pt" for p in paths))


#: the epochs of the learning curves that the ``curve`` kind models: those of the DARTS and FBNet protocols
CURVE_EPOCHS = 4
#: validation accuracy after each epoch, the targets of the ``curve`` kind
CURVE_TARGETS: tuple[str, ...] = tuple(f"val_accuracy_epoch_{epoch}" for epoch in range(1, CURVE_EPOCHS + 1))

MODEL_KINDS: dict[str, ForestKind | RidgeKind | GINKind | StackKind] = {
    "xgb": ForestKind("xgb", ("val_accuracy", "test_accuracy")),
    # one ensemble per epoch: on the DARTS data it reads the later epochs better than one ensemble with the epoch as
    # an input (python studies/curve_models.py)
    "curve": ForestKind("curve", CURVE_TARGETS),
    "runtime": RidgeKind("runtime", ("log_train_cpu_seconds",)),
    "gin": GINKind(),
    "stack": StackKind("stack", ("val_accuracy", "test_accuracy")),
}


class PooledKinds:
    """Accuracy kinds judged as one model by pooling their members (``"xgb+gin"``): with as many members each, the
    pooled mean is the average of their means, as :class:`~nas_envs.benchmarks.SurrogateBenchmark` evaluates it.
    Each part is fitted on its own; the pool is only scored."""

    def __init__(self, name: str) -> None:
        names = name.split("+")
        if len(names) < 2 or any(n not in ("xgb", "gin") for n in names):
            raise ValueError(f"unknown surrogate kind {name!r}; allowed: {sorted(MODEL_KINDS)} or 'xgb+gin'")
        self.name = name
        self.parts = [MODEL_KINDS[n] for n in names]
        self.targets = self.parts[0].targets
        self.input_name = "+".join(part.input_name for part in self.parts)

    def inputs(self, encodings: Encodings) -> tuple:
        return tuple(part.inputs(encodings) for part in self.parts)


class PooledPredictor:
    """The members of several predictors side by side: ``(N, members of all, targets)``."""

    def __init__(self, predictors: list[Predictor]) -> None:
        self.predictors = predictors

    def predict(self, inputs: tuple) -> np.ndarray:
        return np.concatenate([p.predict(x) for p, x in zip(self.predictors, inputs)], axis=1)


def model_kind(name: str) -> ForestKind | RidgeKind | GINKind | PooledKinds:
    """A fitted kind by name, or a pool of accuracy kinds (``"xgb+gin"``)."""
    return MODEL_KINDS[name] if name in MODEL_KINDS else PooledKinds(name)


def load_bundled(kind: str, entry: dict, bundle: Path, space_name: str) -> Predictor:
    """The predictor of a bundle's manifest ``entry`` for ``kind``, after checking that this version of nas-envs
    reads the same targets from the same inputs."""
    model_kind = MODEL_KINDS[kind]
    refit = f"refit it with 'nas-envs fit {space_name} --model {kind}'"
    if (list(entry.get("targets", ())), entry.get("inputs")) != (list(model_kind.targets), model_kind.input_name):
        raise ValueError(f"{bundle}: the {kind!r} model was written by another version of nas-envs (inputs "
                         f"{entry.get('inputs')!r}, this version reads {model_kind.input_name!r}); {refit}")
    if "noise_range" not in entry:
        raise ValueError(f"{bundle}: the {kind!r} model was written by another version of nas-envs (no calibrated "
                         f"noise range); {refit}")
    try:
        return model_kind.load([bundle_file(bundle, f) for f in entry["files"]])
    except UNREADABLE as error:
        # a file whose checksum matches its manifest but whose content this version cannot read
        raise AssetError(f"{bundle}: the {kind!r} model files ({', '.join(entry['files'][:3])}...) could not be "
                         f"read: {type(error).__name__}: {error}; {refit}") from error


def feature_readers(models: dict) -> dict[str, int]:
    """Of a manifest's ``models``, those whose inputs hold the space's features, each with the version of the
    features it was fitted on (entries written before bundles recorded it read version 1)."""
    return {kind: entry.get("feature_version", 1) for kind, entry in models.items()
            if kind in MODEL_KINDS and MODEL_KINDS[kind].reads_features}


def bundle_feature_version(models: dict, space: SearchSpace, bundle: Path) -> int | None:
    """The version of ``space``'s features that a bundle's models (its manifest's ``models``) were fitted on, one
    for all of them; None when none reads features."""
    versions = set(feature_readers(models).values())
    if len(versions) > 1:
        raise ValueError(f"{bundle}: its models were fitted on different versions of the {space.name} features "
                         f"({sorted(versions)}); refit each of them with 'nas-envs fit {space.name} --model KIND'")
    if not versions:
        return None
    try:
        return space.feature_version(versions.pop())
    except ValueError as error:
        raise ValueError(f"{bundle}: {error}") from error


def load_bundled_kind(name: str, models: dict, bundle: Path, space_name: str) -> Predictor:
    """:func:`load_bundled` for a kind or a pool of kinds (their members side by side)."""
    kind = model_kind(name)
    if isinstance(kind, PooledKinds):
        return PooledPredictor([load_bundled(part.name, models[part.name], bundle, space_name) for part in kind.parts])
    return load_bundled(name, models[name], bundle, space_name)
