"""The kinds of surrogate a benchmark bundles, and how each turns architectures into its inputs.

``xgb`` and ``gin`` predict validation and test accuracy; ``runtime`` (XGBoost) predicts the log of a training's CPU
seconds and serves both. Each kind knows its targets, its input encoding, how to fit and save an ensemble for all its
targets at once, and how to load it back as a predictor of ``(N, members, targets)``; fitting
(:mod:`nas_envs.benchmarks.fit`) and evaluation share these definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from nas_envs.spaces.base import SearchSpace


class Predictor(Protocol):
    def predict(self, inputs: Any) -> np.ndarray:
        """``(N, members, targets)`` member predictions."""
        ...


class _TargetMajorForests:
    """One :class:`~surrogates.forest.ForestEnsemble` over the members of every target (target-major), so that
    a batch costs one XGBoost call for all targets."""

    def __init__(self, forests, num_targets: int) -> None:
        if forests.num_members % num_targets:
            raise ValueError(f"{forests.num_members} XGBoost members cannot split evenly into {num_targets} targets: "
                             "every target's ensemble needs the same number of members")
        self.forests = forests
        self.num_targets = num_targets

    def predict(self, inputs: np.ndarray) -> np.ndarray:
        out = self.forests.predict(inputs)
        return out.reshape(len(out), self.num_targets, -1).transpose(0, 2, 1)


def _load_forests(paths: list[Path], num_targets: int) -> _TargetMajorForests:
    from surrogates.forest import ForestEnsemble

    return _TargetMajorForests(ForestEnsemble.from_files(paths), num_targets)


class ForestKind:
    """XGBoost ensembles on the space's tabular features."""

    input_name = "features"

    def __init__(self, name: str, targets: tuple[str, ...]) -> None:
        self.name = name
        self.targets = targets

    def inputs(self, space: SearchSpace, genes: np.ndarray) -> np.ndarray:
        return space.features(genes)

    def fit_and_save(self, inputs: np.ndarray, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
        """One ensemble per target column of ``y`` ``(N, targets)``, in ``folder/<target>/``, all with the
        largest of the targets' cross-validated numbers of rounds (one tree count, so that the targets' members
        merge into one XGBoost call)."""
        from surrogates.xgb import cross_validated_rounds, fit_xgb_ensemble

        rounds = max(cross_validated_rounds(inputs, y[:, column], seed=seed) for column in range(y.shape[1]))
        return [path for column, target in enumerate(self.targets)
                for path in fit_xgb_ensemble(inputs, y[:, column], folder / target, seed=seed, rounds=rounds)]

    def load(self, paths: list[Path]) -> Predictor:
        return _load_forests(paths, len(self.targets))


class GINKind:
    """GIN ensembles on the space's typed graphs."""

    name = "gin"
    targets = ("val_accuracy", "test_accuracy")
    input_name = "graphs"

    def inputs(self, space: SearchSpace, genes: np.ndarray):
        from surrogates.gin import GraphBatch

        if not hasattr(space, "graphs"):
            raise ValueError(f"the {space.name} space has no graph encoding; use the xgb surrogate")
        return GraphBatch(*space.graphs(genes))

    def fit_and_save(self, inputs, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
        from surrogates.gin import GINConfig, GINEnsemble

        config = GINConfig(
            num_node_types=int(inputs.node_type.max()) + 1,
            num_edge_types=int(inputs.edge_type.max()) + 1,
            outputs=len(self.targets),
        )
        return GINEnsemble.fit(inputs, y, config, seed=seed).save(folder)

    def load(self, paths: list[Path]) -> Predictor:
        from surrogates.gin import GINEnsemble

        folder = paths[0].parent
        return GINEnsemble.load(folder, count=sum(p.suffix == ".pt" for p in paths))


MODEL_KINDS: dict[str, ForestKind | GINKind] = {
    "xgb": ForestKind("xgb", ("val_accuracy", "test_accuracy")),
    "runtime": ForestKind("runtime", ("log_train_cpu_seconds",)),
    "gin": GINKind(),
}


@dataclass(frozen=True)
class LoadedModel:
    """A predictor with the kind whose inputs it reads and the targets of its last axis."""

    kind: ForestKind | GINKind
    targets: tuple[str, ...]
    predictor: Predictor


def load_models(files: dict[str, list[Path]]) -> list[LoadedModel]:
    """The models of the given kinds (``{kind: its files}``). XGBoost kinds load as one forest of all their
    targets: an XGBoost call costs about 0.2 ms whatever its size, so accuracy and runtime share one call."""
    forest_kinds = [kind for kind in files if isinstance(MODEL_KINDS[kind], ForestKind)]
    loaded = [LoadedModel(MODEL_KINDS[kind], MODEL_KINDS[kind].targets, MODEL_KINDS[kind].load(paths))
              for kind, paths in files.items() if kind not in forest_kinds]
    if forest_kinds:
        targets = tuple(target for kind in forest_kinds for target in MODEL_KINDS[kind].targets)
        paths = [path for kind in forest_kinds for path in files[kind]]
        loaded.append(LoadedModel(MODEL_KINDS[forest_kinds[0]], targets, _load_forests(paths, len(targets))))
    return loaded
