"""Surrogate quality metrics as used by NAS-Bench-301 (accuracies as fractions in [0, 1])."""

from __future__ import annotations

import numpy as np
from scipy import stats


def r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    residual = np.sum((y_true - y_pred) ** 2)
    total = np.sum((y_true - y_true.mean()) ** 2)
    return float(1.0 - residual / total) if total > 0 else float("nan")


def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(np.abs(np.asarray(y_true, dtype=float) - np.asarray(y_pred, dtype=float))))


def kendall_tau(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(stats.kendalltau(y_true, y_pred).statistic)


def sparse_kendall_tau(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Kendall tau with the predictions rounded to 0.1 % accuracy (ties in near-equal predictions)."""
    return kendall_tau(y_true, np.round(np.asarray(y_pred, dtype=float), 3))


def spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(stats.spearmanr(y_true, y_pred).statistic)


def bias(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean signed error: positive when the surrogate over-predicts."""
    return float(np.mean(np.asarray(y_pred, dtype=float) - np.asarray(y_true, dtype=float)))


def noise_ceilings(measured: np.ndarray, trainings: np.ndarray, seed_variance: float,
                   seeds: int | None = None) -> dict[str, float]:
    """What a perfect model of each architecture's expected value would score against ``measured`` (each the mean
    of ``trainings`` seeds of seed variance ``seed_variance``): R2, and the Kendall tau that R2 allows where values
    and seed noise are normal (2/pi arcsin of the correlation). With ``seeds``, what it would score were every
    architecture the mean of that many seeds instead (the expected values' variance: the measured one less the
    noise's share)."""
    measured, trainings = np.asarray(measured, dtype=float), np.asarray(trainings, dtype=float)
    noise, total = float(np.mean(seed_variance / trainings)), float(measured.var(ddof=1))
    if seeds is not None:
        noise, total = seed_variance / seeds, total - noise + seed_variance / seeds
    r2_ceiling = 1 - noise / total
    return {"r2": r2_ceiling, "kendall_tau": float(2 / np.pi * np.arcsin(np.sqrt(np.clip(r2_ceiling, 0, 1))))}


def all_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    return {
        "n": int(len(y_true)),
        "r2": r2(y_true, y_pred),
        "mae": mae(y_true, y_pred),
        "bias": bias(y_true, y_pred),
        "kendall_tau": kendall_tau(y_true, y_pred),
        "sparse_kendall_tau": sparse_kendall_tau(y_true, y_pred),
        "spearman": spearman(y_true, y_pred),
    }
