"""Off-screen matplotlib figures turned into ``rgb_array`` frames (no pyplot, no global state)."""

from __future__ import annotations

import numpy as np

from nas_envs.extras import require


def new_figure(width: float, height: float, dpi: int = 100):
    require("matplotlib", "plot", "render_mode='rgb_array'")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(figure)
    return figure


def figure_to_array(figure) -> np.ndarray:
    """The figure's pixels as uint8 ``H x W x 3``."""
    figure.tight_layout()
    figure.canvas.draw()
    return np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()
