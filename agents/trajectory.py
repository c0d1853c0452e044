"""Recording what an agent evaluates, in one trajectory format for every agent and benchmark."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class SearchBudgetSpent(Exception):
    """Raised when an agent asks for an evaluation after the simulated budget is spent."""


class TrajectoryRecorder(gym.Wrapper):
    """Records one row per completed architecture: simulated time, architecture, objectives, incumbent.

    The incumbent is the architecture with the best observed validation accuracy so far; its test accuracy is
    the one observed with that evaluation (what a practitioner would report).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.rows: list[dict[str, Any]] = []
        self.budget_exhausted = False
        self._best_val = -np.inf
        self._best_test = float("nan")

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "objectives" in info:
            objectives = info["objectives"]
            if objectives["val_accuracy"] > self._best_val:
                self._best_val = objectives["val_accuracy"]
                self._best_test = objectives["test_accuracy"]
            self.rows.append(
                {
                    "evaluation": len(self.rows),
                    "sim_time": info["sim_time"],
                    "architecture": info["architecture"],
                    **objectives,
                    "incumbent_val_accuracy": self._best_val,
                    "incumbent_test_accuracy": self._best_test,
                }
            )
            self.budget_exhausted = bool(info.get("budget_exhausted", False))
        return obs, reward, terminated, truncated, info


class Evaluator:
    """Black-box view of an environment: ``evaluate(genes)`` plays the genes as actions and returns the reward.

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
        reward = 0.0
        for action in genes:
            _, reward, terminated, _, info = self.env.step(int(action))
            if terminated:
                break
        if info.get("illegal_action"):
            raise ValueError(f"agent proposed an architecture outside the space: {np.asarray(genes).tolist()}")
        return float(reward)
