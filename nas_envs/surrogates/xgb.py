"""Fitting XGBoost ensembles: members differ by bootstrap sample and seed, so their spread reflects uncertainty."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# Shallow trees: on a few hundred noisy DARTS trainings depth 3 cross-validates better than deeper trees, with
# fewer rounds (``python studies/xgb_features.py`` compares them). The leaf size a fit uses is cross-validated
# among LEAF_WEIGHTS; the default is the one DARTS chooses.
DEFAULT_PARAMS: dict = {
    "objective": "reg:squarederror",
    "max_depth": 3,
    "eta": 0.1,
    "subsample": 0.8,
    "colsample_bytree": 0.5,
    "min_child_weight": 8.0,
    "lambda": 1.0,
    "nthread": 1,
}
DEFAULT_ROUNDS = 100
# ``min_child_weight`` candidates of a fit: a family whose spread is decided by a few extreme architectures (FBNet's
# skip-heavy networks) needs small leaves to isolate them, one with a broad spread (DARTS) large ones against noise.
LEAF_WEIGHTS = (1.0, 2.0, 4.0, 8.0)


def _cross_validate(
    x: np.ndarray, y: np.ndarray, seed: int, params: dict | None, max_rounds: int, folds: int, patience: int,
) -> tuple[int, float]:
    """The best number of rounds and its ``folds``-fold cross-validated RMSE."""
    import xgboost as xgb

    history = xgb.cv(
        {**DEFAULT_PARAMS, **(params or {}), "seed": seed},
        xgb.DMatrix(np.asarray(x, dtype=np.float32), label=np.asarray(y, dtype=np.float64)),
        num_boost_round=max_rounds,
        nfold=folds,
        early_stopping_rounds=patience,
        seed=seed,
        shuffle=True,
        as_pandas=False,  # a dict of lists whether or not pandas is installed (a DataFrame would index by label)
    )
    rmse = history["test-rmse-mean"]  # with early stopping the history ends at the best round
    return len(rmse), float(rmse[-1])


def cross_validated_rounds(
    x: np.ndarray, y: np.ndarray, seed: int = 0, params: dict | None = None, max_rounds: int = 300,
    folds: int = 5, patience: int = 20,
) -> int:
    """The number of boosting rounds with the lowest ``folds``-fold cross-validated RMSE (early stopping after
    ``patience`` rounds without improvement): on noisy targets more rounds fit noise and only cost prediction
    time. Deterministic given ``seed``."""
    return _cross_validate(x, y, seed, params, max_rounds, folds, patience)[0]


def cross_validated_settings(
    x: np.ndarray, y: np.ndarray, seed: int = 0, max_rounds: int = 300, folds: int = 5, patience: int = 20,
) -> tuple[dict, int]:
    """The ``min_child_weight`` of :data:`LEAF_WEIGHTS` and the number of rounds with the lowest cross-validated
    RMSE (the same folds for every candidate), as ``(params, rounds)``. Deterministic given ``seed``."""
    results = {weight: _cross_validate(x, y, seed, {"min_child_weight": weight}, max_rounds, folds, patience)
               for weight in LEAF_WEIGHTS}
    weight = min(results, key=lambda w: results[w][1])
    return {"min_child_weight": weight}, results[weight][0]


def train_members(
    x: np.ndarray, y: np.ndarray, members: int = 10, seed: int = 0, params: dict | None = None,
    rounds: int = DEFAULT_ROUNDS,
) -> list:
    """``members`` boosters fitted on bootstrap resamples of ``(x, y)``; deterministic given ``seed``."""
    import xgboost as xgb

    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.shape != (len(x),):
        raise ValueError(f"expected x (N, F) and y (N,), got {x.shape} and {y.shape}")
    if len(x) < 2:
        raise ValueError(f"need at least 2 training examples, got {len(x)}")
    boosters = []
    for member in range(members):
        rng = np.random.default_rng([seed, member])
        rows = rng.integers(len(x), size=len(x)) if members > 1 else np.arange(len(x))
        boosters.append(
            xgb.train(
                {**DEFAULT_PARAMS, **(params or {}), "seed": int(rng.integers(2**31))},
                xgb.DMatrix(x[rows], label=y[rows]),
                num_boost_round=rounds,
            )
        )
    return boosters


def fit_xgb_ensemble(
    x: np.ndarray,
    y: np.ndarray,
    out_dir: Path,
    members: int = 10,
    seed: int = 0,
    params: dict | None = None,
    rounds: int = DEFAULT_ROUNDS,
) -> list[Path]:
    """Fit an ensemble with :func:`train_members` and save each member as XGBoost JSON, with ``params`` (the
    overrides of :data:`DEFAULT_PARAMS`) among its attributes (XGBoost keeps no training parameters in a model
    file); returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for member, booster in enumerate(train_members(x, y, members, seed, params, rounds)):
        booster.set_attr(**{name: str(value) for name, value in (params or {}).items()})
        path = out_dir / f"member_{member}.json"
        booster.save_model(path)
        paths.append(path)
    return paths
