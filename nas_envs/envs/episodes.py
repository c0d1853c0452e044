"""The episode rules of the sequential NAS environments, written once for N copies.

The single environment is one copy, the vector environment N; both delegate decisions, masks, observations, the
simulated clock and the budget to :class:`Episodes`, and only differ in how they present the result.

Rules, per copy:

- One decision per step; legal choices come from the search space (``action_mask``). An action outside the mask
  ends the episode at once: terminated, reward 0, no simulated time spent, ``illegal_action`` flagged.
- The step that completes an architecture is scored by the environment's scorer (one batched call for every copy
  that completes in that step) and advances the copy's simulated clock by the evaluation's simulated seconds.
- With a budget, the completing step that reaches it sets ``budget_exhausted``. A new episode of an exhausted copy
  starts normally, and its first step is truncated at once (reward 0, no evaluation, no time spent): work beyond
  the budget is never evaluated, and no reset ever raises. Fresh budgets start on request of the environment.

Multi-fidelity rules (``epochs`` given), per copy:

- Two actions follow the space's: ``TRAIN`` (index ``A``) and ``STOP`` (``A + 1``), legal only after the
  architecture is complete, when nothing else is. Completing an architecture trains nothing and spends no time: its
  learning curve is drawn once (one batched call of the curve scorer) and kept for the rest of the budget.
- ``TRAIN`` trains one more epoch, spends that epoch's simulated seconds and reveals the validation accuracy after
  it; the epoch that completes the training pays the reward. ``STOP`` ends the episode (reward 0, no time).
- Freeze-thaw: completing an architecture already trained in this budget resumes its training where it stopped,
  on the same curve; one already trained for every epoch ends the episode at once (reward 0, no time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from gymnasium import spaces

from nas_envs.checks import check_flag
from nas_envs.spaces.base import SearchSpace

#: scorer(rows, genes) -> (rewards, objective values by name, simulated seconds) of architectures just completed
Scorer = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]]
#: the multi-fidelity scorer: also each architecture's learning curve ``(N, epochs)``; the rewards, values and
#: seconds are those of the whole training
CurveScorer = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, np.ndarray]]


_MOVE = np.array([1.0, 0.0, 1.0], dtype=np.float32)
_FIRST = np.zeros(1, dtype=np.int64)
FEW_ROWS = 4  # below this many copies, masks are computed one row at a time


class BudgetExhaustedError(RuntimeError):
    """Raised, in strict-budget mode only, when an episode is started from a simulated budget already spent."""


#: the observation entries a multi-fidelity environment adds: the fraction of epochs trained, the latest accuracy
FIDELITY_ENTRIES = 2


def observation_size(num_decisions: int, num_actions: int, multi_fidelity: bool = False) -> int:
    """Decided actions one-hot (D x A), current decision one-hot (D + 1), with multi-fidelity the fraction of the
    epochs trained and the validation accuracy after the last of them, remaining budget fraction (1)."""
    return num_decisions * num_actions + num_decisions + 1 + FIDELITY_ENTRIES * multi_fidelity + 1


def make_observation_space(num_decisions: int, num_actions: int, multi_fidelity: bool = False) -> spaces.Box:
    size = observation_size(num_decisions, num_actions, multi_fidelity)
    return spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)


def check_budget(budget_seconds: object) -> float | None:
    """``None`` or a positive, finite number of simulated seconds (bools and strings are refused)."""
    if budget_seconds is None:
        return None
    if isinstance(budget_seconds, (bool, np.bool_)) or not isinstance(budget_seconds, (int, float, np.integer,
                                                                                         np.floating)):
        raise TypeError(f"budget_seconds must be None or a number of simulated seconds, got "
                        f"{type(budget_seconds).__name__} {budget_seconds!r}")
    try:
        seconds = float(budget_seconds)
    except OverflowError:  # a Python int beyond float range
        raise ValueError(f"budget_seconds must be a finite number of simulated seconds; an integer of "
                         f"{len(str(abs(budget_seconds)))} digits is beyond float range (None: no budget)") from None
    if not (np.isfinite(seconds) and seconds > 0):
        raise ValueError(f"budget_seconds must be None or a positive number of simulated seconds, got {budget_seconds}")
    return seconds


def reset_budget_option(options: object) -> bool:
    """``reset(options=...)``: ``None`` or a dict whose ``"reset_budget"`` (if given) is True or False."""
    if options is None:
        return False
    if not isinstance(options, dict):
        raise TypeError(f"reset options must be a dict such as {{'reset_budget': True}} or None, got "
                        f"{type(options).__name__} {options!r}")
    return check_flag("options['reset_budget']", options.get("reset_budget", False))


@dataclass
class StepOutcome:
    """What one step did to every copy (arrays over copies; ``truncated`` marks the copies over budget,
    ``completed`` lists the scored copies)."""

    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    illegal: np.ndarray
    completed: np.ndarray
    values: dict[str, np.ndarray]
    trained: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # copies that trained an epoch
    # copies that completed an architecture whose training in this budget was already complete
    already_trained: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass
class Training:
    """One architecture's training in a multi-fidelity budget: its curve, what its whole training yields, and how
    many epochs of it are trained."""

    curve: np.ndarray
    reward: np.ndarray
    values: dict[str, float]
    epoch_seconds: float
    epochs_trained: int = 0


class OneStep(NamedTuple):
    """What one step did to the only copy: :class:`StepOutcome` for one copy, on scalars (``values``: the
    objectives, by name, of the architecture completed, else None)."""

    reward: np.ndarray
    terminated: bool
    truncated: bool
    illegal: bool
    values: dict[str, np.ndarray] | None


class Episodes:
    """State and rules of ``num_copies`` episodes: genes, decision index, observations, masks, clocks, budgets;
    with ``epochs``, the multi-fidelity rules and each copy's trainings in its budget."""

    def __init__(self, space: SearchSpace, num_copies: int, budget_seconds: float | None,
                 reward_shape: tuple[int, ...] = (), epochs: int | None = None) -> None:
        self.space = space
        self.budget_seconds = budget_seconds
        self.reward_shape = reward_shape
        self.epochs = epochs
        d, a = space.num_decisions, space.num_actions
        self.train_action, self.stop_action = a, a + 1  # multi-fidelity only
        self.num_actions = a + 2 if epochs else a
        self.genes = np.zeros((num_copies, d), dtype=np.int64)
        self.steps = np.zeros(num_copies, dtype=np.int64)
        self.obs = np.zeros((num_copies, observation_size(d, a, bool(epochs))), dtype=np.float32)
        self.masks = np.zeros((num_copies, self.num_actions), dtype=np.int8)
        self.sim_time = np.zeros(num_copies)
        self.budget_exhausted = np.zeros(num_copies, dtype=bool)
        self._first_mask = np.zeros(self.num_actions, dtype=np.int8)
        self._first_mask[:a] = space.action_mask(np.zeros(0, dtype=np.int64))
        self._no_reward = np.zeros(reward_shape)
        # multi-fidelity: per copy, the architectures trained in its budget (canonical genes -> training)
        self.trainings: list[dict[bytes, Training]] = [{} for _ in range(num_copies)]
        self.current: list[Training | None] = [None] * num_copies
        # copy 0's rows, views of the arrays above, for the single environment's scalar steps
        self._genes0, self._obs0, self._mask0 = self.genes[0], self.obs[0], self.masks[0]
        self._building = OneStep(self._no_reward, False, False, False, None)

    @property
    def num_copies(self) -> int:
        return len(self.steps)

    def start_budgets(self, rows: np.ndarray) -> None:
        self.sim_time[rows] = 0.0
        self.budget_exhausted[rows] = False
        if self.epochs:
            for row in rows:
                self.trainings[row] = {}

    def restart(self, rows: np.ndarray | int) -> None:
        """New, empty architectures in copies ``rows`` (their clocks run on); the single environment passes its
        copy as the integer 0, whose basic indexing costs less than an index array's."""
        d, a = self.space.num_decisions, self.space.num_actions
        self.genes[rows] = 0
        self.steps[rows] = 0
        self.obs[rows] = 0.0
        self.obs[rows, d * a] = 1.0
        self.obs[rows, -1] = self.remaining(rows)
        self.masks[rows] = self._first_mask
        if self.epochs:
            for row in np.atleast_1d(rows):
                self.current[row] = None

    def remaining(self, rows: np.ndarray | int) -> np.ndarray | float:
        """The fraction of the budget left to copies ``rows`` (1 without a budget)."""
        if self.budget_seconds is None:
            return 1.0
        return np.clip(1.0 - self.sim_time[rows] / self.budget_seconds, 0.0, 1.0)

    def _next_masks(self, rows: np.ndarray) -> np.ndarray:
        """Legal next actions of copies ``rows``: the space's batched call for many rows; for a few, its one-row
        call, which costs about a microsecond where the batched one costs ten (``python scripts/env_speed.py``)."""
        if len(rows) > FEW_ROWS:
            masks = self.space.action_masks(self.genes[rows], self.steps[rows])
        else:
            masks = np.array([self.space.action_mask(self.genes[row, : self.steps[row]]) for row in rows],
                             dtype=np.int8).reshape(len(rows), self.space.num_actions)
        if self.epochs:
            masks = np.pad(masks, ((0, 0), (0, self.num_actions - masks.shape[1])))
        return masks

    def _complete(self, rows: np.ndarray, scorer: Scorer) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score the architectures just completed in copies ``rows`` and advance their clocks and budgets."""
        rewards, values, seconds = scorer(rows, self.genes[rows])
        self.sim_time[rows] += seconds
        if self.budget_seconds is not None:
            self.budget_exhausted[rows] = self.sim_time[rows] >= self.budget_seconds
        self.obs[rows, -1] = self.remaining(rows)
        self.masks[rows] = 0
        return rewards, values

    def _start_training(self, rows: np.ndarray, scorer: CurveScorer) -> np.ndarray:
        """Multi-fidelity: the architectures just completed in copies ``rows`` resume their training in this budget,
        or start one (their curves drawn in one call); returns the copies whose training is already complete."""
        keys = [self.genes[row].tobytes() for row in rows]
        new = np.array([key not in self.trainings[row] for row, key in zip(rows, keys)], dtype=bool)
        if new.any():
            rewards, values, seconds, curves = scorer(rows[new], self.genes[rows[new]])
            for i, row in enumerate(rows[new]):
                self.trainings[row][self.genes[row].tobytes()] = Training(
                    curves[i], rewards[i], {name: float(v[i]) for name, v in values.items()},
                    float(seconds[i]) / self.epochs)
        done = np.zeros(len(rows), dtype=bool)
        for i, (row, key) in enumerate(zip(rows, keys)):
            training = self.current[row] = self.trainings[row][key]
            done[i] = training.epochs_trained == self.epochs
            self._show_training(row, training)
        return rows[done]

    def _show_training(self, row: int, training: Training) -> None:
        """The fidelity entries of copy ``row``'s observation, and its mask: TRAIN and STOP, or nothing once the
        training is complete."""
        trained = training.epochs_trained
        self.obs[row, -3] = trained / self.epochs
        self.obs[row, -2] = training.curve[trained - 1] if trained else 0.0
        self.masks[row] = 0
        if trained < self.epochs:
            self.masks[row, [self.train_action, self.stop_action]] = 1

    def _train(self, rows: np.ndarray, actions: np.ndarray, rewards: np.ndarray, terminated: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Multi-fidelity: TRAIN or STOP (legal actions) in copies ``rows``, which completed their architectures.
        Returns the copies that trained an epoch, those whose training completed with it, and its values."""
        stopping = rows[actions == self.stop_action]
        terminated[stopping] = True
        self.masks[stopping] = 0
        training_rows = rows[actions == self.train_action]
        for row in training_rows:
            training = self.current[row]
            training.epochs_trained += 1
            self.sim_time[row] += training.epoch_seconds
            self._show_training(row, training)
        if self.budget_seconds is not None:
            self.budget_exhausted[training_rows] = self.sim_time[training_rows] >= self.budget_seconds
        self.obs[training_rows, -1] = self.remaining(training_rows)
        completed = np.array([row for row in training_rows if self.current[row].epochs_trained == self.epochs],
                             dtype=np.int64)
        terminated[completed] = True
        values: dict[str, np.ndarray] = {}
        if len(completed):
            rewards[completed] = [self.current[row].reward for row in completed]
            values = {name: np.array([self.current[row].values[name] for row in completed])
                      for name in self.current[completed[0]].values}
        return training_rows, completed, values

    def step(self, actions: np.ndarray, active: np.ndarray, scorer: Scorer | CurveScorer) -> StepOutcome:
        """Apply one action to each copy flagged ``active``; score the architectures completed by this step (with
        multi-fidelity: start their trainings, and train or stop those already complete; ``scorer`` is then a
        :data:`CurveScorer`)."""
        d, a = self.space.num_decisions, self.space.num_actions
        n = self.num_copies
        rewards = np.zeros((n, *self.reward_shape), dtype=np.float64)
        over_budget = active & self.budget_exhausted
        playing = active & ~over_budget
        legal = playing & (actions >= 0) & (actions < self.num_actions)
        legal[legal] = self.masks[legal, actions[legal]] == 1
        illegal = playing & ~legal
        terminated = illegal.copy()
        trained = already_trained = np.zeros(0, dtype=np.int64)
        completed = np.zeros(0, dtype=np.int64)
        values: dict[str, np.ndarray] = {}

        rows = np.flatnonzero(legal)
        if self.epochs:
            in_training = self.steps[rows] == d
            trained, completed, values = self._train(rows[in_training], actions[rows[in_training]], rewards,
                                                     terminated)
            rows = rows[~in_training]
        steps = self.steps[rows]
        chosen = actions[rows]
        self.genes[rows, steps] = chosen
        # the chosen action's bit on, the current decision's off, the next one's on: one assignment
        self.obs[rows[:, None], np.stack([steps * a + chosen, d * a + steps, d * a + steps + 1], axis=1)] = _MOVE
        steps = steps + 1
        self.steps[rows] = steps

        built = rows[steps == d]
        if self.epochs:
            already_trained = self._start_training(built, scorer)
            terminated[already_trained] = True  # nothing left to train: ends at once
        else:
            completed = built
            if len(completed):
                rewards[completed], values = self._complete(completed, scorer)
            terminated[completed] = True
        building = rows[steps < d]
        self.masks[building] = self._next_masks(building)
        self.masks[illegal | over_budget | terminated] = 0
        return StepOutcome(rewards, terminated, over_budget, illegal, completed, values, trained, already_trained)

    def step_one(self, action: int, scorer: Scorer) -> OneStep:
        """:meth:`step` for the only copy of a single environment, on Python scalars: the same rules and state
        (tested step for step against :meth:`step`), without the cost of array calls on one-element arrays."""
        if self.budget_exhausted[0]:
            self.masks[0] = 0
            return OneStep(self._no_reward, False, True, False, None)
        step = int(self.steps[0])
        d, a = self.space.num_decisions, self.space.num_actions
        if self.epochs and step + 1 >= d:  # completing or training: a few steps an architecture, batched rules
            outcome = self.step(np.array([action]), np.ones(1, dtype=bool), scorer)
            return OneStep(outcome.rewards[0], bool(outcome.terminated[0]), bool(outcome.truncated[0]),
                           bool(outcome.illegal[0]), outcome.values or None)
        mask = self._mask0
        if not (0 <= action < a and mask[action]):
            mask[:] = 0
            return OneStep(self._no_reward, True, False, True, None)
        genes, obs = self._genes0, self._obs0
        genes[step] = action
        obs[step * a + action] = 1.0
        obs[d * a + step] = 0.0
        obs[d * a + step + 1] = 1.0
        self.steps[0] = step + 1
        if step + 1 < d:
            mask[:a] = self.space.action_mask(genes[: step + 1])
            return self._building
        rewards, values = self._complete(_FIRST, scorer)
        return OneStep(rewards[0], True, False, False, values)
