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

    @property
    def epochs(self) -> int | None:
        """The epochs of a full training in a multi-fidelity environment (None in the others)."""
        return getattr(self.env.unwrapped, "epochs", None)

    def __call__(self, genes: np.ndarray) -> float:
        """The score of the architecture ``genes`` fully trained (in a multi-fidelity environment: trained for every
        epoch, continuing a training it already has)."""
        info = self._build(genes)
        if self.epochs and not info.get("already_trained"):
            info = self._train_to(self.epochs, info)
        if "score" not in info:  # truncated: the budget was spent
            raise SearchBudgetSpent
        return float(info["score"])

    def train(self, genes: np.ndarray, epochs: int) -> float:
        """Multi-fidelity: train the architecture ``genes`` up to ``epochs`` (continuing its training in this
        budget; stopping it there) and return its validation accuracy after that many epochs (or after the more it
        already had)."""
        if not self.epochs:
            raise ValueError("training for a number of epochs needs a multi-fidelity environment, such as "
                             "SurrNAS-DARTS-MF-v0")
        if not 1 <= epochs <= self.epochs:
            raise ValueError(f"epochs must be in 1..{self.epochs}, got {epochs}")
        info = self._build(genes)
        if not info.get("already_trained"):
            info = self._train_to(epochs, info)
        if "epoch_val_accuracy" not in info:
            raise SearchBudgetSpent
        return float(info["epoch_val_accuracy"])

    def _build(self, genes: np.ndarray) -> dict:
        """Play ``genes`` as actions in a new episode; the ``info`` of the last step."""
        if self.env.budget_exhausted or (self.max_evaluations is not None and self.evaluations >= self.max_evaluations):
            raise SearchBudgetSpent
        if not self._fresh:
            self.env.reset()
        self._fresh = False
        for action in genes:
            _, _, terminated, truncated, info = self.env.step(int(action))
            if truncated:  # the budget was spent
                raise SearchBudgetSpent
            if terminated:
                break
        if info.get("illegal_action"):
            raise ValueError(f"agent proposed an architecture outside the space: {np.asarray(genes).tolist()}")
        return info

    def _train_to(self, epochs: int, info: dict) -> dict:
        """Multi-fidelity: TRAIN the completed architecture until ``epochs`` are trained, then STOP it if that is
        fewer than all; the ``info`` of the last epoch trained (or of the completing step if it had them)."""
        env = self.env.unwrapped
        while info.get("epochs_trained", 0) < epochs:
            _, _, _, truncated, info = self.env.step(env.train_action)
            if truncated:
                raise SearchBudgetSpent
        if info["epochs_trained"] < self.epochs:
            self.env.step(env.stop_action)
        return info
