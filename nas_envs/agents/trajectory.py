"""Recording what an agent evaluates, in one trajectory format for every agent and benchmark."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class SearchBudgetSpent(Exception):
    """Raised when an agent asks for an evaluation after the simulated budget is spent."""


class TrajectoryRecorder(gym.Wrapper):
    """Records one row per completed architecture, for every benchmark alike.

    A row holds the evaluation's index, simulated time, architecture, every objective of the benchmark, its
    single-objective ``score`` (validation accuracy for DARTS/FBNet, the architecture's own hypervolume for
    CitySeg) and the incumbent's: ``incumbent_score`` is the best score observed so far, and
    ``incumbent_<objective>`` the objectives observed with it (what a practitioner would report). On the
    multi-objective benchmarks it also holds ``hypervolume``, that of every architecture evaluated so far.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.rows: list[dict[str, Any]] = []
        self.budget_exhausted = False
        self._incumbent: dict[str, Any] | None = None

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "objectives" in info:
            row = {"evaluation": len(self.rows), "sim_time": info["sim_time"], "architecture": info["architecture"],
                   **info["objectives"], "score": info["score"]}
            if "hypervolume" in info:
                row["hypervolume"] = info["hypervolume"]
            if self._incumbent is None or row["score"] > self._incumbent["score"]:
                self._incumbent = {"score": row["score"], **info["objectives"]}
            row.update({f"incumbent_{name}": value for name, value in self._incumbent.items()})
            self.rows.append(row)
        self.budget_exhausted = bool(info.get("budget_exhausted", False))
        return obs, reward, terminated, truncated, info


class Evaluator:
    """Black-box view of an environment: ``evaluate(genes)`` plays the genes as actions and returns the
    benchmark's single-objective score of the architecture (``info["score"]``).

    Args:
        env: a :class:`TrajectoryRecorder` around a sequential NAS environment with a budget.
        seed: seeds the environment's noise; the simulated clock starts at 0.
        max_evaluations: optional cap on the number of evaluations (in addition to the budget).
    """

    def __init__(self, env: TrajectoryRecorder, seed: int, max_evaluations: int | None = None) -> None:
        self.env = env
        self.space = env.unwrapped.space
        self.max_evaluations = max_evaluations
        self._fresh = True
        env.reset(seed=seed)

    @property
    def evaluations(self) -> int:
        return len(self.env.rows)

    def __call__(self, genes: np.ndarray) -> float:
        if self.env.budget_exhausted or (self.max_evaluations is not None and self.evaluations >= self.max_evaluations):
            raise SearchBudgetSpent
        if not self._fresh:
            self.env.reset()
        self._fresh = False
        for action in genes:
            _, _, terminated, truncated, info = self.env.step(int(action))
            if terminated or truncated:
                break
        if info.get("illegal_action"):
            raise ValueError(f"agent proposed an architecture outside the space: {np.asarray(genes).tolist()}")
        if "score" not in info:  # truncated: the budget was spent
            raise SearchBudgetSpent
        return float(info["score"])
