"""SurrNAS-DARTS: build a DARTS cell architecture decision by decision, rewarded by a surrogate of real trainings."""

from __future__ import annotations

import numpy as np

from nas_envs.envs.rendering import figure_to_array, new_figure
from nas_envs.envs.sequential import SequentialNASEnv
from nas_envs.envs.vector import SequentialNASVectorEnv
from nas_envs.spaces.darts import CELLS, GENES_PER_CELL, GENES_PER_NODE, OPS

OP_COLOURS = {
    "max_pool_3x3": "#1f77b4",
    "avg_pool_3x3": "#17becf",
    "skip_connect": "#7f7f7f",
    "sep_conv_3x3": "#d62728",
    "sep_conv_5x5": "#ff7f0e",
    "dil_conv_3x3": "#2ca02c",
    "dil_conv_5x5": "#9467bd",
}


class SurrNASDartsEnv(SequentialNASEnv):
    """
    ## Description

    The DARTS search space of NAS-Bench-301 (Surr-NAS-Bench-DARTS): a normal and a reduction cell, each with two
    inputs and four intermediate nodes; every node takes two distinct earlier inputs and applies one of seven
    operations (``max_pool_3x3, avg_pool_3x3, skip_connect, sep_conv_3x3, sep_conv_5x5, dil_conv_3x3,
    dil_conv_5x5``) to each. The agent builds one architecture per episode. When it is complete, the bundled
    surrogate, fitted on this project's own Fashion-MNIST trainings (see ``docs/data-card.md``), predicts its
    validation accuracy, test accuracy and training time; parameters and FLOPs are exact.

    ## Action Space

    ``Discrete(7)``. There are 32 decisions per architecture, in the order: for the normal cell then the
    reduction cell, for nodes 2..5: ``input_a, op_a, input_b, op_b``. At an input decision the action is an input
    index (0 = ``c_{k-2}``, 1 = ``c_{k-1}``, 2.. = earlier nodes); at an op decision it is an op index in the order
    above. Legal actions are given by ``info["action_mask"]`` and ``action_masks()`` (int8). Node ``k`` reads
    from inputs ``0..k-1``; ``input_a`` may be any of them but the last, ``input_b`` any above ``input_a`` (the
    two inputs are unordered, so each architecture has exactly one action sequence); all ops are always legal.

    An action of the space that the mask forbids does not crash: the episode ends at once with reward 0,
    ``info["illegal_action"] = True``, and no simulated time is spent. An action outside ``Discrete(7)`` (``-1``,
    ``7``) is a programming error and raises :class:`~nas_envs.envs.sequential.InvalidActionError`, as in every
    environment of the package.

    ## Observation Space

    ``Box(0, 1, (258,), float32)``: the actions taken so far, one-hot per decision (32 x 7); the index of the
    current decision, one-hot (33, the last meaning "complete"); the remaining fraction of the simulated budget
    (1 without a budget).

    ## Rewards

    0 on every step but the last; on the step that completes the architecture, its validation accuracy as a
    fraction in [0, 1]: with ``noise=True`` (the default) a draw around the surrogate ensemble's mean whose std
    is the ensemble's spread, calibrated and clipped to the seed-to-seed noise of real trainings (the bundle's
    noise subset); the mean with ``noise=False``. For learning, ``reward="standardised"`` gives the accuracy in
    standard deviations of random architectures from their mean, and ``reward="percentile"`` the fraction of
    random architectures that score lower (:mod:`nas_envs.envs.rewards`; "random" is ``space.sample``, not a
    uniform choice among legal actions, which scores lower); ``info["score"]`` stays the accuracy.

    ## Starting State

    No decision taken. The simulated clock starts at 0 on ``reset(seed=...)`` and on
    ``reset(options={"reset_budget": True})``; a plain ``reset()`` continues it.

    ## Episode End

    Terminated when the architecture is complete (32 steps) or after an illegal action. On the completing step
    ``info`` holds ``architecture`` (the canonical ``Genotype(...)`` string), ``objectives`` (``val_accuracy``,
    ``test_accuracy``, ``train_time_s``, ``params``, ``flops``) and ``score`` (the validation accuracy, what
    single-objective searches maximise); every ``info`` holds ``sim_time`` and ``budget_exhausted``. The
    completing step spends the predicted training time on the simulated clock. Once ``budget_seconds`` is spent,
    ``budget_exhausted`` stays True, ``reset()`` still succeeds, and the first step of the next episode is
    truncated (reward 0, no evaluation, no time spent): nothing beyond the budget is evaluated. SB3 training
    stops there with ``nas_envs.agents.callbacks.StopOnBudgetExhausted``.

    ## Arguments

    ```python
    import gymnasium as gym
    import nas_envs
    env = gym.make("SurrNAS-DARTS-v1", budget_seconds=None, noise=True, surrogate="xgb", render_mode=None,
                   strict_budget=False, reward="accuracy")
    ```

    * ``budget_seconds``: simulated seconds available, or None for no limit.
    * ``noise``: draw noisy evaluations (seeded by ``reset(seed=...)``) or return ensemble means.
    * ``surrogate``: ``"xgb"`` (default), ``"gin"``, or ``"xgb+gin"`` (the average of both ensembles' means and
      calibrated noise; on the noise subset it ranks better than either, see the README); from v1 also
      ``"stack"`` (XGBoost, a bootstrap ridge and a random forest weighted on out-of-fold predictions; torch-free).
    * ``render_mode``: ``"ansi"`` (genotype and objectives) or ``"rgb_array"`` (both cells drawn as DAGs; needs the
      ``plot`` extra).
    * ``reward``: ``"accuracy"`` (default), ``"standardised"`` or ``"percentile"`` (see Rewards).
    * ``strict_budget``: raise ``BudgetExhaustedError`` from a plain ``reset()`` once the budget is spent.
    * ``bundle``: the surrogate bundle; the id pins its release (``darts-v0``, ``darts-v1``). A folder written by
      ``nas-envs fit`` evaluates with a refit instead.

    A native vector environment batches the surrogate calls of all finished architectures:
    ``gym.make_vec("SurrNAS-DARTS-v1", num_envs=8, vectorization_mode="vector_entry_point")``.

    ## Version History

    * v0: bundle ``darts-v0``, fitted on protocol ``darts-fmnist14-c8l8-e4-v1`` (``assets/data/``).
    * v1: bundle ``darts-v1``, fitted on the first 2,211 lines of the same protocol's data, which add to v0's
      uniformly random trainings the architectures that every agent's searches of earlier bundles visited
      (search rounds 0-3), and reading the cells' graph features; surrogate ``"stack"`` added. Its quality on the
      noise subset and on search round 4 (which it chose and was never fitted on), against v0's, is in
      ``docs/model-cards/darts-v1.md``.
    """

    benchmark_name = "darts"

    def _render_rgb(self) -> np.ndarray:
        return draw_darts_cells(self.partial_genes)


class SurrNASDartsVectorEnv(SequentialNASVectorEnv):
    """``num_envs`` copies of :class:`SurrNASDartsEnv` that score their finished architectures in one batch."""

    benchmark_name = "darts"


def draw_darts_cells(genes: np.ndarray) -> np.ndarray:
    """Both cells of a (possibly partial) DARTS architecture as DAGs: uint8 image ``H x W x 3``."""
    figure = new_figure(width=8.0, height=3.4)
    for cell_index, cell in enumerate(CELLS):
        ax = figure.add_subplot(1, 2, cell_index + 1)
        ax.set_title(f"{cell} cell", fontsize=10)
        ax.set_xlim(-0.5, 6.5)
        ax.set_ylim(-1.2, 1.2)
        ax.axis("off")
        position = {0: (0.0, 0.6), 1: (0.0, -0.6), 2: (1.8, 0.9), 3: (2.9, -0.9), 4: (4.0, 0.9), 5: (5.1, -0.9),
                    6: (6.2, 0.0)}
        names = {0: "c_{k-2}", 1: "c_{k-1}", 6: "out"}
        cell_genes = genes[cell_index * GENES_PER_CELL : (cell_index + 1) * GENES_PER_CELL]
        for i in range(0, len(cell_genes) - 1, 2):  # (input, op) pairs; an op may still be undecided
            node = 2 + i // GENES_PER_NODE
            inp = int(cell_genes[i])
            op = OPS[int(cell_genes[i + 1])] if i + 1 < len(cell_genes) else None
            (x0, y0), (x1, y1) = position[inp], position[node]
            colour = OP_COLOURS[op] if op else "#cccccc"
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                        arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.6, "connectionstyle": "arc3,rad=0.15"})
            if op:
                ax.text((x0 + x1) / 2, (y0 + y1) / 2, op, fontsize=6, color=colour, ha="center", va="center",
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
        for node, (x, y) in position.items():
            if 2 <= node <= 5:  # every intermediate node feeds the concatenated output
                ax.annotate("", xy=position[6], xytext=(x, y),
                            arrowprops={"arrowstyle": "->", "color": "#e0e0e0", "lw": 0.8})
            ax.text(x, y, names.get(node, str(node)), fontsize=8, ha="center", va="center",
                    bbox={"boxstyle": "circle" if node not in names else "round", "fc": "#fff7d6", "ec": "black"})
    return figure_to_array(figure)
