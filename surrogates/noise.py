"""Noisy evaluations drawn from an ensemble's spread, reproducibly from the caller's random generator."""

from __future__ import annotations

import numpy as np


def ensemble_mean_std(members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over the member axis of an ``(N, members)`` prediction matrix."""
    return members.mean(axis=1), members.std(axis=1, ddof=1) if members.shape[1] > 1 else np.zeros(len(members))


def calibration_scale(predicted_std: np.ndarray, measured_seed_std: float) -> float:
    """Factor that makes the mean predicted spread equal to the measured mean seed-to-seed std."""
    mean_predicted = float(np.mean(predicted_std))
    if mean_predicted <= 0:
        raise ValueError("the ensemble has no spread; cannot calibrate a noise model on it")
    return measured_seed_std / mean_predicted


def noise_std(std: np.ndarray, scale: float, cap: float = np.inf) -> np.ndarray:
    """The calibrated spread ``scale * std``, at most ``cap``. Far from its training data an ensemble disagrees
    far more than trainings do; uncapped, a search that picks winners of noisy evaluations is drawn there by the
    noise alone. The benchmarks cap it at the largest seed-to-seed std measured on their noise subset."""
    return np.minimum(scale * std, cap)
