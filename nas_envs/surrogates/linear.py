"""Bootstrap ensembles of ridge regressions: for targets that are close to linear in counts (a training's time is a
sum of per-operation costs), with a spread from the bootstrap that the noise model calibrates like any other."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nas_envs.threads import one_thread

#: penalties tried by :func:`cross_validated_alpha`, on standardised features
ALPHAS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0)


def _solve(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Ridge weights ``(F, T)`` and intercepts ``(T,)`` in the original feature units; the penalty acts on
    standardised features, so that it treats columns of different scales alike (constant columns get weight 0)."""
    center = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    standard = (x - center) / scale
    y_center = y.mean(axis=0)
    with one_thread():  # BLAS sums in another order on more threads: the same fit must write the same files
        weights = np.linalg.solve(standard.T @ standard + alpha * np.eye(x.shape[1]), standard.T @ (y - y_center))
    weights /= scale[:, None]
    return weights, y_center - center @ weights


def _check(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or len(y) != len(x):
        raise ValueError(f"expected x (N, F) and y (N, T), got {x.shape} and {y.shape}")
    if len(x) < 2:
        raise ValueError(f"need at least 2 training examples, got {len(x)}")
    return x, y


def cross_validated_alpha(x: np.ndarray, y: np.ndarray, seed: int = 0, folds: int = 5,
                          alphas: tuple[float, ...] = ALPHAS) -> float:
    """The penalty of ``alphas`` with the lowest ``folds``-fold cross-validated squared error over all target
    columns of ``y`` ``(N, T)``; deterministic given ``seed``."""
    x, y = _check(x, y)
    fold = np.random.default_rng(seed).permutation(len(x)) % min(folds, len(x))
    errors = []
    for alpha in alphas:
        squared = 0.0
        for k in range(fold.max() + 1):
            weights, intercept = _solve(x[fold != k], y[fold != k], alpha)
            squared += float(np.sum((x[fold == k] @ weights + intercept - y[fold == k]) ** 2))
        errors.append(squared)
    return float(alphas[int(np.argmin(errors))])


class RidgeEnsemble:
    """``members`` ridge regressions fitted on bootstrap resamples; ``predict(x)`` gives ``(N, members, T)``."""

    def __init__(self, weights: np.ndarray, intercepts: np.ndarray, alpha: float) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)  # (members, F, T)
        self.intercepts = np.asarray(intercepts, dtype=np.float64)  # (members, T)
        self.alpha = float(alpha)
        self.num_members, self.num_features, self.num_targets = self.weights.shape

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, alpha: float, members: int = 10, seed: int = 0) -> "RidgeEnsemble":
        """Deterministic given ``seed``; ``y`` ``(N, T)``."""
        x, y = _check(x, y)
        fits = []
        for member in range(members):
            rows = np.random.default_rng([seed, member]).integers(len(x), size=len(x))
            fits.append(_solve(x[rows], y[rows], alpha))
        return cls(np.stack([w for w, _ in fits]), np.stack([b for _, b in fits]), alpha)

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.num_features:
            raise ValueError(f"expected features of shape (N, {self.num_features}), got {x.shape}")
        return np.einsum("nf,mft->nmt", x, self.weights) + self.intercepts

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:  # np.savez would append ".npz" to a name without it
            np.savez(handle, weights=self.weights, intercepts=self.intercepts, alpha=np.float64(self.alpha))
        return path

    @classmethod
    def load(cls, path: Path) -> "RidgeEnsemble":
        with np.load(path, allow_pickle=False) as arrays:
            return cls(arrays["weights"], arrays["intercepts"], float(arrays["alpha"]))
