"""A native vector environment: N architectures built in lockstep, all finished ones scored in one batched call."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nas_envs.benchmarks import Benchmark, make_benchmark
from nas_envs.checks import check_flag
from nas_envs.envs.episodes import Episodes, check_budget, make_observation_space
from nas_envs.envs.rewards import Scoring, check_reward
from nas_envs.envs.sequential import InvalidActionError, training_epochs


class BatchedActions(spaces.MultiDiscrete):
    """The vector environment's action space: one of ``A`` actions for each of ``N`` copies. ``sample`` also takes
    ``info["action_mask"]`` as it comes, an ``(N, A)`` array, so that the single environment's idiom
    ``env.action_space.sample(info["action_mask"])`` draws a legal action for every copy."""

    def sample(self, mask=None, probability=None):
        if isinstance(mask, np.ndarray) and mask.ndim == 2:
            mask = tuple(np.asarray(row, dtype=np.int8) for row in mask)
        if isinstance(probability, np.ndarray) and probability.ndim == 2:
            probability = tuple(np.asarray(row, dtype=np.float64) for row in probability)
        return super().sample(mask=mask, probability=probability)


class SequentialNASVectorEnv(Scoring, VectorEnv):
    """``num_envs`` copies of a sequential NAS environment with next-step autoreset.

    Each copy has its own simulated clock and budget and follows the rules of the single environment
    (:mod:`nas_envs.envs.episodes`); the same seed gives the same batch of episodes. ``info`` holds arrays:
    ``action_mask`` ``(N, A)``, ``sim_time`` and ``budget_exhausted`` ``(N,)``, and, flagged by
    ``info["_architecture"]`` for the copies that completed an architecture this step, ``architecture``,
    ``score`` and ``objectives`` (a dict of ``(N,)`` arrays, NaN elsewhere). A copy whose budget is spent goes on
    autoresetting, and each of its steps is truncated without an evaluation; ``reset()`` starts fresh budgets.
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
    benchmark_name: str = ""
    multi_fidelity: bool = False  # see SequentialNASEnv

    def __init__(
        self,
        num_envs: int = 1,
        budget_seconds: float | None = None,
        noise: bool = True,
        surrogate: str | None = None,
        render_mode: str | None = None,
        bundle: "str | os.PathLike | None" = None,
        reward: str = "accuracy",
        benchmark: Benchmark | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("the vector environment does not render; use the single environment to render")
        self.benchmark = benchmark or make_benchmark(self.benchmark_name, surrogate=surrogate, bundle=bundle)
        self.benchmark.verify()
        self.space = self.benchmark.space
        self.num_envs = int(num_envs)
        self.budget_seconds = check_budget(budget_seconds)
        self.noise = check_flag("noise", noise)
        self.reward_mode = check_reward(reward)
        self.render_mode = None
        d, a = self.space.num_decisions, self.space.num_actions
        self.epochs = training_epochs(self.benchmark, self.multi_fidelity)
        self._episodes = Episodes(self.space, self.num_envs, self.budget_seconds, self._reward_shape(), self.epochs)
        self._scorer = self._score_curves if self.epochs else self._score
        actions = self._episodes.num_actions
        self.single_action_space = spaces.Discrete(actions)
        self.action_space = BatchedActions(np.full(self.num_envs, actions), dtype=self.single_action_space.dtype)
        self.single_observation_space = make_observation_space(d, a, self.multi_fidelity)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._prev_done = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    @property
    def sim_time(self) -> np.ndarray:
        return self._episodes.sim_time

    @property
    def budget_exhausted(self) -> np.ndarray:
        return self._episodes.budget_exhausted

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start new architectures in every copy and a fresh budget (the clocks start at 0)."""
        super().reset(seed=seed)
        every = np.arange(self.num_envs)
        self._episodes.start_budgets(every)
        self._start_budget(every)
        self._episodes.restart(every)
        self._prev_done[:] = False
        self._started = True
        return self._episodes.obs.copy(), self._info()

    def step(self, actions):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = self._as_actions(actions)
        restarted = np.flatnonzero(self._prev_done)
        if len(restarted):
            self._episodes.restart(restarted)
        outcome = self._episodes.step(actions, ~self._prev_done, self._scorer)
        info = self._info()
        if len(outcome.trained):
            self._fidelity_info(info, outcome.trained)
        if len(outcome.already_trained):  # as the single environment says it (its score is in the trajectory)
            flag = np.zeros(self.num_envs, dtype=bool)
            flag[outcome.already_trained] = True
            info["already_trained"], info["_already_trained"] = flag, flag
        completed = outcome.completed
        if len(completed):
            flag = np.zeros(self.num_envs, dtype=bool)
            flag[completed] = True
            architectures = np.full(self.num_envs, None, dtype=object)
            architectures[completed] = [self.space.to_string(g) for g in self._episodes.genes[completed]]
            info["architecture"], info["_architecture"] = architectures, flag
            full = {}
            for name, values in outcome.values.items():
                column = np.full(self.num_envs, np.nan)
                column[completed] = values
                full[name] = column
            info["objectives"], info["_objectives"] = full, flag
            score = np.full(self.num_envs, np.nan)
            score[completed] = self.benchmark.score(outcome.values)
            info["score"], info["_score"] = score, flag
        if outcome.illegal.any():
            info["illegal_action"], info["_illegal_action"] = outcome.illegal, outcome.illegal
        self._prev_done = outcome.terminated | outcome.truncated
        rewards = outcome.rewards.astype(np.float32) if outcome.rewards.ndim > 1 else outcome.rewards
        return self._episodes.obs.copy(), rewards, outcome.terminated, outcome.truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of every copy now: int8 ``(num_envs, A)``."""
        return self._episodes.masks.copy()

    def _as_actions(self, actions) -> np.ndarray:
        """One integer action per copy: an integer array of shape ``(num_envs,)`` (or anything that converts)."""
        array = np.asarray(actions)
        if array.shape != (self.num_envs,) or not np.issubdtype(array.dtype, np.integer):
            raise InvalidActionError(f"actions must be integers of shape ({self.num_envs},), got {array.dtype} "
                                     f"{array.shape}")
        outside = (array < 0) | (array >= self.single_action_space.n)
        if outside.any():
            copy = int(np.flatnonzero(outside)[0])
            raise InvalidActionError(f"action {int(array[copy])} of copy {copy} is outside the action space "
                                     f"Discrete({self.single_action_space.n}): allowed are 0 to "
                                     f"{self.single_action_space.n - 1} (info['action_mask'] says which are legal now)")
        return array.astype(np.int64)

    def _fidelity_info(self, info: dict[str, Any], trained: np.ndarray) -> None:
        """Multi-fidelity: ``epochs_trained`` and ``epoch_val_accuracy`` of the copies that trained an epoch (flagged
        by ``info["_epoch_val_accuracy"]``)."""
        flag = np.zeros(self.num_envs, dtype=bool)
        flag[trained] = True
        epochs = np.zeros(self.num_envs, dtype=np.int64)
        accuracy = np.full(self.num_envs, np.nan)
        for row in trained:
            training = self._episodes.current[row]
            epochs[row] = training.epochs_trained
            accuracy[row] = training.curve[training.epochs_trained - 1]
        info["epochs_trained"], info["_epochs_trained"] = epochs, flag
        info["epoch_val_accuracy"], info["_epoch_val_accuracy"] = accuracy, flag

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._episodes.masks.copy(), "sim_time": self._episodes.sim_time.copy(),
                "budget_exhausted": self._episodes.budget_exhausted.copy()}
