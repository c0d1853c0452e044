"""CitySeg/MOP: design a real-time segmentation network gene by gene under several objectives at once."""

from __future__ import annotations

import os

import numpy as np
from gymnasium import spaces

from nas_envs.benchmarks.base import objective_matrix
from nas_envs.benchmarks.cityseg import hypervolume, nondominated
from nas_envs.benchmarks.cityseg_problems import get_problem, problem_number
from nas_envs.envs.rendering import figure_to_array, new_figure
from nas_envs.envs.sequential import SequentialNASEnv
from nas_envs.envs.vector import SequentialNASVectorEnv

REWARD_MODES = ("hv", "vector")


def _vector_reward(reward: str) -> bool:
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
    return reward == "vector"


def _reward_space(objectives: int) -> tuple[spaces.Box, int]:
    """MO-Gymnasium's ``reward_space`` and ``reward_dim``: minus the normalised objectives, each in [-1, 0]."""
    return spaces.Box(-1.0, 0.0, shape=(objectives,), dtype=np.float32), objectives


class Archive:
    """The non-dominated normalised objective vectors found so far, and their hypervolume (reference all ones).

    The hypervolume grows by each point's exclusive contribution: the volume of its box ``[point, 1]`` less the
    part the archive already covers there, which is the hypervolume of the archive projected into that box
    (``max(archived, point)``, exact, by moocore). The projection is small even when the archive is large, so the
    cost does not grow with the archive as recomputing the whole hypervolume would (``python
    scripts/env_speed.py``; the sum of gains agrees with the exact hypervolume to rounding, a test checks it).
    """

    def __init__(self, objectives: int) -> None:
        self.points = np.empty((0, objectives))
        self.hypervolume = 0.0

    def add(self, point: np.ndarray) -> float:
        """Insert ``point`` unless an archived point weakly dominates it; return the hypervolume gained."""
        if (self.points <= point).all(axis=1).any():
            return 0.0
        inside = self.points[(self.points <= 1.0).all(axis=1)]
        self.points = np.vstack([self.points[~(point <= self.points).all(axis=1)], point])
        if (point > 1.0).any():
            return 0.0
        covered = hypervolume(nondominated(np.maximum(inside, point))) if len(inside) else 0.0
        gain = max(float(np.prod(1.0 - point)) - covered, 0.0)
        self.hypervolume += gain
        return gain


class _ArchiveScoring:
    """CitySeg's scoring, for the single and the vector environment: per copy, an archive of the non-dominated
    normalised objective vectors found since its budget started, and the hypervolume each architecture adds to it
    (or, with ``reward="vector"``, minus its normalised objectives)."""

    def _set_problem(self, problem: object, reward: str) -> None:
        number = problem_number(problem)
        self.benchmark_name = f"cityseg-mop{number}"
        self.vector_reward = _vector_reward(reward)
        self.objective_names = get_problem(number).objectives

    def _start_archives(self, copies: int) -> None:
        """Empty archives for ``copies`` copies (after the base class has set up the episodes)."""
        self.archives = [Archive(len(self.objective_names)) for _ in range(copies)]
        self._last_points = np.ones((copies, len(self.objective_names)))

    def _reward_shape(self) -> tuple[int, ...]:
        return (len(self.objective_names),) if self.vector_reward else ()

    def _start_budget(self, rows: np.ndarray) -> None:
        for row in rows:
            self.archives[row] = Archive(len(self.objective_names))

    def _reward(self, rows: np.ndarray, values: dict[str, np.ndarray]) -> np.ndarray:
        points = self.benchmark.normalise(objective_matrix(self.benchmark, values))
        self._last_points[rows] = points
        gains = np.array([self.archives[row].add(point) for row, point in zip(rows, points)])
        return -points if self.vector_reward else gains


class CitySegMOPEnv(_ArchiveScoring, SequentialNASEnv):
    """
    ## Description

    The CitySeg search space of EvoXBench's CitySeg/MOP suite (24 genes: 5 depths, 13 expand ratios, 6 widths of
    an elastic bottleneck network with a segmentation decoder) and one of its 15 problems, ``CitySeg-MOP1-v0``
    ... ``CitySeg-MOP15-v0``, each with the objectives of the paper's Table 1 (2 to 7 of: ``err``, ``h1_latency``,
    ``h2_latency``, ``h1_energy``, ``h2_energy``, ``flops``, ``params``; all minimised). ``err`` is predicted by
    a rank-net fitted on sub-networks of this project's supernet, latencies are measured look-up tables,
    energies a documented model, FLOPs and parameters exact (see :mod:`nas_envs.benchmarks.cityseg`).

    ## Action Space

    ``Discrete(4)``; decision ``i`` sets gene ``i``. Masks (``info["action_mask"]``, ``action_masks()``) allow
    only the gene's choices, forbid head depth 0 (degenerate), and keep the expand ratios of blocks beyond a
    stage's depth at 0, so every episode builds a canonical architecture.

    ## Observation Space

    ``Box(0, 1, (122,), float32)``: the genes chosen so far, one-hot per decision (24 x 4); the current decision,
    one-hot (25); the remaining fraction of the simulated budget.

    ## Rewards

    0 on every step but the last. On the 24th step, by default (``reward="hv"``), the improvement of the
    normalised hypervolume of the environment's archive (the non-dominated objective vectors found since the
    budget started; utopian and nadir points of the suite, reference point all ones): 0 for a dominated
    architecture.

    With ``reward="vector"`` (MO-Gymnasium's convention, for multi-objective RL), every reward is a float32 vector
    with one entry per objective, in the problem's order: zeros before the last step, and minus the normalised
    objectives on it (so that larger is better in every entry). ``env.unwrapped.reward_space`` is
    ``Box(-1, 0, (M,))`` and ``env.unwrapped.reward_dim`` is ``M``. The archive and ``info`` are the same in both
    modes. Gymnasium's passive checker, which ``gym.make`` adds, warns once that a vector reward is not a float, as
    it does for MO-Gymnasium's environments: expected, and harmless.

    ## Starting State

    No gene chosen. ``reset(seed=...)`` or ``reset(options={"reset_budget": True})`` start a fresh budget: the
    clock at 0 and an empty archive; a plain ``reset()`` continues both.

    ## Episode End

    Terminated after 24 steps. ``info`` then holds ``architecture`` (``CitySeg(d=[...], e=[...], w=[...])``),
    ``objectives`` (the problem's objectives, raw units), ``normalised_objectives``, ``hypervolume`` (of the
    archive), ``sim_time`` and ``budget_exhausted``. Each evaluation costs the median measured seconds of scoring
    one sub-network. ``info["score"]`` is the architecture's own hypervolume (the product of one minus its
    normalised objectives), the scalar that single-objective searches maximise. Budget semantics as in
    ``SurrNAS-DARTS-v0``.

    ## Arguments

    ```python
    env = gym.make("CitySeg-MOP3-v0", budget_seconds=None, noise=True, reward="hv", render_mode=None)
    ```

    ``reward``: ``"hv"`` (a float: the hypervolume gained) or ``"vector"`` (one entry per objective, see Rewards).

    ``render_mode``: ``"ansi"`` or ``"rgb_array"`` (the archive: normalised error against the problem's second
    objective, the last architecture highlighted).

    ## Version History

    * v0: bundle ``cityseg-v0``; supernet protocol ``cityseg-scenes64-supernet-v1``.
    """

    reward_modes = REWARD_MODES

    def __init__(
        self,
        problem: int = 1,
        budget_seconds: float | None = None,
        noise: bool = True,
        reward: str = "hv",
        render_mode: str | None = None,
        bundle: "str | os.PathLike | None" = None,
        strict_budget: bool = False,
    ) -> None:
        self._set_problem(problem, reward)
        super().__init__(budget_seconds=budget_seconds, noise=noise, render_mode=render_mode, bundle=bundle,
                         strict_budget=strict_budget)
        if self.vector_reward:
            self.reward_space, self.reward_dim = _reward_space(len(self.objective_names))
        self._start_archives(1)

    @property
    def archive(self) -> Archive:
        """The archive of the current budget."""
        return self.archives[0]

    @property
    def hypervolume(self) -> float:
        return self.archive.hypervolume

    @property
    def _last_point(self) -> np.ndarray:
        return self._last_points[0]

    def _completed_info(self, info: dict) -> None:
        info["normalised_objectives"] = dict(zip(self.objective_names, map(float, self._last_point)))
        info["hypervolume"] = self.hypervolume

    def _render_rgb(self) -> np.ndarray:
        figure = new_figure(width=4.0, height=3.4)
        ax = figure.add_subplot(1, 1, 1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"normalised {self.objective_names[1]}")
        ax.set_ylabel("normalised err")
        points = self.archive.points
        if len(points):
            ax.scatter(points[:, 1], points[:, 0], s=12, color="#4292c6", label="archive")
        if self.last_objectives is not None:
            ax.scatter([self._last_point[1]], [self._last_point[0]], s=40, color="#d94801", label="last")
        ax.set_title(f"{self.benchmark.name}: HV {self.hypervolume:.4f}", fontsize=9)
        return figure_to_array(figure)


class CitySegMOPVectorEnv(_ArchiveScoring, SequentialNASVectorEnv):
    """``num_envs`` copies of :class:`CitySegMOPEnv`, each with its own archive; the architectures completed in a
    step are evaluated in one batched call."""

    def __init__(self, num_envs: int = 1, problem: int = 1, budget_seconds: float | None = None,
                 noise: bool = True, reward: str = "hv", render_mode: str | None = None,
                 bundle: "str | os.PathLike | None" = None) -> None:
        self._set_problem(problem, reward)
        super().__init__(num_envs=num_envs, budget_seconds=budget_seconds, noise=noise, render_mode=render_mode,
                         bundle=bundle)
        if self.vector_reward:
            self.single_reward_space, self.reward_dim = _reward_space(len(self.objective_names))
        self._start_archives(self.num_envs)
