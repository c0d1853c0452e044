"""Which encoding and tree settings should the XGBoost accuracy surrogate use? Prints 5-fold cross-validated R2,
sparse Kendall tau and Spearman of validation accuracy.

    python benchmarks/xgb_features.py [--space darts] [--repeats 2]

Compares, on the training-subset records of the default protocol (the noise subset stays out, as in a fit):
the one-hot bits with per-cell op counts and depths that the DARTS surrogate read before 2026-11-30, the space's
tabular features (``space.features``), and the bundled input, those features plus the log of the exact params and
FLOPs; the bundled input with the deeper, thinner trees used before (depth 4, 2 examples per leaf); and a bootstrap
ridge ensemble on the bundled input, which says how much of what the trees learn is additive in the features. Each
fold fits 10-member ensembles with rounds (ridge: penalty) chosen by cross-validation on its own training part, as a
fit does. The same folds serve every setting; ``--repeats`` draws new folds and averages (mean +- standard error
over repeats).
"""

from __future__ import annotations

import argparse
import json
from typing import Callable

import numpy as np
import xgboost as xgb

from nas_envs.assets import assets_dir, data_path
from nas_envs.benchmarks.fit import load_dataset
from nas_envs.benchmarks.model_kinds import MODEL_KINDS
from nas_envs.groundtruth.train import DEFAULT_PROTOCOL
from nas_envs.spaces import get_space
from surrogates.linear import RidgeEnsemble, cross_validated_alpha
from surrogates.metrics import all_metrics
from surrogates.xgb import cross_validated_rounds, train_members


def one_hot_with_counts(space, genes: np.ndarray) -> np.ndarray:
    """The DARTS encoding before 2026-11-30: the (2 cells x 14 edges x 7 ops) one-hot bits, each cell's count of
    each op, and the cell depths."""
    bits = space.one_hot(genes)
    counts = bits.reshape(len(genes), 2, -1, 7).sum(axis=2).reshape(len(genes), -1)
    return np.concatenate([bits, counts, space.cell_depths(genes)], axis=1)


PREVIOUS_TREES = {"max_depth": 4, "min_child_weight": 2.0}


def forest(params: dict | None = None) -> Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]:
    """Fit-and-predict with an XGBoost ensemble whose rounds are chosen by cross-validation, as a fit does."""
    def fit_predict(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
        rounds = cross_validated_rounds(x_fit, y_fit, seed=seed, params=params)
        members = train_members(x_fit, y_fit, seed=seed, params=params, rounds=rounds)
        data = xgb.DMatrix(np.asarray(x_held, dtype=np.float32))
        return np.mean([booster.predict(data) for booster in members], axis=0)

    return fit_predict


def ridge(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
    """Fit-and-predict with a bootstrap ridge ensemble whose penalty is chosen by cross-validation."""
    alpha = cross_validated_alpha(x_fit, y_fit[:, None], seed=seed)
    return RidgeEnsemble.fit(x_fit, y_fit[:, None], alpha, seed=seed).predict(x_held).mean(axis=1)[:, 0]


def cross_validated_predictions(x: np.ndarray, y: np.ndarray, fold: np.ndarray, seed: int,
                                fit_predict: Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
                                ) -> np.ndarray:
    predicted = np.empty_like(y)
    for k in range(fold.max() + 1):
        fit, held = fold != k, fold == k
        predicted[held] = fit_predict(x[fit], y[fit], x[held], seed)
    return predicted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space", default="darts", choices=["darts", "fbnet"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    protocol = DEFAULT_PROTOCOL[args.space]
    space = get_space(args.space)
    data = load_dataset(data_path(protocol), protocol)
    cost_table = json.loads((assets_dir() / "models" / args.space / "costs.json").read_text())
    bundled = MODEL_KINDS["xgb"].inputs(space, data.genes, cost_table)
    settings = {  # name: (inputs, model)
        "space.features": (space.features(data.genes), forest()),
        "space.features + log params/FLOPs, depth 4, 2 per leaf (before)": (bundled, forest(PREVIOUS_TREES)),
        "space.features + log params/FLOPs (bundled)": (bundled, forest()),
        "ridge on the bundled input": (bundled.astype(np.float64), ridge),
    }
    if args.space == "darts":
        settings = {"one-hot bits + op counts + depth, depth 4, 2 per leaf (before)":
                    (one_hot_with_counts(space, data.genes), forest(PREVIOUS_TREES)), **settings}
    y = data.targets["val_accuracy"]
    print(f"{protocol}: {len(y)} training records ({data.data_lines} lines), validation accuracy, "
          f"5-fold cross-validation x {args.repeats}")
    folds = [np.random.default_rng(repeat).permutation(len(y)) % 5 for repeat in range(args.repeats)]
    for name, (x, fit_predict) in settings.items():
        scores = [all_metrics(y, cross_validated_predictions(x, y, fold, seed, fit_predict))
                  for seed, fold in enumerate(folds)]
        values = {label: np.array([s[key] for s in scores]) for key, label in
                  (("r2", "R2"), ("sparse_kendall_tau", "sparse Kendall tau"), ("spearman", "Spearman"))}
        summary = ", ".join(f"{label} {v.mean():.3f} +- {v.std() / np.sqrt(len(v)):.3f}" for label, v in values.items())
        print(f"{name} ({x.shape[1]} columns): {summary}")

if __name__ == "__main__":
    main()
