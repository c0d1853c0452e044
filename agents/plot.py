"""Anytime-performance plots and tables: incumbent error against simulated wall-clock time, mean +- standard error."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from agents.runner import load_runs


def incumbent_on_grid(rows: list[dict], grid: np.ndarray, key: str) -> np.ndarray:
    """The incumbent's ``key`` at each grid time (NaN before the first evaluation finished)."""
    times = np.array([r["sim_time"] for r in rows])
    values = np.array([r[key] for r in rows])
    index = np.searchsorted(times, grid, side="right") - 1
    return np.where(index >= 0, values[np.clip(index, 0, None)], np.nan)


def summarise(runs: dict[str, list[list[dict]]], budget: float | None = None) -> dict[str, dict[str, float]]:
    """Per agent: final incumbent validation/test error (mean and standard error over seeds), evaluations."""
    table = {}
    for agent, seeds in runs.items():
        val = []
        test = []
        for rows in seeds:
            within = [r for r in rows if budget is None or r["sim_time"] <= budget] or rows[:1]
            val.append(1.0 - within[-1]["incumbent_val_accuracy"])
            test.append(1.0 - within[-1]["incumbent_test_accuracy"])
        table[agent] = {
            "seeds": len(seeds),
            "val_error_mean": float(np.mean(val)),
            "val_error_se": float(_standard_error(np.array(val))),
            "test_error_mean": float(np.mean(test)),
            "test_error_se": float(_standard_error(np.array(test))),
            "evaluations_mean": float(np.mean([len(rows) for rows in seeds])),
        }
    return table


def _standard_error(values: np.ndarray) -> np.ndarray:
    """Standard error over axis 0, ignoring NaN; 0 where fewer than two values exist."""
    count = np.sum(~np.isnan(values), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanstd of fewer than two values
        std = np.nanstd(values, axis=0, ddof=1)
    return np.where(count > 1, std / np.sqrt(np.maximum(count, 1)), 0.0)


def format_table(table: dict[str, dict[str, float]]) -> str:
    lines = [f"{'agent':<10} {'seeds':>5} {'evals':>7} {'val error (%)':>17} {'test error (%)':>17}"]
    for agent, row in sorted(table.items(), key=lambda item: item[1]["val_error_mean"]):
        lines.append(
            f"{agent:<10} {row['seeds']:>5} {row['evaluations_mean']:>7.0f} "
            f"{100 * row['val_error_mean']:>9.3f} +- {100 * row['val_error_se']:.3f} "
            f"{100 * row['test_error_mean']:>9.3f} +- {100 * row['test_error_se']:.3f}"
        )
    return "\n".join(lines)


def plot_runs(folders: list[Path], output: Path, title: str | None = None) -> dict[str, dict[str, float]]:
    """Draw every agent found below ``folders``; returns the final-incumbent table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs: dict[str, list[list[dict]]] = {}
    for folder in folders:
        for agent, seeds in load_runs(folder).items():
            runs.setdefault(agent, []).extend(seeds)
    # from the moment every run has an incumbent, so that means are over all seeds
    start = max(rows[0]["sim_time"] for seeds in runs.values() for rows in seeds if rows)
    end = max(rows[-1]["sim_time"] for seeds in runs.values() for rows in seeds if rows)
    grid = np.geomspace(start, end, 300)

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    for (agent, seeds), colour in zip(sorted(runs.items()), plt.cm.tab10.colors):
        for ax, key in zip(axes, ("incumbent_val_accuracy", "incumbent_test_accuracy")):
            errors = 100 * (1.0 - np.stack([incumbent_on_grid(rows, grid, key) for rows in seeds]))
            mean = np.nanmean(errors, axis=0)
            se = _standard_error(errors)
            ax.plot(grid, mean, color=colour, label=f"{agent} ({len(seeds)} seeds)")
            ax.fill_between(grid, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
    for ax, label in zip(axes, ("validation error of incumbent (%)", "test error of incumbent (%)")):
        ax.set_xscale("log")
        ax.set_xlabel("simulated wall-clock time (s)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.suptitle(title or "anytime performance: mean +- standard error over seeds")
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)
    plt.close(figure)
    return summarise(runs)


def reward_curve(runs: list[list[dict]], window: int, steps_per_architecture: int) -> list[tuple[int, float, float]]:
    """Learning curve of an RL agent: mean and standard error over seeds of the mean validation accuracy of
    consecutive windows of ``window`` completed architectures, against environment steps."""
    length = min(len(rows) for rows in runs) // window
    curve = []
    for k in range(length):
        means = np.array([np.mean([r["val_accuracy"] for r in rows[k * window : (k + 1) * window]]) for rows in runs])
        curve.append(((k + 1) * window * steps_per_architecture, float(means.mean()), float(_standard_error(means))))
    return curve
