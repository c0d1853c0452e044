"""A native vector environment: N architectures built in lockstep, all finished ones scored in one surrogate call."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nas_envs.benchmarks import BudgetExhaustedError, SurrogateBenchmark, make_benchmark
from nas_envs.envs.sequential import check_budget, make_observation_space, observation_size
from gymnasium import spaces


class SequentialNASVectorEnv(VectorEnv):
    """``num_envs`` copies of a sequential NAS environment with next-step autoreset.

    Each copy has its own simulated clock and budget; the same seed gives the same batch of episodes. Semantics
    per copy are those of the single environment (illegal actions, rewards, budget), and ``info`` holds arrays:
    ``action_mask`` ``(N, A)``, ``sim_time`` ``(N,)``, and, flagged by ``info["_architecture"]`` for the copies
    that completed an architecture this step, ``architecture`` and ``objectives`` (a dict of ``(N,)`` arrays).
    A copy whose budget is spent cannot start another architecture: the step that would autoreset it raises
    :class:`BudgetExhaustedError`; ``reset()`` starts fresh budgets for all copies.
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
    benchmark_name: str = ""
    #: the shape of one copy's reward: a scalar, or a vector per objective in the multi-objective reward mode
    reward_shape: tuple[int, ...] = ()

    def __init__(
        self,
        num_envs: int = 1,
        budget_seconds: float | None = None,
        noise: bool = True,
        surrogate: str = "xgb",
        render_mode: str | None = None,
        benchmark: SurrogateBenchmark | None = None,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if render_mode is not None:
            raise ValueError("the vector environment does not render; use the single environment to render")
        self.benchmark = benchmark or make_benchmark(self.benchmark_name, surrogate=surrogate)
        self.space = self.benchmark.space
        self.num_envs = num_envs
        self.budget_seconds = check_budget(budget_seconds)
        self.noise = bool(noise)
        self.render_mode = None
        d, a = self.space.num_decisions, self.space.num_actions
        self.single_action_space = spaces.Discrete(a)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.single_observation_space = make_observation_space(d, a)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self._genes = np.zeros((num_envs, d), dtype=np.int64)
        self._steps = np.zeros(num_envs, dtype=np.int64)
        self._obs = np.zeros((num_envs, observation_size(d, a)), dtype=np.float32)
        self._masks = np.zeros((num_envs, a), dtype=np.int8)
        self.sim_time = np.zeros(num_envs)
        self.budget_exhausted = np.zeros(num_envs, dtype=bool)
        self._prev_done = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start new architectures in every copy and a fresh budget (the clocks start at 0)."""
        super().reset(seed=seed)
        self.sim_time[:] = 0.0
        self.budget_exhausted[:] = False
        self._prev_done[:] = False
        self._start_budgets()
        self._restart(np.arange(self.num_envs))
        return self._obs.copy(), self._info()

    def _restart(self, rows: np.ndarray) -> None:
        exhausted = rows[self.budget_exhausted[rows]]
        if len(exhausted):
            raise BudgetExhaustedError(
                f"copies {exhausted.tolist()} have spent their simulated budget of {self.budget_seconds:.0f} s; "
                "call reset() to start fresh budgets"
            )
        d, a = self.space.num_decisions, self.space.num_actions
        self._genes[rows] = 0
        self._steps[rows] = 0
        self._obs[rows] = 0.0
        self._obs[rows, d * a] = 1.0
        self._obs[rows, -1] = self._remaining(rows)
        self._masks[rows] = self.space.action_mask(self._genes[0, :0])

    def _remaining(self, rows: np.ndarray) -> np.ndarray:
        if self.budget_seconds is None:
            return np.ones(len(rows), dtype=np.float32)
        return np.clip(1.0 - self.sim_time[rows] / self.budget_seconds, 0.0, 1.0)

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        d, a = self.space.num_decisions, self.space.num_actions
        rewards = np.zeros((self.num_envs, *self.reward_shape), dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        illegal = np.zeros(self.num_envs, dtype=bool)

        restarted = np.flatnonzero(self._prev_done)
        if len(restarted):
            self._restart(restarted)
        active = ~self._prev_done
        in_range = (actions >= 0) & (actions < a)
        legal = active & in_range
        legal[legal] = self._masks[legal, actions[legal]] == 1
        illegal = active & ~legal
        terminated |= illegal

        rows = np.flatnonzero(legal)
        steps = self._steps[rows]
        self._genes[rows, steps] = actions[rows]
        self._obs[rows, steps * a + actions[rows]] = 1.0
        self._obs[rows, d * a + steps] = 0.0
        self._obs[rows, d * a + steps + 1] = 1.0
        self._steps[rows] = steps + 1

        info = self._info()
        completed = rows[self._steps[rows] == d]
        if len(completed):
            rewards[completed], objectives, seconds = self._score(completed)
            terminated[completed] = True
            self.sim_time[completed] += seconds
            if self.budget_seconds is not None:
                self.budget_exhausted[completed] = self.sim_time[completed] >= self.budget_seconds
            self._obs[completed, -1] = self._remaining(completed)
            flag = np.zeros(self.num_envs, dtype=bool)
            flag[completed] = True
            architectures = np.full(self.num_envs, None, dtype=object)
            architectures[completed] = [self.space.to_string(g) for g in self._genes[completed]]
            info["architecture"], info["_architecture"] = architectures, flag
            full = {}
            for name, values in objectives.items():
                column = np.full(self.num_envs, np.nan)
                column[completed] = values
                full[name] = column
            info["objectives"], info["_objectives"] = full, flag
            info["budget_exhausted"] = self.budget_exhausted.copy()
            info["sim_time"] = self.sim_time.copy()

        building = rows[self._steps[rows] < d]
        self._masks[building] = self.space.action_masks(self._genes[building], self._steps[building])
        done = terminated | truncated
        self._masks[done] = 0
        info["action_mask"] = self._masks.copy()
        if illegal.any():
            info["illegal_action"], info["_illegal_action"] = illegal, illegal
        self._prev_done = done
        return self._obs.copy(), rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of every copy now: int8 ``(num_envs, A)``."""
        return self._masks.copy()

    # --- hooks of the multi-objective environments --------------------------------------------------------------
    def _score(self, rows: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """(rewards, objectives, simulated seconds) of the architectures completed by copies ``rows``, in one
        batched call: validation accuracy and predicted training time."""
        objectives = self.benchmark.evaluate_genes(self._genes[rows], self.noise, self.np_random)
        return objectives["val_accuracy"], objectives, objectives["train_time_s"]

    def _start_budgets(self) -> None:
        """Called when every copy starts a fresh simulated budget."""

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._masks.copy(), "sim_time": self.sim_time.copy()}
