"""Anytime-performance plots and tables against simulated wall-clock time, mean +- standard error over seeds.

Single-objective benchmarks (DARTS, FBNet) show the incumbent's validation and test error; multi-objective ones
(CitySeg/MOP) the hypervolume of everything evaluated so far.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from nas_envs.agents.runner import load_run_groups


def incumbent_on_grid(rows: list[dict], grid: np.ndarray, key: str) -> np.ndarray:
    """The incumbent's ``key`` at each grid time (NaN before the first evaluation finished)."""
    times = np.array([r["sim_time"] for r in rows])
    values = np.array([r[key] for r in rows])
    index = np.searchsorted(times, grid, side="right") - 1
    return np.where(index >= 0, values[np.clip(index, 0, None)], np.nan)


def is_multi_objective(runs: dict[str, list[list[dict]]]) -> bool:
    """Whether the trajectories come from a multi-objective benchmark (their rows hold the hypervolume)."""
    return any("hypervolume" in rows[0] for seeds in runs.values() for rows in seeds if rows)


def _metrics(multi_objective: bool) -> dict[str, tuple[str, float]]:
    """Reported metric -> (row field, sign): error = 1 - accuracy of the incumbent; hypervolume as it is."""
    if multi_objective:
        return {"hypervolume": ("hypervolume", 1.0)}
    return {"val_error": ("incumbent_val_accuracy", -1.0), "test_error": ("incumbent_test_accuracy", -1.0)}


def _value(row: dict, field: str, sign: float) -> float:
    return row[field] if sign > 0 else 1.0 - row[field]


def summarise(runs: dict[str, list[list[dict]]], budget: float | None = None) -> dict[str, dict[str, float]]:
    """Per agent: the final value of each metric (mean and standard error over seeds) and the evaluations."""
    metrics = _metrics(is_multi_objective(runs))
    table = {}
    for agent, seeds in runs.items():
        finals = [([r for r in rows if budget is None or r["sim_time"] <= budget] or rows[:1])[-1] for rows in seeds]
        row: dict[str, float] = {"seeds": len(seeds), "evaluations_mean": float(np.mean([len(r) for r in seeds]))}
        for name, (field, sign) in metrics.items():
            values = np.array([_value(final, field, sign) for final in finals])
            row[f"{name}_mean"] = float(np.mean(values))
            row[f"{name}_se"] = float(_standard_error(values))
        table[agent] = row
    return table


def _standard_error(values: np.ndarray) -> np.ndarray:
    """Standard error over axis 0, ignoring NaN; 0 where fewer than two values exist."""
    count = np.sum(~np.isnan(values), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanstd of fewer than two values
        std = np.nanstd(values, axis=0, ddof=1)
    return np.where(count > 1, std / np.sqrt(np.maximum(count, 1)), 0.0)


def format_table(table: dict[str, dict[str, float]]) -> str:
    """The table of :func:`summarise`, best first: errors in percent, hypervolume as a fraction."""
    multi_objective = any("hypervolume_mean" in row for row in table.values())
    names = ["hypervolume"] if multi_objective else ["val_error", "test_error"]
    headers = {"hypervolume": "hypervolume", "val_error": "val error (%)", "test_error": "test error (%)"}
    scale = 1.0 if multi_objective else 100.0
    lines = [f"{'agent':<10} {'seeds':>5} {'evals':>7} " + " ".join(f"{headers[n]:>17}" for n in names)]
    order = sorted(table.items(), key=lambda item: -item[1][f"{names[0]}_mean"] if multi_objective
                   else item[1][f"{names[0]}_mean"])
    for agent, row in order:
        cells = [f"{scale * row[f'{n}_mean']:>9.3f} +- " + (f"{scale * row[f'{n}_se']:.3f}" if row["seeds"] > 1
                                                               else "n/a  ") for n in names]
        lines.append(f"{agent:<10} {row['seeds']:>5} {row['evaluations_mean']:>7.0f} " + " ".join(cells))
    return "\n".join(lines)


def plot_runs(folders: list[Path], output: Path, title: str | None = None) -> dict[str, dict[str, float]]:
    """Draw every agent found below ``folders``; returns the final-incumbent table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = {group.label: group.trajectories for group in load_run_groups(folders)}
    # from the moment every run has an incumbent, so that means are over all seeds
    start = max(rows[0]["sim_time"] for seeds in runs.values() for rows in seeds if rows)
    end = max(rows[-1]["sim_time"] for seeds in runs.values() for rows in seeds if rows)
    grid = np.geomspace(start, end, 300)

    multi_objective = is_multi_objective(runs)
    metrics = _metrics(multi_objective)
    labels = {"hypervolume": "hypervolume of all evaluated", "val_error": "validation error of incumbent (%)",
              "test_error": "test error of incumbent (%)"}
    figure, axes = plt.subplots(1, len(metrics), figsize=(5.5 * len(metrics), 4.2), sharex=True, squeeze=False)
    axes = axes[0]
    scale = 1.0 if multi_objective else 100.0
    for (agent, seeds), colour in zip(sorted(runs.items()), plt.cm.tab10.colors):
        for ax, (field, sign) in zip(axes, metrics.values()):
            values = np.stack([incumbent_on_grid(rows, grid, field) for rows in seeds])
            values = scale * (values if sign > 0 else 1.0 - values)
            mean = np.nanmean(values, axis=0)
            se = _standard_error(values)
            ax.plot(grid, mean, color=colour, label=f"{agent} ({len(seeds)} seeds)")
            ax.fill_between(grid, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
    for ax, label in zip(axes, (labels[name] for name in metrics)):
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
    """Learning curve of an RL agent: mean and standard error over seeds of the mean single-objective score
    (validation accuracy for DARTS/FBNet, the architecture's own hypervolume for CitySeg) of consecutive windows of
    ``window`` completed architectures, against environment steps."""
    length = min(len(rows) for rows in runs) // window
    curve = []
    for k in range(length):
        means = np.array([np.mean([r["score"] for r in rows[k * window : (k + 1) * window]]) for rows in runs])
        curve.append(((k + 1) * window * steps_per_architecture, float(means.mean()), float(_standard_error(means))))
    return curve


def plot_reward_curve(curve: list[tuple[int, float, float]], output: Path, title: str) -> None:
    """Draw a :func:`reward_curve`: mean score per window against environment steps, standard error shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, means, errors = (np.array(column) for column in zip(*curve)) if curve else ([], [], [])
    figure, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(steps, means, marker="o")
    ax.fill_between(steps, np.subtract(means, errors), np.add(means, errors), alpha=0.2, linewidth=0)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean score of the window")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120)
    plt.close(figure)
