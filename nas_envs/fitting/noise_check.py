"""The noise model judged against repeated seeds, the way NAS-Bench-301 judges its own (its Table 5).

For every noise-subset architecture (trained with several seeds, never fitted on), :data:`DRAWS` noisy evaluations
(``noise=True``) are the benchmark's predictive distribution of one training; the seeds trained for real are draws
of the truth. Per architecture: the error of the predicted standard deviation against the seeds' sample standard
deviation, the CRPS of each measured seed under the predictive distribution (from the draws: ``E|X - y| -
E|X - X'| / 2``; lower is better, in accuracy units), and whether each seed falls inside the central 90 % of the
draws; and the share of draws above the highest value any training of the data reached (a tail no training
shows). The baseline keeps the same predictive means but one constant standard deviation for every architecture:
the pooled seed standard deviation of the noise subset itself (the best constant there is, fitted on the data it
is judged on). On the learning-curve targets of multi-fidelity bundles the check runs per epoch before the last.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nas_envs.benchmarks.model_kinds import CURVE_TARGETS

DRAWS = 1000
COVERAGE = 0.9


def crps_from_draws(draws: np.ndarray, values: np.ndarray) -> np.ndarray:
    """CRPS of each of ``values`` under the distribution of ``draws`` (one-dimensional)."""
    ordered = np.sort(draws)
    k = len(ordered)
    spread = 2.0 * np.sum(ordered * (2 * np.arange(1, k + 1) - k - 1)) / k**2  # E|X - X'|
    return np.abs(ordered[None, :] - np.asarray(values)[:, None]).mean(axis=1) - spread / 2


def judge_draws(draws: list[np.ndarray], measured: list[np.ndarray], best_measured: float = np.inf) -> dict:
    """The noise model (``draws`` per architecture) and the constant-noise baseline against the ``measured`` seeds
    of the same architectures; ``above_best``: the share of draws above ``best_measured``, the highest value any
    training of the data reached (a tail no training shows)."""
    seed_std = np.array([values.std(ddof=1) for values in measured])
    constant = float(np.sqrt(np.mean(seed_std**2)))
    z = np.random.default_rng(0).standard_normal(DRAWS)
    baseline = [d.mean() + constant * z for d in draws]
    out = {"architectures": len(draws), "seeds": int(sum(len(v) for v in measured)), "constant_std": constant}
    for name, predicted in (("model", draws), ("constant", baseline)):
        low, high = (1 - COVERAGE) / 2, 1 - (1 - COVERAGE) / 2
        inside = [((v >= np.quantile(d, low)) & (v <= np.quantile(d, high))) for d, v in zip(predicted, measured)]
        out[name] = {
            "std_error": float(np.mean([abs(d.std() - s) for d, s in zip(predicted, seed_std)])),
            "mean_predicted_std": float(np.mean([d.std() for d in predicted])),
            "crps": float(np.mean(np.concatenate([crps_from_draws(d, v) for d, v in zip(predicted, measured)]))),
            "coverage": float(np.mean(np.concatenate(inside))),
            "above_best": float(np.mean(np.concatenate(predicted) > best_measured)),
        }
    out["mean_seed_std"] = float(seed_std.mean())
    return out


def noise_model_check(space: str, bundle: str | Path, surrogate: str, curves: bool = True) -> dict[str, dict]:
    """Per target (``val_accuracy``, and with ``curves`` each epoch's before the last on a bundle with a ``curve``
    model): :func:`judge_draws` of the benchmark with ``surrogate`` on ``bundle`` over its protocol's noise subset.
    A final accuracy's draws are the benchmark's: its mean plus its calibrated noise std times a standard normal,
    clipped to [0, 1] (one model evaluation per architecture); a curve's come from ``evaluate_curves``."""
    import nas_envs
    from nas_envs.assets import data_path, require_data, resolve_bundle
    from nas_envs.fitting.surrogate_fit import load_dataset

    folder, _ = resolve_bundle(bundle)
    benchmark = nas_envs.make_benchmark(space, surrogate=surrogate, bundle=folder)
    protocol = benchmark.manifest["protocol"]
    data = load_dataset(require_data(data_path(protocol)), protocol)
    mean, std = benchmark.mean_and_noise_std(data.noise_genes)["val_accuracy"]
    z = np.random.default_rng(0).standard_normal(DRAWS)
    draws: dict[str, list[np.ndarray]] = {"val_accuracy": [np.clip(m + s * z, 0.0, 1.0) for m, s in zip(mean, std)]}
    # the last epoch's curve point is the final accuracy itself
    curve_targets = list(CURVE_TARGETS[:-1]) if benchmark.epochs and curves else []
    for index, genes in enumerate(data.noise_genes if curve_targets else []):
        _, drawn = benchmark.evaluate_curves(np.repeat(genes[None], DRAWS, axis=0), True, np.random.default_rng(index))
        for column, target in enumerate(curve_targets):
            draws.setdefault(target, []).append(drawn[:, column])
    out = {}
    for target in ["val_accuracy", *curve_targets]:
        measured = [np.asarray(values) for values in data.noise_targets[target]]
        keep = [i for i, values in enumerate(measured) if np.isfinite(values).all() and len(values) >= 2]
        best = float(np.nanmax(np.concatenate([data.targets[target], *measured])))
        out[target] = judge_draws([draws[target][i] for i in keep], [measured[i] for i in keep], best)
    return out
