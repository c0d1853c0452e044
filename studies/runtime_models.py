"""Which model predicts a training's CPU seconds best? Prints 5-fold cross-validated RMSE of log CPU seconds.

    python studies/runtime_models.py [--space darts]

Compares the bundled runtime kind (a bootstrap ridge ensemble on the space's cost features, penalty chosen by
cross-validation) with an XGBoost ensemble on the tabular features (rounds chosen by cross-validation, as the
accuracy surrogates), both with 10 members, and a constant. Uses every record of the default protocol that holds
CPU seconds (noise-subset seeds included: this chooses a model family, it does not judge a bundle).
"""

from __future__ import annotations

import argparse

import numpy as np
import xgboost as xgb

from nas_envs.assets import data_path
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL
from nas_envs.groundtruth.records import read_records
from nas_envs.spaces import get_space
from nas_envs.surrogates.linear import RidgeEnsemble, cross_validated_alpha
from nas_envs.surrogates.xgb import cross_validated_rounds, train_members


def ridge_mean(x_fit: np.ndarray, y_fit: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    alpha = cross_validated_alpha(x_fit, y_fit[:, None])
    return RidgeEnsemble.fit(x_fit, y_fit[:, None], alpha).predict(x_new).mean(axis=1)[:, 0]


def xgb_mean(x_fit: np.ndarray, y_fit: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    members = train_members(x_fit, y_fit, rounds=cross_validated_rounds(x_fit, y_fit))
    data = xgb.DMatrix(np.asarray(x_new, dtype=np.float32))
    return np.mean([booster.predict(data) for booster in members], axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space", default="darts", choices=["darts", "fbnet"])
    args = parser.parse_args()
    protocol = DEFAULT_PROTOCOL[args.space]
    records = [r for r in read_records(data_path(protocol)) if r["protocol"] == protocol and "train_cpu_seconds" in r]
    space = get_space(args.space)
    genes = np.array([r["genes"] for r in records])
    y = np.log([r["train_cpu_seconds"] for r in records])
    fold = np.random.default_rng(0).permutation(len(y)) % 5
    models = {
        "ridge on cost features (bundled)": (ridge_mean, space.cost_features(genes)),
        "XGBoost on tabular features": (xgb_mean, space.features(genes)),
    }
    print(f"{protocol}: {len(y)} records with CPU seconds, std of log seconds {y.std():.3f}")
    for name, (predict, x) in models.items():
        predicted = np.empty_like(y)
        for k in range(5):
            predicted[fold == k] = predict(x[fold != k], y[fold != k], x[fold == k])
        print(f"{name}: 5-fold cross-validated RMSE of log seconds {np.sqrt(np.mean((predicted - y) ** 2)):.3f}")
    constant = np.array([y[fold != k].mean() for k in fold])
    print(f"constant (mean of the other folds): {np.sqrt(np.mean((constant - y) ** 2)):.3f}")


if __name__ == "__main__":
    main()
