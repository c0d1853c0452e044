"""CitySeg/MOP: design a real-time segmentation network gene by gene under several objectives at once."""

from __future__ import annotations

import numpy as np

from nas_envs.envs.rendering import figure_to_array, new_figure
from nas_envs.envs.sequential import SequentialNASEnv


class CitySegMOPEnv(SequentialNASEnv):
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

    ## Starting State

    No gene chosen. ``reset(seed=...)`` or ``reset(options={"reset_budget": True})`` start a fresh budget: the
    clock at 0 and an empty archive; a plain ``reset()`` continues both.

    ## Episode End

    Terminated after 24 steps. ``info`` then holds ``architecture`` (``CitySeg(d=[...], e=[...], w=[...])``),
    ``objectives`` (the problem's objectives, raw units), ``normalised_objectives``, ``hypervolume`` (of the
    archive), ``sim_time`` and ``budget_exhausted``. Each evaluation costs the median measured seconds of scoring
    one sub-network. Budget semantics as in ``SurrNAS-DARTS-v0``.

    ## Arguments

    ```python
    env = gym.make("CitySeg-MOP3-v0", budget_seconds=None, noise=True, render_mode=None)
    ```

    ``render_mode``: ``"ansi"`` or ``"rgb_array"`` (the archive: normalised error against the problem's second
    objective, the last architecture highlighted).

    ## Version History

    * v0: initial version; supernet protocol ``cityseg-scenes64-supernet-v1``.
    """

    def __init__(
        self,
        problem: int = 1,
        budget_seconds: float | None = None,
        noise: bool = True,
        render_mode: str | None = None,
    ) -> None:
        self.benchmark_name = f"cityseg-mop{problem}"
        super().__init__(budget_seconds=budget_seconds, noise=noise, render_mode=render_mode)
        self.objective_names = self.benchmark.objectives
        self._start_budget()

    def _start_budget(self) -> None:
        self.archive = np.empty((0, len(self.objective_names)))
        self.hypervolume = 0.0
        self._last_point = np.ones(len(self.objective_names))

    def _score(self, genes: np.ndarray) -> tuple[float, dict[str, float], float]:
        values = self.benchmark.evaluate_all(genes[None, :], self.noise, self.np_random)
        raw = np.array([values[name][0] for name in self.objective_names])
        point = self.benchmark.normalise(raw[None, :])[0]
        if not (self.archive <= point).all(axis=1).any():  # not weakly dominated: it enters the archive
            keep = ~(point <= self.archive).all(axis=1)
            self.archive = np.vstack([self.archive[keep], point])
        previous, self.hypervolume = self.hypervolume, self._archive_hypervolume()
        self._last_point = point
        objectives = {name: float(v) for name, v in zip(self.objective_names, raw)}
        return self.hypervolume - previous, objectives, self.benchmark.seconds_per_evaluation

    def _archive_hypervolume(self) -> float:
        from pymoo.indicators.hv import HV

        inside = self.archive[(self.archive <= 1.0).all(axis=1)]
        return float(HV(ref_point=np.ones(self.archive.shape[1]))(inside)) if len(inside) else 0.0

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        if terminated and "objectives" in info:
            info["normalised_objectives"] = dict(zip(self.objective_names, map(float, self._last_point)))
            info["hypervolume"] = self.hypervolume
        return obs, reward, terminated, truncated, info

    def _render_rgb(self) -> np.ndarray:
        figure = new_figure(width=4.0, height=3.4)
        ax = figure.add_subplot(1, 1, 1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"normalised {self.objective_names[1]}")
        ax.set_ylabel("normalised err")
        if len(self.archive):
            ax.scatter(self.archive[:, 1], self.archive[:, 0], s=12, color="#4292c6", label="archive")
        if self.last_objectives is not None:
            ax.scatter([self._last_point[1]], [self._last_point[0]], s=40, color="#d94801", label="last")
        ax.set_title(f"{self.benchmark.name}: HV {self.hypervolume:.4f}", fontsize=9)
        return figure_to_array(figure)
