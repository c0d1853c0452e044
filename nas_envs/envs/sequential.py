"""The base class of the sequential NAS environments: one decision per step, one architecture per episode.

Each concrete environment (one per file, e.g. :mod:`nas_envs.envs.darts`) names its benchmark, states its reward
and documents itself; the episode rules live in :mod:`nas_envs.envs.episodes`, shared with the vector environment.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from nas_envs.benchmarks import Benchmark, make_benchmark
from nas_envs.checks import check_flag
from nas_envs.envs.episodes import (
    BudgetExhaustedError,
    Episodes,
    check_budget,
    make_observation_space,
    reset_budget_option,
)
from nas_envs.envs.rewards import REWARDS, Scoring, check_reward

_FIRST = np.zeros(1, dtype=np.int64)  # the only copy's row


def training_epochs(benchmark: Benchmark, multi_fidelity: bool) -> int | None:
    """The epochs a multi-fidelity environment trains an architecture for (None for the others); a benchmark
    without a learning-curve model is refused."""
    if not multi_fidelity:
        return None
    if benchmark.epochs is None:
        raise ValueError(f"a multi-fidelity environment needs a bundle with a learning-curve model; "
                         f"{benchmark.name}'s has none (fit one with 'nas-envs fit {benchmark.space.name} --model "
                         "curve --out DIR', then bundle=DIR)")
    return benchmark.epochs


class InvalidActionError(TypeError, ValueError):
    """An action that is not an integer of the action space: a programming error of the agent, raised as Gymnasium's
    own environments assert it. (An integer of the space that the mask forbids is legal to send: it ends the
    episode, see the environment's docstring.)"""


def as_action(action: object, num_actions: int) -> int:
    """An integer action in ``[0, num_actions)``: Python and numpy integers, and integer arrays of one element,
    are accepted."""
    if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
        action = action.reshape(())[()]  # the numpy integer scalar
    if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)):
        raise InvalidActionError(f"an action must be an integer (or an integer array of one element), got "
                                 f"{type(action).__name__} {action!r}")
    if not 0 <= int(action) < num_actions:
        raise InvalidActionError(f"action {int(action)} is outside the action space Discrete({num_actions}): "
                                 f"allowed are 0 to {num_actions - 1} (info['action_mask'] says which are legal now)")
    return int(action)


UNSUPPORTED_RENDER_MODES = ("human",)


class RenderModes(list):
    """The render modes as Gymnasium's ``make`` reads them from ``metadata``: a value that is not a string, and
    ``"human"``, count as listed, so that ``make`` hands them to the environment, whose constructor refuses them
    with the supported modes (``make`` itself fails on a non-string with an ``AttributeError`` of
    ``str.endswith``, and would wrap ``"human"`` in a pygame window that fails only at ``reset()``). Other strings
    are looked up as in a list."""

    def __contains__(self, mode: object) -> bool:
        return not isinstance(mode, str) or mode in UNSUPPORTED_RENDER_MODES or super().__contains__(mode)


class SequentialNASEnv(Scoring, gym.Env):
    """Build one architecture per episode, one decision per step; the benchmark scores it on the last step.

    Subclasses set ``benchmark_name`` and may override the hooks of :class:`~nas_envs.envs.rewards.Scoring`,
    :meth:`_completed_info` and :meth:`_render_rgb`. See a concrete
    environment's docstring for the spaces, rewards and arguments.
    """

    metadata: dict[str, Any] = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}
    benchmark_name: str = ""
    reward_modes: tuple[str, ...] = REWARDS
    #: whether a completed architecture is trained epoch by epoch (the multi-fidelity rules of
    #: :mod:`nas_envs.envs.episodes`)
    multi_fidelity: bool = False

    def __init__(
        self,
        budget_seconds: float | None = None,
        noise: bool = True,
        surrogate: str | None = None,
        render_mode: str | None = None,
        bundle: "str | os.PathLike | None" = None,
        strict_budget: bool = False,
        reward: str = "accuracy",
        benchmark: Benchmark | None = None,
    ) -> None:
        modes = list(self.metadata["render_modes"])
        if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in modes):
            raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")
        self.benchmark = benchmark or make_benchmark(self.benchmark_name, surrogate=surrogate, bundle=bundle)
        self.benchmark.verify()
        self.space = self.benchmark.space
        self.budget_seconds = check_budget(budget_seconds)
        self.noise = check_flag("noise", noise)
        self.strict_budget = check_flag("strict_budget", strict_budget)
        self.reward_mode = check_reward(reward)
        self.render_mode = render_mode
        d, a = self.space.num_decisions, self.space.num_actions
        self.epochs = training_epochs(self.benchmark, self.multi_fidelity)
        self._episodes = Episodes(self.space, 1, self.budget_seconds, self._reward_shape(), self.epochs)
        self._scorer = self._score_curves if self.epochs else self._score
        self.action_space = spaces.Discrete(self._episodes.num_actions)
        self.observation_space = make_observation_space(d, a, self.multi_fidelity)
        self.last_objectives: dict[str, float] | None = None
        self._started = False
        self._done = False

    # --- Gymnasium API -----------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new architecture.

        ``reset(seed=...)`` or ``options={"reset_budget": True}`` also starts a fresh simulated budget (clock at
        0). A plain ``reset()`` keeps the clock running; once the budget is spent it still succeeds, with
        ``info["budget_exhausted"]`` True, and the episode's first step is truncated (no evaluation). With
        ``strict_budget=True`` such a reset raises :class:`BudgetExhaustedError` instead.
        """
        super().reset(seed=seed)
        if seed is not None or reset_budget_option(options) or not self._started:
            self._episodes.start_budgets(_FIRST)
            self._start_budget(_FIRST)
        elif self.strict_budget and self.budget_exhausted:
            raise BudgetExhaustedError(
                f"the simulated budget of {self.budget_seconds:.0f} s is spent ({self.sim_time:.0f} s used); call "
                "reset(seed=...) or reset(options={'reset_budget': True}) to start a fresh budget"
            )
        self._started = True
        self._done = False
        self.last_objectives = None
        self._episodes.restart(0)
        return self._episodes.obs[0].copy(), self._info()

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended; call reset() to start the next one")
        episodes, action = self._episodes, as_action(action, self._episodes.num_actions)
        outcome = episodes.step_one(action, self._scorer)
        self._done = outcome.terminated or outcome.truncated
        info = self._info()
        if outcome.illegal:
            info["illegal_action"] = True
        training = episodes.current[0] if self.epochs else None
        if training is not None and not (outcome.illegal or outcome.truncated):
            info["architecture"] = self.space.to_string(episodes.genes[0])
            info["epochs_trained"] = training.epochs_trained
            if training.epochs_trained:
                info["epoch_val_accuracy"] = float(training.curve[training.epochs_trained - 1])
            if outcome.terminated and action < self.train_action:
                # built again after its training completed: nothing to train, nothing spent, its score recalled
                info["already_trained"] = True
                info["score"] = float(self.benchmark.score({k: np.array([v]) for k, v in training.values.items()})[0])
        if outcome.values is not None:
            self.last_objectives = {name: float(v[0]) for name, v in outcome.values.items()}
            info["architecture"] = self.space.to_string(self._episodes.genes[0])
            info["objectives"] = dict(self.last_objectives)
            info["score"] = float(self.benchmark.score(outcome.values)[0])
            self._completed_info(info)
        reward = outcome.reward.astype(np.float32) if outcome.reward.ndim else float(outcome.reward)
        return self._episodes.obs[0].copy(), reward, outcome.terminated, outcome.truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now (int8), as read by sb3-contrib's MaskablePPO; equals ``info["action_mask"]``."""
        return self._episodes.masks[0].copy()

    def render(self):
        if self.render_mode == "ansi":
            return self._render_ansi()
        if self.render_mode == "rgb_array":
            return self._render_rgb()
        return None

    # --- state -------------------------------------------------------------------------------------------------
    @property
    def train_action(self) -> int:
        """Multi-fidelity: the action that trains the completed architecture one more epoch."""
        return self._episodes.train_action

    @property
    def stop_action(self) -> int:
        """Multi-fidelity: the action that stops the completed architecture's training and ends the episode."""
        return self._episodes.stop_action

    @property
    def sim_time(self) -> float:
        """Simulated seconds spent in the current budget."""
        return float(self._episodes.sim_time[0])

    @property
    def budget_exhausted(self) -> bool:
        return bool(self._episodes.budget_exhausted[0])

    @property
    def partial_genes(self) -> np.ndarray:
        """The decisions taken so far in this episode."""
        return self._episodes.genes[0, : self._episodes.steps[0]].copy()

    # --- hooks of the environments (and those of :class:`~nas_envs.envs.rewards.Scoring`) ----------------------
    def _completed_info(self, info: dict[str, Any]) -> None:
        """Adds environment-specific entries to the ``info`` of a completing step."""

    # --- helpers -----------------------------------------------------------------------------------------------
    def _info(self) -> dict[str, Any]:
        episodes = self._episodes  # read directly, not through the properties: every step builds one
        return {"action_mask": episodes.masks[0].copy(), "sim_time": float(episodes.sim_time[0]),
                "decision": int(episodes.steps[0]), "budget_exhausted": bool(episodes.budget_exhausted[0])}

    def _render_ansi(self) -> str:
        done = int(self._episodes.steps[0])
        lines = [f"{self.spec.id if self.spec else type(self).__name__}: decision {done}/{self.space.num_decisions}"]
        if done == self.space.num_decisions and self.last_objectives is not None:
            lines.append(self.space.to_string(self._episodes.genes[0]))
            lines += [f"  {name}: {value:.6g}" for name, value in self.last_objectives.items()]
        else:
            lines.append(f"  genes so far: {self.partial_genes.tolist()}")
        budget = "unlimited" if self.budget_seconds is None else f"{self.budget_seconds:.0f} s"
        lines.append(f"  simulated time: {self.sim_time:.0f} s of {budget}")
        return "\n".join(lines) + "\n"

    def _render_rgb(self) -> np.ndarray:
        raise NotImplementedError
