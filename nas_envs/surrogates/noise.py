"""Noisy evaluations drawn from an ensemble's spread, reproducibly from the caller's random generator.

The draws' standard deviation is the ensemble's spread, scaled and clipped to what repeated trainings measure:
:func:`measure_seed_noise` reads the mean seed variance and the range of per-architecture noise from a noise
subset, :func:`calibration_scale` scales the spread so that the clipped draws have that mean variance, and
:func:`noise_std` applies both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def ensemble_mean_std(members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over the member axis of an ``(N, members, ...)`` prediction array: numpy's
    ``mean`` and ``std(ddof=1)`` step by step (the same operations, so the same bits), without their dispatch, which
    costs more than the arithmetic on the few rows of an environment's evaluation."""
    count = members.shape[1]
    total = np.add.reduce(members, axis=1, keepdims=True)
    mean = total / count
    if count == 1:
        return mean[:, 0], np.zeros_like(mean[:, 0])
    deviations = members - mean
    return mean[:, 0], np.sqrt(np.add.reduce(deviations * deviations, axis=1) / (count - 1))


@dataclass(frozen=True)
class SeedNoise:
    """One training's noise as repeated trainings measure it: the mean seed variance over the architectures and
    the range ``[low, high]`` of per-architecture standard deviations that the measurements support."""

    variance: float
    low: float
    high: float


def measure_seed_noise(values: Sequence[np.ndarray], width: float = 2.0) -> SeedNoise:
    """The seed noise of repeated trainings: ``values`` holds, per architecture, the metric of each seed (2 or more).

    A sample variance of few seeds scatters far more than the architectures' true variances do (with 3 seeds
    it is chi-square with 2 degrees of freedom: among 100 equally noisy architectures the largest sample std is
    about 2.2x their common std). So the range is not the extremes of the sample standard deviations but
    the mean true variance plus and minus ``width`` standard deviations of the true variances, estimated by the
    method of moments (``E[s^4] = sigma^4 (1 + 2 / (n - 1))`` for normal trainings of ``n`` seeds); a noise subset
    consistent with equal noise gives a range of one point.
    """
    if len(values) < 2 or any(len(v) < 2 for v in values):
        raise ValueError(f"seed noise needs at least 2 architectures of at least 2 seeds each, got seed counts "
                         f"{[len(v) for v in values]}")
    seeds = np.array([len(v) for v in values])
    variances = np.array([np.var(v, ddof=1) for v in values])
    mean_variance = float(variances.mean())
    fourth_moment = float(np.mean(variances**2 / (1 + 2 / (seeds - 1))))
    spread = width * np.sqrt(max(fourth_moment - mean_variance**2, 0.0))
    return SeedNoise(mean_variance, float(np.sqrt(max(mean_variance - spread, 0.0))),
                     float(np.sqrt(mean_variance + spread)))


def calibration_scale(predicted_std: np.ndarray, noise: SeedNoise) -> float:
    """The factor ``c`` for which draws of std ``clip(c * predicted_std, noise.low, noise.high)`` have the
    measured mean variance over these architectures (found by bisection: that mean grows with ``c``)."""
    predicted_std = np.asarray(predicted_std, dtype=np.float64)
    if not np.any(predicted_std > 0):
        raise ValueError("the ensemble has no spread; cannot calibrate a noise model on it")
    target = noise.variance * (1 - 1e-9)  # a range of one point squares back to the variance up to rounding
    if not (noise.low**2 <= noise.variance * (1 + 1e-9) and noise.variance <= noise.high**2 * (1 + 1e-9)):
        raise ValueError(f"the mean seed variance {noise.variance} lies outside the range of stds "
                         f"[{noise.low}, {noise.high}]")
    if noise.low == noise.high:
        return 1.0  # noise of one level everywhere: the spread plays no part
    mean_variance = lambda c: float(np.mean(noise_std(predicted_std, c, noise.low, noise.high) ** 2))  # noqa: E731
    low, high = 0.0, np.sqrt(noise.variance) / predicted_std[predicted_std > 0].min()
    for _ in range(60):  # grow the bracket until the draws are noisy enough
        if mean_variance(high) >= target:
            break
        high *= 2
    else:
        raise ValueError("too few architectures with spread to reach the measured seed variance under the range")
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if mean_variance(middle) < target else (low, middle)
    return high


def noise_std(std: np.ndarray, scale: float, low: float = 0.0, high: float = np.inf) -> np.ndarray:
    """The calibrated spread ``scale * std`` clipped to ``[low, high]``. Far from its training data an ensemble
    disagrees far more than trainings do, and where it agrees it would make evaluations nearly exact; the
    clipping keeps draws within the noise that repeated trainings measure."""
    return clip(scale * np.asarray(std), low, high)


def clip(values: np.ndarray, low: float | np.ndarray, high: float | np.ndarray) -> np.ndarray:
    """``np.clip(values, low, high)``, bit for bit, by a maximum and a minimum: np.clip's dispatch costs more than
    the arithmetic on the few values of one architecture's evaluation."""
    return np.minimum(np.maximum(values, low), high)
