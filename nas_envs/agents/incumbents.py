"""The architectures searches end with, listed for training them for real: does what a benchmark run claims hold?

An agent's anytime plot reports the best *noisy* validation accuracy it observed; that value is optimistic twice
over (the best of many noisy draws, in the region the surrogate rates highest). ``nas-envs incumbents RUNS --out
FILE`` lists every run's final incumbent with what the agent observed and the surrogate's noise-free mean;
``nas-envs collect darts --trajectory FILE`` trains them, and ``nas-envs data-card darts --incumbents FILE``
compares the three. With ``--trajectory`` the list holds every incumbent of each run in the order the search
found them: the seed papers' validity test trains an optimiser's incumbent trajectory from scratch and asks whether
the benchmark ranks its architectures as the trainings do (Kendall tau).
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np

from nas_envs.agents.runner import load_run_groups
from nas_envs.files import write_atomically


def final_incumbents(folder: Path) -> list[dict]:
    """One row per run below ``folder`` (``<agent>/seed_<k>.jsonl``): its final incumbent. Rows are ordered seed by
    seed (every agent's first seed, then every agent's second...), so that the first rows of the list cover every
    agent evenly when only part of it is trained."""
    out = []
    for seed, identity, rows in _single_objective_runs(folder):
        best = max(rows, key=lambda row: row["val_accuracy"])  # the first of equals, as the recorder keeps it
        out.append(_incumbent(seed, identity, best))
    return _with_surrogate_means(out)


def incumbent_trajectories(folder: Path) -> list[dict]:
    """Every incumbent of every run below ``folder``: each evaluation whose observed validation accuracy beat all
    before it in its run, run by run (in :func:`final_incumbents`' order of runs) and in the order found, so a
    run's last row is its final incumbent."""
    out = []
    for seed, identity, rows in _single_objective_runs(folder):
        best = -float("inf")
        for row in rows:
            if row["val_accuracy"] > best:
                best = row["val_accuracy"]
                out.append(_incumbent(seed, identity, row))
    return _with_surrogate_means(out)


def _single_objective_runs(folder: Path) -> list[tuple[int, dict, list[dict]]]:
    """``(seed, settings, rows)`` of every run below ``folder``, seed by seed and agent by agent."""
    runs = [(seed, group.identity, rows) for group in load_run_groups([Path(folder)])
            for seed, rows in group.seeds.items()]
    multi_objective = sorted({identity["agent"] for _, identity, rows in runs if "val_accuracy" not in rows[0]})
    if multi_objective:
        raise ValueError(f"incumbents lists the incumbents of single-objective runs (DARTS, FBNet) to train them; "
                         f"{folder} holds multi-objective runs ({', '.join(multi_objective)}), whose result is a "
                         "front, not one architecture")
    return sorted(runs, key=lambda run: (run[0], run[1]["agent"]))


def _incumbent(seed: int, identity: dict, row: dict) -> dict:
    return {"agent": identity["agent"], "seed": seed, "env_id": identity["env_id"],
            "env_kwargs": identity["env_kwargs"], "architecture": row["architecture"],
            "found_at_evaluation": row["evaluation"], "observed_val_accuracy": row["val_accuracy"]}


def _with_surrogate_means(out: list[dict]) -> list[dict]:
    """The rows with the noise-free mean of the environment each run used (its surrogate included)."""
    by_environment: dict[str, list[dict]] = {}
    for row in out:
        by_environment.setdefault(json.dumps([row["env_id"], row["env_kwargs"]], sort_keys=True), []).append(row)
    for listed in by_environment.values():
        benchmark = gym.make(listed[0]["env_id"], **listed[0]["env_kwargs"]).unwrapped.benchmark
        means = benchmark.evaluate([row["architecture"] for row in listed], noise=False)["val_accuracy"]
        for row, mean in zip(listed, means):
            row["surrogate_mean_val_accuracy"] = float(mean)
    return out


def write_incumbents(rows: list[dict], path: Path) -> None:
    """JSON lines, written to a temporary file and renamed: a killed command leaves no half-written list."""
    write_atomically(path, "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


def observed_minus_mean(rows: list[dict]) -> float:
    """How much the observed incumbent values exceed the surrogate's mean for the same architectures (the winner's
    curse of picking the best of noisy draws)."""
    return float(np.mean([row["observed_val_accuracy"] - row["surrogate_mean_val_accuracy"] for row in rows]))
