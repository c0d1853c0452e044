"""The machinery shared by the sequential NAS environments: decisions, masks, observations, simulated clock.

Each concrete environment (one per file, e.g. :mod:`nas_envs.envs.darts`) names its benchmark and documents
itself; everything about sequencing decisions lives here once.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from nas_envs.benchmarks import BudgetExhaustedError, SurrogateBenchmark, make_benchmark


def observation_size(num_decisions: int, num_actions: int) -> int:
    """Decided actions one-hot (D x A), current decision one-hot (D + 1), remaining budget fraction (1)."""
    return num_decisions * num_actions + num_decisions + 1 + 1


def make_observation_space(num_decisions: int, num_actions: int) -> spaces.Box:
    return spaces.Box(0.0, 1.0, shape=(observation_size(num_decisions, num_actions),), dtype=np.float32)


def check_budget(budget_seconds: float | None) -> float | None:
    if budget_seconds is not None and not (np.isfinite(budget_seconds) and budget_seconds > 0):
        raise ValueError(f"budget_seconds must be None or a positive number of simulated seconds, got {budget_seconds}")
    return None if budget_seconds is None else float(budget_seconds)


def remaining_fraction(budget_seconds: float | None, sim_time: float) -> float:
    return 1.0 if budget_seconds is None else max(0.0, 1.0 - sim_time / budget_seconds)


class SequentialNASEnv(gym.Env):
    """Build one architecture per episode, one decision per step; reward its validation accuracy at the end.

    Subclasses set ``benchmark_name`` and may override :meth:`_render_rgb`. See a concrete environment's
    docstring for the spaces, rewards and arguments.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    benchmark_name: str = ""

    def __init__(
        self,
        budget_seconds: float | None = None,
        noise: bool = True,
        surrogate: str = "xgb",
        render_mode: str | None = None,
        benchmark: SurrogateBenchmark | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.benchmark = benchmark or make_benchmark(self.benchmark_name, surrogate=surrogate)
        self.space = self.benchmark.space
        self.budget_seconds = check_budget(budget_seconds)
        self.noise = bool(noise)
        self.render_mode = render_mode
        d, a = self.space.num_decisions, self.space.num_actions
        self.action_space = spaces.Discrete(a)
        self.observation_space = make_observation_space(d, a)
        self._obs = np.zeros(observation_size(d, a), dtype=np.float32)
        self._genes = np.zeros(d, dtype=np.int64)
        self._step_index = 0
        self._mask = np.zeros(a, dtype=np.int8)
        self.sim_time = 0.0
        self.budget_exhausted = False
        self.last_objectives: dict[str, float] | None = None
        self._step_offset = d * a
        self._started = False

    # --- Gymnasium API -----------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new architecture.

        ``reset(seed=...)`` or ``options={"reset_budget": True}`` also starts a fresh simulated budget
        (clock at 0). A plain ``reset()`` keeps the clock running, and raises :class:`BudgetExhaustedError`
        once the budget is spent.
        """
        super().reset(seed=seed)
        fresh_budget = seed is not None or bool((options or {}).get("reset_budget", False)) or not self._started
        if fresh_budget:
            self.sim_time = 0.0
            self.budget_exhausted = False
            self._start_budget()
        elif self.budget_exhausted:
            raise BudgetExhaustedError(
                f"the simulated budget of {self.budget_seconds:.0f} s is spent ({self.sim_time:.0f} s used); call "
                "reset(seed=...) or reset(options={'reset_budget': True}) to start a fresh budget"
            )
        self._started = True
        self._genes[:] = 0
        self._step_index = 0
        self.last_objectives = None
        self._obs[:] = 0.0
        self._obs[self._step_offset] = 1.0
        self._obs[-1] = remaining_fraction(self.budget_seconds, self.sim_time)
        self._mask = self.space.action_mask(self._genes[:0])
        return self._obs.copy(), self._info()

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._step_index >= self.space.num_decisions:
            raise RuntimeError("the architecture is complete; call reset() to start the next one")
        action = int(action)
        if not (0 <= action < self.action_space.n and self._mask[action]):
            # Documented: an illegal action ends the episode with reward 0 and costs no simulated time.
            self._step_index = self.space.num_decisions
            info = self._info()
            info["illegal_action"] = True
            return self._obs.copy(), self._zero_reward(), True, False, info
        d, a = self._step_index, self.space.num_actions
        self._genes[d] = action
        self._obs[d * a + action] = 1.0
        self._obs[self._step_offset + d] = 0.0
        self._step_index = d + 1
        self._obs[self._step_offset + d + 1] = 1.0
        if self._step_index < self.space.num_decisions:
            self._mask = self.space.action_mask(self._genes[: self._step_index])
            return self._obs.copy(), self._zero_reward(), False, False, self._info()

        reward, self.last_objectives, seconds = self._score(self._genes)
        self.sim_time += seconds
        if self.budget_seconds is not None and self.sim_time >= self.budget_seconds:
            self.budget_exhausted = True
        self._obs[-1] = remaining_fraction(self.budget_seconds, self.sim_time)
        self._mask = np.zeros(self.space.num_actions, dtype=np.int8)
        info = self._info()
        info["architecture"] = self.space.to_string(self._genes)
        info["objectives"] = dict(self.last_objectives)
        info["budget_exhausted"] = self.budget_exhausted
        return self._obs.copy(), reward, True, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now (int8), as read by sb3-contrib's MaskablePPO; equals ``info["action_mask"]``."""
        return self._mask.copy()

    def render(self):
        if self.render_mode == "ansi":
            return self._render_ansi()
        if self.render_mode == "rgb_array":
            return self._render_rgb()
        return None

    # --- hooks of the multi-objective environments --------------------------------------------------------------
    def _zero_reward(self) -> float:
        """The reward of a step that completes no architecture."""
        return 0.0

    def _score(self, genes: np.ndarray) -> tuple[float, dict[str, float], float]:
        """(reward, objectives, simulated seconds) of a completed architecture: validation accuracy and the
        predicted training time."""
        objectives = self.benchmark.evaluate_genes(genes[None, :], self.noise, self.np_random)
        values = {name: float(v[0]) for name, v in objectives.items()}
        return values["val_accuracy"], values, values["train_time_s"]

    def _start_budget(self) -> None:
        """Called when a fresh simulated budget starts."""

    # --- helpers -----------------------------------------------------------------------------------------------
    @property
    def partial_genes(self) -> np.ndarray:
        """The decisions taken so far in this episode."""
        return self._genes[: self._step_index].copy()

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "sim_time": self.sim_time, "decision": self._step_index}

    def _render_ansi(self) -> str:
        done = self._step_index
        lines = [f"{self.spec.id if self.spec else type(self).__name__}: decision {done}/{self.space.num_decisions}"]
        if done == self.space.num_decisions and self.last_objectives is not None:
            lines.append(self.space.to_string(self._genes))
            lines += [f"  {name}: {value:.6g}" for name, value in self.last_objectives.items()]
        else:
            lines.append(f"  genes so far: {self._genes[:done].tolist()}")
        budget = "unlimited" if self.budget_seconds is None else f"{self.budget_seconds:.0f} s"
        lines.append(f"  simulated time: {self.sim_time:.0f} s of {budget}")
        return "\n".join(lines) + "\n"

    def _render_rgb(self) -> np.ndarray:
        raise NotImplementedError
