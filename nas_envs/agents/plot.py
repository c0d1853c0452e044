"""Anytime-performance plots and tables against simulated wall-clock time, mean +- standard error over seeds.

Single-objective benchmarks (DARTS, FBNet) show the incumbent's validation and test error; multi-objective ones
(CitySeg/MOP) the hypervolume of everything evaluated so far.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from nas_envs.agents.runner import RunGroup, label_groups, load_run_groups


def incumbent_on_grid(rows: list[dict], grid: np.ndarray, key: str) -> np.ndarray:
    """The incumbent's ``key`` at each grid time (NaN before the first evaluation finished)."""
    times = np.array([r["sim_time"] for r in rows])
    values = np.array([r[key] for r in rows])
    index = np.searchsorted(times, grid, side="right") - 1
    return np.where(index >= 0, values[np.clip(index, 0, None)], np.nan)


def is_multi_objective(runs: dict[str, list[list[dict]]]) -> bool:
    """Whether the trajectories come from a multi-objective benchmark (their rows hold the hypervolume)."""
    return any("hypervolume" in rows[0] for seeds in runs.values() for rows in seeds if rows)


def _metrics(runs: dict[str, list[list[dict]]]) -> dict[str, tuple[str, float]]:
    """Reported metric -> (row field, sign): error = 1 - accuracy of the incumbent (test error where the benchmark
    has a test accuracy); hypervolume as it is."""
    if is_multi_objective(runs):
        return {"hypervolume": ("hypervolume", 1.0)}
    first = next(rows[0] for seeds in runs.values() for rows in seeds if rows)
    metrics = {"val_error": ("incumbent_val_accuracy", -1.0), "test_error": ("incumbent_test_accuracy", -1.0)}
    return {name: entry for name, entry in metrics.items() if entry[0] in first}


def _value(row: dict, field: str, sign: float) -> float:
    return row[field] if sign > 0 else 1.0 - row[field]


def summarise(runs: dict[str, list[list[dict]]], budget: float | None = None) -> dict[str, dict[str, float]]:
    """Per agent: the final value of each metric (mean and standard error over seeds) and the evaluations."""
    metrics = _metrics(runs)
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
    names = ["hypervolume"] if multi_objective else [n for n in ("val_error", "test_error")
                                                      if all(f"{n}_mean" in row for row in table.values())]
    headers = {"hypervolume": "hypervolume", "val_error": "val error (%)", "test_error": "test error (%)"}
    scale = 1.0 if multi_objective else 100.0
    lines = [f"{'agent':<10} {'seeds':>5} {'evals':>7} " + " ".join(f"{headers[n]:>17}" for n in names)]
    order = sorted(table.items(), key=lambda item: -item[1][f"{names[0]}_mean"] if multi_objective
                   else item[1][f"{names[0]}_mean"])
    # enough decimals that every standard error shows two significant digits (at least three decimals)
    errors = [scale * row[f"{n}_se"] for row in table.values() for n in names if row["seeds"] > 1]
    smallest = min((e for e in errors if e > 0), default=1.0)
    decimals = max(3, 1 - int(np.floor(np.log10(smallest))))
    for agent, row in order:
        cells = [f"{scale * row[f'{n}_mean']:>9.{decimals}f} +- " + (f"{scale * row[f'{n}_se']:.{decimals}f}"
                                                                       if row["seeds"] > 1 else "n/a  ")
                 for n in names]
        lines.append(f"{agent:<10} {row['seeds']:>5} {row['evaluations_mean']:>7.0f} " + " ".join(cells))
    return "\n".join(lines)


_TIME_UNITS = (("d", 86400.0), ("h", 3600.0), ("min", 60.0))
_STYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def time_unit(budget_seconds: float) -> tuple[str, float]:
    """The unit a budget was most likely given in (days, hours, minutes, else seconds) and its seconds: the largest
    that divides it at least twice ('24h' reads in hours, '2d' in days, '90m' in minutes)."""
    for unit, seconds in _TIME_UNITS:
        if budget_seconds >= 2 * seconds and float(budget_seconds / seconds).is_integer():
            return unit, seconds
    return "s", 1.0


def format_duration(seconds: float) -> str:
    unit, size = time_unit(seconds)
    return f"{seconds / size:g} {unit}"


def coinciding_until(grid: np.ndarray, curves: dict[str, np.ndarray]) -> list[tuple[str, str, float]]:
    """Pairs of curves that are identical from the start of ``grid`` for at least a tenth of it, with the last
    time they still agree: runs that share their first evaluations (RE's initial population is random sampling)
    draw one line there, and the reader should know that the other one is hidden below it."""
    pairs = []
    names = sorted(curves)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            same = np.isclose(curves[a], curves[b], rtol=0, atol=1e-12) | (np.isnan(curves[a]) & np.isnan(curves[b]))
            length = len(same) if same.all() else int(np.argmin(same))
            if length >= len(grid) / 10:
                pairs.append((a, b, float(grid[length - 1])))
    return pairs


def plot_run_folders(folders: list[Path], output: Path, title: str | None = None
                     ) -> dict[str, tuple[Path, dict[str, dict[str, float]]]]:
    """Draw the runs below ``folders``, one figure per environment: ``output`` itself when they hold runs of one
    environment, else ``<output stem>-<env id><suffix>`` for each. Returns env id -> (figure, final table)."""
    by_env: dict[str, list[RunGroup]] = {}
    for group in load_run_groups(folders):
        by_env.setdefault(group.identity["env_id"], []).append(group)
    figures = {}
    for env_id, groups in sorted(by_env.items()):
        path = output if len(by_env) == 1 else output.with_name(f"{output.stem}-{env_id}{output.suffix}")
        figures[env_id] = (path, _plot_env(env_id, label_groups(groups), path, title))
    return figures


def plot_runs(folders: list[Path], output: Path, title: str | None = None) -> dict[str, dict[str, float]]:
    """Draw every agent found below ``folders`` (runs of one environment); returns the final-incumbent table.
    Folders that hold runs of several environments: :func:`plot_run_folders` draws one figure each."""
    figures = plot_run_folders(folders, output, title)
    if len(figures) > 1:
        for path, _ in figures.values():
            path.unlink()
        raise ValueError(f"the runs below {', '.join(map(str, folders))} are of {len(figures)} environments "
                         f"({', '.join(figures)}); one figure shows one environment: use plot_run_folders (as "
                         "'nas-envs plot' does) for one figure each")
    return next(iter(figures.values()))[1]


def _plot_env(env_id: str, groups: list[RunGroup], output: Path, title: str | None) -> dict[str, dict[str, float]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = {group.label: group.trajectories for group in groups}
    # from the moment every run has an incumbent, so that means are over all seeds
    start = max(rows[0]["sim_time"] for seeds in runs.values() for rows in seeds if rows)
    end = max(rows[-1]["sim_time"] for seeds in runs.values() for rows in seeds if rows)
    grid = np.geomspace(start, end, 300)
    budget = max(group.identity["budget_seconds"] for group in groups)
    unit, unit_seconds = time_unit(budget)

    multi_objective = is_multi_objective(runs)
    metrics = _metrics(runs)
    labels = {"hypervolume": "hypervolume of all evaluated", "val_error": "validation error of incumbent (%)",
              "test_error": "test error of incumbent (%)"}
    figure, axes = plt.subplots(1, len(metrics), figsize=(5.5 * len(metrics), 4.4), sharex=True, squeeze=False)
    axes = axes[0]
    scale = 1.0 if multi_objective else 100.0
    first_metric: dict[str, np.ndarray] = {}
    for index, ((agent, seeds), colour) in enumerate(zip(sorted(runs.items()), plt.cm.tab10.colors)):
        style = {"color": colour, "linestyle": _STYLES[index % len(_STYLES)], "marker": _MARKERS[index % len(_MARKERS)],
                 "markevery": (7 * index % 30, 30), "markersize": 4}
        for ax, (field, sign) in zip(axes, metrics.values()):
            values = np.stack([incumbent_on_grid(rows, grid, field) for rows in seeds])
            values = scale * (values if sign > 0 else 1.0 - values)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # grid times before every seed's first result
                mean = np.nanmean(values, axis=0)
            se = _standard_error(values)
            first_metric.setdefault(agent, mean)
            ax.plot(grid / unit_seconds, mean, label=f"{agent} ({len(seeds)} seeds)", **style)
            ax.fill_between(grid / unit_seconds, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
    for ax, label in zip(axes, (labels[name] for name in metrics)):
        ax.set_xscale("log")
        ax.set_xlabel(f"simulated wall-clock time ({unit})")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    notes = [f"{a} and {b} draw one line until {until / unit_seconds:.3g} {unit} (the same first evaluations)"
             for a, b, until in coinciding_until(grid, first_metric)]
    seeds = sorted({len(group.trajectories) for group in groups})
    figure.suptitle(title or f"{env_id}, budget {format_duration(budget)}: mean ± standard error over "
                    f"{'/'.join(map(str, seeds))} seeds", fontsize=10)
    if notes:
        figure.text(0.5, 0.01, "; ".join(notes), ha="center", fontsize=7)
    figure.tight_layout(rect=(0, 0.04 if notes else 0, 1, 1))
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
