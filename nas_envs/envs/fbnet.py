"""SurrNAS-FBNet: choose the block of each of FBNet's 22 layers, rewarded by a surrogate of real trainings."""

from __future__ import annotations

import warnings

import numpy as np

from nas_envs.envs.rendering import figure_to_array, new_figure
from nas_envs.envs.sequential import SequentialNASEnv
from nas_envs.envs.vector import SequentialNASVectorEnv
from nas_envs.spaces.fbnet import BLOCKS, NUM_LAYERS, STAGE_CHANNELS, layer_stage

BLOCK_COLOURS = {
    "k3_e1": "#c6dbef", "k3_e1_g2": "#9ecae1", "k3_e3": "#4292c6", "k3_e6": "#08519c",
    "k5_e1": "#fdd0a2", "k5_e1_g2": "#fdae6b", "k5_e3": "#f16913", "k5_e6": "#a63603",
    "skip": "#d9d9d9",
}


class SurrNASFBNetEnv(SequentialNASEnv):
    """
    ## Description

    The FBNet search space of SNB-FBNet in its CIFAR macro-architecture: a stem, 22 searchable layers in stages
    of ``[1, 4, 4, 4, 4, 4, 1]`` layers (channels ``16, 24, 32, 64, 112, 184, 352``, first-layer strides
    ``1, 1, 2, 2, 1, 2, 1``), a 1x1 head and a classifier. Each layer is one of nine blocks: inverted residuals
    ``k{3,5}_e{1,3,6}`` (kernel size, expansion), group-2 variants ``k{3,5}_e1_g2`` with channel shuffle, or
    ``skip``. When the 22 choices are made, the bundled surrogate, fitted on this project's own Fashion-MNIST
    trainings of these networks (see ``docs/data-card.md``), predicts validation and test accuracy and training
    time; parameters and FLOPs are exact.

    ## Action Space

    ``Discrete(9)``: the block of the current layer, in the order
    ``k3_e1, k3_e1_g2, k3_e3, k3_e6, k5_e1, k5_e1_g2, k5_e3, k5_e6, skip``. Every action is always legal;
    ``info["action_mask"]`` and ``action_masks()`` are all ones, so code written for masked spaces works as is.

    ## Observation Space

    ``Box(0, 1, (222,), float32)``: the blocks chosen so far, one-hot per layer (22 x 9); the current layer,
    one-hot (23, the last meaning "complete"); the remaining fraction of the simulated budget.

    ## Rewards

    0 on every step but the last; on the 22nd step the validation accuracy (fraction), noisy with ``noise=True``;
    ``reward="standardised"`` or ``"percentile"`` as in ``SurrNAS-DARTS-v0``.

    ## Starting State

    No layer chosen. The simulated clock starts at 0 on ``reset(seed=...)`` and on
    ``reset(options={"reset_budget": True})``; a plain ``reset()`` continues it.

    ## Episode End

    Terminated after 22 steps. ``info`` then holds ``architecture`` (``FBNet([...])``), ``objectives``
    (``val_accuracy``, ``test_accuracy``, ``train_time_s``, ``params``, ``flops``), ``sim_time`` and
    ``budget_exhausted`` and ``score`` (the validation accuracy); budget semantics as in ``SurrNAS-DARTS-v0``.

    ## Arguments

    ```python
    env = gym.make("SurrNAS-FBNet-v1", budget_seconds=None, noise=True, surrogate="xgb", render_mode=None)
    ```

    ``surrogate``: ``"xgb"`` (default), ``"gin"`` or ``"xgb+gin"`` (the average of both).
    ``render_mode``: ``"ansi"`` (architecture and objectives) or ``"rgb_array"`` (the layer chain, blocks
    coloured by kernel and expansion, width by stage). Native vector env:
    ``gym.make_vec("SurrNAS-FBNet-v1", num_envs=8, vectorization_mode="vector_entry_point")``.

    ## Version History

    * v0: bundle ``fbnet-v0``, fitted on protocol ``fbnet-fmnist14-half-e4-v1``, whose seed noise is as large as
      the spread across architectures (``docs/data-card.md``): its rewards are mostly training noise, and making
      it warns so.
    * v1: bundle ``fbnet-v1``, fitted on protocol ``fbnet-fmnist14-full-e4-v1`` (full width, where architectures
      differ by more than one training's seed noise); its quality against the noise subset's seed means is in
      ``docs/model-cards/fbnet-v1.md``.
    """

    benchmark_name = "fbnet"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        warn_if_mostly_noise(self.benchmark)

    def _render_rgb(self) -> np.ndarray:
        return draw_fbnet_chain(self.partial_genes)


def warn_if_mostly_noise(benchmark) -> None:
    """Warn when the bundle is ``fbnet-v0``, whose rewards are mostly training noise (its ground truth does not
    separate architectures: noise-subset R2 below 0, docs/model-cards/fbnet-v0.md)."""
    if str(benchmark.bundle_dir).endswith("fbnet-v0"):
        warnings.warn("SurrNAS-FBNet-v0 is fitted on trainings whose seed noise is as large as the differences "
                      "between architectures: its rewards are mostly noise (docs/model-cards/fbnet-v0.md); "
                      "SurrNAS-FBNet-v1 is fitted on full-width trainings that separate them",
                      UserWarning, stacklevel=3)


class SurrNASFBNetVectorEnv(SequentialNASVectorEnv):
    """``num_envs`` copies of :class:`SurrNASFBNetEnv` that score their finished architectures in one batch."""

    benchmark_name = "fbnet"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        warn_if_mostly_noise(self.benchmark)


def draw_fbnet_chain(genes: np.ndarray) -> np.ndarray:
    """The (possibly partial) layer chain as coloured boxes: uint8 image ``H x W x 3``."""
    from matplotlib.patches import Rectangle

    figure = new_figure(width=9.0, height=2.6)
    ax = figure.add_subplot(1, 1, 1)
    ax.set_xlim(-0.5, NUM_LAYERS + 0.5)
    ax.set_ylim(-1.3, 1.3)
    ax.axis("off")
    for layer in range(NUM_LAYERS):
        height = 0.4 + 0.6 * STAGE_CHANNELS[layer_stage(layer)] / max(STAGE_CHANNELS)
        block = BLOCKS[int(genes[layer])] if layer < len(genes) else None
        colour = BLOCK_COLOURS[block] if block else "white"
        ax.add_patch(Rectangle((layer + 0.05, -height), 0.9, 2 * height, facecolor=colour, edgecolor="black", lw=0.6))
        if block:
            ax.text(layer + 0.5, 0, block.replace("_", "\n"), ha="center", va="center", fontsize=5.5)
    ax.set_title(f"FBNet: {len(genes)}/{NUM_LAYERS} layers chosen", fontsize=9)
    return figure_to_array(figure)
