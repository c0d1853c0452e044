"""A stack of three differently biased ensembles on one input: boosted trees (the XGB recipe), a bootstrap ridge and
XGBoost's random-forest mode, weighted by non-negative least squares on their out-of-fold predictions.

Member ``i`` of the stack is ``center + sum_k weight_k * (prediction of member i of ensemble k - center)``: the
stack has as many members as each ensemble, and their spread is what the noise model calibrates, as for any
ensemble. ``python studies/xgb_features.py --only stack`` measured it against the XGB recipe alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

#: XGBoost's random-forest mode: each member one round of 50 bagged trees, no boosting
RANDOM_FOREST = {"num_parallel_tree": 50, "max_depth": 8, "min_child_weight": 4.0, "subsample": 0.63,
                 "colsample_bytree": 1.0, "colsample_bynode": 0.33, "lambda": 0.0, "eta": 1.0}
MEMBERS = ("trees", "ridge", "forest")
FOLDS = 5
WEIGHTS_FILE = "stack.json"


def _fit_member(name: str, x: np.ndarray, y: np.ndarray, seed: int, folder: Path | None
                ) -> tuple[Callable[[np.ndarray], np.ndarray], list[Path]]:
    """One ensemble fitted on ``(x, y)``: its member predictions ``x -> (N, members)``, and its files when
    ``folder`` is given."""
    from nas_envs.surrogates.forest import ForestEnsemble
    from nas_envs.surrogates.linear import RidgeEnsemble, cross_validated_alpha
    from nas_envs.surrogates.xgb import cross_validated_settings, fit_xgb_ensemble, train_members

    if name == "ridge":
        ridge = RidgeEnsemble.fit(x, y[:, None], cross_validated_alpha(x, y[:, None], seed=seed), seed=seed)
        paths = [ridge.save(folder / "ridge.npz")] if folder is not None else []
        return (lambda inputs: ridge.predict(inputs)[:, :, 0]), paths
    params, rounds = (cross_validated_settings(x, y, seed=seed) if name == "trees" else (RANDOM_FOREST, 1))
    if folder is None:
        import xgboost as xgb

        boosters = train_members(x, y, seed=seed, params=params, rounds=rounds)
        return (lambda inputs: np.column_stack([b.predict(xgb.DMatrix(inputs.astype(np.float32)))
                                                for b in boosters])), []
    paths = fit_xgb_ensemble(x, y, folder / name, seed=seed, params=params, rounds=rounds)
    forest = ForestEnsemble.from_files(paths)
    return (lambda inputs: forest.predict(inputs.astype(np.float32))), paths


def stack_weights(x: np.ndarray, y: np.ndarray, seed: int) -> tuple[float, list[float]]:
    """``(center, weights)``: non-negative least squares of ``y`` minus its mean on the members' out-of-fold mean
    predictions (:data:`FOLDS` folds)."""
    from scipy.optimize import nnls

    fold = np.random.default_rng(seed).permutation(len(y)) % FOLDS
    out_of_fold = np.empty((len(y), len(MEMBERS)))
    for k in range(FOLDS):
        fit, held = fold != k, fold == k
        for column, name in enumerate(MEMBERS):
            predict, _ = _fit_member(name, x[fit], y[fit], seed, None)
            out_of_fold[held, column] = predict(x[held]).mean(axis=1)
    center = float(y.mean())
    weights, _ = nnls(out_of_fold - center, y - center)
    return center, weights.tolist()


def fit_stack(x: np.ndarray, y: np.ndarray, folder: Path, seed: int) -> list[Path]:
    """Weigh the members on out-of-fold predictions, refit each on all of ``(x, y)`` into ``folder``; the files."""
    x = np.asarray(x, dtype=np.float64)
    center, weights = stack_weights(x, y, seed)
    paths = []
    for name in MEMBERS:
        paths += _fit_member(name, x, y, seed, folder)[1]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / WEIGHTS_FILE).write_text(json.dumps({"center": center, "weights": dict(zip(MEMBERS, weights))}))
    return [*paths, folder / WEIGHTS_FILE]


class StackEnsemble:
    """A fitted stack of one target: ``predict(x)`` gives ``(N, members)``."""

    def __init__(self, center: float, weights: dict[str, float], members: dict[str, object]) -> None:
        self.center, self.weights, self.members = center, weights, members

    @classmethod
    def load(cls, paths: list[Path]) -> "StackEnsemble":
        from nas_envs.surrogates.forest import ForestEnsemble
        from nas_envs.surrogates.linear import RidgeEnsemble

        by_name = {p.name: p for p in paths}
        stored = json.loads(by_name[WEIGHTS_FILE].read_text())
        members = {"ridge": RidgeEnsemble.load(by_name["ridge.npz"])}
        for name in ("trees", "forest"):
            members[name] = ForestEnsemble.from_files(sorted(p for p in paths if p.parent.name == name))
        return cls(float(stored["center"]), {k: float(v) for k, v in stored["weights"].items()}, members)

    def predict(self, x: np.ndarray) -> np.ndarray:
        out = np.full((len(x), self.members["ridge"].num_members), self.center)
        for name in MEMBERS:
            if self.weights[name]:
                member = self.members[name]
                predicted = member.predict(x)[:, :, 0] if name == "ridge" else member.predict(x.astype(np.float32))
                out = out + self.weights[name] * (predicted - self.center)
        return out
